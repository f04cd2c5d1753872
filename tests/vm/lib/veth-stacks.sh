# tests/vm/lib/veth-stacks.sh: tbrdma and rdma_rxe over the same veth pair in one VM, the
# like-for-like comparison of bench/vm/veth.sh and tests/vm/tests/ucx-mpi.sh (source after
# guest.sh and bench/vm/bench.lib; brings in tests/vm/lib/pair.sh).
#   veth_tbrdma [shared]  veth pair ve0a/ve0b (MTU 9000); tbrdma's eth backend: tbrdma0 on ve0a
#                (tbr0 10.88.0.1, initial namespace) <-> tbrdma1 on ve0b (tbr1 10.88.0.2 and
#                tbrdma1 in namespace h1: pair.sh's pair_split [shared]); sets TGID0 and TGID1
#   veth_rxe     rxe0 on ve0a (10.77.0.1) <-> rxe1 on ve0b (10.77.0.2), both in the initial
#                namespace (rxe in 6.1 works only there), crossing the veth pair (pair.sh's
#                cross_route); sets A, B, RGID0 and RGID1
# shellcheck shell=bash
. "$TBR_TOP/tests/vm/lib/pair.sh"
links_up() { "$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "; }

veth_tbrdma() {
	modprobe veth
	tbr_load eth_hello_ms=200
	"$CTL" dev-new > /dev/null || fail "dev-new failed"
	ip link add ve0a type veth peer name ve0b
	ip link set ve0a mtu 9000
	ip link set ve0b mtu 9000
	"$CTL" eth-bind tbrdma0 ve0a || fail "eth-bind ve0a"
	"$CTL" eth-bind tbrdma1 ve0b || fail "eth-bind ve0b"
	ip link set ve0a up
	ip link set ve0b up
	wait_for 15 links_up tbrdma0 1
	pair_split "$@"
	TGID0=$GID0 TGID1=$GID1
	export TGID0 TGID1
	ping -c 2 -W 5 10.88.0.2 > /dev/null || fail "no IP over tbrdma's eth rail"
}

veth_rxe() {
	rxe_load
	A=10.77.0.1 B=10.77.0.2
	cross_route $A ve0a $B ve0b
	rdma link add rxe0 type rxe netdev ve0a
	rdma link add rxe1 type rxe netdev ve0b
	wait_for 10 gid_index rxe0 $A
	wait_for 10 gid_index rxe1 $B
	RGID0=$(gid_index rxe0 $A)
	RGID1=$(gid_index rxe1 $B)
}
