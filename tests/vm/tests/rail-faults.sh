# emu fault knobs on a 1-rail cable: drop 100% (nothing arrives, drops count), duplicate 100%
# (everything arrives twice), delay, rate cap, reorder, and a tiny ring under delay (credit stalls;
# ring occupancy: the stalled sender's TX ring full a good share of the time, the peer, a sender
# with nothing to send, never full and empty on average, its RX ring always posted).
# Ends with DEV_DEL of the extra device while its cable is up.
# vm-timeout: 400
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

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
# TX ring full for >= 200 ms; the peer sent nothing on it and always had buffers posted
txfull=$(cnt tbrdma0 1 1 tx_full_ppm) txmean=$(cnt tbrdma0 1 1 tx_mean_ppm) ms=$(cnt tbrdma0 1 1 ring_ms)
echo "stalled sender: TX ring full ${txfull:-?} ppm, mean ${txmean:-?} ppm of ${ms:-?} ms"
[ -n "$txfull" ] && [ "$txfull" -ge $((200000000 / ms)) ] ||
	fail "TX ring full ${txfull:-(absent)} ppm of $ms ms, not >= 200 ms"
[ "$(cnt tbrdma1 1 1 tx_full_ppm)" = 0 ] && [ "$(cnt tbrdma1 1 1 tx_mean_ppm)" -lt 1000 ] ||
	fail "idle sender: TX full $(cnt tbrdma1 1 1 tx_full_ppm) mean $(cnt tbrdma1 1 1 tx_mean_ppm) ppm"
[ "$(cnt tbrdma1 1 1 rx_empty_ppm)" = 0 ] && [ "$(cnt tbrdma1 1 1 rx_mean_ppm)" -gt 900000 ] ||
	fail "receiver: RX empty $(cnt tbrdma1 1 1 rx_empty_ppm) mean $(cnt tbrdma1 1 1 rx_mean_ppm) ppm"

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
