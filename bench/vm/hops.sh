# bench: RDMA across 1, 2 and 3 hops in one boot (issue 15). Four emulated hosts A-B-C-D in one
# VM (tests/vm/tests/fabric.lib fabric_chain 4: one emu rail per cable, no daemons) with the
# min-hop tables route-chain sets; from A, ib_write_bw (64 KiB) and ib_write_lat (64 B) to B
# (1 hop), C (2) and D (3). BENCH_HOPS_RUNS rounds (default 3), each round measuring every hop
# count in turn, so a change of the host's load hits all three alike. Lines:
# BENCH,hops,HOPS,TOOL,SIZE,VALUE (bench.lib; one per run, bench/report.sh takes the median).
# vm-timeout: 900
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"
. "$TBR_TOP/bench/vm/bench.lib"
trap - ERR	# (fabric.lib's dumps the daemons' state: there are none here)
RUNS=${BENCH_HOPS_RUNS:-3}
BW_BYTES=${BENCH_HOPS_BW_BYTES:-16777216}
LAT_ITERS=${BENCH_HOPS_LAT_ITERS:-200}

verbs_slim
step "four hosts A-B-C-D cabled as a line, min-hop routes"
fabric_chain 4
for ((h = 0; h < N; h++)); do set_routes "$h" 1; done
"$CTL" routes tbrdma0
for ((h = 1; h < N; h++)); do
	in_h 0 ping -c 2 -i 0.2 -W 5 "$(addr "$h")" > /dev/null || fail "A cannot ping host $h"
done
declare -a G
for ((h = 0; h < N; h++)); do G[h]=$(host_gid "$h" "$(addr "$h")"); done

t0=$SECONDS
for ((run = 1; run <= RUNS; run++)); do
	step "round $run of $RUNS"
	for ((h = 1; h < N; h++)); do
		SRV_NS=h$h SRV_DEV=tbrdma$h SRV_GID=${G[$h]} SRV_ADDR=$(addr "$h")
		CLI_DEV=tbrdma0 CLI_GID=${G[0]}
		local_perf hops "$h" ib_write_bw 65536
		local_perf hops "$h" ib_write_lat 64
	done
done
echo "measured in $((SECONDS - t0)) s"
"$CTL" links | grep '^link'
echo "ok"
