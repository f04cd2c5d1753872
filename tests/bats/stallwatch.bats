#!/usr/bin/env bats
# tests/progs/stall_watch (the VM harness's record of the host's stalls, docs/testing.md) and
# guest.sh's stall_report, on the host: a process held off the CPU (SIGSTOP) shows as a gap.
bats_require_minimum_version 1.5.0

setup() {
	load helpers
	SW=$TOP/build/progs/stall_watch
	F=$BATS_TEST_TMPDIR/stalls.txt
}

teardown() {
	[ -z "${pid:-}" ] || kill "$pid" 2> /dev/null || true
}

# report: guest.sh's stall_report on $F
report() {
	STALL_WATCH_FILE=$F TBR_TOP=$TOP bash -c '. "$TBR_TOP/tests/vm/lib/guest.sh"; stall_report'
}

@test "stall_watch: a process stopped for 300 ms shows as a gap of 300 ms or more" {
	"$SW" "$F" 2> /dev/null &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^# stall_watch since' "$F" 2> /dev/null && break
		sleep 0.05
	done
	sleep 0.1
	kill -STOP "$pid"
	sleep 0.3
	kill -CONT "$pid"
	sleep 0.2
	# every gap line: END_S GAP_MS; the stop is one of them
	run awk 'NR > 1 && $2 >= 300 { n++ } END { exit !n }' "$F"
	[ "$status" = 0 ] || { cat "$F"; false; }
	run report
	[[ $output == *"longest "*" ms ending at "* ]]
}

@test "stall_watch: nothing recorded yet reads as 0 gaps" {
	echo "# stall_watch since 3.000 s: gaps of 50 ms or more, END_S GAP_MS" > "$F"
	run report
	[ "$output" = "stall_watch: since 3.0 s, 0 gap(s) of 50 ms or more" ]
}

@test "stall_watch: the report names the longest gap and the last five" {
	{
		echo "# stall_watch since 1.000 s: gaps of 50 ms or more, END_S GAP_MS"
		for i in 1 2 3 4 5 6; do echo "$i.500 ${i}0.0"; done
		echo "7.000 1200.0"
	} > "$F"
	run report
	local want="stall_watch: since 1.0 s, 7 gap(s) of 50 ms or more; longest 1200 ms ending"
	want+=" at 7.0 s; the last: 3.5 s 30 ms, 4.5 s 40 ms, 5.5 s 50 ms, 6.5 s 60 ms, 7.0 s 1200 ms"
	[ "$output" = "$want" ]
}

@test "stall_watch: a threshold within its own sleep period is refused" {
	run -2 --separate-stderr "$SW" "$F" 100
	[[ $stderr == *"usage: stall_watch FILE [THRESHOLD_MS]"* ]]
	[ ! -e "$F" ]
}

@test "stall_watch: no report without a stall_watch file" {
	F=$BATS_TEST_TMPDIR/none
	run report
	[ "$output" = "stall_watch: not running" ]
}
