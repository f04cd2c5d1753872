# perftest, unmodified, between two emulated hosts over one emulated rail: ib_{send,write,read}_bw
# and ib_{send,write,read}_lat, RC, every size from 2 B to 8 MiB (-a), -F (TCG cannot hold the
# CPU frequency checks). Each tool's report must list every size. The standard port counters
# (sysfs ports/1/counters, issue 18) rise by what ib_write_bw moved: data in 4-byte words.
# vm-timeout: 600
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 1

# perf TOOL ARGS...: server in h1, client here
perf() {
	local tool=$1 t0=$SECONDS
	shift
	pair_run -x "$tool" -F "$@"
	# one result row per size: 2 .. 1048576 is 20 sizes
	local rows
	rows=$(grep -cE '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log)
	[ "$rows" -ge 20 ] || { cat /tmp/cli.log; fail "$tool $*: $rows result rows, expected 20"; }
	echo "$tool $* ($((SECONDS - t0))s): $rows sizes; 1 MiB row: $(grep -E '^ *1048576 ' /tmp/cli.log | tr -s ' ')"
}

# counters HOST: port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets of tbrdmaHOST
counters() {
	local d=/sys/class/infiniband/tbrdma$1/ports/1/counters ns=()
	[ "$1" = 0 ] || ns=(ip netns exec "h$1")
	"${ns[@]}" cat $d/port_xmit_data $d/port_rcv_data $d/port_xmit_packets $d/port_rcv_packets |
		tr '\n' ' '
}

step "bandwidth"
read -r tx0 rx0 txp0 rxp0 <<< "$(counters 0)"
read -r tx1 rx1 txp1 rxp1 <<< "$(counters 1)"
perf ib_write_bw -a -n 10 -m 4096
read -r tx0b rx0b txp0b rxp0b <<< "$(counters 0)"
read -r tx1b rx1b txp1b rxp1b <<< "$(counters 1)"
# what the client wrote: size x iterations summed over its result rows
bytes=$(awk '/^ *[0-9]+ +[0-9]+ /{ s += $1 * $2 } END { print s }' /tmp/cli.log)
echo "port counters for $bytes bytes written: tbrdma0 xmit_data +$((tx0b - tx0))" \
	"xmit_packets +$((txp0b - txp0)) rcv_data +$((rx0b - rx0)) rcv_packets +$((rxp0b - rxp0));" \
	"tbrdma1 rcv_data +$((rx1b - rx1)) rcv_packets +$((rxp1b - rxp1))" \
	"xmit_data +$((tx1b - tx1)) xmit_packets +$((txp1b - txp1))"
# data in words: at least bytes / 4, and (headers, ACKs the other way, perftest's warm-up)
# well under bytes / 2 (a counter in bytes would be 4x)
for d in $((tx0b - tx0)) $((rx1b - rx1)); do
	[ "$d" -ge $((bytes / 4)) ] && [ "$d" -lt $((bytes / 2)) ] ||
		fail "port data counter rose by $d words for $bytes bytes"
done
# frames carry at most 4 KiB
for d in $((txp0b - txp0)) $((rxp1b - rxp1)); do
	[ "$d" -ge $((bytes / 4096)) ] && [ "$d" -lt $((bytes / 2048)) ] ||
		fail "port packet counter rose by $d for $bytes bytes"
done
for t in ib_read_bw ib_send_bw; do
	perf "$t" -a -n 10 -m 4096
done
step "latency"
for t in ib_write_lat ib_read_lat ib_send_lat; do
	perf "$t" -a -n 10
done
