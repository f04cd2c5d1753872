# Stable identity (issue 13 item 10, docs/architecture.md "Identity"): the modprobe.d line of
# make install passes /etc/machine-id as host_id (run here as modprobe runs it, insmod of the
# build in place of modprobe); two emulated hosts (tbrdma0, tbrdma1 in h1, one cable) get
# distinct GUIDs and, with one tbrdmad each, addresses. The module reloaded and the daemons
# restarted on their state: the same GUIDs (and tbrN MACs) and the same addresses. Another
# host_id gives other GUIDs, none gives random ones, a malformed one is refused.
# vm-kernel: 6.1 6.12
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/lib/daemons.sh"

KO=$TBR_KO_DIR/tbrdma/tbrdma.ko
stop_d() { local h; for h in 0 1; do kill -TERM "${PID[$h]}"; wait "${PID[$h]}" || fail "tbrdmad $h exit"; done; }
# addresses: both daemons agree on 2 hosts with addresses; prints "GUID0 ADDR0 GUID1 ADDR1"
addresses() {
	"$T" --socket "$(sock 0)" fabric --json > /tmp/fab.0 2>/dev/null &&
	"$T" --socket "$(sock 1)" fabric --json > /tmp/fab.1 2>/dev/null &&
	python3 -c '
import json, sys
fs = [json.load(open("/tmp/fab.%d" % h)) for h in (0, 1)]
ok = all(len(f["hosts"]) == 2 and f["converged"] and f["address"] for f in fs)
ok &= all(None not in [h["address"] for h in f["hosts"]] for f in fs)
if not ok:
    sys.exit(1)
print(" ".join("%s %s" % (f["self"], f["address"]) for f in fs))'
}
# hosts: load (already done), tbrdma1 in h1, a cable, tbrN up
hosts() {
	"$CTL" dev-new > /dev/null || fail "dev-new failed"
	"$CTL" cable-new tbrdma0 tbrdma1 --rails 1 > /dev/null || fail "cable-new failed"
	[ -e /run/netns/h1 ] || rdma system set netns exclusive
	host_ns 1 tbrdma1 tbr1
	ip link set tbr0 up
	h1 ip link set tbr1 up
}
id_of() { echo "$(guid_of tbrdma0) $(cat /sys/class/net/tbr0/address) $(h1 bash -c "$(declare -f guid_of); CTL=$CTL guid_of tbrdma1") $(h1 cat /sys/class/net/tbr1/address)"; }

step "the modprobe.d line passes /etc/machine-id as host_id"
echo "0123456789abcdef0123456789abcdef" > /etc/machine-id	# the VM's overlay, not the host's
line=$(sed -n 's/^install tbrdma //p' "$TBR_TOP/systemd/tbrdma-modprobe.conf")
[ -n "$line" ] || fail "no install line"
modprobe thunderbolt
modprobe ib_core
modprobe ib_uverbs
CMDLINE_OPTS="eth_hello_ms=200" sh -c "${line/\/sbin\/modprobe --ignore-install tbrdma/insmod $KO}" ||
	fail "the install line failed: $line"
[ "$(cat /sys/module/tbrdma/parameters/host_id)" = 0123456789abcdef0123456789abcdef ] ||
	fail "host_id is not the machine-id"
[ "$(cat /sys/module/tbrdma/parameters/eth_hello_ms)" = 200 ] || fail "modprobe's options lost"

step "two hosts, a daemon each: distinct GUIDs, addresses"
hosts
read -r g0 m0 g1 m1 <<< "$(id_of)"
echo "tbrdma0 $g0 $m0, tbrdma1 $g1 $m1"
[ "$g0" != "$g1" ] || fail "both devices have GUID $g0"
rm -rf /tmp/st0 /tmp/st1
start_d 0
start_d 1
wait_for 40 addresses > /dev/null || fail "no addresses"
before=$(addresses)
echo "fabric: $before"
stop_d

step "reload the module, restart the daemons on their state: same GUIDs, same addresses"
rmmod tbrdma || fail "rmmod"
tbr_load host_id=0123456789abcdef0123456789abcdef
hosts
[ "$(id_of)" = "$g0 $m0 $g1 $m1" ] || fail "identity changed over a reload: $(id_of), was $g0 $m0 $g1 $m1"
start_d 0
start_d 1
wait_for 40 addresses > /dev/null || fail "no addresses after the restart"
after=$(addresses)
echo "fabric: $after"
[ "$after" = "$before" ] || fail "addresses changed: $after, were $before"
stop_d
rmmod tbrdma || fail "rmmod"

step "another host_id: other GUIDs; none: random per load; malformed: refused"
tbr_load host_id=fedcba9876543210fedcba9876543210
[ "$(guid_of tbrdma0)" != "$g0" ] || fail "another host_id, same GUID"
rmmod tbrdma
tbr_load
r1=$(guid_of tbrdma0)
rmmod tbrdma
tbr_load
[ "$(guid_of tbrdma0)" != "$r1" ] || fail "no host_id: the same GUID twice"
klog_has 'no host_id: device GUIDs are random' || fail "random GUIDs not logged"
rmmod tbrdma
tbr_load host_id=short 2> /dev/null && fail "a 5-character host_id was accepted"
tbr_load 'host_id=has blank inside' 2> /dev/null && fail "a host_id with a blank was accepted"
klog_has 'host_id must be 8..64 printable characters' || fail "refusal not logged"
echo "guid-stable: ok"
