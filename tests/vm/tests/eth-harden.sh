# eth rails against a hostile or churning segment (issue 13), one VM, veth pairs, raw-socket
# peers from tests/tools/eth-peer.py (docs/eth.md's wire format). Peer table: a peer that comes
# back under a new GUID 12 times is accepted every time (dead peers expire, with their rails),
# 9 live peers at once: 8 get in and the full table is logged; a real device recreated joins;
# dead peers go after eth_peer_expire_s (set to 2 s) with no full table.
# Spoofing: three namespaces on one bridge (tbrdma0 here, tbrdma1 in h1, a spoofer in "spy");
# the spoofer claims tbrdma1's GUID with hellos (broadcast, and unicast "I hear you" with
# tbrdma0's session) and DATA/MGMT/NET frames while verified ibv_rc_pingpong runs: no tbrdma frame
# goes to the spoofer, the link keeps its one rail to tbrdma1's MAC, the spoofs are counted
# (rx_foreign) and tbrdmad/tbctl show that count (counters, rails, --json) beside the rails'
# fragmentation counters; an eth rail does not join a link reached over another backend (emu).
# Fabric key (issue 46, docs/eth.md "Authenticated links"): with a key on tbrdma0 and tbrdma1, a
# keyless station claiming a host two hops away (routed through tbrdma1) is refused and counted
# (auth_refused, logged), is never told HEARS_YOU and receives no frame but hellos, and gets no
# link, while tests/progs/integrity's verified RC traffic tbrdma0 -> tbrdma1 goes on. A new key
# given to tbrdma0, then 1 s later to tbrdma1: no rail or link goes down, no hello is refused.
# vm-kernel: 6.1 6.12
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/lib/daemons.sh"

PEER=$TBR_TOP/tests/tools/eth-peer.py
links_up() { "$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "; }
peers_of() { "$CTL" eth "$1" | sed -n "s/^eth dev=$1 ifname=$2 .* peers=\([0-9]*\) .*/\1/p"; }

modprobe veth
modprobe bridge
tbr_load eth_hello_ms=100
ip link add ha type veth peer name hb
ip link set ha up
ip link set hb up
"$CTL" eth-bind tbrdma0 ha || fail "eth-bind ha"

step "a peer back under a new GUID 12 times: accepted every time (the table holds 8)"
python3 "$PEER" churn hb 12 --wait 15 | tee /tmp/churn || fail "a new peer was ignored"
[ "$(grep -c '^accepted' /tmp/churn)" = 12 ] || fail "not all 12 accepted"
p=$(peers_of tbrdma0 ha)
[ -n "$p" ] && [ "$p" -le 8 ] || fail "peers=$p"
klog_has 'ha: eth peer [0-9a-f]* expired' || fail "no expiry logged"

step "9 live peers at once: 8 get in, the full table is logged"
rc=0; python3 "$PEER" flood hb 9 --time 4 > /tmp/flood || rc=$?
cat /tmp/flood
[ "$rc" = 1 ] && [ "$(grep -c '^accepted' /tmp/flood)" = 8 ] || fail "flood: rc $rc"
klog_has 'ha: eth peer table full (8 live peers)' || fail "full table not logged"

step "a real device, recreated twice, joins each time"
for i in 1 2; do
	d=$("$CTL" dev-new) || fail "dev-new"
	"$CTL" eth-bind "$d" hb || fail "eth-bind hb"
	wait_for 15 links_up tbrdma0 1
	wait_for 15 links_up "$d" 1
	"$CTL" dev-del "$d" || fail "dev-del"
	wait_for 15 sh -c "! '$CTL' links tbrdma0 | grep -q 'rails_up=1 '"
done
"$CTL" eth tbrdma0

step "dead peers are forgotten after eth_peer_expire_s without a full table"
# (the churn and the device above left dead peers; the default 60 s keeps them)
p=$(peers_of tbrdma0 ha)
[ -n "$p" ] && [ "$p" -ge 1 ] || fail "no dead peer kept (peers=$p)"
e0=$(dmesg | grep -c 'ha: eth peer [0-9a-f]* expired')
echo 2 > /sys/module/tbrdma/parameters/eth_peer_expire_s
no_peers() { [ "$(peers_of tbrdma0 ha)" = 0 ]; }
wait_for 10 no_peers
e1=$(dmesg | grep -c 'ha: eth peer [0-9a-f]* expired')
[ "$e1" -ge $((e0 + p)) ] || fail "$p peer(s) went but $((e1 - e0)) expiry logged"
echo "$p dead peer(s) forgotten after 2 s"
echo 60 > /sys/module/tbrdma/parameters/eth_peer_expire_s
"$CTL" eth-unbind tbrdma0 ha || fail "eth-unbind ha"

step "an eth rail does not join a link reached over another backend"
d=$("$CTL" dev-new) || fail "dev-new"
"$CTL" cable-new tbrdma0 "$d" --rails 1 > /dev/null || fail "cable-new"
"$CTL" eth-bind tbrdma0 ha || fail "eth-bind ha"
"$CTL" eth-bind "$d" hb || fail "eth-bind hb"
wait_for 15 klog_has "ha: $(guid_of "$d") is reached over another backend: no eth rail"
"$CTL" links tbrdma0 | grep -q "backend=eth" && fail "an eth rail joined the emu link"
"$CTL" dev-del "$d" || fail "dev-del"
"$CTL" eth-unbind tbrdma0 ha || fail "eth-unbind ha"

step "three namespaces on one bridge, the third claims tbrdma1's GUID"
rdma system set netns exclusive
ip netns add spy
spy() { ip netns exec spy "$@"; }
ip link add br0 type bridge
ip link set br0 up
for n in a b c; do
	ip link add "x$n" type veth peer name "x$n-br"
	ip link set "x$n-br" master br0
	ip link set "x$n-br" up
done
d1=$("$CTL" dev-new) || fail "dev-new"
g0=$(guid_of tbrdma0)
g1=$(guid_of "$d1")
n1=$(netdev_of "$d1")
host_ns 1 "$d1" "$n1"
ip link set xb netns h1
ip link set xc netns spy
ip link set xa up
h1 ip link set xb up
spy ip link set xc up
"$CTL" eth-bind tbrdma0 xa || fail "eth-bind xa"
h1 "$CTL" eth-bind "$d1" xb || fail "eth-bind xb"
ip link set tbr0 up
h1 ip link set "$n1" up
ip addr add 10.88.0.1/24 dev tbr0
h1 ip addr add 10.88.0.2/24 dev "$n1"
wait_for 15 links_up tbrdma0 1
wait_for 10 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
wait_for 10 gid_index tbrdma0 10.88.0.1
wait_for 10 h1 bash -c "$(declare -f gid_index); gid_index $d1 10.88.0.2"
GID0=$(gid_index tbrdma0 10.88.0.1)
GID1=$(h1 bash -c "$(declare -f gid_index); gid_index $d1 10.88.0.2")
macb=$(h1 cat /sys/class/net/xb/address)
macc=$(spy cat /sys/class/net/xc/address)
spy python3 "$PEER" spoof xc "$g1" --target "$g0" --time 8 > /tmp/spoof.out 2>&1 &
SPOOF=$!
listening() { [ -n "$(h1 ss -ltnH 'sport = :18515')" ]; }
for size in 4096 65536; do
	h1 ibv_rc_pingpong -d "$d1" -g "$GID1" -s "$size" -n 100 -c > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 10 listening
	ibv_rc_pingpong -d tbrdma0 -g "$GID0" -s "$size" -n 100 -c 10.88.0.2 > /tmp/cli.log 2>&1 ||
		{ cat /tmp/cli.log /tmp/srv.log; "$CTL" links; fail "pingpong -s $size failed"; }
	wait "$srv" || { cat /tmp/srv.log; fail "pingpong server -s $size failed"; }
	echo "verified ibv_rc_pingpong -s $size: $(grep 'iters in' /tmp/cli.log)"
done
wait "$SPOOF" || { cat /tmp/spoof.out; fail "spoofer failed"; }
cat /tmp/spoof.out
grep -q ' for_me=0$' /tmp/spoof.out || fail "tbrdma frames went to the spoofer"
"$CTL" eth tbrdma0 | tee /tmp/eth
foreign=$(sed -n 's/^eth dev=tbrdma0 ifname=xa .* rx_foreign=\([0-9]*\) .*/\1/p' /tmp/eth)
[ -n "$foreign" ] && [ "$foreign" -gt 0 ] || fail "spoofed frames not counted (rx_foreign=$foreign)"
"$CTL" links tbrdma0 | tee /tmp/links
[ "$(grep -c "^  rail dev=tbrdma0 .*peer=$g1 " /tmp/links)" = 1 ] || fail "the link to $g1 has not one rail"
grep -q "^  rail dev=tbrdma0 .*peer=$g1 .*state=up .*ifname=xa .*peer_mac=$macb" /tmp/links ||
	fail "the rail to $g1 is not up on tbrdma1's MAC $macb"
grep -q "peer_mac=$macc" /tmp/links && fail "a rail points at the spoofer's MAC"

step "tbrdmad and tbctl show the NIC's rx_foreign and the rails' fragmentation counters"
printf '[Daemon]\nSweep=no\n' > /tmp/nosweep.conf
start_d 0 /tmp/nosweep.conf
wait_for 10 grep -q 'ready:' /tmp/tbrdmad-0.log
foreign_seen() { # the daemon's count of NIC xa: the kernel's (read above) or more
	"$T" --socket "$(sock 0)" --json counters > /tmp/counters.json &&
	jq -e --argjson n "$foreign" '[.eth[] | select(.device == "tbrdma0" and .ifname == "xa")
		| .rx_foreign >= $n] == [true]' /tmp/counters.json > /dev/null
}
wait_for 10 foreign_seen
"$T" --socket "$(sock 0)" --json rails tbrdma0 | jq -e --argjson n "$foreign" \
	'[.rails[] | select(.eth.ifname == "xa") | .eth.rx_foreign >= $n and (.counters | has("frag_tx"))]
	 | length > 0 and all' > /dev/null || fail "tbctl --json rails: no rx_foreign on the xa rail"
"$T" --socket "$(sock 0)" -v rails tbrdma0 | tee /tmp/rails
head -1 /tmp/rails | grep -q 'FRAG-TX .*FRAG-DROPS .*RX-FOREIGN' || fail "tbctl rails: no FRAG/RX-FOREIGN columns"
"$T" --socket "$(sock 0)" counters tbrdma0 | grep -q "^tbrdma0 eth xa .* [1-9][0-9]*$" ||
	fail "tbctl counters: no line for NIC xa with its RX-FOREIGN"
kill -TERM "${PID[0]}"
wait "${PID[0]}" || fail "tbrdmad exit"

step "fabric key: a keyless station claiming a host two hops away is refused; RC traffic goes on"
PROG=$TBR_TOP/build/progs/integrity
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /tmp/fabric.key
"$CTL" auth-key tbrdma0 /tmp/fabric.key || fail "auth-key tbrdma0"
h1 "$CTL" auth-key "$d1" /tmp/fabric.key || fail "auth-key $d1"
"$CTL" devs tbrdma0 | grep -q " auth=1 auth_refused=" || { "$CTL" devs; fail "tbrdma0: no key"; }
# a first key cycles the eth rail once (an end with a key takes no peer as hearing it until the
# peer's hello proves the key); it comes back proven by both ends, within a few 100 ms periods
h1_up() { h1 "$CTL" links "$d1" | grep -q "^link dev=$d1 .*rails_up=1 "; }
sleep 1
wait_for 15 links_up tbrdma0 1
wait_for 15 h1_up
sleep 1
links_up tbrdma0 1 && h1_up || fail "the keyed rail did not stay up"
g2=0200000000000046			# a host tbrdma0 reaches through tbrdma1
"$CTL" route-set tbrdma0 1 "$g2,$g1,2" || fail "route-set"
refused() { "$CTL" devs tbrdma0 | sed -n 's/^dev dev=tbrdma0 .* auth_refused=\([0-9]*\).*/\1/p'; }
r0=$(refused)
h1 "$PROG" -d "$d1" -g "$GID1" server > /tmp/isrv.log 2>&1 &
isrv=$!
wait_for 10 h1 sh -c "[ -n \"\$(ss -ltnH)\" ]"
"$PROG" -d tbrdma0 -g "$GID0" --seed 46 --until-signal client 10.88.0.2 > /tmp/icli.log 2>&1 &
icli=$!
sleep 1
spy python3 "$PEER" spoof xc "$g2" --target "$g0" --time 6 > /tmp/imp.out 2>&1 ||
	{ cat /tmp/imp.out; fail "the impostor failed"; }
cat /tmp/imp.out
kill -USR1 "$icli"
wait "$icli" || { tail -20 /tmp/icli.log; tail -20 /tmp/isrv.log; fail "integrity failed beside the impostor"; }
wait "$isrv" || { tail -20 /tmp/isrv.log; fail "integrity server failed"; }
grep -q "integrity client: ok" /tmp/icli.log || fail "integrity client did not finish"
grep -q "integrity server: ok" /tmp/isrv.log || fail "integrity server did not finish"
tail -1 /tmp/icli.log
r1=$(refused)
echo "auth_refused $r0 -> $r1"
[ -n "$r1" ] && [ "$r1" -gt "$r0" ] || fail "the impostor's hellos were not counted"
grep -q ' frames_for_me=0 hears_me=0 ' /tmp/imp.out || fail "the impostor was taken as a peer or got frames"
"$CTL" links tbrdma0 | tee /tmp/links
grep -q "peer=$g2 " /tmp/links && fail "tbrdma0 has a link or rail to the impostor's GUID"
links_up tbrdma0 1 || fail "the link to tbrdma1 lost its rail"
"$CTL" eth tbrdma0 | grep -q "^eth dev=tbrdma0 ifname=xa .* auth_refused=[1-9]" ||
	{ "$CTL" eth tbrdma0; fail "xa: auth_refused not counted"; }
klog_has "xa: refused a hello from $g2 .*: no fabric key" || fail "the refusal was not logged"

step "fabric key rotation, one host after the other: no rail goes down, no hello refused"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /tmp/fabric2.key
"$CTL" events > /tmp/rot0.events 2>&1 &
ev0=$!
ip netns exec h1 "$CTL" events > /tmp/rot1.events 2>&1 &
ev1=$!
refused1() { h1 "$CTL" devs "$d1" | sed -n 's/^dev dev=[^ ]* .* auth_refused=\([0-9]*\).*/\1/p'; }
sleep 0.5
r2=$(refused) q2=$(refused1)
# grace 2 s: each host signs with the old key 2 s more and takes it 4 s more
"$CTL" auth-key tbrdma0 /tmp/fabric2.key 2000 || fail "rotating tbrdma0's key"
sleep 1
h1 "$CTL" auth-key "$d1" /tmp/fabric2.key 2000 || fail "rotating $d1's key"
sleep 5
kill "$ev0" "$ev1"
wait "$ev0" "$ev1" 2> /dev/null || true
cat /tmp/rot0.events /tmp/rot1.events
grep -q 'what=down' /tmp/rot0.events /tmp/rot1.events && fail "a rail or link went down in the rotation"
links_up tbrdma0 1 && h1_up || fail "the rail is not up after the rotation"
r3=$(refused)
[ "$r3" = "$r2" ] || fail "tbrdma0 refused hellos in the rotation (auth_refused $r2 -> $r3)"
q3=$(refused1)
[ -n "$q3" ] && [ "$q3" = "$q2" ] || fail "$d1 refused hellos in the rotation (auth_refused $q2 -> $q3)"
rmmod tbrdma || fail "rmmod"
echo "eth-harden: ok"
