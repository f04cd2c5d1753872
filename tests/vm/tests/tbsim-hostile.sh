# Issue 12: the negotiation under loss and against a hostile peer, through the Thunderbolt
# stand-in (two VMs, two 2-lane cables: two XDomains to one host, 4 tb rails in one link).
# 1. Lost READYs: VM a's stand-in loses its first 24 READY requests on the cable (fault_xd_drop;
#    two conns, so each loses more than the 10 immediate tries after which tb.c used to give up
#    for good, leaving b's rails down forever): a keeps sending READY with a backoff, b's rails
#    come up, and a logs both the give-up warning and the late answer.
# 2. VM b turns hostile (the stand-in's xd_inject sends raw XDomain packets from b's side; xd_sent
#    holds b's real HELLOs to replay): truncated and malformed negotiation packets (short body,
#    bad magic, declared length beyond the packet, unknown type, 0 rails) are counted as bad;
#    a replayed HELLO, a replayed BYE, a HELLO claiming a's own GUID, a HELLO on the second
#    cable claiming another GUID and one naming another host's UUID are refused and counted
#    (tb_state nego_bad=5, nego_refused=5 more than before); the link never goes down, no WARN,
#    and ib_write_bw still runs across.
# 2b. Identity takeover over tb (issue 46): b's stand-in presents b as host X, a real host two hops
#    from a (emu hosts N and X in VM a, A's table reaching X through N): a's tb link to the
#    impostor is held and counted, verified RC traffic and pings A -> X go on through N, b's
#    frames are dropped (held_drops) and b receives nothing.
# 2c. The same impostor with a fabric key on the real hosts (issue 46): A, N and X take a key while
#    a's held link to the keyless impostor is up: a says BYE to it, its HELLOs as X are refused and
#    counted (auth_refused, logged with X's GUID), no rail on either end, no IP packet reaches b,
#    and the verified RC traffic A -> X started in 2b runs to its end; then b is honest again.
# 3. Fabric key (issue 46, docs/protocol.md 9): a takes a key while its rails to keyless b are
#    up: a says BYE to the peer that never proved it (the module before this check kept the
#    rails), the HELLOs start over: b's HELLO is answered with status AUTH, b's answer to a's
#    HELLO proves nothing: both refused,
#    counted on a (auth_refused), logged on both, no rail comes up; b takes the key: the rails
#    come back (proven by both ends, used at once), and the last step's ib_write_bw runs over them.
# 4. Keyed session (negotiation 2.2): b injects an unsigned BYE and one made from its own signed
#    READY: both refused and counted, the keyed rails stay.
# vm-kernel: 6.1
# vm-count: 2
# vm-rails: 2
# vm-device: edu
# vm-timeout: 480
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a
P=/sys/module/thunderbolt/parameters
state() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" /sys/module/tbrdma/parameters/tb_state; }
connects() { dmesg | grep -c 'tbrdma: [0-9]* rail(s) to ' || true; }
refused() { "$CTL" devs tbrdma0 | sed -n 's/^dev dev=tbrdma0 .* auth_refused=\([0-9]*\).*/\1/p'; }
no_rails() { ! "$CTL" links tbrdma0 | grep -q 'rails_up=[1-9]'; }
klog_n() { dmesg | grep -c -- "$1" || true; }
echo "tbrdma-vm-test-fabric-key-of-issue-46" > /tmp/fabric.key

step "load; a loses its first 24 READYs"
# dword 8 of a negotiation packet: version, type [15:8] (READY = 3), word count
drop=()
[ "$VM_ROLE" = b ] || drop=(fault_xd_drop=8:ff00:300:24)
tbsim_load cable_mac=52:54: "${drop[@]}"
t=$SECONDS
tb_up 4
echo "4 rails up after $((SECONDS - t))s"
vm_signal up
vm_wait "$other.up" 120
if [ "$VM_ROLE" = a ]; then
	cat $P/fault_xd_drop
	grep -q 'dropped=24$' $P/fault_xd_drop || fail "not 24 READYs lost: $(cat $P/fault_xd_drop)"
	dmesg | grep -E 'READY (not )?answered' || true
	klog_has 'tbrdma: READY not answered after 10 tries' || fail "no give-up warning"
	klog_has 'tbrdma: READY answered after 1[1-9] tries' || fail "no late READY answer"
fi

step "b injects malformed, truncated, replayed and lying negotiation packets"
guid=$(tr -d : < /sys/class/infiniband/tbrdma0/node_guid)
echo "$guid" > "$VM_SHARED/$VM_ROLE.nodeguid"
vm_signal guid
vm_wait "$other.guid" 60
n_conn=$(connects)
bad0=$(state nego_bad) ref0=$(state nego_refused)
vm_signal counted
vm_wait "$other.counted" 60
if [ "$VM_ROLE" = b ]; then
	cat $P/xd_sent
	# packets built from b's last HELLO on port 1 (dwords: route 0-1, length/sn 2, UUID 3-6,
	# body from 7: magic, version/type/words, seq, status, GUID 11-12, initiator 13-16, ...)
	python3 - "$(cat "$VM_SHARED/a.nodeguid")" $P/xd_sent > /tmp/inject <<'EOF' || fail "building the packets"
import sys
aguid = int(sys.argv[1], 16)
hello = None
for line in open(sys.argv[2]):
    w = [int(x, 16) for x in line.split()]
    if len(w) > 9 and w[1] == 1 and (w[8] >> 8) & 0xff == 1:
        hello = w                     # the last HELLO sent on port 1
assert hello, "no HELLO on port 1 in xd_sent"

def pkt(w, n=None):
    w = list(w[:n] if n else w)
    w[2] = (w[2] & ~0x3f) | (len(w) - 3)   # a consistent XDomain length
    return " ".join("%x" % x for x in w)

def with_(i, v, base=hello):
    w = list(base)
    w[i] = v
    return w

out = []
out.append(("bad", pkt(hello, 9)))                                     # 2 body words
out.append(("bad", pkt(with_(7, 0xdeadbeef))))                         # bad magic
out.append(("bad", pkt(hello, 17)))                                    # says 27 words, has 10
out.append(("bad", pkt(with_(8, (hello[8] & ~0xff00) | 0x900))))       # type 9
out.append(("bad", pkt(with_(22, hello[22] & 0xffff))))                # 0 rails
out.append(("refused", pkt(hello)))                                    # replayed HELLO
out.append(("refused", pkt(with_(8, (hello[8] & ~0xff00) | 0x400))))   # BYE, old sequence
out.append(("refused", pkt(with_(12, aguid & 0xffffffff, with_(11, aguid >> 32)))))  # a's GUID
w = with_(1, 3, with_(11, 0x11223344, with_(12, 0x55667788)))
out.append(("refused", pkt(w)))                                        # cable 2, other GUID
out.append(("refused", pkt(with_(13, hello[13] ^ 1))))                 # another initiator
for kind, p in out:
    print(kind, p)
EOF
	while read -r kind words; do
		echo "$kind: $(echo "$words" | cut -c1-60)..."
		echo "$words" > $P/xd_inject || fail "xd_inject refused the packet"
		sleep 0.3
	done < /tmp/inject
	vm_signal injected
else
	vm_wait b.injected 60
	bad_is() { [ "$(state nego_bad)" = $((bad0 + 5)) ]; }
	refused_is() { [ "$(state nego_refused)" = $((ref0 + 5)) ]; }
	wait_for 20 bad_is
	wait_for 20 refused_is
	cat /sys/module/tbrdma/parameters/tb_state
	dmesg | grep 'tbrdma: refused' || fail "no refusal logged"
fi
sleep 2
rails_up_is 4 || { "$CTL" links; fail "the link lost rails"; }
[ "$(connects)" = "$n_conn" ] || { dmesg | grep 'rail(s)'; fail "the link was torn down and set up again"; }
vm_signal checked
vm_wait "$other.checked" 60

step "a tb peer claiming a host two hops away: held, the routed host's traffic goes on"
# (issue 46, docs/sweep.md "Trust") a builds a real host X two hops away: tbrdma1 (N, namespace
# h1) cabled to tbrdma0 (A) and tbrdma2 (X, namespace h2) cabled to N (emu cables), A's table
# reaching X through N. b's stand-in then presents b as X on both cables (fault_xd_guid: b's
# tbrdma is honest, the stand-in rewrites its GUID on the wire) and a's services are bound again,
# so a negotiates with a tb peer claiming X's GUID while verified RC traffic A -> X runs through N:
# a's link to the impostor is held (held=1, links_held=1), what b sends on it is dropped
# (held_drops), A's pings and RC traffic reach the real X, nothing reaches b. Then b tells the
# truth again and the tb link to b is used.
DRV=/sys/bus/thunderbolt/drivers/tbrdma
svcs() { local d; for d in "$TBD"/0-*.*; do [ "$(cat "$d/key" 2>/dev/null)" = tbrdma ] && basename "$d"; done; }
rebind_all() {
	local s
	for s in $(svcs); do echo "$s" > "$DRV/unbind" || fail "unbind $s"; done
	sleep 1
	for s in $(svcs); do echo "$s" > "$DRV/bind" || fail "bind $s"; done
}
if [ "$VM_ROLE" = a ]; then
	. "$TBR_TOP/tests/vm/lib/pair.sh"
	. "$TBR_TOP/tests/vm/lib/daemons.sh"
	rdma system set netns exclusive || fail "rdma netns exclusive"
	"$CTL" dev-new > /dev/null && "$CTL" dev-new > /dev/null || fail "dev-new"
	g() { "$CTL" devs | sed -n "s/^dev dev=tbrdma$1 .* guid=\([0-9a-f]*\) .*/\1/p"; }
	GA=$(g 0) GN=$(g 1) GX=$(g 2)
	[ -n "$GA" ] && [ -n "$GN" ] && [ -n "$GX" ] || { "$CTL" devs; fail "no GUIDs"; }
	host_ns 1 tbrdma1 tbr1
	host_ns 2 tbrdma2 tbr2
	"$CTL" cable-new tbrdma0 tbrdma1 --rails 1 > /dev/null || fail "cable A-N"
	"$CTL" cable-new tbrdma1 tbrdma2 --rails 1 > /dev/null || fail "cable N-X"
	in_h 1 ip addr add 10.77.0.3/24 dev tbr1 && in_h 1 ip link set tbr1 up
	in_h 2 ip addr add 10.77.0.4/24 dev tbr2 && in_h 2 ip link set tbr2 up
	# min-hop tables on the line A-N-X (ROUTE_SET wants them sorted by destination)
	# shellcheck disable=SC2046
	rs() { local d=$1; shift; "$CTL" route-set "$d" 1 $(printf '%s\n' "$@" | sort) || fail "route-set $d"; }
	rs tbrdma0 "$GN,$GN,1" "$GX,$GN,2"
	rs tbrdma1 "$GA,$GA,1" "$GX,$GX,1"
	rs tbrdma2 "$GA,$GN,2" "$GN,$GN,1"
	within 30 ping -c 1 -W 1 10.77.0.4 || { "$CTL" links; fail "A cannot ping X through N"; }
	xgid() { in_h 2 bash -c "$(declare -f gid_index); gid_index tbrdma2 10.77.0.4"; }
	wait_for 20 xgid > /dev/null
	PROG=$TBR_TOP/build/progs/integrity
	in_h 2 "$PROG" -d tbrdma2 -g "$(xgid)" server > /tmp/tsrv.log 2>&1 &
	tsrv=$!
	wait_for 10 in_h 2 sh -c "[ -n \"\$(ss -ltnH)\" ]"
	"$PROG" -d tbrdma0 -g "$GID" --seed 46 --until-signal client 10.77.0.4 > /tmp/tcli.log 2>&1 &
	tcli=$!
	sleep 2
	echo "$GX" > "$VM_SHARED/x.guid"
	vm_signal chain
	vm_wait b.lying 60
	rebind_all
	xlink() { "$CTL" links tbrdma0 | grep "^link dev=tbrdma0 .* peer=$GX "; }
	xlink_up() { xlink | grep -q 'rails_up=[1-9]'; }
	wait_for 90 xlink_up || { "$CTL" links; fail "no tb link claiming X came up"; }
	"$CTL" links tbrdma0
	xlink | grep -q " trust=held " || fail "A's tb link to the impostor of X is not held"
	xlink | grep -q " held=1 " || fail "the link's held counter did not move"
	"$CTL" devs tbrdma0 | grep -q "^dev dev=tbrdma0 .* links_held=1 held=1 " ||
		{ "$CTL" devs; fail "tbrdma0: links_held/held"; }
	klog_has "tbrdma: tbrdma0 link [0-9]* claims GUID $GX, which the fabric reaches through another neighbour" ||
		fail "the hold was not logged"
	vm_signal held
	vm_wait b.spoke 60
	some_drops() { xlink | grep -q ' held_drops=[1-9]'; }
	wait_for 10 some_drops || { xlink; fail "what the impostor sent was not counted held_drops"; }
	vm_signal checked_held
	vm_wait b.quiet 60
	# 2c: the real hosts take the fabric key, the impostor has none; integrity A -> X runs on
	ref0=$(refused)
	for d in tbrdma0 tbrdma1 tbrdma2; do "$CTL" auth-key $d /tmp/fabric.key || fail "auth-key $d"; done
	more_refused() { [ "$(refused)" -gt "$ref0" ]; }
	x_refused() { klog_has "tbrdma: refused peer $GX: \(it holds no fabric key\|a fabric key is required\)"; }
	x_no_rails() { ! xlink | grep -q 'rails_up=[1-9]'; }
	# (within: each poll runs tbrdma-ctl, slow on a loaded TCG guest; wait_for counts polls)
	within 30 more_refused	# the keyless impostor of X counted auth_refused
	within 10 x_refused	# and logged with X's GUID
	klog_has "tbrdma: .*fabric key set: peer $GX has not proven it" ||
		fail "a kept its held link to the impostor (or did not say why it went)"
	diag() { "$CTL" links; }
	within 10 x_no_rails	# a has no rail to the keyless impostor of X
	unset -f diag
	dmesg | grep "refused peer $GX" | tail -2
	echo "auth_refused $ref0 -> $(refused)"
	kill -USR1 "$tcli"
	wait "$tcli" || { tail -20 /tmp/tcli.log; tail -20 /tmp/tsrv.log; fail "integrity A -> X failed with the impostor up"; }
	wait "$tsrv" || { tail -20 /tmp/tsrv.log; fail "integrity server on X failed"; }
	grep -q "integrity client: ok" /tmp/tcli.log || fail "integrity A -> X did not finish"
	tail -1 /tmp/tcli.log
	ip neigh flush dev tbr0		# ARP again: its broadcast must not reach the impostor
	ping -c 3 -i 0.2 -W 5 10.77.0.4 > /dev/null || fail "A cannot ping the real X"
	x_no_rails || { "$CTL" links; fail "the keyless impostor of X got rails"; }
	vm_signal checked_x
	vm_wait b.truth 60
	"$CTL" auth-key tbrdma0 || fail "clearing the key"	# step 3 sets it with rails up
	rebind_all
	"$CTL" dev-del tbrdma2 && "$CTL" dev-del tbrdma1 || fail "dev-del N, X"
	# a is the one who reads: b's real GUID on a used link again
	wait_for 90 rails_up_is 4 || { "$CTL" links; fail "the tb rails to b did not come back"; }
	"$CTL" links tbrdma0 | grep -q " peer=$(cat "$VM_SHARED/b.nodeguid") .* trust=used " ||
		{ "$CTL" links; fail "the link to the honest b is not used"; }
else
	vm_wait a.chain 120
	GX=$(cat "$VM_SHARED/x.guid")
	echo "$guid:$GX" > $P/fault_xd_guid || fail "fault_xd_guid"
	cat $P/fault_xd_guid
	vm_signal lying
	# a binds again; our link to A (honest at this end) comes up
	vm_wait a.held 120
	wait_for 30 rails_up_is 4 || { "$CTL" links; fail "b's rails to a did not come up"; }
	rx0=$("$CTL" links tbrdma0 | sed -n 's/^link .* rx_frames=\([0-9]*\) .*/\1/p')
	ping -c 2 -W 2 "$PEER" > /dev/null && fail "the impostor got an answer from a"
	"$CTL" links tbrdma0
	vm_signal spoke
	vm_wait a.checked_held 180
	cat $P/fault_xd_guid
	grep -q ' tx=[1-9][0-9]* rx=' $P/fault_xd_guid || fail "the stand-in rewrote no GUID"
	# nothing a sent on the held link came to us (ARP, IP, RC, management)
	rx1=$("$CTL" links tbrdma0 | sed -n 's/^link .* rx_frames=\([0-9]*\) .*/\1/p')
	[ "$rx1" = "$rx0" ] || fail "a sent $((rx1 - rx0)) frame(s) on its held link to the impostor"
	ip0=$(cat /sys/class/net/tbr0/statistics/rx_packets)
	vm_signal quiet
	# 2c: a (and N, X) take the key; we still claim X, keyless
	vm_wait a.checked_x 180
	# the keyed a answered the impostor's HELLO with STATUS AUTH
	within 20 klog_has 'tbrdma: peer requires a fabric key, we have none'
	no_rails || { "$CTL" links; fail "the keyless impostor has rails to the keyed a"; }
	ip1=$(cat /sys/class/net/tbr0/statistics/rx_packets)
	[ "$ip1" = "$ip0" ] || fail "$((ip1 - ip0)) IP packet(s) reached the impostor of X"
	"$CTL" links tbrdma0
	echo 0:0 > $P/fault_xd_guid || fail "fault_xd_guid off"
	vm_signal truth
	wait_for 90 rails_up_is 4 || { "$CTL" links; fail "b's rails to a did not come back"; }
fi
wait_for 20 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
vm_signal honest
vm_wait "$other.honest" 120
wait_for 20 ping -c 1 -W 2 "$PEER" > /dev/null || fail "no IP to the honest peer"

step "fabric key: b without it is refused and counted; with it on both ends the rails come back"
BG=$(cat "$VM_SHARED/b.nodeguid")
if [ "$VM_ROLE" = a ]; then
	ref0=$(refused)
	"$CTL" auth-key tbrdma0 /tmp/fabric.key || fail "auth-key"
	vm_signal keyed
	some_refused() { [ "$(refused)" -gt "$ref0" ]; }
	# (on failure: the tasks blocked in the kernel, and tbrdma's negotiation state)
	diag() { echo w > /proc/sysrq-trigger; cat /sys/module/tbrdma/parameters/tb_state; dmesg | tail -n 80; }
	within 60 some_refused
	unset -f diag
	vm_wait b.refused 90
	no_rails || { "$CTL" links; fail "a has rails to a peer without the key"; }
	echo "auth_refused=$(refused)"
	dmesg | grep 'refused peer' | tail -3
	klog_has "tbrdma: refused peer $BG: it holds no fabric key" || fail "a did not log b's keyless answer"
	klog_has "tbrdma: refused peer $BG: a fabric key is required" || fail "a did not log b's keyless HELLO"
	klog_has "tbrdma: .*fabric key set: peer $BG has not proven it" ||
		fail "a kept the rails b set up before the key (or did not say why they went)"
	vm_signal checked_keyless	# only now may b take the key (its rails then come up)
else
	nreq=$(klog_n 'tbrdma: peer requires a fabric key, we have none')	# 2c's are in
	vm_wait a.keyed 60
	# no reload: a's new key alone must end the rails b never proved it on
	more_req() { [ "$(klog_n 'tbrdma: peer requires a fabric key, we have none')" -gt "$nreq" ]; }
	wait_for 60 more_req
	sleep 3
	no_rails || { "$CTL" links; fail "b has rails without the key"; }
	vm_signal refused
	vm_wait a.checked_keyless 90
	"$CTL" auth-key tbrdma0 /tmp/fabric.key || fail "auth-key"
fi
wait_for 90 rails_up_is 4
wait_for 20 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
wait_for 20 gid_index tbrdma0 "$ME"
GID=$(gid_index tbrdma0 "$ME")
"$CTL" links tbrdma0 | grep -q '^link dev=tbrdma0 .* trust=used ' || { "$CTL" links; fail "the proven link is not used"; }
"$CTL" devs tbrdma0 | grep -q ' auth=1 ' || fail "no key"
vm_signal keyed_up
vm_wait "$other.keyed_up" 120
ping -c 2 -W 5 "$PEER" > /dev/null || fail "no IP over the keyed rails"

step "keyed session: forged BYEs refused, the rails stay (READY and BYE signed, negotiation 2.2)"
# b injects two BYEs with b's GUID, UUIDs and a sequence past any it sent: one unsigned (27
# words, what anyone on the cable can make; 2.1 tore the rails down for it) and one made from b's
# own signed READY with its type changed (the MAC no longer checks): a answers both STATUS AUTH,
# counts them (nego_refused +2) and keeps its 4 rails
if [ "$VM_ROLE" = b ]; then
	vm_wait a.counted_bye 60
	python3 - $P/xd_sent > /tmp/inject_bye <<'PYEOF' || fail "building the BYEs"
import sys
ready = None
for line in open(sys.argv[1]):
    w = [int(x, 16) for x in line.split()]
    if len(w) > 9 and w[1] == 1 and (w[8] >> 8) & 0xff == 3 and w[8] & 0xff == 40:
        ready = w                      # the last signed READY on port 1
assert ready, "no signed READY on port 1 in xd_sent"
def pkt(w):
    w = list(w)
    w[2] = (w[2] & ~0x3f) | (len(w) - 3)
    return " ".join("%x" % x for x in w)
bye = list(ready[:7 + 27])
bye[8] = (bye[8] & ~0xffff) | 0x400 | 27    # BYE, 27 words: unsigned
bye[9] = 0x7ffffff0
bye[7 + 14] = 0
print(pkt(bye))
forged = list(ready)
forged[8] = (forged[8] & ~0xff00) | 0x400   # the signed READY made a BYE
forged[9] = 0x7ffffff1
print(pkt(forged))
PYEOF
	while read -r words; do
		echo "inject: $(echo "$words" | cut -c1-70)..."
		echo "$words" > $P/xd_inject || fail "xd_inject refused the BYE"
		sleep 0.5
	done < /tmp/inject_bye
	vm_signal injected_bye
else
	ref0=$(state nego_refused)
	n_conn=$(connects)
	vm_signal counted_bye
	vm_wait b.injected_bye 60
	refused_2() { [ "$(state nego_refused)" -ge $((ref0 + 2)) ]; }
	wait_for 20 refused_2 || { cat /sys/module/tbrdma/parameters/tb_state; fail "the forged BYEs were not refused"; }
	cat /sys/module/tbrdma/parameters/tb_state
	klog_has 'tbrdma: refused peer [0-9a-f]*: its READY or BYE is not signed with the fabric key' ||
		fail "the refusal was not logged"
	sleep 2
	rails_up_is 4 || { "$CTL" links; fail "a forged BYE took the keyed rails down"; }
	[ "$(connects)" = "$n_conn" ] || fail "the keyed link was torn down and set up again"
fi
vm_signal bye_checked
vm_wait "$other.bye_checked" 60

step "the link still carries RDMA"
# (perf_pair's -u: guest.sh's PAIR_ACK_TIMEOUT; 14 ended in RETRY_EXC_ERR on the debug kernel at
# load ~8)
perf_pair w ib_write_bw -s 65536 -n 100
vm_signal finished
vm_wait "$other.finished" 60
