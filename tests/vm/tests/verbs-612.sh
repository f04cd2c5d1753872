# Debian's 6.12 kernel: tbrdma.ko built against its headers loads and registers tbrdma0 (link
# layer Ethernet), the verbs objects, extended verbs, rereg_mr, mcast and verbs_mw tests pass (create_cq takes a
# uverbs_attr_bundle there), the port counters count verbs_ex's loopback traffic, and rmmod
# unregisters it. First the harness's boot arguments are checked to hold on 6.12 too.
# vm-kernel: 6.12
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/verbs_objects
[ -x "$PROG" ] || fail "$PROG not built (make)"
case "$(uname -r)" in 6.12.*) ;; *) fail "booted $(uname -r), not a 6.12 kernel" ;; esac
harness_keys_steady

tbr_load
rdma dev show tbrdma0 > /dev/null || fail "tbrdma0 is not in 'rdma dev'"
[ "$(cat /sys/class/infiniband/tbrdma0/ports/1/link_layer)" = Ethernet ] ||
	fail "link layer is not Ethernet"
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
"$PROG" objects || fail "verbs_objects objects on $(uname -r)"
# the standard port counters (process_mad) count the loopback traffic of verbs_ex
xd=/sys/class/infiniband/tbrdma0/ports/1/counters/port_xmit_data
xd0=$(cat $xd) || fail "no $xd"
"$TBR_TOP/build/progs/verbs_ex" tbrdma0 || fail "verbs_ex on $(uname -r)"
xd1=$(cat $xd)
[ "$xd1" -gt "$xd0" ] || fail "port_xmit_data $xd0 -> $xd1 over verbs_ex"
echo "port_xmit_data $xd0 -> $xd1 words over verbs_ex"
"$TBR_TOP/build/progs/rereg_mr" tbrdma0 || fail "rereg_mr on $(uname -r)"
"$TBR_TOP/build/progs/mcast" tbrdma0 || fail "mcast on $(uname -r)"
"$TBR_TOP/build/progs/verbs_mw" tbrdma0 || fail "verbs_mw on $(uname -r)"
rmmod tbrdma || fail "rmmod failed"
rdma dev show | grep -q tbrdma && fail "tbrdma0 still registered after rmmod"
echo "verbs-612: ok on $(uname -r)"
