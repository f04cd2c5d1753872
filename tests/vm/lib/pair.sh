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
#   cross_route A DEVA B DEVB  two hosts in ONE namespace: A/32 on netdev DEVA, B/32 on DEVB, with
#                   policy routing so that traffic between the two local addresses crosses the
#                   wire between DEVA and DEVB instead of the loopback device (for kernel users
#                   that live in the initial namespace only: rxe in 6.1, nvme-rdma, nvmet-rdma)
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

cross_route() {
	local a=$1 deva=$2 b=$3 devb=$4 i
	ip addr add "$a/32" dev "$deva"
	ip addr add "$b/32" dev "$devb"
	for i in all default "$deva" "$devb"; do
		sysctl -qw "net.ipv4.conf.$i.rp_filter=0" "net.ipv4.conf.$i.accept_local=1"
	done
	sysctl -qw "net.ipv4.conf.$deva.arp_ignore=1" "net.ipv4.conf.$devb.arp_ignore=1"
	# locally sent traffic to the other end's address leaves through the wire; the local table
	# is consulted after that, so received packets are still delivered locally. The oif rules
	# serve lookups made for a device (no iif): rdma_cm checks an incoming connect request by
	# routing from the listener's address back to the requester out of the receiving netdev
	# (cma.c's validate_ipv4_net_dev), which must not resolve to the local table
	ip rule add pref 10 iif lo to "$b" lookup 100
	ip rule add pref 11 iif lo to "$a" lookup 101
	ip rule add pref 12 oif "$deva" to "$b" lookup 100
	ip rule add pref 13 oif "$devb" to "$a" lookup 101
	ip route add "$b" dev "$deva" src "$a" table 100
	ip route add "$a" dev "$devb" src "$b" table 101
	ip rule del pref 0 lookup local
	ip rule add pref 50 lookup local
	ip neigh replace "$b" lladdr "$(cat "/sys/class/net/$devb/address")" dev "$deva" nud permanent
	ip neigh replace "$a" lladdr "$(cat "/sys/class/net/$deva/address")" dev "$devb" nud permanent
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
		pair_diag
		echo "client:"; cat /tmp/cli.log; echo "server:"; cat /tmp/srv.log
		fail "$tool $*: client failed: $(tail -1 /tmp/cli.log)"
	fi
	wait "$srv" || { cat /tmp/srv.log; fail "$tool $*: server failed"; }
}

# pair_integrity SEED MIB: one run of tests/progs/integrity (server tbrdma1 in h1, client
# tbrdma0): seeded random patterns, MIB MiB of random rounds after the edge sizes, every byte
# verified; the seed is printed (rerun a failure: integrity ... --seed N)
pair_integrity() {
	local prog=$TBR_TOP/build/progs/integrity t0=$SECONDS srv
	[ -x "$prog" ] || fail "$prog not built (make)"
	h1 "$prog" -d tbrdma1 -g "$GID1" server > /tmp/srv.log 2>&1 &
	srv=$!
	"$prog" -d tbrdma0 -g "$GID0" --seed "$1" --mib "$2" client 10.88.0.2 2>&1 |
		tee /tmp/cli.log || { cat /tmp/srv.log; pair_diag; fail "integrity client failed (seed $1)"; }
	wait "$srv" || { cat /tmp/srv.log; pair_diag; fail "integrity server failed (seed $1)"; }
	cat /tmp/srv.log
	grep -q "integrity client: ok" /tmp/cli.log || fail "client did not finish"
	grep -q "integrity server: ok" /tmp/srv.log || fail "server did not finish"
	echo "integrity: ok in $((SECONDS - t0)) s"
}

# For a transfer whose client runs in the background as $cli, logging to /tmp/cli.log (stripe-cut,
# stripe-unequal-cut): rail changes scheduled by its progress.
# rail_tx R: frames sent so far by tbrdma0 on rail R
rail_tx() {
	"$CTL" links tbrdma0 | sed -n "s/^  rail dev=tbrdma0 link=1 id=$1 .* tx_frames=\([0-9]*\).*/\1/p"
}
running() {
	kill -0 "$cli" 2> /dev/null && return 0
	tail -20 /tmp/cli.log
	fail "the transfer ended before the rail changes were done"
}
# advance R N: wait until rail R has sent N frames more, the transfer still running. The schedule
# follows the transfer's progress, not the clock, so a fast or a loaded machine sees the same
# steps (a clock schedule let an idle machine finish the 1 GiB before the last cut)
advance() {
	local want=$(( $(rail_tx "$1") + $2 )) i
	for ((i = 0; i < 3000; i++)); do
		[ "$(rail_tx "$1")" -gt "$want" ] && return 0
		running
		sleep 0.1
	done
	fail "rail $1 did not send $2 frames more in 300 s"
}
