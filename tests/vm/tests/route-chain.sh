# Multi-hop forwarding (issue 15, docs/protocol.md 7): four emulated hosts A-B-C-D in one VM
# cabled as a line (fabric.lib fabric_chain, one rail per cable, no daemons). Before any route
# A cannot reach D; each host then gets its forwarding table over genl ROUTE_SET (min-hop, as
# tbrdmad computes it) and every host pings every other over tbrN (ARP/IP routed hop by hop), a
# packet too large for the routed path (A's tbr0 at its largest MTU, 4130) gets ICMP
# "fragmentation needed" with the path MTU (4106)
# and 8 MiB of TCP A -> D arrive intact (PMTU discovery); ibv_rc_pingpong and rping (rdma_cm) run A -> D across 3 hops, and B and C count forwarded
# frames. Hostile input injected on the cable A-B (routed frames through MGMT_SEND --pdf 4):
# hop limit 0 and 1, hop limit 17 and 255 (above the fabric's 16: not forwarded round a loop),
# a destination outside the fabric, B's own source, and sources that A is not the way to (the
# reverse-path check): a frame for B claiming C's or D's GUID, one for D claiming C's, one for D
# from a GUID outside the fabric: each dropped and counted with its reason on B's link from A,
# none delivered to B, and A's own routed frames to D pass right after. ARP requests from A with
# C's MAC as the Ethernet source or ARP sender: not learned by B (neighbour) or D (routed),
# counted in rx_dropped of tbr1..3; honest ones learned. Tables that disagree (C sends D's
# frames back to B) lose the frames, counted as loops, instead of circling. A table replaced
# without D: A reaches D no longer; the routes put back: it does again. Identity takeover (issue
# 46): an impostor device presenting C's GUID is cabled to A under verified RC traffic A -> C: A's
# link to it is held (trust=held, held counters, links_held), the traffic runs on to the real C
# with every byte right, A's pings and ARP reach C, the impostor receives nothing and what it
# sends is dropped (held_drops); link-trust rejected keeps it so, used releases it. (tbrdmad's
# routes and its decision on held links: route-sweep.sh.)
# vm-timeout: 540
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"
trap - ERR	# (fabric.lib's dumps the daemons' state: there are none here)

step "four hosts A-B-C-D (tbrdma0..3) cabled as a line"
fabric_chain 4
"$CTL" links | grep '^link'
in_h 0 ping -c 1 -W 1 "$(addr 1)" > /dev/null || fail "no ping between neighbours A and B"
in_h 0 ping -c 1 -W 2 "$(addr 3)" > /dev/null && fail "A reached D with no route"

step "forwarding tables: min-hop routes on every host"
"$CTL" route-set tbrdma0 0 && fail "version 0 accepted"
"$CTL" route-set tbrdma0 7 || fail "an empty table refused"
"$CTL" routes tbrdma0 | grep -qx "table dev=tbrdma0 version=7" || fail "tbrdma0: empty table v7"
"$CTL" route-set tbrdma0 1 "${GUID[0]},${GUID[1]},1" && fail "a route to ourselves accepted"
"$CTL" route-set tbrdma0 1 "${GUID[2]},${GUID[1]},1" && fail "one hop through another host accepted"
for ((h = 0; h < N; h++)); do set_routes "$h" 1; done
"$CTL" routes tbrdma0
[ "$("$CTL" routes tbrdma0 | grep -c "^route .*next_hop=${GUID[1]}")" = 3 ] ||
	fail "tbrdma0: not 3 routes through B"
"$CTL" routes tbrdma0 | grep -q "^table dev=tbrdma0 version=1$" || fail "tbrdma0: version"
"$CTL" routes tbrdma0 | grep -q "^route dst=${GUID[3]} next_hop=${GUID[1]} hops=3 link=1$" ||
	fail "tbrdma0: no 3-hop route to D over link 1"

step "IP: every host pings every other over tbrN"
for ((h = 0; h < N; h++)); do
	for ((d = 0; d < N; d++)); do
		[ "$h" = "$d" ] && continue
		in_h "$h" ping -c 2 -i 0.2 -W 5 "$(addr "$d")" > /dev/null ||
			{ "$CTL" links | grep '^link'; fail "ping host $h -> $d"; }
	done
done
in_h 0 ping -c 20 -i 0.05 -s 3000 -W 5 "$(addr 3)" | tail -2

step "path MTU: tbr0 at 4130, too large for the routed path, answered with its MTU (4106); TCP bulk A -> D"
# emulated rails carry 4144-byte frames: a routed frame's inner one at most 4120, an IP packet 4106
in_h 0 ip link set tbr0 mtu 4130
in_h 1 ip link set tbr1 mtu 4130
in_h 0 ping -c 1 -M "do" -s 4080 -W 2 "$(addr 1)" > /dev/null || fail "4108-byte IP packet to neighbour B"
in_h 0 ping -c 1 -M "do" -s 4102 -W 2 "$(addr 3)" > /tmp/pmtu.log 2>&1 &&
	fail "a 4130-byte IP packet crossed a routed path"
grep -Eq 'mtu ?= ?4106' /tmp/pmtu.log || { cat /tmp/pmtu.log; fail "no 'fragmentation needed, mtu 4106'"; }
# 8 MiB over TCP (full-sized segments: PMTU discovery must shrink them), checked by SHA-256
in_h 3 timeout 60 python3 -c '
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 18700)); s.listen(1); c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())' > /tmp/tcp-srv.log 2>&1 &
srv=$!
wait_for 10 in_h 3 sh -c "[ -n \"\$(ss -ltnH 'sport = :18700')\" ]"
head -c 8388608 /dev/urandom > /tmp/tcp.bin
timeout 60 python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 18700)); c.sendall(open("/tmp/tcp.bin", "rb").read())
c.close()' "$(addr 3)" || fail "TCP client A -> D failed"
wait "$srv" || { cat /tmp/tcp-srv.log; fail "TCP server on D failed"; }
[ "$(cat /tmp/tcp-srv.log)" = "8388608 $(sha256sum < /tmp/tcp.bin | cut -d' ' -f1)" ] ||
	{ cat /tmp/tcp-srv.log; fail "TCP A -> D: bytes differ"; }

# cnt DEV PEERGUID COUNTER: the counter of DEV's link to PEERGUID
cnt() {
	"$CTL" links "$1" | sed -n "s/^link dev=$1 .* peer=$2 .* $3=\([0-9]*\).*/\1/p"
}

# The forwarding counters, exactly: C forwards to D exactly what B forwarded to C less what C
# dropped coming in (counted by reason), and D takes (routed_rx) exactly what C forwarded less
# D's drops; the same for D's frames back through C and B to A. What A put on its cable to B
# less what B forwarded and dropped were frames for B itself (not routed): measured 0-1 per step
# (one NET frame each way, B's and C's own: no daemons run here), at most 4 accepted. A middle
# hop also takes in what the far end sends it (D's neighbour probe to B, through C: routed_rx
# of B's link from C), which it does not forward: seen once (2026-12-04), B forwarded to A one frame
# fewer than C forwarded to B, with no drop.
# Retransmissions are frames too, on both sides of each equation. (tx_frames counts completed
# frames: the last ones are awaited.)
GA=${GUID[0]} GB=${GUID[1]} GC=${GUID[2]} GD=${GUID[3]}
# snap: the counters of the equations as name=value words, out of one link dump: A's and D's
# tx_frames to B and C, B's and C's fwd out of each link, and the frames B and C dropped coming
# in on each (every fwd_drop_* reason, rx_nobuf, rx_errors), and the routed frames for B and C
# themselves that came in from C and B
snap() {
	"$CTL" links | awk -v a="$GA" -v b="$GB" -v c="$GC" -v d="$GD" '
	function v(k, i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2) + 0 }
	function drops(s) {
		s = v("fwd_drop_hops") + v("fwd_drop_noroute") + v("fwd_drop_loop") + v("fwd_drop_rpf")
		return s + v("fwd_drop_full") + v("rx_nobuf") + v("rx_errors")
	}
	/^link / {
		for (i = 1; i <= NF; i++) if ($i ~ /^peer=/) p = substr($i, 6)
		if ($2 == "dev=tbrdma0" && p == b) { o["atx"] = v("tx_frames"); o["arx"] = v("routed_rx"); o["add"] = drops() }
		if ($2 == "dev=tbrdma3" && p == c) { o["dtx"] = v("tx_frames"); o["drx"] = v("routed_rx"); o["ddd"] = drops() }
		if ($2 == "dev=tbrdma1" && p == c) { o["bfc"] = v("fwd"); o["bdc"] = drops(); o["brc"] = v("routed_rx") }
		if ($2 == "dev=tbrdma1" && p == a) { o["bfa"] = v("fwd"); o["bda"] = drops() }
		if ($2 == "dev=tbrdma2" && p == d) { o["cfd"] = v("fwd"); o["cdd"] = drops() }
		if ($2 == "dev=tbrdma2" && p == b) { o["cfb"] = v("fwd"); o["cdb"] = drops(); o["crb"] = v("routed_rx") }
	}
	END { n = split("atx arx add dtx drx ddd bfc bfa cfd cfb bda bdc cdb cdd brc crb", k, " ")
		for (i = 1; i <= n; i++) printf "%s=%d ", k[i], o[k[i]]; print "" }'
}
declare -A S0 S1
fwd_begin() { local kv; for kv in $(snap); do S0[${kv%=*}]=${kv#*=}; done; }
# d NAME: the step's delta of one counter
d() { echo $((S1[$1] - S0[$1])); }
balanced() {
	local kv
	for kv in $(snap); do S1[${kv%=*}]=${kv#*=}; done
	# hop by hop: a last hop delivers exactly what it forwarded; a middle hop forwards what the
	# previous one did plus what the host before it sent itself to the far end (its ARP/ND
	# reachability probes after the all-pairs pings: seen once on the debug kernel), none or a
	# few, less what was for the middle hop itself; what A and D sent less what their
	# neighbours forwarded and dropped: the frames for the neighbour itself (not routed), none
	# or a few
	local c_in=$(($(d bfc) - $(d cdb) - $(d crb))) b_in=$(($(d cfb) - $(d bdc) - $(d brc)))
	(($(d cfd) - c_in >= 0 && $(d cfd) - c_in <= 4 &&
	  $(d drx) == $(d cfd) - $(d ddd) &&
	  $(d bfa) - b_in >= 0 && $(d bfa) - b_in <= 4 &&
	  $(d arx) == $(d bfa) - $(d add) &&
	  $(d atx) - $(d bfc) - $(d bda) >= 0 && $(d atx) - $(d bfc) - $(d bda) <= 4 &&
	  $(d dtx) - $(d cfb) - $(d cdd) >= 0 && $(d dtx) - $(d cfb) - $(d cdd) <= 4))
}
fwd_check() { # fwd_check MIN: the equations hold, A and D sent at least MIN frames together
	local i
	for ((i = 0; i < 50; i++)); do balanced && break; sleep 0.1; done
	echo "A -> D: A sent $(d atx) to B ($(($(d atx) - $(d bfc) - $(d bda))) not routed), B dropped" \
		"$(d bda) and forwarded $(d bfc), C dropped $(d cdb) and forwarded $(d cfd), D took $(d drx)"
	echo "D -> A: D sent $(d dtx) to C ($(($(d dtx) - $(d cfb) - $(d cdd))) not routed), C dropped" \
		"$(d cdd) and forwarded $(d cfb), B dropped $(d bdc) and forwarded $(d bfa), A took $(d arx)"
	echo "routed to the middle hops themselves: to C from B $(d crb), to B from C $(d brc)"
	balanced || { "$CTL" links | grep '^link'; fail "forwarded frames differ from what A and D sent"; }
	(($(d atx) + $(d dtx) >= $1)) || fail "A and D sent fewer than $1 frames"
}

step "ibv_rc_pingpong A -> D across 3 hops"
fwd_begin
rc_pingpong_to 3 "$(addr 3)" "$(addr 0)" 200
# 200 round trips of 4096 bytes: two frames each way at least
fwd_check 800

step "rping (rdma_cm) A -> D"
rping_to 3 "$(addr 3)" 10

step "ibv_rc_pingpong and rping between every pair of hosts"
all_pairs_rdma "$(addr 0)" "$(addr 1)" "$(addr 2)" "$(addr 3)"

step "integrity A -> D (verified RC traffic, 3 hops): B and C forward exactly what A and D send"
fwd_begin
PROG=$TBR_TOP/build/progs/integrity
G0=$(host_gid 0 "$(addr 0)")
G3=$(host_gid 3 "$(addr 3)")
in_h 3 "$PROG" -d tbrdma3 -g "$G3" server > /tmp/isrv.log 2>&1 &
isrv=$!
wait_for 10 in_h 3 sh -c "[ -n \"\$(ss -ltnH)\" ]"
t0=$SECONDS
timeout 120 "$PROG" -d tbrdma0 -g "$G0" --seed 15 --mib "${ROUTE_CHAIN_MIB:-32}" client "$(addr 3)" \
	> /tmp/icli.log 2>&1 || { tail -20 /tmp/icli.log; tail -20 /tmp/isrv.log; fail "integrity A -> D failed"; }
wait "$isrv" || { tail -20 /tmp/isrv.log; fail "integrity server on D failed"; }
grep -q "integrity client: ok" /tmp/icli.log || fail "integrity client did not finish"
grep -q "integrity server: ok" /tmp/isrv.log || fail "integrity server did not finish"
tail -1 /tmp/icli.log
echo "integrity A -> D: $((SECONDS - t0)) s"
# 32 MiB in frames of at most 4024 bytes
fwd_check $((${ROUTE_CHAIN_MIB:-32} * 1048576 / 4024))

# rf DST SRC HOPLIMIT: a routed frame (docs/protocol.md 7) carrying 16 bytes of DATA
rf() { printf '0101%02x0000000000%s%s%032x' "$3" "$1" "$2" 0; }
step "identity takeover: an impostor claiming C's GUID cabled to A is held; A -> C traffic goes on to the real C"
# (issue 46, docs/sweep.md "Trust"): tbrdma4, a fifth device, presents C's GUID on a new cable to A
# while verified RC traffic A -> C (2 hops, through B) runs. A's table reaches C through B, so the
# new link is held: A sends it nothing (the RC QP, tbrN unicast and ARP broadcasts stay on the
# route), takes nothing from it (counted held_drops), and C's routed frames are not "forged"
# because of it (without the rule: every byte of C's answers dropped at A, the QP dies, and A's
# pings and new connections go to the impostor).
G2=$(host_gid 2 "$(addr 2)")
in_h 2 "$PROG" -d tbrdma2 -g "$G2" server > /tmp/isrv2.log 2>&1 &
isrv=$!
wait_for 10 in_h 2 sh -c "[ -n \"\$(ss -ltnH)\" ]"
"$PROG" -d tbrdma0 -g "$G0" --seed 46 --until-signal client "$(addr 2)" > /tmp/icli2.log 2>&1 &
icli=$!
sleep 2
rogue=$("$CTL" dev-new) || fail "dev-new (the impostor) failed"
"$CTL" cable-new tbrdma0 "$rogue" --claim "$GC" > /dev/null || fail "cable-new --claim failed"
rlink() { "$CTL" links tbrdma0 | grep "^link dev=tbrdma0 .* peer=$GC "; }
wait_for 5 sh -c "\"$CTL\" links $rogue | grep -q '^link .* state=up'" || fail "the impostor's cable is not up"
rlink
rlink | grep -q " trust=held " || fail "A's link to the impostor is not held"
rlink | grep -q " held=1 " || fail "the link's held counter did not move"
"$CTL" devs | grep -q "^dev dev=tbrdma0 .* links_held=1 held=1 " || { "$CTL" devs; fail "tbrdma0: links_held/held"; }
# the impostor speaks: a management datagram and a routed frame for A claiming C: dropped
"$CTL" mgmt-send "$rogue" 1 "I am C" || fail "the impostor's mgmt-send failed"
"$CTL" mgmt-send "$rogue" 1 --pdf 4 --hex "$(rf "$GA" "$GC" 16)" || fail "the impostor's routed frame"
wait_for 5 sh -c "\"$CTL\" links tbrdma0 | grep -q '^link dev=tbrdma0 .* peer=$GC .* held_drops=2'" ||
	{ rlink; fail "A did not count the impostor's 2 frames as held_drops"; }
sleep 1
kill -USR1 "$icli"
wait "$icli" || { tail -20 /tmp/icli2.log; tail -20 /tmp/isrv2.log; fail "integrity A -> C failed with the impostor cabled"; }
wait "$isrv" || { tail -20 /tmp/isrv2.log; fail "integrity server on C failed"; }
grep -q "integrity client: ok" /tmp/icli2.log || fail "integrity A -> C did not finish"
tail -1 /tmp/icli2.log
# (IP after the traffic: tbrN drops what finds the rings to B full, which RC keeps full)
in_h 0 ping -c 3 -i 0.2 -W 5 "$(addr 2)" > /dev/null || fail "A cannot ping the real C"
in_h 0 ip neigh flush dev tbr0		# ARP again: its broadcast must not reach the impostor
in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr 2)" > /dev/null || fail "A cannot ping C after an ARP"
# the impostor took nothing: no frame of any kind came to it from A
"$CTL" links "$rogue" | grep '^link'
"$CTL" links "$rogue" | grep -q '^link .* rx_frames=0 ' || fail "the impostor received frames from A"
"$CTL" link-trust tbrdma0 99 used 2>/dev/null && fail "LINK_TRUST on no link accepted"
lid=$(rlink | sed -n 's/^link dev=tbrdma0 id=\([0-9]*\) .*/\1/p')
"$CTL" link-trust tbrdma0 "$lid" rejected || fail "link-trust rejected"
rlink | grep -q " trust=rejected " || fail "not shown rejected"
in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr 2)" > /dev/null || fail "A cannot ping C (impostor rejected)"
"$CTL" links "$rogue" | grep -q '^link .* rx_frames=0 ' || fail "the impostor received frames (rejected)"
# confirmed (what the sweep does for a real neighbour): the direct link is used again
"$CTL" link-trust tbrdma0 "$lid" used || fail "link-trust used"
in_h 0 ping -c 1 -W 1 "$(addr 2)" > /dev/null || :	# (to the impostor: no answer)
"$CTL" links "$rogue" | grep -q '^link .* rx_frames=0 ' && fail "a confirmed link carried nothing"
"$CTL" dev-del "$rogue" || fail "dev-del the impostor"
in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr 2)" > /dev/null || fail "A cannot ping C once the impostor is gone"

step "hostile routed frames from A to B: dropped and counted"
inject() { "$CTL" mgmt-send tbrdma0 1 --pdf 4 --hex "$1" || fail "inject failed"; }
declare -A BEFORE WANT
HOSTILE="fwd_drop_hops fwd_drop_noroute fwd_drop_loop fwd_drop_rpf routed_rx"
for c in $HOSTILE; do
	BEFORE[$c]=$(cnt tbrdma1 "$GA" "$c")
done
inject "$(rf "$GD" "$GA" 0)"		# hop limit 0
inject "$(rf "$GD" "$GA" 1)"		# hop limit 1, not for B
inject "$(rf "$GD" "$GA" 255)"		# above the fabric's maximum (16)
inject "$(rf "$GD" "$GA" 17)"
inject "$(rf 0badc0ffee000001 "$GA" 16)"	# nobody's: not a host of the fabric
inject "$(rf "$GD" "$GB" 16)"		# B's own source came back
inject "$(rf "$GB" "$GC" 16)"		# for B, claims neighbour C, came from A
inject "$(rf "$GB" "$GD" 16)"		# for B, claims D (reached through C), came from A
inject "$(rf "$GD" "$GC" 16)"		# for D, claims C, came from A
inject "$(rf "$GD" 0badc0ffee000002 16)"	# for D, from outside the fabric
"$CTL" mgmt-send tbrdma0 1 --pdf 3 --hex 00 2>/dev/null && fail "MGMT_SEND sent a NET frame"
# each frame counted once, with its reason: none forwarded, none delivered to B
WANT=([fwd_drop_hops]=4 [fwd_drop_noroute]=1 [fwd_drop_loop]=1 [fwd_drop_rpf]=4 [routed_rx]=0)
hostile_counted() {
	local c
	for c in $HOSTILE; do
		[ "$(cnt tbrdma1 "$GA" "$c")" = $((BEFORE[$c] + WANT[$c])) ] || return 1
	done
}
# (the frames cross the emulated cable asynchronously: the counts are awaited)
for ((i = 0; i < 50; i++)); do hostile_counted && break; sleep 0.1; done
for c in $HOSTILE; do
	echo "B's link from A: $c +$(($(cnt tbrdma1 "$GA" "$c") - BEFORE[$c])) (want +${WANT[$c]})"
done
hostile_counted || { "$CTL" links tbrdma1; fail "hostile routed frames not each dropped and counted"; }
# legitimate routed frames still pass every hop's reverse-path check, both ways
in_h 0 ping -c 3 -i 0.2 -W 5 "$(addr 3)" > /dev/null || fail "A cannot reach D after the hostile frames"

step "forged source MACs on tbrN (issue 46): ARP and ND that name C's MAC are not learned, counted"
# A sends ARP requests on tbr0 (raw frames: arp FILE ETH_SRC SHA SPA TPA), each a broadcast that
# reaches B directly and C and D routed: for B's and D's address, one with C's MAC as the
# Ethernet source, one with A's own Ethernet source but C's MAC as the ARP sender address, then
# one honest. B and D learn the sender of a request for them (no arp_accept needed): the honest
# ones with A's MAC, the forged ones not at all; B, C and D each drop the 4 forged frames,
# counted in their tbrN's rx_dropped; the same for an IPv6 neighbour solicitation whose source
# link-layer address option is C's MAC.
MAC_A=$(cat /sys/class/net/tbr0/address)
MAC_C=$(in_h 2 cat /sys/class/net/tbr2/address)
rxd() { in_h "$1" cat "/sys/class/net/tbr$1/statistics/rx_dropped"; }
declare -A DROP0
for h in 1 2 3; do DROP0[$h]=$(rxd "$h"); done
python3 -c '
import socket, sys
def mac(m): return bytes.fromhex(m.replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("tbr0", 0))
for spec in sys.argv[1:]:
    eth, sha, spa, tpa = spec.split(",")
    s.send(b"\xff" * 6 + mac(eth) + b"\x08\x06" + bytes.fromhex("0001080006040001") + mac(sha) +
           socket.inet_aton(spa) + b"\0" * 6 + socket.inet_aton(tpa))
' "$MAC_C,$MAC_C,10.89.0.77,$(addr 1)" "$MAC_A,$MAC_C,10.89.0.78,$(addr 1)" \
  "$MAC_C,$MAC_C,10.89.0.87,$(addr 3)" "$MAC_A,$MAC_C,10.89.0.88,$(addr 3)" \
  "$MAC_A,$MAC_A,10.89.0.79,$(addr 1)" "$MAC_A,$MAC_A,10.89.0.89,$(addr 3)" ||
	fail "raw ARP frames on tbr0"
learned() { in_h "$1" ip neigh show "$2" dev "tbr$1" | grep -q "lladdr $3"; }
wait_for 5 learned 3 10.89.0.89 "$MAC_A"
wait_for 5 learned 1 10.89.0.79 "$MAC_A"
for h in 1 3; do
	in_h "$h" ip neigh show dev "tbr$h" | grep -E '^10\.89\.0\.(77|78|87|88) ' &&
		fail "host $h learned a forged ARP sender"
done
# IPv6: neighbour solicitations from A for B's link-local address (multicast: to B, C and D),
# A's own Ethernet source, the source link-layer address option C's MAC (forged) or A's
LL_B=$(in_h 1 ip -6 -o addr show dev tbr1 scope link | sed -n 's|.* inet6 \(fe80::[0-9a-f:]*\)/64 .*|\1|p')
[ -n "$LL_B" ] || fail "tbr1 has no IPv6 link-local address"
python3 -c '
import socket, struct, sys
def mac(m): return bytes.fromhex(m.replace(":", ""))
def csum(b):
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("tbr0", 0))
tgt = socket.inet_pton(socket.AF_INET6, sys.argv[2])
dst = socket.inet_pton(socket.AF_INET6, "ff02::1:ff00:0")[:13] + tgt[13:]
for spec in sys.argv[3:]:
    src_ip, lla = spec.split(",")
    src = socket.inet_pton(socket.AF_INET6, src_ip)
    ns = bytearray(struct.pack("!BBHI", 135, 0, 0, 0) + tgt + b"\x01\x01" + mac(lla))
    struct.pack_into("!H", ns, 2, csum(src + dst + struct.pack("!I3xB", len(ns), 58) + bytes(ns)))
    ip6 = struct.pack("!IHBB", 6 << 28, len(ns), 58, 255) + src + dst
    s.send(b"\x33\x33" + dst[12:] + mac(sys.argv[1]) + b"\x86\xdd" + ip6 + bytes(ns))
' "$MAC_A" "$LL_B" "fe80::77,$MAC_C" "fe80::79,$MAC_A" || fail "raw NS frames on tbr0"
wait_for 5 learned 1 fe80::79 "$MAC_A"
in_h 1 ip -6 neigh show fe80::77 dev tbr1 | grep . && fail "B learned a forged ND source address"
for h in 1 2 3; do
	echo "tbr$h rx_dropped: ${DROP0[$h]} -> $(rxd "$h")"
	[ "$(rxd "$h")" = $((DROP0[$h] + 5)) ] || fail "tbr$h did not count the 5 forged frames"
done

step "tables that disagree: C sends D's frames back to B, counted as loops, no circling"
# shellcheck disable=SC2046
"$CTL" route-set tbrdma2 2 $(for ((d = 0; d < N; d++)); do
	[ "$d" = 2 ] && continue
	if [ "$d" = 3 ]; then echo "$GD,$GB,3"; elif [ "$d" = 1 ]; then echo "$GB,$GB,1"; else echo "$GA,$GB,2"; fi
	done | sort) || fail "route-set tbrdma2 v2"
l0=$(cnt tbrdma2 "$GB" fwd_drop_loop)
in_h 0 ping -c 3 -i 0.2 -W 1 "$(addr 3)" > /dev/null && fail "A reached D with C's route bent back"
l1=$(cnt tbrdma2 "$GB" fwd_drop_loop)
echo "C's loop drops: $l0 -> $l1"
((l1 > l0)) || fail "C did not count the frames it would have sent back"
set_routes 2 3

step "A's table replaced without D: unreachable; put back: reachable"
set_routes 0 2 3
"$CTL" routes tbrdma0 | grep -q "dst=$GD" && fail "D still in A's table"
in_h 0 ping -c 2 -i 0.2 -W 1 "$(addr 3)" > /dev/null && fail "A reached D without a route"
set_routes 0 3
in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr 3)" > /dev/null || fail "A cannot reach D again"

"$CTL" links | grep '^link'
echo "route-chain: OK"
