# Emulated cable over genl: tbrdma1 made by DEV_NEW, cable tbrdma0 <-> tbrdma1 (1 rail), ports go
# ACTIVE, management datagrams cross both ways intact, sysfs link/rail devices, events, cut/restore
# (carrier, port state), hostile input refused with a message, non-root refused (EPERM), rmmod
# with the cable and the extra device present is clean.
# vm-timeout: 400
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

step "load"
tbr_load
[ -x "$CTL" ] || fail "no $CTL (run make)"
"$CTL" devs | tee /tmp/devs
grep -q '^dev dev=tbrdma0 .* host=1 links=0 rails_up=0' /tmp/devs || fail "tbrdma0 not listed as host"

step "dev-new makes tbrdma1 + its netdev"
"$CTL" events > /tmp/events 2> /tmp/events.err &
EVPID=$!
wait_for 5 grep -q listening /tmp/events.err
d1=$("$CTL" dev-new) || fail "dev-new failed"
[ "$d1" = tbrdma1 ] || fail "dev-new made '$d1', expected tbrdma1"
rdma dev show tbrdma1 > /dev/null || fail "tbrdma1 is not an RDMA device"
nd1=$(netdev_of tbrdma1)
rdma link show tbrdma1/1 | grep -q "netdev $nd1" || fail "tbrdma1 not bound to $nd1"
ip link set tbr0 up
ip link set "$nd1" up
port_is tbrdma0 DOWN || fail "tbrdma0 ACTIVE without any rail"

step "cable with 1 rail: ports ACTIVE"
cid=$("$CTL" cable-new tbrdma0 tbrdma1 --rails 1) || fail "cable-new failed"
[ "$cid" = 1 ] || fail "cable id '$cid'"
wait_for 5 port_is tbrdma0 ACTIVE
wait_for 5 port_is tbrdma1 ACTIVE
rdma link show tbrdma0/1 | grep -q 'state ACTIVE' || fail "rdma link: tbrdma0/1 not ACTIVE"
rdma link show tbrdma1/1 | grep -q 'state ACTIVE' || fail "rdma link: tbrdma1/1 not ACTIVE"
[ "$(cat /sys/class/net/tbr0/carrier)" = 1 ] || fail "tbr0 has no carrier"
"$CTL" links | tee /tmp/links
g0=$(guid_of tbrdma0); g1=$(guid_of tbrdma1)
grep -q "^link dev=tbrdma0 id=1 peer=$g1 state=up rails_up=1 rails=1" /tmp/links || fail "tbrdma0 link wrong"
grep -q "^link dev=tbrdma1 id=1 peer=$g0 state=up rails_up=1 rails=1" /tmp/links || fail "tbrdma1 link wrong"
grep -q "rail dev=tbrdma0 link=1 id=0 peer=$g1 backend=emu state=up" /tmp/links || fail "rail wrong"

step "sysfs: link and rail devices on the tbrdma bus"
ls /sys/bus/tbrdma/devices/
S=/sys/bus/tbrdma/devices/tbrdma0:link1:rail0
[ "$(cat $S/state)" = up ] || fail "sysfs rail state"
[ "$(cat $S/backend)" = emu ] || fail "sysfs rail backend"
[ "$(cat $S/peer_guid)" = "$g1" ] || fail "sysfs peer_guid"
[ "$(cat /sys/bus/tbrdma/devices/tbrdma1:link1/device)" = tbrdma1 ] || fail "sysfs link device"
grep -q DEVTYPE=tbrdma_rail $S/uevent || fail "no DEVTYPE in the rail's uevent"

step "management datagrams both ways"
mgmt_roundtrip tbrdma0 tbrdma1 "hello-from-tbrdma0"
mgmt_roundtrip tbrdma1 tbrdma0 "hello-from-tbrdma1"
# binary, the largest size (4096 bytes), checked byte for byte
big=$(head -c 4096 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
mgmt_listen_start tbrdma1 1
"$CTL" mgmt-send tbrdma0 1 --hex "$big" || fail "mgmt-send 4096 bytes failed"
mgmt_listen_wait
grep -q "^mgmt dev=tbrdma1 link=1 rail=0 peer=$g0 len=4096 hex=$big\$" /tmp/mgmt.out ||
	fail "4096-byte datagram did not arrive intact"
"$CTL" links > /tmp/links
[ "$(cnt tbrdma0 1 0 mgmt_tx)" = 2 ] || fail "tbrdma0 mgmt_tx $(cnt tbrdma0 1 0 mgmt_tx), expected 2"
[ "$(cnt tbrdma1 1 0 mgmt_rx)" = 2 ] || fail "tbrdma1 mgmt_rx $(cnt tbrdma1 1 0 mgmt_rx), expected 2"

step "hostile input gets an error and a message"
expect_err "cable joins two different" "$CTL" cable-new tbrdma0 tbrdma0
expect_err "no such tbrdma device" "$CTL" cable-new tbrdma0 nosuch0
expect_err "lives as long as the module" "$CTL" dev-del tbrdma0
expect_err "Numerical result out of range|out of range|Invalid argument" "$CTL" rail-set tbrdma0 1 99 --drop 1
expect_err "no such link" "$CTL" mgmt-send tbrdma0 7 x
expect_err "no such rail" "$CTL" rail-set tbrdma0 1 5 --cut
expect_err "no such cable" "$CTL" cable-del 42

step "non-root: reads allowed, changes refused with EPERM"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${NOBODY[@]}" "$CTL" links > /dev/null || fail "non-root cannot read links"
"${NOBODY[@]}" "$CTL" devs > /dev/null || fail "non-root cannot list devices"
for cmd in "dev-new" "dev-del tbrdma1" "cable-new tbrdma0 tbrdma1" "cable-del 1" \
	   "rail-set tbrdma0 1 0 --cut" "rail-set tbrdma0 1 0 --drop 50" "mgmt-send tbrdma0 1 x"; do
	# shellcheck disable=SC2086
	expect_err "Operation not permitted" "${NOBODY[@]}" "$CTL" $cmd
done
port_is tbrdma0 ACTIVE || fail "a refused command changed something"
[ "$(rdma dev show | grep -c tbrdma)" = 2 ] || fail "a refused command changed the devices"

step "cut: rail down, carrier off, port DOWN; restore: ACTIVE again"
"$CTL" rail-set tbrdma0 1 0 --cut || fail "cut failed"
port_is tbrdma0 DOWN || fail "tbrdma0 not DOWN after cut"
port_is tbrdma1 DOWN || fail "tbrdma1 not DOWN after cut"
[ "$(cat /sys/class/net/tbr0/carrier)" = 0 ] || fail "tbr0 carrier still on"
[ "$(cat $S/state)" = down ] || fail "sysfs rail state after cut"
expect_err "no rail of this link is up" "$CTL" mgmt-send tbrdma0 1 lost
"$CTL" rail-set tbrdma0 1 0 --restore || fail "restore failed"
wait_for 5 port_is tbrdma0 ACTIVE
wait_for 5 port_is tbrdma1 ACTIVE
mgmt_roundtrip tbrdma0 tbrdma1 "after-restore"
sleep 0.3
kill "$EVPID"; wait "$EVPID" 2> /dev/null || true
cat /tmp/events
for e in "event=dev dev=tbrdma1 .* what=new" "event=link dev=tbrdma0 id=1 .* what=new" \
	 "event=rail dev=tbrdma0 link=1 id=0 .* state=up what=up" \
	 "event=link dev=tbrdma0 id=1 .* state=up .* what=up" \
	 "event=rail dev=tbrdma1 link=1 id=0 .* state=down what=down" \
	 "event=link dev=tbrdma1 id=1 .* state=down .* what=down"; do
	grep -Eq "$e" /tmp/events || fail "no event matching '$e'"
done

step "rmmod with the cable and tbrdma1 present"
rmmod tbrdma || fail "rmmod failed"
rdma dev show | grep -q tbrdma && fail "tbrdma devices left after rmmod"
ip link show "$nd1" > /dev/null 2>&1 && fail "$nd1 left after rmmod"
[ -e /sys/bus/tbrdma ] && fail "/sys/bus/tbrdma left after rmmod"
echo "rail-basic: ok"
