#!/usr/bin/env bats
# tests/vm/run's refusals of a bad command line: each exits 2 with a clear message before any
# kernel is prepared or any VM boots (no QEMU needed).
bats_require_minimum_version 1.5.0

setup() {
	load helpers
	RUN=$TOP/tests/vm/run
}

@test "vm/run: an unknown test is refused" {
	run -2 --separate-stderr "$RUN" no-such-test
	[[ $stderr == *"no test named no-such-test"* ]]
}

@test "vm/run: a test named twice is refused (its runs would share one results directory)" {
	run -2 --separate-stderr "$RUN" module-load verbs-612 module-load
	[[ $stderr == *"module-load named twice"* ]]
}

@test "vm/run: a test on a kernel it does not run on is refused" {
	run -2 --separate-stderr "$RUN" module-load@forky
	[[ $stderr == *"does not run on forky"* ]]
}

@test "vm/run: an unknown option is refused" {
	run -2 --separate-stderr "$RUN" --no-such-option
	[[ $stderr == *"unknown option --no-such-option"* ]]
}
