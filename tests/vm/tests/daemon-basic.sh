# tbrdmad + tbctl against the real module: the daemon starts before the module is loaded (serves
# an absent kernel state, READY), picks the family up when tbrdma.ko registers it, shows devices,
# links with counters and rails of an emu cable; `tbctl rail disable/enable` cuts/restores the rail
# in the kernel (checked in sysfs and with tbrdma-ctl); events reach the daemon; rmmod is noticed
# and the daemon keeps serving; udev discovery: without udevd logged once, with systemd-udevd
# started link devices that go and come reach the daemon's monitor (status.udev) and re-sync it;
# SIGTERM exits cleanly.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

D=$TBR_TOP/build/tbrdmad/tbrdmad
T=$TBR_TOP/build/tbctl/tbctl
[ -x "$D" ] && [ -x "$T" ] || fail "no tbrdmad/tbctl (run make)"
export TBCTL_SOCKET=/tmp/tbrdmad/tbrdmad.sock
jq_ok() { python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"; }

step "daemon first, module absent"
"$D" --socket "$TBCTL_SOCKET" --state-dir /tmp/tbrdmad-state --config /dev/null \
	--log-level debug > /tmp/tbrdmad.log 2>&1 &
DPID=$!
wait_for 10 grep -q 'ready:' /tmp/tbrdmad.log
"$T" status
"$T" status --json | jq_ok 'd["kernel"]["present"] is False' || fail "kernel not absent"

step "load the module: the daemon notices"
tbr_load
wait_for 10 sh -c "'$T' status --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[\"kernel\"][\"present\"] else 1)'"
"$T" devices
"$T" devices --json | jq_ok 'any(x["name"] == "tbrdma0" and x["host"] for x in d["devices"])' ||
	fail "tbrdma0 not shown"

step "tbrdma1 + emu cable with 2 rails: links and rails shown with counters"
d1=$("$CTL" dev-new) || fail "dev-new failed"
ip link set tbr0 up
ip link set "$(netdev_of "$d1")" up
"$CTL" cable-new tbrdma0 "$d1" --rails 2 > /dev/null || fail "cable-new failed"
"$CTL" mgmt-send tbrdma0 1 "count-me" || fail "mgmt-send failed"
wait_for 10 sh -c "'$T' links --json | grep -q '\"mgmt_tx\": [1-9]'"
"$T" status
"$T" status --json | python3 -m json.tool > /dev/null || fail "status --json is not JSON"
"$T" links
"$T" rails
"$T" links --json | jq_ok 'len(d["links"]) == 2 and all(l["state"] == "up" and l["rails_up"] == 2 for l in d["links"])' ||
	fail "links wrong: $("$T" links --json)"
"$T" rails --json | jq_ok 'len(d["rails"]) == 4 and all(r["backend"] == "emu" and not r["cut"] for r in d["rails"])' ||
	fail "rails wrong"
g1=$(guid_of "$d1")
"$T" links tbrdma0 --json | jq_ok "d['links'][0]['peer_guid'] == '$g1'" || fail "peer guid"
grep -q 'event: link tbrdma0/1' /tmp/tbrdmad.log || fail "no link event logged"

step "rail disable/enable through tbctl cuts/restores the rail in the kernel"
S=/sys/bus/tbrdma/devices/tbrdma0:link1:rail1
"$T" rail disable tbrdma0 1 1 | tee /tmp/out
grep -q 'rail tbrdma0/1/1: down (cut)' /tmp/out || fail "rail disable reply"
[ "$(cat $S/state)" = down ] || fail "sysfs: rail not down after tbctl rail disable"
"$CTL" links | grep -q "rail dev=tbrdma0 link=1 id=1 .*state=down" || fail "kernel: rail not down"
"$T" links --json | jq_ok 'd["links"][0]["rails_up"] == 1' || fail "link rails_up after cut"
setpriv --reuid=65534 --regid=65534 --clear-groups "$T" rail enable tbrdma0 1 1 &&
	fail "non-root rail enable succeeded"
"$T" rail enable tbrdma0 1 1 | grep -q 'rail tbrdma0/1/1: up' || fail "rail enable reply"
[ "$(cat $S/state)" = up ] || fail "sysfs: rail not up after tbctl rail enable"
rc=0; "$T" rail disable tbrdma0 1 9 || rc=$?
[ "$rc" = 1 ] || fail "disabling a missing rail exited $rc"

step "udev: without udevd said once; with systemd-udevd the monitor sees link devices go and come"
[ "$(grep -c 'udev: systemd-udevd is not running' /tmp/tbrdmad.log)" = 1 ] || fail "no-udevd not logged once"
"$T" status --json | jq_ok 'd["udev"]["state"] == "monitoring (no udevd)" and d["udev"]["thunderbolt_peers"] == []' ||
	fail "udev state without udevd: $("$T" status --json)"
/lib/systemd/systemd-udevd --daemon --resolve-names=never || fail "systemd-udevd did not start"
wait_for 30 test -S /run/udev/control
udevadm settle -t 30 || true
"$CTL" cable-del 1 || fail "cable-del 1 failed"
wait_for 20 grep -q 'udev: link tbrdma0:link1 removed' /tmp/tbrdmad.log
cid=$("$CTL" cable-new tbrdma0 "$d1" --rails 1) || fail "cable-new failed"
wait_for 20 grep -Eq 'udev: link tbrdma0:link[0-9]+ added' /tmp/tbrdmad.log
wait_for 10 grep -q 'udev: devices changed: re-reading the kernel, heavy sweep' /tmp/tbrdmad.log
grep 'udev:' /tmp/tbrdmad.log
lnk=$(sed -En 's/.*udev: link (tbrdma0:link[0-9]+) added.*/\1/p' /tmp/tbrdmad.log | tail -1)
wait_for 10 sh -c "'$T' status --json | python3 -c 'import json,sys; u=json.load(sys.stdin)[\"udev\"]; sys.exit(0 if u[\"state\"] == \"monitoring\" and \"$lnk\" in u[\"links\"] and u[\"events\"] > 0 else 1)'" ||
	fail "status.udev after the replug: $("$T" status --json)"
udevadm control --exit || fail "udevadm control --exit"
"$CTL" cable-del "$cid" || fail "cable-del $cid failed"
wait_for 10 sh -c "'$T' links --json | python3 -c 'import json,sys; sys.exit(1 if json.load(sys.stdin)[\"links\"] else 0)'"
kill -0 "$DPID" || fail "tbrdmad died"

step "rmmod: the daemon notices, keeps serving; SIGTERM exits 0"
"$CTL" cable-del 1 || true
"$CTL" dev-del "$d1" || true
rmmod tbrdma || fail "rmmod failed"
wait_for 10 sh -c "'$T' status --json | python3 -c 'import json,sys; sys.exit(1 if json.load(sys.stdin)[\"kernel\"][\"present\"] else 0)'"
"$T" status
kill -TERM "$DPID"
wait "$DPID" || fail "tbrdmad exited $?"
grep -E 'unregistered|dump failed' /tmp/tbrdmad.log || true
echo "--- daemon log"; tail -n 30 /tmp/tbrdmad.log
