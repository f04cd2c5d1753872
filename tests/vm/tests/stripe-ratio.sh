# Striping efficiency: one device pair over 4 emulated rails, each rate-capped to the same speed.
# RDMA WRITE throughput at 64 KiB over one rail (the other three cut) and over all four, in the same
# boot: four rails must give >= 0.9 x 4 x the one-rail figure.
# Measured with tests/progs/write_bw, not ib_write_bw: perftest's figure hangs on a CPU frequency
# it samples for 0.2 s, which a loaded host skews (or zeroes) run by run; write_bw times with the
# guest's clock and reports the median of 6 equal parts of the transfer, so a host stall that
# hits one part does not decide the ratio (a 0.4 s SIGSTOP of the VM in one part: see
# docs/testing.md).
# vm-timeout: 300
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

RATE=${STRIPE_RATE:-8M}	# per rail: 4 MiB/s for four, half what a TCG guest moves at load ~9
PROG=$TBR_TOP/build/progs/write_bw
# shallow rings: a capped rail's queue must not outlast the retransmit timeout
pair_up 4 8

# write_bw COUNT: the median MiB/s of write_bw's 6 parts, COUNT x 64 KiB between the hosts
write_bw() {
	h1 "$PROG" -d tbrdma1 -g "$GID1" server > /tmp/srv.log 2>&1 &
	local srv=$!
	"$PROG" -d tbrdma0 -g "$GID0" -n "$1" client 10.88.0.2 > /tmp/cli.log 2>&1 ||
		{ cat /tmp/cli.log /tmp/srv.log; fail "write_bw failed"; }
	wait "$srv" || { cat /tmp/srv.log; fail "write_bw server failed"; }
	cat /tmp/cli.log >&2
	sed -n 's/.*; median \([0-9.]*\) MiB\/s$/\1/p' /tmp/cli.log
}

for r in 0 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --rate "$RATE"; done
step "one rail (rails 1-3 cut), each rail capped at $RATE bit/s"
for r in 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --cut; done
one=$(write_bw 45)
step "four rails"
for r in 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --restore; done
wait_for 10 bash -c "'$CTL' links tbrdma0 | grep -q 'rails_up=4'"
four=$(write_bw 180)
"$CTL" links tbrdma0 | grep 'rail dev=tbrdma0' | sed 's/ drop_ppm.*tx_frames=/ tx_frames=/; s/ rx_frames.*//'
awk -v a="$one" -v b="$four" 'BEGIN { exit !(a > 0 && b > 0) }' ||
	fail "no figure: one rail '$one', four rails '$four' MiB/s"
ratio=$(awk -v a="$four" -v b="$one" 'BEGIN { printf "%.2f", a / b }')
echo "stripe: 1 rail ${one} MiB/s, 4 rails ${four} MiB/s, ratio ${ratio} (want >= 3.60)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 3.6) }' ||
	fail "4 rails gave only ${ratio}x one rail (${four} vs ${one} MiB/s, medians of 6 parts)"
