# tbrdmad's routes (issue 15, docs/sweep.md "Routes"): four emulated hosts A-B-C-D cabled as a
# line (fabric.lib fabric_chain), no route set by hand: A cannot reach D. One tbrdmad per host:
# they agree on one fabric (4 hosts, 3 links), every daemon computes its min-hop table and gives
# it to its kernel (tbctl routes --json and the kernel's ROUTE_GET agree: 3 routes each; from A,
# D at 3 hops via B, path B > C > D; tbctl fabric --dot draws the links A's routes use), A pings
# D on the daemons' IPv4 and IPv6 addresses and ibv_rc_pingpong runs A -> D over their RoCE GIDs. The cable B-C cut: A's routes to C and D are withdrawn
# within a few sweeps and D is unreachable; restored: the routes come back and A reaches D. An
# impostor claiming C's GUID cabled to A (issue 46): its link stays held, shown by tbctl links and
# status, A's routes unchanged; a real cable A-C: confirmed at both ends, A routes to C over it.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"

step "four hosts A-B-C-D cabled as a line, no routes"
fabric_chain 4
GB=${GUID[1]} GC=${GUID[2]} GD=${GUID[3]}	# (not D: daemons.sh's tbrdmad)
ping -c 1 -W 2 10.89.0.4 > /dev/null && fail "A reached D with no route"

step "one tbrdmad per host: one fabric, routes in every kernel"
t0=$SECONDS
for ((h = 0; h < N; h++)); do rm -rf "/tmp/st$h"; start_d "$h"; done
for ((i = 0; i < 300; i++)); do agree 4 x 3 && break; sleep 0.1; done
agree 4 x 3 || { dump_all; "$CTL" links | grep '^link'; fail "no agreement on 4 hosts, 3 links"; }
echo "agreed after $((SECONDS - t0)) s"
# routes_ok H N: host H's daemon reports N routes, each over a kernel link, and H's kernel table
# holds N routes
routes_ok() {
	"$T" --socket "$(sock "$1")" routes --json > "/tmp/routes.$1" || return 1
	jq -e --argjson n "$2" '(.routes | length) == $n and .version != null
		and all(.routes[]; .link != null)' "/tmp/routes.$1" > /dev/null || return 1
	[ "$("$CTL" routes "tbrdma$1" | grep -c '^route ')" = "$2" ]
}
for ((h = 0; h < N; h++)); do wait_for 15 routes_ok "$h" 3; done
echo "routes after $((SECONDS - t0)) s"
"$T" --socket "$(sock 0)" routes
"$CTL" routes tbrdma0
jq -e --arg b "$GB" --arg c "$GC" --arg d "$GD" '[.routes[] | select(.destination == $d)][0]
	| .hops == 3 and .next_hop == $b and .path == [$b, $c, $d]' /tmp/routes.0 > /dev/null ||
	{ cat /tmp/routes.0; fail "A's route to D is not B > C > D"; }
"$CTL" routes tbrdma0 | grep -q "^route dst=$GD next_hop=$GB hops=3 link=1$" ||
	fail "A's kernel has not the route to D"
grep -q "sweep: routes: version [0-9]*, 3 destination(s), 2 over more than one hop" \
	/tmp/tbrdmad-0.log || fail "host 0: no routes logged"
"$T" --socket "$(sock 0)" fabric --dot | tee /tmp/fabric.dot
# from A: the link A-B carries its 3 routes, B-C 2 (to C and D), C-D 1
dot_ok() {
	[ "$(grep -c 'penwidth' /tmp/fabric.dot)" = 3 ] && grep -q 'label="3 routes"' /tmp/fabric.dot &&
		grep -q 'label="2 routes"' /tmp/fabric.dot && grep -q 'label="1 route"' /tmp/fabric.dot
}
dot_ok || fail "fabric --dot: not the routes' links"
DA=$(addr_of 3)
AA=$(addr_of 0)
in_h 0 ping -c 3 -i 0.2 -W 5 "$DA" > /dev/null || fail "ping A -> D ($DA, the daemon's address)"
# IPv6 (Pool6=, GUID-derived): neighbour discovery's multicast reaches D routed, as ARP does
DA6=$(jq -r '.address6' /tmp/fab.3)
case "$DA6" in ""|null) fail "no IPv6 address for D" ;; esac
wait_for 10 in_h 0 ping -6 -c 1 -W 2 "$DA6"
in_h 0 ping -6 -c 3 -i 0.2 -W 5 "$DA6" > /dev/null || fail "ping -6 A -> D ($DA6)"

step "ibv_rc_pingpong A -> D over the daemons' GIDs"
rc_pingpong_to 3 "$DA" "$AA" 50

step "cut the cable B-C: A's routes to C and D withdrawn; restore: back"
"$CTL" rail-set tbrdma1 2 0 --cut || fail "cut failed"
t0=$SECONDS
wait_for 15 routes_ok 0 1
echo "withdrawn after $((SECONDS - t0)) s"
"$CTL" routes tbrdma0
in_h 0 ping -c 1 -W 1 "$DA" > /dev/null && fail "A reached D across a cut cable"
"$CTL" rail-set tbrdma1 2 0 --restore || fail "restore failed"
t0=$SECONDS
wait_for 20 routes_ok 0 3
echo "back after $((SECONDS - t0)) s"
in_h 0 ping -c 2 -i 0.2 -W 5 "$DA" > /dev/null || fail "ping A -> D after the restore"

step "an impostor of C cabled to A: held, reported, never confirmed; a real cable A-C: confirmed"
# (issue 46, docs/sweep.md "Trust") C's own record lists B only, so the sweep leaves A's link to
# the impostor held: tbctl shows it, A's routes stay; a real second cable A-C is held at both
# ends too (each table reaches the other through B) until each sweep sees the other's record
# list it: then both are used and A routes to C over it (1 hop)
rogue=$("$CTL" dev-new) || fail "dev-new (the impostor) failed"
"$CTL" cable-new tbrdma0 "$rogue" --claim "$GC" > /dev/null || fail "cable-new --claim failed"
held_shown() {
	"$T" --socket "$(sock 0)" links > /tmp/links.0 &&
		grep -q "held: claims GUID $GC, not confirmed by the sweep" /tmp/links.0
}
wait_for 10 held_shown || { cat /tmp/links.0; fail "tbctl links does not show the held link"; }
sleep 3		# three more sweeps: still held
"$T" --socket "$(sock 0)" links
"$T" --socket "$(sock 0)" status | tee /tmp/status.0
grep -q "Held: tbrdma0 link [0-9]*: held: claims GUID $GC, not confirmed by the sweep" /tmp/status.0 ||
	fail "tbctl status does not show the held link"
"$CTL" links tbrdma0 | grep -q "^link dev=tbrdma0 .* peer=$GC .* trust=held " ||
	fail "the sweep released the impostor's link"
grep -q "sweep: link [0-9]* held: claims GUID $GC" /tmp/tbrdmad-0.log || fail "not logged"
grep "sweep: link [0-9]* to .* confirmed:" /tmp/tbrdmad-0.log && fail "a link was confirmed"
routes_ok 0 3 && "$CTL" routes tbrdma0 | grep -q "dst=$GC next_hop=$GB hops=2" ||
	fail "A's route to C changed"
in_h 0 ping -c 2 -i 0.2 -W 5 "$DA" > /dev/null || fail "ping A -> D with the impostor cabled"
"$CTL" links "$rogue" | grep -q '^link .* rx_frames=0 ' || fail "the impostor received frames"
"$CTL" dev-del "$rogue" || fail "dev-del the impostor"
"$CTL" cable-new tbrdma0 tbrdma2 > /dev/null || fail "cable-new A-C failed"
used_both() {
	"$CTL" links | grep -q "^link dev=tbrdma0 .* peer=$GC .* trust=used " &&
		"$CTL" links | grep -q "^link dev=tbrdma2 .* peer=${GUID[0]} .* trust=used "
}
t0=$SECONDS
wait_for 20 used_both || { "$CTL" links | grep '^link'; fail "the real cable A-C was not confirmed"; }
echo "confirmed after $((SECONDS - t0)) s"
grep "sweep: link [0-9]* to .* confirmed:" /tmp/tbrdmad-0.log /tmp/tbrdmad-2.log
wait_for 10 sh -c "\"$CTL\" routes tbrdma0 | grep -q 'dst=$GC next_hop=$GC hops=1'" ||
	fail "A does not route to C over the new cable"
in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr_of 2)" > /dev/null || fail "ping A -> C over the new cable"

grep "sweep: routes:" /tmp/tbrdmad-0.log
for ((h = 0; h < N; h++)); do kill "${PID[$h]}"; done
wait
echo "route-sweep: OK"
