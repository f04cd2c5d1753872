# emu fault knobs on a 1-rail cable: drop 100% (nothing arrives, drops count), duplicate 100%
# (everything arrives twice), delay, rate cap, reorder, and a tiny ring under delay (credit stalls,
# the TX ring full). Ring occupancy (RAIL_GET's figures since the rail came up): none on a cut
# rail, restarted at the restore; idle, neither ring full; a stalled receiver (rx_hold_us: it
# gives its buffers back every 200 ms) keeps the sender's TX ring and its own RX ring full for
# hundreds of ms; a starved sender (a frame every 100 ms) leaves both rings empty >= 80%.
# Ends with DEV_DEL of the extra device while its cable is up.
# vm-timeout: 400
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ring occupancy of link 1's rail 1 (the 8-descriptor cable's): snap_ring refreshes /tmp/links;
# ring_ms DEV FIELD: the ms that share (ppm) of the figures' time stands for
snap_ring() {
	local d
	"$CTL" links > /tmp/links
	for d in tbrdma0 tbrdma1; do
		grep -q "^  rail dev=$d link=1 id=1 .* ring_ms=" /tmp/links ||
			fail "$d: no ring figures: $(grep "rail dev=$d link=1 id=1 " /tmp/links)"
	done
}
rail1_up() { "$CTL" links | grep -q "^  rail dev=tbrdma1 link=1 id=1 .*state=up"; }
ring_ms() {
	local ppm ms
	ppm=$(cnt "$1" 1 1 "$2") ms=$(cnt "$1" 1 1 ring_ms)
	echo $((ppm * ms / 1000000))
}
# ring_delta_start, then ring_delta WHAT: d_ms DEV FIELD is the ms in between, of D_WINDOW
RING_FIELDS="tx_full_ppm tx_empty_ppm rx_full_ppm rx_empty_ppm"
ring_delta_start() {
	local d f
	snap_ring
	for d in tbrdma0 tbrdma1; do
		for f in $RING_FIELDS; do eval "R0_${d}_$f=$(ring_ms $d $f)"; done
	done
	R0_MS=$(cnt tbrdma0 1 1 ring_ms)
}
ring_delta() {
	local d f
	snap_ring
	D_WINDOW=$(($(cnt tbrdma0 1 1 ring_ms) - R0_MS))
	for d in tbrdma0 tbrdma1; do
		for f in $RING_FIELDS; do eval "D_${d}_$f=$(($(ring_ms $d $f) - R0_${d}_$f))"; done
		echo "$1: $d over $D_WINDOW ms: TX full $(d_ms $d tx_full_ppm) empty $(d_ms $d tx_empty_ppm)," \
			"RX full $(d_ms $d rx_full_ppm) empty $(d_ms $d rx_empty_ppm) ms"
	done
}
d_ms() { eval "echo \$D_${1}_$2"; }

step "load, tbrdma1, 1-rail cable"
tbr_load
"$CTL" dev-new > /dev/null || fail "dev-new failed"
"$CTL" cable-new tbrdma0 tbrdma1 > /dev/null || fail "cable-new failed"
mgmt_roundtrip tbrdma0 tbrdma1 "clean"

step "drop 100%: nothing arrives, the drop counter rises"
"$CTL" rail-set tbrdma0 1 0 --drop 100 || fail "rail-set --drop failed"
"$CTL" links | grep -q "rail dev=tbrdma1 link=1 id=0 .*drop_ppm=1000000" || fail "knob not visible on the peer's end"
"$CTL" mgmt-listen tbrdma1 --count 1 --timeout 3 > /tmp/mgmt.out 2> /tmp/mgmt.err &
LPID=$!
wait_for 5 grep -q listening /tmp/mgmt.err
"$CTL" mgmt-send tbrdma0 1 gone --repeat 10 || fail "send failed"
wait "$LPID" && fail "a datagram arrived through a 100% drop: $(cat /tmp/mgmt.out)"
[ -s /tmp/mgmt.out ] && fail "listener printed $(cat /tmp/mgmt.out)"
"$CTL" links > /tmp/links
[ "$(cnt tbrdma0 1 0 drops)" = 10 ] || fail "drops $(cnt tbrdma0 1 0 drops), expected 10"
[ "$(cnt tbrdma1 1 0 mgmt_rx)" = 1 ] || fail "peer mgmt_rx $(cnt tbrdma1 1 0 mgmt_rx), expected 1 (the clean one)"
# the other direction is dropped too
"$CTL" mgmt-send tbrdma1 1 back || fail "send failed"
"$CTL" links > /tmp/links
[ "$(cnt tbrdma1 1 0 drops)" = 1 ] || fail "reverse drops $(cnt tbrdma1 1 0 drops)"

step "duplicate 100%: each datagram arrives twice"
"$CTL" rail-set tbrdma0 1 0 --drop 0 --dup 100 || fail "rail-set --dup failed"
mgmt_listen_start tbrdma1 10
"$CTL" mgmt-send tbrdma0 1 twice --repeat 5 --seq || fail "send failed"
mgmt_listen_wait
for i in 0 1 2 3 4; do
	[ "$(grep -c "text=twice-$i\$" /tmp/mgmt.out)" = 2 ] || fail "twice-$i did not arrive exactly twice"
done
"$CTL" links > /tmp/links
[ "$(cnt tbrdma0 1 0 dups)" = 5 ] || fail "dups $(cnt tbrdma0 1 0 dups), expected 5"
"$CTL" rail-set tbrdma0 1 0 --dup 0 || fail "rail-set failed"

step "delay 400 ms: a datagram takes at least that long"
"$CTL" rail-set tbrdma0 1 0 --delay-us 400000 || fail "rail-set --delay-us failed"
mgmt_listen_start tbrdma1 1
t0=$(now_ms)
"$CTL" mgmt-send tbrdma0 1 late || fail "send failed"
mgmt_listen_wait
dt=$(( $(now_ms) - t0 ))
echo "delayed datagram took $dt ms"
[ "$dt" -ge 400 ] || fail "arrived after $dt ms, delay is 400 ms"

step "reorder window 16 (with delay, so frames queue up): order changes, nothing lost"
"$CTL" rail-set tbrdma0 1 0 --delay-us 200000 --reorder 16 || fail "rail-set --reorder failed"
mgmt_listen_start tbrdma1 32
"$CTL" mgmt-send tbrdma0 1 r --repeat 32 --seq || fail "send failed"
mgmt_listen_wait
sed -n 's/.* text=r-//p' /tmp/mgmt.out > /tmp/order
[ "$(sort -n -u /tmp/order | wc -l)" = 32 ] || fail "reorder lost or duplicated frames"
seq 0 31 | cmp -s - /tmp/order && fail "32 frames through a reorder window of 16 arrived in order"
echo "arrival order: $(tr '\n' ' ' < /tmp/order)"
"$CTL" rail-set tbrdma0 1 0 --delay-us 0 --reorder 0 || fail "rail-set failed"

step "rate cap 200 kbit/s: 20 x 1000 bytes take >= 0.7 s"
"$CTL" rail-set tbrdma0 1 0 --rate 200k || fail "rail-set --rate failed"
payload=$(head -c 1000 /dev/zero | tr '\0' x)
mgmt_listen_start tbrdma1 20
t0=$(now_ms)
"$CTL" mgmt-send tbrdma0 1 "${payload:0:990}" --repeat 20 --seq || fail "send failed"
mgmt_listen_wait
dt=$(( $(now_ms) - t0 ))
echo "20 kB at 200 kbit/s took $dt ms"
[ "$dt" -ge 700 ] || fail "rate cap not applied: $dt ms"
"$CTL" rail-set tbrdma0 1 0 --rate 0 || fail "rail-set failed"

step "small ring + delay: credit stalls are counted, nothing is lost"
"$CTL" cable-new tbrdma0 tbrdma1 --depth 8 > /dev/null || fail "second cable failed"
"$CTL" rail-set tbrdma0 1 0 --cut || fail "cut rail 0 failed"
"$CTL" rail-set tbrdma0 1 1 --delay-us 100000 || fail "rail-set failed"
mgmt_listen_start tbrdma1 24
"$CTL" mgmt-send tbrdma0 1 s --repeat 24 --seq || fail "send failed"
mgmt_listen_wait
"$CTL" links | tee /tmp/links
[ "$(cnt tbrdma0 1 1 mgmt_tx)" = 24 ] || fail "rail 1 mgmt_tx $(cnt tbrdma0 1 1 mgmt_tx)"
[ "$(lcnt tbrdma0 1 credit_stalls)" -gt 0 ] || fail "no credit stall counted with 8 descriptors"
# ring occupancy since the rail came up: 24 frames through 8 descriptors 100 ms away kept the
# TX ring full (credit-stalled) for >= 200 ms of it
snap_ring
echo "slow wire: tbrdma0's TX ring full $(ring_ms tbrdma0 tx_full_ppm) ms of $(cnt tbrdma0 1 1 ring_ms) ms"
[ "$(ring_ms tbrdma0 tx_full_ppm)" -ge 200 ] || fail "TX ring full $(ring_ms tbrdma0 tx_full_ppm) ms, not >= 200"

step "ring occupancy: across a cut, idle, a stalled receiver (TX and RX full), a starved sender"
"$CTL" rail-set tbrdma0 1 1 --delay-us 0 --cut || fail "rail-set failed"
"$CTL" links > /tmp/links
grep "^  rail dev=tbrdma0 link=1 id=1 " /tmp/links | grep -q ring_ms && fail "ring figures on a cut rail"
"$CTL" rail-set tbrdma0 1 1 --restore || fail "restore failed"
wait_for 5 rail1_up
snap_ring
[ "$(cnt tbrdma0 1 1 ring_ms)" -lt 10000 ] && [ "$(cnt tbrdma0 1 1 tx_full_ppm)" = 0 ] ||
	fail "figures not restarted at the restore: $(grep "rail dev=tbrdma0 link=1 id=1 " /tmp/links)"
# idle: neither ring full
ring_delta_start
sleep 1
ring_delta "idle"
[ "$(d_ms tbrdma0 tx_full_ppm)" -le 10 ] && [ "$(d_ms tbrdma1 rx_full_ppm)" -le 10 ] ||
	fail "idle: TX full $(d_ms tbrdma0 tx_full_ppm) ms, RX full $(d_ms tbrdma1 rx_full_ppm) ms"
# a stalled receiver: tbrdma1 gives its 8 buffers back every 300 ms, the wire waits for them;
# 24 frames wait for two drains: tbrdma0's TX ring is full ~600 ms, tbrdma1's RX ring ~900 ms
"$CTL" rail-set tbrdma0 1 1 --rx-hold-us 300000 || fail "rail-set --rx-hold-us failed"
ring_delta_start
mgmt_listen_start tbrdma1 24
"$CTL" mgmt-send tbrdma0 1 h --repeat 24 --seq || fail "send failed"
mgmt_listen_wait
sleep 0.5
ring_delta "stalled receiver"
[ "$(d_ms tbrdma0 tx_full_ppm)" -ge 350 ] ||
	fail "stalled receiver: the sender's TX ring full only $(d_ms tbrdma0 tx_full_ppm) ms"
[ "$(d_ms tbrdma1 rx_full_ppm)" -ge 500 ] ||
	fail "stalled receiver: its RX ring full only $(d_ms tbrdma1 rx_full_ppm) ms"
[ "$(cnt tbrdma1 1 1 rx_nobuf)" = 0 ] || fail "frames dropped for lack of a buffer: the wire must wait"
# the stalled receiver's rail full of other frames (routed ones here, as RDMA data or IP would fill
# it; 8 fill its RX ring, 6 its TX ring, 160 last ~20 drains, ~6 s: with 40 (1.5 s) a guest of a
# host at load ~8, where a 1 s sleep took 4.9 s, looked only after the fill had drained, and
# waited for a full ring in vain): 2 of the 8 TX descriptors stay for
# management, so a sweep datagram still goes out at once (--once: no retry of a full ring; before
# TBR_LINK_MGMT_TX_RESERVE: ENOBUFS)
mgmt_listen_start tbrdma1 1
"$CTL" mgmt-send tbrdma0 1 fill --pdf 4 --repeat 160 > /tmp/fill.log 2>&1 &
fill=$!
rail1_credits() { "$CTL" links > /tmp/links; [ "$(cnt tbrdma0 1 1 credits)" -le "$1" ]; }
wait_for 10 rail1_credits 2
"$CTL" mgmt-send tbrdma0 1 vl15 --once ||
	fail "a management datagram refused with the TX ring full of other frames: $(grep "rail dev=tbrdma0 link=1 id=1 " /tmp/links)"
"$CTL" links > /tmp/links	# the fill may have ended: then more are free
[ "$(cnt tbrdma0 1 1 credits)" -ge 1 ] ||
	fail "routed frames took a management descriptor: $(grep "rail dev=tbrdma0 link=1 id=1 " /tmp/links)"
mgmt_listen_wait
grep -q "text=vl15$" /tmp/mgmt.out || fail "the management datagram did not arrive: $(cat /tmp/mgmt.out)"
wait "$fill" || fail "routed frames not sent: $(cat /tmp/fill.log)"
# a starved sender: one frame every 100 ms, taken at once: both rings empty, never full
"$CTL" rail-set tbrdma0 1 1 --rx-hold-us 0 || fail "rail-set failed"
sleep 0.3
ring_delta_start
for i in $(seq 10); do
	"$CTL" mgmt-send tbrdma0 1 "t-$i" || fail "send failed"
	sleep 0.1
done
ring_delta "starved sender"
[ "$(d_ms tbrdma0 tx_full_ppm)" = 0 ] && [ "$(d_ms tbrdma1 rx_full_ppm)" = 0 ] ||
	fail "starved sender: TX full $(d_ms tbrdma0 tx_full_ppm) ms, RX full $(d_ms tbrdma1 rx_full_ppm) ms"
[ "$(d_ms tbrdma0 tx_empty_ppm)" -ge $((D_WINDOW * 8 / 10)) ] &&
	[ "$(d_ms tbrdma1 rx_empty_ppm)" -ge $((D_WINDOW * 8 / 10)) ] ||
	fail "starved sender: TX empty $(d_ms tbrdma0 tx_empty_ppm) ms, RX empty $(d_ms tbrdma1 rx_empty_ppm) ms of $D_WINDOW"

step "DEV_DEL of tbrdma1 removes its cables, tbrdma0 goes DOWN"
ip link set tbr0 up
port_is tbrdma0 ACTIVE || fail "tbrdma0 not ACTIVE before dev-del"
"$CTL" dev-del tbrdma1 || fail "dev-del failed"
rdma dev show tbrdma1 > /dev/null 2>&1 && fail "tbrdma1 still there"
port_is tbrdma0 DOWN || fail "tbrdma0 still ACTIVE without a cable"
[ -z "$("$CTL" cables)" ] || fail "cables left: $("$CTL" cables)"
[ -z "$(ls /sys/bus/tbrdma/devices/)" ] || fail "sysfs devices left: $(ls /sys/bus/tbrdma/devices/)"
rmmod tbrdma || fail "rmmod failed"
echo "rail-faults: ok"
