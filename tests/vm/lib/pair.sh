# tests/vm/lib/pair.sh: two emulated hosts in one VM joined by an emulated cable, with the
# provider, ready for the rdma-core tools (source after guest.sh). Host 0 is tbrdma0/tbr0 in the
# initial network namespace; host 1 is tbrdma1/tbr1 in namespace "h1" (rdma netns exclusive mode),
# so routing, ARP and RoCE address resolution behave as between two machines, over the rails.
#   pair_up RAILS [DEPTH]  load tbrdma, create tbrdma1, cable tbrdma0 <-> tbrdma1 with RAILS rails,
#                   address tbr0 10.88.0.1/24 and tbr1 10.88.0.2/24, wait for ACTIVE ports
#                   and IPv4 RoCE v2 GIDs; sets GID0 and GID1 (their GID indexes)
#   h1 CMD...       run CMD in host 1
#   pair_run GIDOPT TOOL ARGS...  a client/server tool across the pair (perftest: GIDOPT -x,
#                   the ibv_*_pingpong examples: -g): server in h1 on tbrdma1, client here on
#                   tbrdma0 to 10.88.0.2, same ARGS; output in /tmp/cli.log and /tmp/srv.log;
#                   fails with both logs and the links if either side fails
#   pair_diag       what a failed transfer needs: the links and rails, and the transport's
#                   non-zero device counters of both ends (retransmits, timeouts, ...)
#   host_ns H DEV NETDEV  emulated host H: RDMA device DEV and its netdev NETDEV into namespace hH
#                   (made if absent; rdma netns exclusive mode must be set first), lo up there
# shellcheck shell=bash
CTL=$TBR_TOP/build/tools/tbrdma-ctl
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma

h1() { ip netns exec h1 "$@"; }

host_ns() {
	[ -e "/run/netns/h$1" ] || ip netns add "h$1"
	rdma dev set "$2" netns "h$1"
	ip link set "$3" netns "h$1"
	ip netns exec "h$1" ip link set lo up
}

# pair_split [shared]: tbrdma1 and tbr1 (both existing, cabled or eth-bound) into namespace h1,
# 10.88.0.1/.2 on tbr0/tbr1, tbrdma0 ACTIVE; sets GID0/GID1 (their IPv4-mapped RoCE v2 GIDs).
# shared: only tbr1 moves; tbrdma1 stays visible in every namespace (rdma netns shared mode),
# so processes of the initial namespace can open both devices (its GIDs still come from tbr1)
pair_split() {
	if [ "${1:-}" = shared ]; then
		[ -e /run/netns/h1 ] || ip netns add h1
		ip link set tbr1 netns h1
		h1 ip link set lo up
	else
		# exclusive mode can only be chosen while init_net is the only namespace
		rdma system set netns exclusive
		host_ns 1 tbrdma1 tbr1
	fi
	ip link set tbr0 up
	h1 ip link set tbr1 up
	ip addr add 10.88.0.1/24 dev tbr0
	h1 ip addr add 10.88.0.2/24 dev tbr1
	wait_for 15 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
	wait_for 10 gid_index tbrdma0 10.88.0.1
	wait_for 10 h1 bash -c "$(declare -f gid_index); gid_index tbrdma1 10.88.0.2"
	GID0=$(gid_index tbrdma0 10.88.0.1)
	GID1=$(h1 bash -c "$(declare -f gid_index); gid_index tbrdma1 10.88.0.2")
}

pair_up() {
	tbr_load
	"$CTL" dev-new > /dev/null || fail "dev-new failed"
	"$CTL" cable-new tbrdma0 tbrdma1 --rails "$1" ${2:+--depth "$2"} > /dev/null ||
		fail "cable-new failed"
	pair_split
	wait_for 10 h1 grep -q ACTIVE /sys/class/infiniband/tbrdma1/ports/1/state
	ping -c 1 -W 5 10.88.0.2 > /dev/null || fail "no IP over the rails (ping 10.88.0.2)"
	export GID0 GID1
}

pair_diag() {
	"$CTL" links
	grep -H . /sys/class/infiniband/tbrdma0/ports/1/hw_counters/* | grep -v ':0$' || true
	# (the glob expanded inside h1, where tbrdma1's sysfs is)
	h1 sh -c 'grep -H . /sys/class/infiniband/tbrdma1/ports/1/hw_counters/*' | grep -v ':0$' || true
}

pair_listening() { [ -n "$(h1 ss -ltnH "sport = :${1:-18515}")" ]; }

pair_run() {
	local gopt=$1 tool=$2 srv
	shift 2
	h1 "$tool" -d tbrdma1 "$gopt" "$GID1" "$@" > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 20 pair_listening
	if ! "$tool" -d tbrdma0 "$gopt" "$GID0" "$@" 10.88.0.2 > /tmp/cli.log 2>&1; then
		cat /tmp/cli.log /tmp/srv.log
		pair_diag
		fail "$tool $*: client failed"
	fi
	wait "$srv" || { cat /tmp/srv.log; fail "$tool $*: server failed"; }
}
