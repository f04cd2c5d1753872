#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tests/fuzz/smoke.sh BUILD NAME...: runs each libFuzzer binary BUILD/NAME for FUZZ_SECONDS
# (default 60) with its corpus (BUILD/corpus/NAME, written, then the committed seeds
# tests/fuzz/corpus/NAME, read), FUZZ_JOBS (default 2) at a time. Prints one line per fuzzer:
#   PASS fuzz/NAME (N execs)
#   FAIL fuzz/NAME: why (log, crashing input)
# and exits 1 if any failed: a crash, sanitizer report, leak, timeout (one input running longer than
# FUZZ_TIMEOUT seconds, default 10; wall time, so a niced run beside VMs wants more),
# out-of-memory, no seeds, or no executions at all.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD=$1 HERE FUZZ_SECONDS=${FUZZ_SECONDS:-60} FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
shift

run_one() {
	local name=$1 log=$BUILD/$1.smoke.log rc execs why
	if [ -z "$(ls -A "$HERE/corpus/$name" 2>/dev/null)" ]; then
		echo "FAIL fuzz/$name: no seed corpus in tests/fuzz/corpus/$name"
		return 1
	fi
	mkdir -p "$BUILD/corpus/$name" "$BUILD/artifacts"
	rm -f "$BUILD/artifacts/$name-"*
	"$BUILD/$name" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -timeout="$FUZZ_TIMEOUT" \
		-rss_limit_mb=2048 -artifact_prefix="$BUILD/artifacts/$name-" \
		"$BUILD/corpus/$name" "$HERE/corpus/$name" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$rc" = 0 ] && [ "${execs:-0}" -gt 0 ]; then
		echo "PASS fuzz/$name ($execs execs)"
		return 0
	fi
	why=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY: ' "$log")
	[ -n "$why" ] || why="exit $rc, ${execs:-0} execs"
	echo "FAIL fuzz/$name: $why (log $log; input $(ls "$BUILD/artifacts/$name-"* 2>/dev/null | head -1))"
	return 1
}
export -f run_one

printf '%s\n' "$@" | xargs -P "${FUZZ_JOBS:-2}" -I{} bash -c 'run_one "$1"' _ {}
