# Striping efficiency: one device pair over 4 emulated rails, each rate-capped to the same speed.
# ib_write_bw at 64 KiB over one rail (the other three cut) and over all four, in the same boot:
# four rails must give >= 0.9 x 4 x the one-rail figure.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

RATE=${STRIPE_RATE:-16M}	# per rail; well under what TCG can move with one rail
# shallow rings: a capped rail's queue must not outlast the retransmit timeout
pair_up 4 16
listening() { [ -n "$(h1 ss -ltnH 'sport = :18515')" ]; }

# write_bw: MB/s average of ib_write_bw 64 KiB between the hosts
write_bw() {
	h1 ib_write_bw -d tbrdma1 -x "$GID1" -F -s 65536 -n "$1" > /tmp/srv.log 2>&1 &
	local srv=$!
	wait_for 20 listening
	local t0=$SECONDS
	ib_write_bw -d tbrdma0 -x "$GID0" -F -s 65536 -n "$1" 10.88.0.2 > /tmp/cli.log 2>&1 ||
		{ cat /tmp/cli.log /tmp/srv.log; fail "ib_write_bw failed"; }
	wait "$srv" || fail "ib_write_bw server failed"
	echo "$(grep -E '^ *65536 ' /tmp/cli.log) ($((SECONDS - t0)) s)" >&2
	awk '$1 == 65536 { print $4 }' /tmp/cli.log
}

for r in 0 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --rate "$RATE"; done
step "one rail (rails 1-3 cut), each rail capped at $RATE bit/s"
for r in 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --cut; done
one=$(write_bw 60)
step "four rails"
for r in 1 2 3; do "$CTL" rail-set tbrdma0 1 "$r" --restore; done
wait_for 10 bash -c "'$CTL' links tbrdma0 | grep -q 'rails_up=4'"
four=$(write_bw 240)
"$CTL" links tbrdma0 | grep 'rail dev=tbrdma0' | sed 's/ drop_ppm.*tx_frames=/ tx_frames=/; s/ rx_frames.*//'
ratio=$(awk -v a="$four" -v b="$one" 'BEGIN { printf "%.2f", a / b }')
echo "stripe: 1 rail ${one} MB/s, 4 rails ${four} MB/s, ratio ${ratio} (want >= 3.60)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 3.6) }' || fail "4 rails gave only ${ratio}x one rail"
