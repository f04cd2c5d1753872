# eth backend in one VM: tbrdma0 and tbrdma1 (netns h1) joined by two veth pairs (MTU 9000).
# Hellos find the peer on each pair, both rails join one link (backend=eth, 4144-byte frames);
# hostile binds refused with a message, non-root refused (EPERM); IP and ib_write_bw over the
# rails, with eth_bundle=0 no frame bundled; RC integrity (tests/progs/integrity) with frames
# bundled (several in one packet), sent in their pages and read in the skbs and, under a
# listening packet socket, copied out of cloned ones; a veth pair deleted
# takes its rail down and the traffic moves to the other; a 1500-byte MTU pair negotiates a
# smaller frame (reported per rail and per link) and new QPs size their frames to it, so RDMA
# traffic uses both rails; `rdma link add NAME type tbrdma netdev ETH` (iproute2, the RDMA
# core's rdma_link_ops) makes a device with an eth rail, refuses a bad netdev without leaving
# a device behind; unbind and rmmod clean.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

links_up() { # links_up DEV N: DEV has a link with N rails up
	"$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "
}

modprobe veth
tbr_load eth_hello_ms=200
"$CTL" dev-new > /dev/null || fail "dev-new failed"
for i in 0 1; do
	ip link add "ve${i}a" type veth peer name "ve${i}b"
	ip link set "ve${i}a" mtu 9000
	ip link set "ve${i}b" mtu 9000
done

step "hostile binds"
expect_err "no such netdev" "$CTL" eth-bind tbrdma0 nosuchnic
expect_err "not an Ethernet" "$CTL" eth-bind tbrdma0 lo
expect_err "tbrdma netdev" "$CTL" eth-bind tbrdma0 tbr1
expect_err "no such tbrdma device" "$CTL" eth-bind tbrdma9 ve0a
expect_err "not bound" "$CTL" eth-unbind tbrdma0 ve0a
rc=0; "$CTL" eth-bind tbrdma0 ve0a-too-long-name > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an over-long IFNAME should be a usage error (rc $rc)"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
expect_err "Operation not permitted" "${NOBODY[@]}" "$CTL" eth-bind tbrdma0 ve0a
"${NOBODY[@]}" "$CTL" eth > /dev/null || fail "non-root cannot list eth bindings"

step "bind two veth pairs"
for i in 0 1; do
	"$CTL" eth-bind tbrdma0 "ve${i}a" || fail "eth-bind ve${i}a"
	"$CTL" eth-bind tbrdma1 "ve${i}b" || fail "eth-bind ve${i}b"
done
expect_err "already bound" "$CTL" eth-bind tbrdma1 ve0a
for i in 0 1; do ip link set "ve${i}a" up; ip link set "ve${i}b" up; done
wait_for 15 links_up tbrdma0 2
wait_for 15 links_up tbrdma1 2
"$CTL" eth
"$CTL" links | tee /tmp/links
# the speed a rail reports is its netdev's (ethtool: veth says 10000 Mb/s, one lane)
grep -q "^  rail dev=tbrdma0 .*backend=eth state=up .*max_frame=4144 lane_mbps=10000 lanes=1 ifname=ve0a" /tmp/links ||
	fail "no eth rail over ve0a with 4144-byte frames and veth's 10000 Mb/s"
grep -q "^link dev=tbrdma0 .*max_frame=4144" /tmp/links || fail "link max_frame is not 4144"
[ "$(grep -c '^link dev=tbrdma0 ' /tmp/links)" = 1 ] || fail "both pairs should join ONE link"

step "IP and RDMA over the eth rails"
pair_split
ping -c 3 -W 5 10.88.0.2 > /dev/null || fail "no IP over the eth rails"
perf() {
	local tool=$1
	shift
	pair_run -x "$tool" -F "$@"
	grep -E '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log | tail -1
}
# rails_sum COUNTER: COUNTER summed over every rail of both devices
rails_sum() { "$CTL" links | sed -n "s/^  rail .* $1=\([0-9]*\).*/\1/p" | awk '{ n += $1 } END { print n }'; }
bundled() { rails_sum bundled; }
# one frame per packet while eth_bundle is off (it only stops sending bundles)
echo 0 > /sys/module/tbrdma/parameters/eth_bundle
b0=$(bundled)
perf ib_write_bw -s 65536 -n 50
[ "$(bundled)" = "$b0" ] || fail "frames bundled with eth_bundle=0: $b0 -> $(bundled)"
echo 1 > /sys/module/tbrdma/parameters/eth_bundle
"$CTL" links tbrdma0 > /tmp/links
for r in 0 1; do
	n=$(cnt tbrdma0 1 $r tx_frames)
	echo "rail $r tx_frames=$n"
	[ "${n:-0}" -gt 50 ] || fail "rail $r carried no traffic"
done

# A frame of 1 KiB or more goes out as the page it was written in (eth_frag.c), and a frame
# whole in one piece of a received skb nobody else holds is read there (eth_rx.c); while a
# packet socket listens on every interface the stack clones the skbs for it, and a
# frame whose skb is still shared with a clone the socket has not read yet is copied out.
# Both ways, every byte verified. Kprobes count the frames read in place (tbr_rail_rx_data)
# and the frames of 1 KiB or more sent in their own page (tbr_rail_frame_give_page), the
# rails' rx_frames all frames received.
T=/sys/kernel/tracing
[ -e $T/kprobe_events ] || mount -t tracefs nodev $T
for p in inplace:tbr_rail_rx_data paged:tbr_rail_frame_give_page; do
	echo "p:tbr_${p%%:*} ${p#*:}" >> $T/kprobe_events || fail "no kprobe on ${p#*:}"
	echo 1 > "$T/events/kprobes/tbr_${p%%:*}/enable"
done
hits() { awk -v e="tbr_$1" '$1 == e { print $2 }' $T/kprobe_profile; }
inplace() { hits inplace; }
rx_frames() { rails_sum rx_frames; }
SEED=$(date +%s)
step "integrity over the eth rails, frames read in the skbs, seed $SEED"
i0=$(inplace) r0=$(rx_frames) p0=$(hits paged) b0=$(bundled)
pair_integrity "$SEED" 4
i1=$(inplace) r1=$(rx_frames) p1=$(hits paged) b1=$(bundled)
# frames queued together leave in one packet (MTU 9000: two 4 KiB frames), eth_frag.c
echo "frames received $((r1 - r0)), bundled behind another $((b1 - b0)), read in place" \
	"$((i1 - i0)); sent in their page $((p1 - p0))"
[ $((b1 - b0)) -gt 1000 ] || fail "too few frames bundled: $((b1 - b0)) of $((r1 - r0))"
[ $((p1 - p0)) -gt 1000 ] || fail "frames not sent in their pages: $((p1 - p0))"
# (the counters are read apart: a late TCP or ND frame over tbr0 may fall between)
[ $((r1 - r0)) -gt 1000 ] && [ $(((r1 - r0) - (i1 - i0))) -le $(((r1 - r0) / 100)) ] ||
	fail "frames not read in the skbs: $((i1 - i0)) of $((r1 - r0))"
step "integrity with a packet socket listening (frames of cloned skbs copied), seed $((SEED + 1))"
python3 -c 'import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
open("/tmp/tap.ready", "w").close()
while True: s.recv(65536)' &
tap=$!
wait_for 10 test -e /tmp/tap.ready
pair_integrity "$((SEED + 1))" 4
i2=$(inplace) r2=$(rx_frames)
kill "$tap"
wait "$tap" 2> /dev/null || true
echo "frames received $((r2 - r1)), read in place $((i2 - i1)), copied $((r2 - r1 - i2 + i1))"
[ $((r2 - r1 - i2 + i1)) -ge 1000 ] || fail "too few frames copied out of cloned skbs"
for p in inplace paged; do
	echo 0 > "$T/events/kprobes/tbr_$p/enable"
	echo "-:tbr_$p" >> $T/kprobe_events
done

step "delete one veth pair mid-transfer: rail down, traffic completes on the other"
perf ib_write_bw -s 65536 -n 1500 &
pp=$!
sleep 2
ip link del ve1a
wait "$pp" || fail "ib_write_bw failed when a veth pair vanished"
wait_for 10 links_up tbrdma0 1
"$CTL" links tbrdma0 | tee /tmp/links
grep -q "ifname=ve1a" /tmp/links && fail "the deleted netdev's rail is still there"
"$CTL" eth tbrdma0 | grep -q ve1a && fail "the deleted netdev is still bound"

step "1500-byte MTU: smaller frame negotiated"
ip link add ve2a type veth peer name ve2b
"$CTL" eth-bind tbrdma0 ve2a
"$CTL" eth-bind tbrdma1 ve2b
ip link set ve2a up
ip link set ve2b up
wait_for 15 links_up tbrdma0 2
"$CTL" links tbrdma0 | tee /tmp/links
grep -q "ifname=ve2a" /tmp/links || fail "no rail over ve2a"
grep -q "max_frame=1476 lane_mbps=10000 lanes=1 ifname=ve2a" /tmp/links || fail "ve2a rail frame is not 1500-24"
grep -q "^link dev=tbrdma0 .*max_frame=1476" /tmp/links || fail "link max_frame is not the min"
ping -c 3 -W 5 -s 3000 10.88.0.2 > /dev/null || fail "large IP datagrams fail with a small rail"

step "RDMA over rails of unequal frames: QPs size frames to the link, both rails carry them"
l2=$(sed -n 's/^  rail dev=tbrdma0 link=\([0-9]*\) id=[0-9]* .*ifname=ve2a.*/\1/p' /tmp/links)
r2=$(sed -n 's/^  rail dev=tbrdma0 link=[0-9]* id=\([0-9]*\) .*ifname=ve2a.*/\1/p' /tmp/links)
[ -n "$l2" ] && [ -n "$r2" ] || fail "cannot find the ve2a rail in the links listing"
before=$(cnt tbrdma0 "$l2" "$r2" tx_frames)
perf ib_write_bw -s 65536 -n 200
"$CTL" links tbrdma0 > /tmp/links
after=$(cnt tbrdma0 "$l2" "$r2" tx_frames)
echo "ve2a rail (1476-byte frames): $((after - before)) frames of the write"
[ $((after - before)) -gt 1000 ] || fail "the 1476-byte rail carried $((after - before)) frames"

step "netdev down: rail down; up again: rail back"
ip link set ve2a down
wait_for 10 links_up tbrdma0 1
ip link set ve2a up
wait_for 15 links_up tbrdma0 2

step "rdma link add: devices with an eth rail through the RDMA core"
ip link add ve3a type veth peer name ve3b
rdma link add tbrdma7 type tbrdma netdev ve3a || fail "rdma link add tbrdma7 netdev ve3a"
rdma link add tbrdma8 type tbrdma netdev ve3b || fail "rdma link add tbrdma8 netdev ve3b"
ip link set ve3a up
ip link set ve3b up
wait_for 15 links_up tbrdma7 1
wait_for 15 links_up tbrdma8 1
"$CTL" eth tbrdma7 | grep -q "ifname=ve3a" || fail "tbrdma7 has no eth binding on ve3a"
port_active() { rdma link show "$1/1" | grep -q "state ACTIVE"; }
nd=$(rdma link show tbrdma7/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
[ -n "$nd" ] || fail "rdma link show tbrdma7/1 names no netdev"
ip link set "$nd" up
wait_for 10 port_active tbrdma7
rdma link show tbrdma7/1
if rdma link add tbrdma9 type tbrdma netdev lo 2> /tmp/rdmalink.err; then
	fail "rdma link add on lo should fail"
fi
"$CTL" devs | grep -q tbrdma9 && fail "a failed rdma link add left tbrdma9 behind"
if rdma link add tbrdma9 type tbrdma netdev ve3a 2> /tmp/rdmalink.err; then
	fail "rdma link add on a bound netdev should fail"
fi
"$CTL" dev-del tbrdma7 || fail "dev-del tbrdma7"
wait_for 10 links_up tbrdma8 0
"$CTL" eth | grep -q "ifname=ve3a" && fail "ve3a still bound after its device went"

step "unbind, rmmod"
"$CTL" eth-unbind tbrdma0 ve2a
wait_for 10 links_up tbrdma1 1
"$CTL" eth | tee /tmp/eth
grep -q "ifname=ve2a" /tmp/eth && fail "ve2a still bound after eth-unbind"
rmmod tbrdma || fail "rmmod with eth bindings failed"
echo "ok"
