# The rail layer, emu cable and genl family on Debian's 6.12 kernel: 2-rail cable, ACTIVE,
# management datagrams both ways, the mgmt group is admin-only there, cut/restore; then packet
# capture as cm-rping's (tests/vm/lib/capture.sh: tbctl capture during ib_write_bw, ib_read_lat
# and rping with drops, tshark decodes the file as RoCE v2); clean rmmod.
# vm-kernel: 6.12
# vm-timeout: 400
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/lib/capture.sh"

step "load, tbrdma1, 2-rail cable"
tbr_load
"$CTL" dev-new > /dev/null || fail "dev-new failed"
ip link set tbr0 up
ip link set "$(netdev_of tbrdma1)" up
"$CTL" cable-new tbrdma0 tbrdma1 --rails 2 > /dev/null || fail "cable-new failed"
wait_for 5 port_is tbrdma0 ACTIVE
wait_for 5 port_is tbrdma1 ACTIVE

step "management datagrams both ways"
mgmt_roundtrip tbrdma0 tbrdma1 "ping-612"
mgmt_roundtrip tbrdma1 tbrdma0 "pong-612"

step "non-root may not listen to management datagrams (GENL_MCAST_CAP_NET_ADMIN)"
expect_err "Operation not permitted|joining group" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" mgmt-listen --timeout 1

step "cut both rails, restore"
"$CTL" rail-set tbrdma0 1 0 --cut && "$CTL" rail-set tbrdma0 1 1 --cut || fail "cut failed"
port_is tbrdma0 DOWN || fail "tbrdma0 not DOWN"
"$CTL" rail-set tbrdma0 1 0 --restore || fail "restore failed"
wait_for 5 port_is tbrdma0 ACTIVE
mgmt_roundtrip tbrdma0 tbrdma1 "back-612"

# packet capture on 6.12 (tests/vm/lib/capture.sh, cm-rping's steps): both rails back, the two
# ends split into hosts (pair.sh), tshark decodes what tbctl capture wrote
"$CTL" rail-set tbrdma0 1 1 --restore || fail "restore failed"
rails_up2() { "$CTL" links tbrdma0 | grep -q "^link dev=tbrdma0 .*rails_up=2 "; }
wait_for 5 rails_up2
pair_split
wait_for 10 h1 grep -q ACTIVE /sys/class/infiniband/tbrdma1/ports/1/state
ping -c 1 -W 5 10.88.0.2 > /dev/null || fail "no IP over the rails (ping 10.88.0.2)"
modprobe rdma_ucm
capture_steps

step "rmmod"
rmmod tbrdma || fail "rmmod failed"
rdma dev show | grep -q tbrdma && fail "devices left"
echo "rail-612: ok"
