# bench: tbrdma vs rdma_rxe over the same veth pair in one VM (not a test: `make bench` boots it).
# tbrdma: eth backend, tbrdma0 on ve0a <-> tbrdma1 on ve0b (tbrdma1/tbr1 in netns h1, as in
# tests/vm/tests/eth-veth.sh). rxe: rxe0 on ve0a <-> rxe1 on ve0b, both in init_net (rxe in 6.1
# works only there), with policy routing so traffic between the two local addresses really
# crosses the veth pair instead of the loopback device. Each run ends with the veth pair's own
# floor, no stack (stack "bare", bench.lib's local_floor_lat).
# vm-timeout: 900
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/bench/vm/bench.lib"
. "$TBR_TOP/tests/vm/lib/veth-stacks.sh"

step "setup: veth pair ve0a/ve0b, MTU 9000"
verbs_slim
veth_tbrdma

step "rxe on the same veth pair"
veth_rxe
ip rule show
before=$(cat /sys/class/net/ve0a/statistics/tx_packets)

for run in $(seq "$RUNS"); do
	step "run $run of $RUNS"
	for tool in $TOOLS; do
		for size in $(bench_sizes "$tool"); do
			SRV_NS=h1 SRV_DEV=tbrdma1 SRV_GID=$TGID1 CLI_DEV=tbrdma0 CLI_GID=$TGID0 \
				SRV_ADDR=10.88.0.2 local_perf veth tbrdma "$tool" "$size"
			SRV_NS= SRV_DEV=rxe1 SRV_GID=$RGID1 CLI_DEV=rxe0 CLI_GID=$RGID0 SRV_ADDR=$B \
				local_perf veth rxe "$tool" "$size"
		done
	done
	local_floor_lat veth ve0a ve0b	# the veth pair's own floor, no stack
done
"$CTL" links tbrdma0
echo "ve0a tx_packets: $before before, $(cat /sys/class/net/ve0a/statistics/tx_packets) after"
rdma link del rxe0
rdma link del rxe1
echo "ok"
