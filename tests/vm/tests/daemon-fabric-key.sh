# The sweep under attack, on the ring of daemon-fabric.sh (fabric.lib).
# Fabric key (issue 13 item 11): a 5th host h4 cabled to host 1 runs a rogue daemon with
# Priority=255. Without a key it takes the master role (the threat); with FabricKeyFile= on the
# four, the rogue without the key, then with a wrong key, changes neither the master nor any
# address nor the host list, and host 1 counts its datagrams in sweeps.rx_unauthenticated.
# Each keyed daemon hands the key to its kernel device (AUTH_KEY_SET: `devs` auth=1), the keyless
# rogue's device has none.
# Without a key, forged records injected from h4's device are refused or harmless (validation).
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"

step "four hosts: tbrdma0 here, tbrdma1..3 in h1..h3, cabled as a ring"
fabric_ring

step "fabric key: a rogue host h4 (Priority=255) cabled to host 1"
"$CTL" dev-new > /dev/null || fail "dev-new 4 failed"
# (its netdev took the lowest free tbrN name here: tbr0 is the only other one left)
nd4=$(ip -o link show | awk -F': ' '{print $2}' | grep -x 'tbr[0-9]*' | grep -vx tbr0)
[ -n "$nd4" ] || fail "no netdev for tbrdma4"
host_ns 4 tbrdma4 "$nd4"
"$CTL" cable-new tbrdma4 tbrdma1 > /dev/null || fail "cable-new 4-1 failed"
rm -rf /tmp/st4
printf '[Daemon]\nPriority=255\n' > /tmp/rogue.conf
head -c 32 /dev/urandom > /tmp/fabric.key
head -c 32 /dev/urandom > /tmp/wrong.key
chmod 0600 /tmp/fabric.key /tmp/wrong.key
printf '[Daemon]\nFabricKeyFile=/tmp/fabric.key\n' > /tmp/keyed.conf
printf '[Daemon]\nPriority=255\nFabricKeyFile=/tmp/wrong.key\n' > /tmp/wrongkey.conf
rogue_guid() { "$T" --socket "$(sock 4)" fabric --json | jq -r '.self // ""'; }
follows() { # follows GUID: every one of the four names GUID as master
	local h
	for ((h = 0; h < N; h++)); do
		fab "$h" > "/tmp/fab.$h" 2>/dev/null || return 1
		[ "$(master_of "$h")" = "$1" ] || return 1
	done
}
unauth() { fab 1 | jq -e '.sweeps.rx_unauthenticated'; }
rogue_up() { [ -n "$(rogue_guid 2> /dev/null)" ]; }
unauth_ge() { local u; u=$(unauth 2> /dev/null) && [ "$u" -ge "$1" ]; }
knows() { # knows H GUID: GUID is a host of host H's fabric (as of /tmp/fab.H)
	jq -e --arg g "$2" 'any(.hosts[]; .guid == $g)' "/tmp/fab.$1" > /dev/null
}
# no key anywhere: the rogue wins the election on all four (what the key is for)
for ((h = 0; h < N; h++)); do start_d "$h"; done
start_d 4 /tmp/rogue.conf
wait_for 20 rogue_up || fail "the rogue daemon has no device"
RG=$(rogue_guid)
wait_for 20 follows "$RG" || { dump_all; fail "without a key the rogue did not become master"; }
echo "without a key: rogue $RG is master of all four"
for ((h = 0; h <= N; h++)); do kill -TERM "${PID[$h]}"; done
for ((h = 0; h <= N; h++)); do wait "${PID[$h]}" || true; done
# still without a key: forged records injected from tbrdma4 (no daemon there) are refused or
# harmless: the master's record with a generation near 2^64 and other addresses, a host's record
# with an address outside the pool, 60 made-up hosts with priority 255 that name the rogue as
# neighbour (the rogue does not name them: unreachable). Master and addresses stay, no made-up
# host is elected or given an address, host 1 counts the refused records.
for ((h = 0; h < N; h++)); do start_d "$h"; done
wait_for 20 agree 4 || { dump_all; fail "no agreement before the injection"; }
M=$(master_of 0)
declare -a A0
for ((h = 0; h < N; h++)); do A0[$h]=$(addr_of "$h"); done
G1=$(self_of 1)
for ((h = 0; h < N; h++)); do [ "$h" != 1 ] && [ "$(self_of "$h")" != "$M" ] && OH=$(self_of "$h"); done
HEX=$(py '
import struct, sys, time
rg, m, g1, oh = (int(x, 16) for x in sys.argv[1:5])
now = int(time.time() * 1e6)
def rec(guid, seq, prio=0, flags=0, addr=0, neigh=(), assign=()):
    r = struct.pack(">QQIBBBBIQI4x", guid, seq, 0, prio, flags, len(neigh), len(assign), addr,
                    guid, 1)
    return r + b"".join(struct.pack(">Q", n) for n in neigh) + \
        b"".join(struct.pack(">QI", g, a) for g, a in assign)
recs = [rec(rg, now, neigh=[g1]),
        rec(m, 2**64 - 2, 255, 1, 0x0a6300c8, [oh], [(g1, 0x0a6300c9), (oh, 0x0a6300ca)]),
        rec(oh, now + 1000000, 255, 0, 0xc0a80101)]
recs += [rec(0xfa4e000000000000 + i, now, 255, 1, 0, [rg]) for i in range(60)]
msg = struct.pack(">IBBHQQIB3x", 0x54425357, 1, 1, len(recs), rg, m, 1, 0) + b"".join(recs)
print(msg.hex())' "$(guid_of tbrdma4)" "$M" "$G1" "$OH")
refused() { fab 1 | jq -e '.sweeps.records_refused'; }
r0=$(refused)
for ((h = 0; h < N; h++)); do L[$h]=$(wc -l < "/tmp/tbrdmad-$h.log"); done
"$CTL" mgmt-send tbrdma4 1 --hex "$HEX" --repeat 3 > /dev/null || fail "injection failed"
refused_ge() { local r; r=$(refused 2> /dev/null) && [ "$r" -ge "$1" ]; }
for ((i = 0; i < 100; i++)); do refused_ge $((r0 + 2)) && break; sleep 0.1; done
refused_ge $((r0 + 2)) || { fab 1; grep sweep: /tmp/tbrdmad-1.log | tail -n 20
			    fail "host 1 refused no forged record"; }
# the made-up hosts are gone DeadSec after the injection
wait_for 20 agree 4 || { dump_all; fail "no agreement after the injection"; }
for ((h = 0; h < N; h++)); do
	[ "$(master_of "$h")" = "$M" ] || fail "injection: host $h follows $(master_of "$h")"
	[ "$(addr_of "$h")" = "${A0[$h]}" ] || fail "injection: host $h: address changed"
	grep -q fa4e0000 "/tmp/st$h/guid2addr" && fail "injection: a made-up host in host $h's map"
done
for ((h = 0; h < N; h++)); do
	if tail -n "+$((L[h] + 1))" "/tmp/tbrdmad-$h.log" | grep "election: master .* (was "; then
		tail -n "+$((L[h] + 1))" "/tmp/tbrdmad-$h.log" | grep -v "refused the record" | head -n 150
		fail "injection: host $h elected again"
	fi
done
echo "forged records: master and addresses kept, host 1 refused $(($(refused) - r0)) record(s)"
for ((h = 0; h < N; h++)); do kill -TERM "${PID[$h]}"; done
for ((h = 0; h < N; h++)); do wait "${PID[$h]}" || true; done
# a world-readable key is refused: the daemon does not start
chmod 0644 /tmp/fabric.key
rc=0; "$D" --config /tmp/keyed.conf --socket /tmp/kx.sock --state-dir /tmp/kx > /tmp/kx.log 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "others may read or write the key" /tmp/kx.log ||
	{ cat /tmp/kx.log; fail "a world-readable key was accepted"; }
chmod 0600 /tmp/fabric.key
# the four with the key: one fabric, its master and addresses
for ((h = 0; h < N; h++)); do start_d "$h" /tmp/keyed.conf; done
wait_for 20 agree 4 || { dump_all; fail "no agreement with the fabric key"; }
grep -q "authenticated (HMAC-SHA256" /tmp/tbrdmad-0.log || fail "no key in use"
# tbrdmad hands the key to its kernel device (genl AUTH_KEY_SET): the links' HELLOs are keyed
dev_keyed() { "$CTL" devs "tbrdma$1" | grep -q ' auth=1 '; }
for ((h = 0; h < N; h++)); do
	wait_for 10 dev_keyed "$h" || { "$CTL" devs; fail "tbrdmad did not give tbrdma$h the key"; }
	grep -q "sweep: tbrdma$h's links authenticated with the fabric key" "/tmp/tbrdmad-$h.log" ||
		fail "host $h did not log the key handed to its links"
done
MK=$(master_of 0)
declare -a AK
for ((h = 0; h < N; h++)); do AK[$h]=$(addr_of "$h"); done
[ "$MK" != "$RG" ] || fail "the keyed fabric elected the rogue"
for cf in /tmp/rogue.conf /tmp/wrongkey.conf; do
	u0=$(unauth)
	start_d 4 "$cf"
	# the rogue's hellos (one a second) reach host 1 and are dropped, counted
	wait_for 20 unauth_ge $((u0 + 5)) ||
		{ dump_all; fail "$cf: host 1 did not count the rogue's datagrams"; }
	agree 4 || { dump_all; fail "$cf: the fabric changed"; }
	for ((h = 0; h < N; h++)); do
		[ "$(master_of "$h")" = "$MK" ] || fail "$cf: host $h follows $(master_of "$h"), not $MK"
		[ "$(addr_of "$h")" = "${AK[$h]}" ] || fail "$cf: host $h: address changed"
		knows "$h" "$RG" && fail "$cf: host $h knows the rogue"
	done
	echo "$cf: rogue ignored, host 1 counted $(($(unauth) - u0)) unauthenticated datagram(s)"
	kill -TERM "${PID[4]}"; wait "${PID[4]}" || true
	# the keyless daemon gave its device no key; the wrong key went to it (the device keeps it)
	if [ "$cf" = /tmp/rogue.conf ]; then
		"$CTL" devs tbrdma4 | grep -q ' auth=0 ' || { "$CTL" devs; fail "the keyless rogue's device has a key"; }
	else
		dev_keyed 4 || { "$CTL" devs; fail "tbrdmad did not give tbrdma4 its (wrong) key"; }
	fi
done
for ((h = 0; h < N; h++)); do kill -TERM "${PID[$h]}"; done
for ((h = 0; h < N; h++)); do wait "${PID[$h]}" || true; done
echo "PASS"
