# Issue 12, M1+M2: two VMs, each with the Thunderbolt stand-in (tests/tbsim) in place of
# thunderbolt.ko, QEMU's edu device as the NHI and one 2-lane "cable" (a virtio NIC). On each:
# the stand-in's domain and host router, tbrdma's service driver and property directory; then the
# peer's XDomain appears (sysfs as the real bus shows it, MODALIAS on the service), our service
# binds, HELLO/READY, 2 tb rails up, ping over tbr0 and ib_write_bw / ib_read_lat / ib_send_bw
# across, every rail carried frames. Then Debian's own thunderbolt-net.ko (modprobe, unchanged: the
# stand-in has the real module's symbol CRCs) binds the "network" service of the same XDomain with
# its own HopID, rings and path pair: thunderbolt0 up, ping, a 1 MiB TCP transfer verified by
# SHA-256 while ib_write_bw runs over tbrdma's rails. Then both modules unload and reload in firmware-CM mode: one
# rail per XDomain; with the CRC fault knob on, ib_write_bw still passes and tbrdma counts the
# frames with CRC errors (rx_errors). Then b's cable NIC goes unserviced for 0.5 s in a burst: with
# E2E credits no frame is lost and a's TX ring waits. Then a's cable loses every frame for 1 s
# in a burst: b's RX ring grants a resync and the transfer completes.
# vm-kernel: 6.1
# (on 6.12 in make check-long, with the other tbsim tests)
# vm-count: 2
# vm-rails: 1
# vm-device: edu
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a

step "load: stand-in (cables: the 52:54: NIC), tbrdma"
tbsim_load cable_mac=52:54:
[ -d $TBD/domain0 ] || fail "no domain0: $(ls $TBD)"
[ -d $TBD/0-0 ] || fail "no host router 0-0"
[ "$(cat $TBD/domain0/security)" = none ] || fail "security $(cat $TBD/domain0/security)"
[ -d /sys/bus/thunderbolt/drivers/tbrdma ] || fail "no tbrdma service driver"
state=$(cat /sys/module/tbrdma/parameters/tb_state)
grep -q 'dir=registered' <<< "$state" || fail "property dir not registered: $state"
[ "$(cat "$(readlink -f $TBD/domain0)/../vendor"):$(cat "$(readlink -f $TBD/domain0)/../device")" = 0x1234:0x11e8 ] ||
	fail "domain0 is not under the edu NHI: $(readlink -f $TBD/domain0)"

step "XDomain and service"
wait_for 60 xd_dev
XD=$(xd_dev)
echo "XDomain $XD: $(cat "$XD/unique_id") $(cat "$XD/rx_speed") x$(cat "$XD/rx_lanes"), vendor $(cat "$XD/vendor") $(cat "$XD/vendor_name")/$(cat "$XD/device_name"), maxhopid $(cat "$XD/maxhopid")"
[ "$(basename "$XD")" = 0-1 ] || fail "XDomain is $(basename "$XD"), not 0-1 (port 1)"
[ "$(cat "$XD/rx_lanes")" = 2 ] || fail "lanes $(cat "$XD/rx_lanes")"
[ "$(cat "$XD/rx_speed")" = "20.0 Gb/s" ] || fail "speed $(cat "$XD/rx_speed")"
[ "$(cat "$XD/device_name")" = "$other" ] || fail "peer's device_name $(cat "$XD/device_name"), not $other"
mine=$(cat $TBD/0-0/unique_id 2>&1)
echo "this host $mine"
grep -Eqx '[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}' "$XD/unique_id" || fail "unique_id $(cat "$XD/unique_id")"
[ "$(cat "$XD/unique_id")" != "$mine" ] || fail "the XDomain has our own UUID"
wait_for 30 svc_of "$XD" tbrdma
SVC=$(svc_of "$XD" tbrdma)
grep -qx 'MODALIAS=tbsvc:ktbrdmap00000001v00000001r00000001' "$SVC/uevent" || fail "service uevent: $(cat "$SVC/uevent")"
[ "$(cat "$SVC/modalias")" = tbsvc:ktbrdmap00000001v00000001r00000001 ] || fail "modalias $(cat "$SVC/modalias")"
wait_for 30 test -e "$SVC/driver"
[ "$(basename "$(readlink "$SVC/driver")")" = tbrdma ] || fail "service not bound to tbrdma"
grep -qx DEVTYPE=thunderbolt_xdomain "$XD/uevent" || fail "XDomain uevent: $(cat "$XD/uevent")"
grep -qx DEVTYPE=thunderbolt_service "$SVC/uevent" || fail "service uevent: $(cat "$SVC/uevent")"

step "negotiation, rails"
tb_up 2
dmesg | grep -E 'tbrdma: (peer|[0-9] rail)' || true
klog_has 'tbrdma: peer .*, 20 Gb/s x2 lanes, software CM: asking for 2 rail(s)' || fail "no probe line"
# ACK rides on: both HELLOs carried TBR_NEGO_CAP_ACK_RIDE (docs/protocol.md 3.3)
klog_has 'tbrdma: 2 rail(s) to .*: rings 256/256, e2e on, frames 4144 (split), ACK rides on, paths on' ||
	fail "no rails line"
grep -q 'services=1 rails=2' /sys/module/tbrdma/parameters/tb_state || fail "tb_state: $(cat /sys/module/tbrdma/parameters/tb_state)"
vm_signal up
vm_wait "$other.up" 120

step "perftest across"
perf_pair w ib_write_bw -s 65536 -n 50
perf_pair l ib_read_lat -s 64 -n 100
# the tb negotiation said both take ACKs riding on data frames (the rails line above): a WRITE
# ping-pong's ACKs go in the answers that come within the wait (100 messages received by each
# end; 0 to 74 rode with other VM tests beside: how many answers come within 500 us is TCG's
# scheduling, so the count is printed, not asserted)
rides0=$(cat /sys/class/infiniband/tbrdma0/ports/1/hw_counters/acks_piggybacked)
perf_pair lw ib_write_lat -s 64 -n 100
rides=$(($(cat /sys/class/infiniband/tbrdma0/ports/1/hw_counters/acks_piggybacked) - rides0))
echo "ACKs that rode on ib_write_lat's frames: $rides"
# the poll mode on tb rails (kernel/xport/xport_poll.c, tb_ring.c tbr_tb_busy_poll): a doorbell
# takes the RX ring's completed frames itself instead of waiting for the ring interrupt, which the
# NHI throttles to one per 128 us (the stand-in's irq_throttle_us); the counters must show it ran
hw=/sys/class/infiniband/tbrdma0/ports/1/hw_counters
polls0=$(cat $hw/busy_polls) prx0=$(cat $hw/busy_poll_rx) pfr0=$(cat $hw/busy_poll_frames)
thr0=$(sed -n 's/.*irq_throttled=\([0-9]*\).*/\1/p' /sys/module/thunderbolt/parameters/stats)
echo 10000 > /sys/module/tbrdma/parameters/busy_poll_us
perf_pair lwp ib_write_lat -s 64 -n 100
echo -1 > /sys/module/tbrdma/parameters/busy_poll_us
polls=$(($(cat $hw/busy_polls) - polls0)) prx=$(($(cat $hw/busy_poll_rx) - prx0))
pfr=$(($(cat $hw/busy_poll_frames) - pfr0))
thr=$(($(sed -n 's/.*irq_throttled=\([0-9]*\).*/\1/p' /sys/module/thunderbolt/parameters/stats) - thr0))
echo "poll mode on tb rails: $polls doorbells busy-polled, $prx until the answer came, $pfr frames taken by the polls themselves; ring interrupts throttled meanwhile: $thr"
[ "$polls" -ge 50 ] || fail "poll mode: only $polls doorbells busy-polled the tb rails"
[ "$prx" -ge 10 ] || fail "poll mode: only $prx of $polls busy-polls of the tb rails saw the answer"
perf_pair s ib_send_bw -s 4096 -n 100
"$CTL" links tbrdma0 | tee /tmp/links
# frames of a page of payload cross the 4096-byte ring frames split in two (tb_priv.h)
grep -q "^link dev=tbrdma0 .*max_frame=4144" /tmp/links || fail "tb link max_frame is not 4144"
# TX zero-copy (docs/protocol.md 8): a's WRITEs and SENDs of whole pages went from its MR's pages
zc=$(sed -n 's/^link dev=tbrdma0 .* tx_zerocopy=\([0-9]*\).*/\1/p' /tmp/links)
echo "frames sent zero-copy: $zc"
if [ "$VM_ROLE" = a ]; then
	[ "${zc:-0}" -ge 800 ] || fail "ib_write_bw's 50 x 64 KiB sent ${zc:-no} frames zero-copy, not >= 800"
fi
for r in 0 1; do
	t=$(sed -n "s/^  rail dev=tbrdma0 link=1 id=$r .* tx_frames=\([0-9]*\).*/\1/p" /tmp/links)
	[ "${t:-0}" -gt 50 ] || fail "rail $r carried no traffic (tx_frames=${t:-none})"
done
grep -q 'kind=tb\|backend=tb' /tmp/links || echo "note: rail kind not shown in links"
# the stand-in's cable packs the frames a TX ring's work finds queued into shared packets
# (tests/tbsim/cable.c): a's ib_write_bw frames went at 3.8-4.2 per packet (b's ACKs: ~1.3)
st=$(cat /sys/module/thunderbolt/parameters/stats)
echo "$st"
if [ "$VM_ROLE" = a ]; then
	tf=$(sed -n 's/.*tx_frames=\([0-9]*\).*/\1/p' <<< "$st")
	tp=$(sed -n 's/.*tx_packets=\([0-9]*\).*/\1/p' <<< "$st")
	[ "${tp:-0}" -gt 0 ] && [ "${tf:-0}" -ge $((2 * tp)) ] ||
		fail "cable packets not shared: ${tf:-?} ring frames in ${tp:-?} packets"
fi

# Debian's own thunderbolt-net.ko (from the kernel package, not rebuilt) on the same cable: the
# stand-in exports the real thunderbolt.ko's symbols with the same modversions CRCs, so it loads
# as on hardware. Its "network" directory makes a second service under the same XDomain, it logs in
# (ThunderboltIP LOGIN over tb_xdomain_request/response), takes its own HopID and rings and enables
# its own path pair next to tbrdma's 2; IP over thunderbolt0 then carries a verified TCP transfer
# while ib_write_bw runs over tbrdma's rails.
step "thunderbolt-net on the same XDomain: TCP over thunderbolt0 while ib_write_bw runs on tbrdma"
modprobe thunderbolt_net || fail "Debian's thunderbolt-net does not load against the stand-in"
! dmesg | grep -E 'thunderbolt_net: (disagrees about version|no symbol version)' ||
	fail "thunderbolt-net loaded with symbol version errors"
wait_for 30 svc_of "$XD" network
NSVC=$(svc_of "$XD" network)
[ "$(cat "$NSVC/modalias")" = tbsvc:knetworkp00000001v00000001r00000001 ] || fail "network modalias $(cat "$NSVC/modalias")"
[ "$(modprobe -R "$(cat "$NSVC/modalias")")" = thunderbolt_net ] || fail "the service's modalias does not resolve to thunderbolt_net"
wait_for 30 test -e "$NSVC/driver"
[ "$(basename "$(readlink "$NSVC/driver")")" = thunderbolt-net ] || fail "network service not bound to thunderbolt-net"
[ "$(basename "$(readlink "$SVC/driver")")" = tbrdma ] || fail "tbrdma's service lost its driver"
tn_up
cat /sys/module/thunderbolt/parameters/paths | tee /tmp/paths
[ "$(grep -c "^$(basename "$XD") " /tmp/paths)" = 3 ] || fail "not 3 path pairs (tbrdma's 2, thunderbolt-net's 1) on $(basename "$XD")"
for f in tx_hopid tx_ring rx_hopid rx_ring; do
	[ -z "$(grep -o "$f=[0-9]*" /tmp/paths | sort | uniq -d)" ] || fail "two path pairs share a $f"
done
vm_signal tn_up
vm_wait "$other.tn_up" 120
ping -c 1 -W 5 "$TN_PEER" > /dev/null || fail "no IP over thunderbolt0 (ping $TN_PEER)"
# b serves one connection: reads to EOF, answers "BYTES SHA256"; a sends 1 MiB of random data and
# compares. Meanwhile ib_write_bw (-D: for 6 s) runs over tbrdma's rails of the same cable.
tcp_srv='import hashlib, socket, sys
s = socket.create_server((sys.argv[1], 5201)); c, _ = s.accept(); h = hashlib.sha256(); n = 0
while (d := c.recv(65536)):
	h.update(d); n += len(d)
c.sendall(b"%d %s" % (n, h.hexdigest().encode()))'
tcp_cli='import socket, sys
c = socket.create_connection((sys.argv[1], 5201), timeout=60); c.sendall(open(sys.argv[2], "rb").read())
c.shutdown(socket.SHUT_WR); print(c.recv(200).decode())'
rail_frames() { "$CTL" links tbrdma0 | awk '/^  rail dev=tbrdma0 /{ for (i = 1; i <= NF; i++) if ($i ~ /^tx_frames=/) { sub(/.*=/, "", $i); n += $i } } END { print n + 0 }'; }
frames_past() { [ "$(rail_frames)" -gt "$1" ]; }
f0=$(rail_frames)
perf_pair tn ib_write_bw -s 65536 -D 6 > /tmp/tn.perf 2>&1 &
perf=$!
if [ "$VM_ROLE" = b ]; then
	python3 -c "$tcp_srv" "$TN_ME" > /tmp/tcp.srv 2>&1 &
	srv=$!
	sleep 0.5
	vm_signal tcp_listening
	wait "$srv" || { cat /tmp/tcp.srv; fail "TCP server over thunderbolt0 failed"; }
else
	head -c 1M /dev/urandom > /tmp/tcp.bin
	want="1048576 $(sha256sum < /tmp/tcp.bin | cut -d' ' -f1)"
	vm_wait b.tcp_listening 60
	wait_for 30 frames_past $((f0 + 200))	# ib_write_bw is moving data
	f1=$(rail_frames) t0=$SECONDS
	got=$(python3 -c "$tcp_cli" "$TN_PEER" /tmp/tcp.bin) || fail "TCP client over thunderbolt0 failed"
	f2=$(rail_frames)
	echo "TCP over thunderbolt0: 1 MiB in $((SECONDS - t0)) s, peer got: $got; tbrdma rail frames meanwhile: $((f2 - f1))"
	echo "TCP retransmitted segments: $(awk '/^Tcp: [0-9]/ { print $13 }' /proc/net/snmp)"
	[ "$got" = "$want" ] || fail "TCP transfer corrupted: sent $want, peer got $got"
	[ "$f2" -gt $((f1 + 100)) ] || fail "tbrdma carried no RDMA during the TCP transfer ($f1 -> $f2 frames)"
fi
wait "$perf" || { cat /tmp/tn.perf; fail "ib_write_bw over tbrdma failed while thunderbolt-net ran"; }
cat /tmp/tn.perf
ip -s link show thunderbolt0
cat /sys/module/thunderbolt/parameters/stats
# either side's unload removes the other's network service (and thunderbolt0) with its directory
vm_signal tn_done
vm_wait "$other.tn_done" 60
rmmod thunderbolt_net || fail "rmmod thunderbolt_net"
wait_for 30 sh -c '[ "$(grep -c . /sys/module/thunderbolt/parameters/paths)" = 2 ]' ||
	fail "thunderbolt-net's path pair left behind: $(cat /sys/module/thunderbolt/parameters/paths)"

step "unload both modules, reload: firmware connection manager (one DMA path per XDomain)"
vm_signal reload
vm_wait "$other.reload" 60
rmmod tbrdma || fail "rmmod tbrdma"
rmmod thunderbolt || fail "rmmod of the stand-in"
[ -d /sys/bus/thunderbolt ] && fail "thunderbolt bus left behind"
tbsim_load cable_mac=52:54: fw_cm=1
[ "$(cat $TBD/domain0/security)" = user ] || fail "fw CM security $(cat $TBD/domain0/security)"
tb_up 1
klog_has 'tbrdma: peer .*, 20 Gb/s x2 lanes, firmware CM: asking for 1 rail(s)' || fail "no firmware-CM probe line"
grep -q 'services=1 rails=1' /sys/module/tbrdma/parameters/tb_state || fail "tb_state: $(cat /sys/module/tbrdma/parameters/tb_state)"
vm_signal up2
vm_wait "$other.up2" 120

# Issue 49: the NHI throttles every ring interrupt to one per 128 us (nhi.c
# nhi_enable_int_throttling; the stand-in's irq_throttle_us, 128 by default). 64 B ping-pongs
# over this one tb rail, in rounds of (a) no throttle, (b) the NHI's throttle, both with the poll
# as shipped (busy_poll_us -1, auto: a doorbell that starts a round trip polls a tb rail for
# 128 us), (c) (in all rounds but the last two) the NHI's throttle with the poll off; then the throttle scaled to TCG's round trip
# (SCALED us: TCG's 64 B one-way is 0.3-6 ms, hardware's ~7 us, so here 128 us never falls
# between two of a ring's interrupts as it does on hardware: (c) throttles none): (d) the poll
# off must be clearly slower (the knob bites: counted, and t_min >= 3x), (e) a poll as long as
# the throttle takes the answers before the throttled interrupt (>= half the polls; (e) <= 0.8x
# (d)). The host's load swings TCG's latency 5x between
# runs seconds apart, so each round's configurations run back to back and the ratios are the
# medians of the rounds' ratios of t_typical (perftest's median of its iterations); a run whose
# t_typical perftest could not compute (inf: its sampled CPU frequency) leaves its round out.
step "64 B latency over one tb rail: the NHI's interrupt throttle, the poll as shipped"
THR=/sys/module/thunderbolt/parameters/irq_throttle_us
BP=/sys/module/tbrdma/parameters/busy_poll_us
[ "$(cat $THR)" = 128 ] || fail "the stand-in's throttle is $(cat $THR) us, not nhi.c's 128"
[ "$(cat $BP)" = -1 ] || fail "busy_poll_us is $(cat $BP), not the shipped -1 (auto)"
# 3 rounds in make check, 5 in make check-long (TBSIM_LAT_ROUNDS)
SCALED=10000 LAT_ROUNDS=${TBSIM_LAT_ROUNDS:-3}
LAT_NEED=$((LAT_ROUNDS > 3 ? 3 : LAT_ROUNDS - 1))	# rounds that must give a t_typical
declare -A LAT_CFG=([a]="0 -1 200" [b]="128 -1 200" [c]="128 0 200" [d]="$SCALED 0 100" [e]="$SCALED $SCALED 100")
declare -A LAT_V LAT_M LAT_C
thr_count() { sed -n 's/.*irq_throttled=\([0-9]*\).*/\1/p' /sys/module/thunderbolt/parameters/stats; }
lat_cnt() {	# KEY: add the throttled interrupts and the poll counters since lat_snap
	local c0=(${LAT_C[snap]}) c1=($(thr_count) $(cat $hw/busy_polls) $(cat $hw/busy_poll_rx)) o=(${LAT_C[$1]:-0 0 0})
	LAT_C[$1]="$((o[0] + c1[0] - c0[0])) $((o[1] + c1[1] - c0[1])) $((o[2] + c1[2] - c0[2]))"
}
lat_one() {	# TOOL CFG ROUND
	local t v n
	read -r t v n <<< "${LAT_CFG[$2]}"
	echo "$t" > $THR
	echo "$v" > $BP
	LAT_C[snap]="$(thr_count) $(cat $hw/busy_polls) $(cat $hw/busy_poll_rx)"
	perf_pair "l$1$2$3" "$1" -s 64 -n "$n"
	lat_cnt "$1$2"
	[ "$VM_ROLE" = a ] || return 0
	read -r t v <<< "$(awk -v n="$n" '$1 == 64 && $2 == n { print $3, $5 }' "/tmp/l$1$2$3.log")"
	[ -n "$v" ] || fail "no t_typical in /tmp/l$1$2$3.log"
	LAT_V[$1$2$3]=$v LAT_M[$1$2$3]=$t
}
num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
med() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
lat_vals() { local r; for r in $(seq $LAT_ROUNDS); do num "${LAT_V[$1$r]:-}" && echo "${LAT_V[$1$r]}"; done; }
lat_mins() { local r; for r in $(seq $LAT_ROUNDS); do num "${LAT_M[$1$r]:-}" && echo "${LAT_M[$1$r]}"; done; }
lat_ratio() {	# TOOL X Y: the median over the rounds of X's t_typical over Y's (rounds with both)
	local r
	for r in $(seq $LAT_ROUNDS); do
		num "${LAT_V[$1$2$r]:-}" && num "${LAT_V[$1$3$r]:-}" &&
			awk -v x="${LAT_V[$1$2$r]}" -v y="${LAT_V[$1$3$r]}" 'BEGIN { printf "%.3f\n", x / y }'
	done | med
}
lat_t0=$SECONDS
for r in $(seq $LAT_ROUNDS); do
	for c in a b c d e; do
		if [ $c != c ] || [ "$r" -le $((LAT_ROUNDS - 2)) ]; then lat_one ib_write_lat $c $r; fi
	done
done
echo 128 > $THR
echo -1 > $BP
echo "latency rounds: $((SECONDS - lat_t0)) s"
if [ "$VM_ROLE" = a ]; then
	for k in ib_write_lata ib_write_latb ib_write_latc ib_write_latd ib_write_late; do
		read -r t v n <<< "${LAT_CFG[${k: -1}]}"
		read -r th bp bpr <<< "${LAT_C[$k]}"
		echo "$k: irq_throttle_us=$t busy_poll_us=$v: t_typical $(for r in $(seq $LAT_ROUNDS); do echo -n "${LAT_V[$k$r]:--} "; done)us, median $(lat_vals $k | med) (t_min median $(lat_mins $k | med)); ring interrupts throttled $th, doorbells busy-polled $bp, $bpr until the answer"
	done
	wb=$(lat_ratio ib_write_lat b a) wc=$(lat_ratio ib_write_lat c a) wd=$(lat_ratio ib_write_lat d a) we=$(lat_ratio ib_write_lat e a)
	echo "ib_write_lat, medians of the rounds' ratios: (b)/(a) $wb, (c)/(a) $wc, (d)/(a) $wd, (e)/(a) $we, (e)/(d) $(lat_ratio ib_write_lat e d)"
	[ "$(lat_vals ib_write_latb | grep -c .)" -ge $LAT_NEED ] && [ "$(lat_vals ib_write_lata | grep -c .)" -ge $LAT_NEED ] ||
		fail "fewer than $LAT_NEED rounds of ib_write_lat gave a t_typical"
	read -r _ bp _ <<< "${LAT_C[ib_write_latb]}"
	[ "$bp" -ge $((LAT_ROUNDS * 150)) ] || fail "the shipped poll ran on only $bp doorbells of (b)'s $((LAT_ROUNDS * 200)) round trips"
	awk -v r="$wb" 'BEGIN { exit !(r <= 1.3) }' ||
		fail "64 B ib_write_lat with the NHI's throttle and the shipped poll is ${wb}x the run without the throttle (> 1.3x)"
	# the knob bites: interrupts delayed, and even the best round trip of each run waits for the
	# throttle (t_min: the host's stalls, which make t_typical swing 5x, do not reach it)
	read -r th _ _ <<< "${LAT_C[ib_write_latd]}"
	[ "$th" -ge $((LAT_ROUNDS * 30)) ] || fail "the throttle of $SCALED us delayed only $th ring interrupts in (d)"
	md=$(lat_mins ib_write_latd | med) ma=$(lat_mins ib_write_lata | med)
	awk -v d="$md" -v a="$ma" 'BEGIN { exit !(d >= 3 * a) }' ||
		fail "the throttle scaled to $SCALED us with the poll off: t_min $md us against $ma us unthrottled, not 3x: the knob does not bite"
	# the poll takes the answers before the throttled interrupt
	read -r _ bp bpr <<< "${LAT_C[ib_write_late]}"
	[ "$((2 * bpr))" -ge "$bp" ] || fail "only $bpr of $bp polls under the $SCALED us throttle saw the answer"
	awk -v r="$(lat_ratio ib_write_lat e d)" 'BEGIN { exit !(r <= 0.8) }' ||
		fail "the poll under the $SCALED us throttle is $(lat_ratio ib_write_lat e d)x the run without it, not <= 0.8x"
fi

step "fault knob: every 100th ring frame arrives with a CRC error"
echo 100 > /sys/module/thunderbolt/parameters/fault_crc
perf_pair w2 ib_write_bw -s 65536 -n 100
echo 0 > /sys/module/thunderbolt/parameters/fault_crc
"$CTL" links tbrdma0 | tee /tmp/links
cat /sys/module/thunderbolt/parameters/stats
rxe=$(sed -n 's/^link dev=tbrdma0 .* rx_errors=\([0-9]*\).*/\1/p' /tmp/links)
crc=$(sed -n 's/.*rx_crc=\([0-9]*\).*/\1/p' /sys/module/thunderbolt/parameters/stats)
[ "${crc:-0}" -gt 0 ] && [ "${rxe:-0}" -gt 0 ] || fail "CRC errors not seen (stand-in rx_crc=$crc, tbrdma rx_errors=$rxe)"

# E2E flow control is credit based end to end (tests/tbsim/ring.c): a's TX ring sends no frame b
# has no credit (a posted buffer, within a window the cable holds) for. b's cable NIC is left
# unserviced for 0.5 s in the middle of a burst, as when the host deschedules b's VM: before the
# credits, a went on sending and the frames overflowed b's virtio RX queue and QEMU's UDP socket
# (counted now as b's rx_lost: frames of a's ring that never arrived). With E2E none may be lost.
# -u 18 (1.07 s ACK timeout): the pause itself must not exhaust RC's retries.
step "E2E: b's cable NIC not serviced for 0.5 s in a burst: a waits for credits, no frame lost"
st() { grep -o "\b$1=[0-9]*" /sys/module/thunderbolt/parameters/stats | cut -d= -f2; }
past() { [ "$(st "$1")" -ge "$2" ]; }
lost0=$(st rx_lost) nobuf0=$(st rx_nobuf) waits0=$(st tx_waits)
rm -f /tmp/paused
if [ "$VM_ROLE" = b ]; then
	nic=$(grep -l '^52:54:' /sys/class/net/*/address | head -1 | xargs dirname | xargs basename)
	rx0=$(st rx_frames)
	(wait_for 120 past rx_frames $((rx0 + 500)) && ip link set dev "$nic" down && sleep 0.5 &&
		ip link set dev "$nic" up && : > /tmp/paused) &
	pauser=$!
fi
perf_pair w3 ib_write_bw -s 65536 -n 300 -u 18
cat /sys/module/thunderbolt/parameters/stats
echo "rx_lost +$(($(st rx_lost) - lost0)) rx_nobuf +$(($(st rx_nobuf) - nobuf0)) tx_waits +$(($(st tx_waits) - waits0))"
if [ "$VM_ROLE" = b ]; then
	wait "$pauser" || true
	[ -e /tmp/paused ] || fail "b's cable NIC was not paused during the burst"
	ip -s link show dev "$nic"
	[ "$(st rx_lost)" = "$lost0" ] || fail "frames lost on the cable with E2E: rx_lost $lost0 -> $(st rx_lost)"
	[ "$(st rx_nobuf)" = "$nobuf0" ] || fail "frames dropped for lack of a buffer with E2E: rx_nobuf $nobuf0 -> $(st rx_nobuf)"
else
	[ "$(st tx_waits)" -gt "$waits0" ] || fail "a's TX ring never waited for credits: tx_waits $waits0"
fi

# A's cable loses every frame for 1 s in a burst: a's TX ring (E2E) sent its whole window into the
# blackout, and b grants from the next frame it expects, so without a resync a's ring would wait
# for credits forever and its one rail (firmware CM) carry nothing: RC retry exceeded. b's RX ring,
# silent for 1 s and 3 keepalives, grants a resync; the transport resends what was lost.
# Not on 6.12 yet: there, in 1 of 3 runs, ib_write_bw on a died of a segfault in this step
# (2026-12-02), and the 1 GiB tbsim-cable run crashed guests with corrupted kernel memory: an open
# bug on 6.12 (docs/testing.md), not a reason to stop asserting the resync on 6.1.
case "$(uname -r)" in
6.12*)	echo "blackout step: not run on $(uname -r) (open 6.12 memory corruption, docs/testing.md)"
	vm_signal finished
	vm_wait "$other.finished" 60
	exit 0 ;;
esac
step "E2E: every frame of a lost for 1 s in a burst: b's ring resyncs, the transfer completes"
sync0=$(st resyncs) drop0=$(st tx_dropped)
if [ "$VM_ROLE" = a ]; then
	tx0=$(rail_frames)
	(wait_for 120 frames_past $((tx0 + 300)) &&
		echo 1000 > /sys/module/thunderbolt/parameters/fault_blackout_ms && rail_frames > /tmp/blackout) &
	blacker=$!
fi
perf_pair w4 ib_write_bw -s 65536 -n 300 -u 18
cat /sys/module/thunderbolt/parameters/stats
echo "resyncs +$(($(st resyncs) - sync0)) tx_dropped +$(($(st tx_dropped) - drop0))"
if [ "$VM_ROLE" = a ]; then
	wait "$blacker" || true
	[ -s /tmp/blackout ] || fail "the blackout did not start during the burst"
	[ "$(st tx_dropped)" -gt "$drop0" ] || fail "the blackout lost no frame"
	after=$(($(rail_frames) - $(cat /tmp/blackout)))
	echo "rail frames sent from the blackout on: $after"
	[ "$after" -ge 100 ] || fail "the rail sent only $after frames from the blackout on"
else
	[ "$(st resyncs)" -gt "$sync0" ] || fail "b's RX ring never granted a resync"
fi
vm_signal finished
vm_wait "$other.finished" 60
