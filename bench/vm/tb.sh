# bench: tbrdma vs rdma_rxe on the product's wire, in one boot: two VMs joined by one 2-lane
# Thunderbolt cable through the stand-in (tests/tbsim: its DMA rings carried by a virtio NIC, as
# in tests/vm/tests/tbsim-pair.sh). rxe runs over thunderbolt0: Debian's own thunderbolt-net.ko
# (IP over the same cable's rings, one DMA path, E2E flow control), i.e. soft-RoCE as a user
# without tbrdma would run it on that cable. tbrdma0 runs over the cable's raw rings (tb
# backend, as shipped: busy_poll_us -1, a doorbell that starts a round trip polls the RX ring for
# the NHI's 128 us), reloaded between the phases: 1 rail (tb_max_rails=1); 1 rail without E2E flow control
# (tb_e2e=0, the bandwidth tools only, as stack tbrdma-noe2e: under the stand-in's E2E window a
# split frame, a page of payload, takes two of its credits, docs/bench-speed.md section 22);
# 1 rail in the poll mode (busy_poll_us=10000, the latency tools only, as stack tbrdma-poll: a
# doorbell takes the RX ring's frames itself instead of waiting for the ring interrupt, which the
# stand-in throttles as nhi.c does, one per 128 us, irq_throttle_us); 2 rails (one per lane).
# Lines: BENCH,tbN,tbrdma|tbrdma-noe2e|tbrdma-poll|rxe,TOOL,SIZE,VALUE (bench.lib).
# vm-count: 2
# vm-rails: 1
# vm-device: edu
# vm-timeout: 2400
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
. "$TBR_TOP/bench/vm/bench.lib"
OTHER=$([ "$VM_ROLE" = a ] && echo b || echo a)
# two VMs on two CPUs: the sizes of the rails run (bench/run.sh sets them)
BW_SIZES=${BENCH_RAILS_BW_SIZES:-$BW_SIZES}
LAT_SIZES=${BENCH_RAILS_LAT_SIZES:-$LAT_SIZES}
# tb_up sets ME, PEER, GID (tbr0: 10.77.0.x); tn_up TN_ME, TN_PEER (thunderbolt0: 10.78.0.x)

verbs_slim
TB_LOAD_ARGS=(tb_max_rails=1)
# The stand-in's E2E window (credits per HopID on the cable, 12 by default so the tests' lossy UDP
# cables never overflow) sized as on hardware, where it is the RX ring's posted buffers: make bench
# runs the cable lossless (VM_RAIL_NET=stream), so the cable holds whatever is sent
tbsim_load cable_mac=52:54: "e2e_window=${BENCH_TB_E2E_WINDOW:-128}"
LOADED="tb_max_rails=1"	# tbrdma's parameters now

step "rxe0 over thunderbolt0 (Debian's thunderbolt-net on the same cable)"
modprobe thunderbolt_net || fail "thunderbolt-net does not load against the stand-in"
# the largest MTU thunderbolt-net takes (64 KiB - 14), so rxe's path MTU is 4096
tn_up 65522
rxe_load
rdma link add rxe0 type rxe netdev thunderbolt0
wait_for 10 gid_index rxe0 "$TN_ME"
RGID=$(gid_index rxe0 "$TN_ME")
ibv_devinfo -d rxe0 | grep -E 'active_mtu|state'
# latency runs: perftest and the cable NIC's interrupts on vCPU 0 (bench.lib): the stand-in's
# receive, tbrdma's RX tasklet and thunderbolt-net's NAPI all run there
lat_pin_irqs "$(rail_ifs | head -1)"

# phase RAILS STACK TOOLS TBRDMA-PARAMS...: tbrdma (re)loaded with tb_max_rails=RAILS and
# TBRDMA-PARAMS, its rails up; every tool of TOOLS (a pattern) as STACK, and rxe's beside it
# when STACK is tbrdma, config tbRAILS
phase() {
	local n=$1 stack=$2 pat=$3 tool size want _
	shift 3
	step "tbrdma0 over $n tb rail(s) of the cable, $stack ${*:-}"
	vm_signal "load.$stack$n"
	vm_wait "$OTHER.load.$stack$n" 120
	want="tb_max_rails=$n${*:+ $*}"
	if [ "$LOADED" != "$want" ]; then
		rmmod tbrdma || fail "rmmod tbrdma"
		# shellcheck disable=SC2086
		insmod "$TBR_KO_DIR/tbrdma/tbrdma.ko" $want || fail "tbrdma does not load ($want)"
		LOADED=$want
	fi
	tb_up "$n" ".$stack"
	ping -c 2 -W 5 "$TN_PEER" > /dev/null || fail "no IP over thunderbolt0 for rxe"
	for _ in $(seq "$RUNS"); do
		for tool in $TOOLS; do
			# shellcheck disable=SC2254 # (a pattern)
			case "$tool" in $pat) ;; *) continue ;; esac
			for size in $(bench_sizes "$tool"); do
				pair_perf "tb$n" "$stack" "$tool" "$size" tbrdma0 "$GID" "$PEER"
				[ "$stack" != tbrdma ] ||
					pair_perf "tb$n" rxe "$tool" "$size" rxe0 "$RGID" "$TN_PEER"
			done
		done
	done
	"$CTL" links tbrdma0
	cat /sys/module/thunderbolt/parameters/stats
}

phase 1 tbrdma '*'
phase 1 tbrdma-noe2e '*_bw' tb_e2e=0
phase 1 tbrdma-poll '*_lat' busy_poll_us=10000
phase 2 tbrdma '*'
ip -s link show thunderbolt0
vm_signal finished
vm_wait "$OTHER.finished" 60
rdma link del rxe0
echo "ok"
