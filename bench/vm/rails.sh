# bench: tbrdma vs rdma_rxe across two VMs joined by 4 virtio NIC rails, in one boot: tbrdma0
# bound to the first 1, then 2, then 4 rails (eth backend, one device striping them all); rxe0 can
# be bound to one netdev only, so it runs over the first rail throughout. Over 1 rail the latency
# tools run once more in tbrdma's poll mode (busy_poll_us), as stack tbrdma-poll, and with every ACK
# in a frame of its own (ack_piggyback=0), as stack tbrdma-noride, and the bandwidth tools with the
# congestion window (cwnd_min=16), as stack tbrdma-cwnd. Each run ends with the bare rails,
# no stack (stack "bare": a 64 B ping-pong over one rail, MTU-sized frames over all N; bench.lib).
# Lines: BENCH,railsN,tbrdma|tbrdma-poll|...|rxe|bare,TOOL,SIZE,VALUE (bench.lib).
# vm-count: 2
# vm-rails: 4
# vm-timeout: 1500
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/bench/vm/bench.lib"
OTHER=$([ "$VM_ROLE" = a ] && echo b || echo a)
RAILS_N=${BENCH_RAILS_N:-1 2 4}
# two VMs on two CPUs are slower: fewer sizes (bench/run.sh sets them)
BW_SIZES=${BENCH_RAILS_BW_SIZES:-$BW_SIZES}
LAT_SIZES=${BENCH_RAILS_LAT_SIZES:-$LAT_SIZES}

verbs_slim
modprobe virtio_net
wait_for 20 test "$(rail_ifs | wc -l)" -ge 4
# shellcheck disable=SC2207
IFS_=($(rail_ifs))   # (no /dev/fd in the guest: no process substitution)
tbr_load
for ifc in "${IFS_[@]}"; do
	# the largest MTU virtio-net accepts here, as tests/vm/tests/eth.lib does
	for mtu in 65535 16384 9000 4200; do ip link set "$ifc" mtu "$mtu" 2> /dev/null && break; done
	ip link set "$ifc" up
done
lat_pin_irqs "${IFS_[@]}"	# latency runs: perftest and these interrupts on vCPU 0 (bench.lib)
ME=10.99.0.1 PEER=10.99.0.2 RA=10.97.0.1 RB=10.97.0.2
[ "$VM_ROLE" = a ] || { ME=10.99.0.2 PEER=10.99.0.1 RA=10.97.0.2 RB=10.97.0.1; }
ip link set tbr0 up
ip addr add "$ME/24" dev tbr0

step "rxe0 on ${IFS_[0]}"
rxe_load
ip addr add "$RA/24" dev "${IFS_[0]}"
rdma link add rxe0 type rxe netdev "${IFS_[0]}"
wait_for 10 gid_index rxe0 "$RA"
RGID=$(gid_index rxe0 "$RA")

# rerun STACK SUFFIX: the tools named *SUFFIX over 1 rail again, as stack STACK
rerun() {
	local run tool size
	for run in $(seq "$RUNS"); do
		for tool in $TOOLS; do
			case "$tool" in *"$2") ;; *) continue ;; esac
			for size in $(bench_sizes "$tool"); do
				pair_perf rails1 "$1" "$tool" "$size" tbrdma0 "$GID" "$PEER"
			done
		done
	done
}

bound=0
for n in $RAILS_N; do
	step "tbrdma0 over $n rail(s)"
	for ((; bound < n; bound++)); do "$CTL" eth-bind tbrdma0 "${IFS_[$bound]}" || fail "eth-bind"; done
	wait_for 30 links_up "$n"
	wait_for 10 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
	wait_for 10 gid_index tbrdma0 "$ME"
	GID=$(gid_index tbrdma0 "$ME")
	vm_signal "up$n"
	vm_wait "$OTHER.up$n" 120
	ping -c 2 -W 5 "$PEER" > /dev/null || fail "no IP over tbrdma's $n rail(s)"
	ping -c 2 -W 5 "$RB" > /dev/null || fail "no IP over ${IFS_[0]} for rxe"
	for run in $(seq "$RUNS"); do
		for tool in $TOOLS; do
			for size in $(bench_sizes "$tool"); do
				pair_perf "rails$n" tbrdma "$tool" "$size" tbrdma0 "$GID" "$PEER"
				pair_perf "rails$n" rxe "$tool" "$size" rxe0 "$RGID" "$RB"
			done
		done
		# the bare rails, no stack: 64 B ping-pong over one, MTU-sized frames over all n
		[ "$n" != 1 ] || pair_floor_lat rails1 "${IFS_[0]}"
		pair_floor_bw "rails$n" 3 "${IFS_[@]:0:n}"
	done
	if [ "$n" = 1 ]; then
		# the poll mode (kernel/xport/xport_poll.c): the latency tools again, as tbrdma-poll
		echo 10000 > /sys/module/tbrdma/parameters/busy_poll_us
		rerun tbrdma-poll _lat
		echo 0 > /sys/module/tbrdma/parameters/busy_poll_us
		grep -H . /sys/class/infiniband/tbrdma0/ports/1/hw_counters/busy_poll*
		# every ACK in a frame of its own (docs/protocol.md 3.3: ACKs riding on data frames
		# are on by default): the latency tools again, as tbrdma-noride (both VMs set it)
		grep -H . /sys/class/infiniband/tbrdma0/ports/1/hw_counters/acks_piggybacked
		echo 0 > /sys/module/tbrdma/parameters/ack_piggyback
		rerun tbrdma-noride _lat
		echo 1 > /sys/module/tbrdma/parameters/ack_piggyback
		# with the congestion window (docs/protocol.md 3.9, off by default): the bandwidth tools
		# again, as tbrdma-cwnd (both VMs set it: each end is a requester for some tool)
		echo 16 > /sys/module/tbrdma/parameters/cwnd_min
		rerun tbrdma-cwnd _bw
		echo 0 > /sys/module/tbrdma/parameters/cwnd_min
		grep -H . /sys/class/infiniband/tbrdma0/ports/1/hw_counters/cwnd_cuts
	fi
	"$CTL" links tbrdma0
	rdma statistic show link tbrdma0/1
done
vm_signal finished
vm_wait "$OTHER.finished" 60
rdma link del rxe0
echo "ok"
