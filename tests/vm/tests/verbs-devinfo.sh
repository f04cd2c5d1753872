# The provider (RDMAV_DRIVERS, then installed into /etc/libibverbs.d) drives tbrdma0:
# ibv_devices/ibv_devinfo -v list it with sane attributes, link layer Ethernet, and a RoCE v2
# GID appears once tbr0 has an address.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
PROV=$TBR_TOP/build/provider
ls "$PROV"/libtbrdma-rdmav*.so > /dev/null || fail "provider not built (make -C provider)"

step "load"
tbr_load

step "ibv_devices via RDMAV_DRIVERS (not installed)"
[ ! -e /etc/libibverbs.d/tbrdma.driver ] || fail "provider already installed in the VM"
ibv_devices 2>&1 | tee /tmp/devs
grep -q 'libibverbs: Warning: couldn.t load driver .tbrdma' /tmp/devs && fail "unexpected load warning"
export RDMAV_DRIVERS=$PROV/libtbrdma
ibv_devices 2>&1 | tee /tmp/devs
grep -qw tbrdma0 /tmp/devs || fail "ibv_devices does not list tbrdma0"
grep -qi warning /tmp/devs && fail "libibverbs warned"

step "address on tbr0 -> RoCE v2 GID"
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
ip -6 addr add fd77::1/64 dev tbr0 nodad
wait_for 10 grep -q 'RoCE v2' /sys/class/infiniband/tbrdma0/ports/1/gid_attrs/types/1

step "ibv_devinfo -v"
ibv_devinfo -v -d tbrdma0 2>&1 | tee /tmp/devinfo
field() { awk -v k="$1:" '$1 == k { print $2; exit }' /tmp/devinfo; }
[ "$(field transport)" = InfiniBand ] || fail "transport: $(field transport)"
[ "$(field link_layer)" = Ethernet ] || fail "link_layer: $(field link_layer)"
[ "$(field max_qp)" = 4096 ] || fail "max_qp: $(field max_qp)"
[ "$(field max_qp_wr)" = 16384 ] || fail "max_qp_wr: $(field max_qp_wr)"
[ "$(field max_sge)" = 8 ] || fail "max_sge: $(field max_sge)"
[ "$(field max_cq)" = 4096 ] || fail "max_cq: $(field max_cq)"
[ "$(field max_cqe)" = 65536 ] || fail "max_cqe: $(field max_cqe)"
[ "$(field max_mr)" = 65535 ] || fail "max_mr: $(field max_mr)"
[ "$(field max_srq)" = 1024 ] || fail "max_srq: $(field max_srq)"
[ "$(field max_pd)" = 65536 ] || fail "max_pd: $(field max_pd)"
[ "$(field phys_port_cnt)" = 1 ] || fail "phys_port_cnt: $(field phys_port_cnt)"
[ "$(field max_mtu)" = "4096" ] || fail "max_mtu: $(field max_mtu)"
grep -Eq 'state:[[:space:]]+PORT_(DOWN|ACTIVE)' /tmp/devinfo || fail "no port state"
grep -Eq 'GID\[ *[0-9]+\]:.*::ffff:10\.77\.0\.1, RoCE v2' /tmp/devinfo ||
	grep -Eq 'GID\[ *[0-9]+\]:.*0a4d:0001, RoCE v2' /tmp/devinfo ||
	fail "no RoCE v2 GID for 10.77.0.1"
grep -Eq 'GID\[ *[0-9]+\]:.*fd77:0000:0000:0000:0000:0000:0000:0001, RoCE v2|fd77::1, RoCE v2' /tmp/devinfo ||
	fail "no RoCE v2 GID for fd77::1"

step "installed through /etc/libibverbs.d"
unset RDMAV_DRIVERS
make -s -C "$TBR_TOP/provider" install OUT="$PROV" > /tmp/install.log 2>&1 ||
	{ cat /tmp/install.log; fail "make install"; }
ibv_devices 2>&1 | tee /tmp/devs
grep -qw tbrdma0 /tmp/devs || fail "installed provider does not list tbrdma0"
ibv_devinfo -d tbrdma0 | grep -q 'link_layer:.*Ethernet' || fail "installed provider: devinfo"

rmmod tbrdma
echo "verbs-devinfo: ok"
