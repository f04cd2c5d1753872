# bench: where a 64 B ib_write_lat round trip spends the guest's time, tbrdma vs rdma_rxe over the
# same veth pair in one VM (the setup of veth.sh; LAT_PROF_LINK=emu: tbrdma over one emulated
# rail instead, no netdev on its path). Not a test: `BENCH_STEPS=latflame make bench` boots it. For each stack: ib_write_lat -s 64 -n LAT_PROF_ITERS under `perf record -a -g` (the
# guest's software clock; TCG has no PMU), then the same run without perf (its figures are the
# ones to quote: perf's sampling slows the guest). Lines for bench/run.sh:
#   BENCH,latprof,STACK,ib_write_lat,64,USEC          t_typical of the run without perf
#   FOLD,STACK,frame;frame;... N                      the folded stacks of perftest's samples
# vm-timeout: 900
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/bench/vm/bench.lib"
. "$TBR_TOP/tests/vm/lib/veth-stacks.sh"
ITERS=${LAT_PROF_ITERS:-3000}

if [ "${LAT_PROF_LINK:-veth}" = emu ]; then
	# tbrdma over one in-kernel emulated rail (no netdev on its path), rxe over the veth pair
	step "setup: tbrdma over 1 emulated rail, rxe on the veth pair ve0a/ve0b"
	verbs_slim
	modprobe veth
	ip link add ve0a type veth peer name ve0b
	ip link set ve0a mtu 9000
	ip link set ve0b mtu 9000
	ip link set ve0a up
	ip link set ve0b up
	pair_up 1
	TGID0=$GID0 TGID1=$GID1
else
	step "setup: tbrdma and rxe on the veth pair ve0a/ve0b"
	verbs_slim
	veth_tbrdma
fi
veth_rxe
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid

# profile STACK SRV_DEV SRV_GID CLI_DEV CLI_GID SRV_ADDR [NETNS]
profile() {
	local stack=$1 pre=() v
	[ -z "${7:-}" ] || pre=(ip netns exec "$7")
	PORT=$((PORT + 1))
	"${pre[@]}" ib_write_lat -d "$2" -x "$3" -F -p "$PORT" -s 64 -n "$ITERS" > /tmp/srv.log 2>&1 &
	wait_for 30 port_listening "$PORT" "${7:-}"
	perf record -q -a -g -F 1999 -e cpu-clock -o "/tmp/perf.$stack.data" -- \
		ib_write_lat -d "$4" -x "$5" -F -p "$PORT" -s 64 -n "$ITERS" "$6" > /tmp/cli.log 2>&1 ||
		fail "$stack: ib_write_lat under perf failed: $(tail -3 /tmp/cli.log)"
	wait
	perf script -i "/tmp/perf.$stack.data" 2> /dev/null |
		python3 "$TBR_TOP/bench/flamegraph.py" --comm ib_write_lat --folded | sed "s/^/FOLD,$stack,/"
	PORT=$((PORT + 1))
	"${pre[@]}" ib_write_lat -d "$2" -x "$3" -F -p "$PORT" -s 64 -n "$ITERS" > /tmp/srv.log 2>&1 &
	wait_for 30 port_listening "$PORT" "${7:-}"
	ib_write_lat -d "$4" -x "$5" -F -p "$PORT" -s 64 -n "$ITERS" "$6" > /tmp/cli.log 2>&1 ||
		fail "$stack: ib_write_lat failed: $(tail -3 /tmp/cli.log)"
	wait
	grep -E '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log | tr -s ' ' | sed 's/^/  | /' >&2
	[ "$stack" != tbrdma ] || pair_diag >&2
	v=$(perf_value ib_write_lat /tmp/cli.log 64)
	echo "BENCH,latprof,$stack,ib_write_lat,64,$v"
}

step "tbrdma, then rxe"
profile tbrdma tbrdma1 "$TGID1" tbrdma0 "$TGID0" 10.88.0.2 h1
profile rxe rxe1 "$RGID1" rxe0 "$RGID0" "$B"
echo "ok"
