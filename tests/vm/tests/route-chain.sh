# Multi-hop forwarding (issue 15, docs/protocol.md 7): four emulated hosts A-B-C-D in one VM
# cabled as a line (fabric.lib fabric_chain, one rail per cable, no daemons). Before any route
# A cannot reach D; each host then gets its forwarding table over genl ROUTE_SET (min-hop, as
# tbrdmad computes it) and every host pings every other over tbrN (ARP/IP routed hop by hop), a
# packet too large for the routed path gets ICMP "fragmentation needed" with the path MTU (4058)
# and 8 MiB of TCP A -> D arrive intact (PMTU discovery); ibv_rc_pingpong and rping (rdma_cm) run A -> D across 3 hops, and B and C count forwarded
# frames. Hostile input injected on the cable A-B (routed frames through MGMT_SEND --pdf 4):
# hop limit 0 and 1, an unknown destination, B's own source, a frame for B claiming C's GUID:
# each dropped and counted with its reason on B's link from A. Tables that disagree (C sends D's
# frames back to B) lose the frames, counted as loops, instead of circling. A table replaced
# without D: A reaches D no longer; the routes put back: it does again. (tbrdmad's routes:
# route-sweep.sh.)
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"
trap - ERR	# (fabric.lib's dumps the daemons' state: there are none here)

step "four hosts A-B-C-D (tbrdma0..3) cabled as a line"
fabric_chain 4
"$CTL" links | grep '^link'
addr() { echo "10.89.0.$(($1 + 1))"; }
in_h 0 ping -c 1 -W 1 "$(addr 1)" > /dev/null || fail "no ping between neighbours A and B"
in_h 0 ping -c 1 -W 2 "$(addr 3)" > /dev/null && fail "A reached D with no route"

# routes_of H [EXCEPT]: host H's min-hop table on the line, one DST,NEXTHOP,HOPS per line,
# sorted by destination GUID (ROUTE_SET wants them ascending), host EXCEPT left out
routes_of() {
	local h=$1 d
	for ((d = 0; d < N; d++)); do
		[ "$d" = "$h" ] || [ "$d" = "${2:-x}" ] && continue
		if ((d > h)); then
			echo "${GUID[$d]},${GUID[$((h + 1))]},$((d - h))"
		else
			echo "${GUID[$d]},${GUID[$((h - 1))]},$((h - d))"
		fi
	done | sort
}
set_routes() { # set_routes H VERSION [EXCEPT]
	# shellcheck disable=SC2046
	"$CTL" route-set "tbrdma$1" "$2" $(routes_of "$1" "${3:-x}") || fail "route-set tbrdma$1 failed"
}

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

step "path MTU: too large for the routed path, answered with its MTU (4058); TCP bulk A -> D"
in_h 0 ping -c 1 -M "do" -s 4050 -W 2 "$(addr 3)" > /tmp/pmtu.log 2>&1 &&
	fail "a 4078-byte IP packet crossed a routed path"
grep -Eq 'mtu ?= ?4058' /tmp/pmtu.log || { cat /tmp/pmtu.log; fail "no 'fragmentation needed, mtu 4058'"; }
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
fwd_sum() { # forwarded frames out of every link of host $1
	"$CTL" links "tbrdma$1" | sed -n 's/^link .* fwd=\([0-9]*\).*/\1/p' | paste -sd+ | bc
}

step "ibv_rc_pingpong A -> D across 3 hops"
b0=$(fwd_sum 1) c0=$(fwd_sum 2)
rc_pingpong_to 3 "$(addr 3)" "$(addr 0)" 200
b1=$(fwd_sum 1) c1=$(fwd_sum 2)
echo "forwarded: B $b0 -> $b1, C $c0 -> $c1"
# 200 round trips of 4096 bytes, two frames each way at least, both ways through B and C
((b1 - b0 >= 800 && c1 - c0 >= 800)) || fail "B or C forwarded too few frames"

step "rping (rdma_cm) A -> D"
rping_to 3 "$(addr 3)" 10

step "hostile routed frames from A to B: dropped and counted"
# rf DST SRC HOPLIMIT: a routed frame (docs/protocol.md 7) carrying 16 bytes of DATA
rf() { printf '0101%02x0000000000%s%s%032x' "$3" "$1" "$2" 0; }
inject() { "$CTL" mgmt-send tbrdma0 1 --pdf 4 --hex "$1" || fail "inject failed"; }
GA=${GUID[0]} GB=${GUID[1]} GC=${GUID[2]} GD=${GUID[3]}
declare -A BEFORE
for c in fwd_drop_hops fwd_drop_noroute fwd_drop_loop routed_rx; do
	BEFORE[$c]=$(cnt tbrdma1 "$GA" "$c")
done
inject "$(rf "$GD" "$GA" 0)"		# hop limit 0
inject "$(rf "$GD" "$GA" 1)"		# hop limit 1, not for B
inject "$(rf 0badc0ffee000001 "$GA" 16)"	# nobody's
inject "$(rf "$GD" "$GB" 16)"		# B's own source came back
inject "$(rf "$GB" "$GC" 16)"		# for B, claims C, came from A
"$CTL" mgmt-send tbrdma0 1 --pdf 3 --hex 00 2>/dev/null && fail "MGMT_SEND sent a NET frame"
is_cnt() { [ "$(cnt tbrdma1 "$GA" "$1")" = "$2" ]; }
# (the frames cross the emulated cable asynchronously: the last one's count is awaited)
wait_for 5 is_cnt fwd_drop_loop $((BEFORE[fwd_drop_loop] + 2))
is_cnt fwd_drop_hops $((BEFORE[fwd_drop_hops] + 2)) ||
	{ "$CTL" links tbrdma1; fail "hop limit drops not counted"; }
is_cnt fwd_drop_noroute $((BEFORE[fwd_drop_noroute] + 1)) ||
	{ "$CTL" links tbrdma1; fail "unknown destination not counted"; }
[ "$(cnt tbrdma1 "$GA" routed_rx)" = "${BEFORE[routed_rx]}" ] ||
	{ "$CTL" links tbrdma1; fail "a hostile frame was delivered"; }
"$CTL" links tbrdma1 | grep "peer=$GA"

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
