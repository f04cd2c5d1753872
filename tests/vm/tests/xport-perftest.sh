# perftest, unmodified, between two emulated hosts over one emulated rail: ib_{send,write,read}_bw
# and ib_{send,write,read}_lat, RC, every size from 2 B to 1 MiB (-a), -F (TCG cannot hold the
# CPU frequency checks). Each tool's report must list every size.
# vm-timeout: 600
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 1

# perf TOOL ARGS...: server in h1, client here
perf() {
	local tool=$1
	shift
	pair_run -x "$tool" -F "$@"
	# one result row per size: 2 .. 1048576 is 20 sizes
	local rows
	rows=$(grep -cE '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log)
	[ "$rows" -ge 20 ] || { cat /tmp/cli.log; fail "$tool $*: $rows result rows, expected 20"; }
	echo "$tool $*: $rows sizes; 1 MiB row: $(grep -E '^ *1048576 ' /tmp/cli.log | tr -s ' ')"
}

step "bandwidth"
for t in ib_write_bw ib_read_bw ib_send_bw; do
	perf "$t" -a -n 10 -m 4096
done
step "latency"
for t in ib_write_lat ib_read_lat ib_send_lat; do
	perf "$t" -a -n 10
done
