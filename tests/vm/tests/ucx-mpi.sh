# UCX and Open MPI, unmodified from Debian 12 (issue 18), on tbrdma and on rdma_rxe over the
# same veth pair in one VM (tests/vm/lib/veth-stacks.sh; tbrdma1 stays visible to the initial
# namespace, rdma netns shared mode, so two MPI ranks there can each open their own device).
# - ucx_perftest tag_lat over UCX's ud_verbs transport with its default destination GID check
#   (UCX_UD_VERBS_ETH_DGID_CHECK=y) from tbrdma0 to tbrdma1: UCX finds a RoCE v2 IPv4 packet's
#   address in the GRH buffer by the packet type mlx5 reports in the CQE's sl, which tbrdma
#   reports the same way (kernel/uapi/tbrdma-abi.h). rxe does not (sl 0: UCX reads the IPv4
#   header's bytes as an IPv6 GID and drops every datagram, UD endpoint timeout), so rxe's
#   figures are taken with the check off.
# - mpirun -np 2 tests/progs/mpi_check (pml ucx; UCX_TLS=self,ud_verbs,rc_verbs, no shared
#   memory, each rank on its own device): allreduce of 4096 doubles and a 1 MiB ping-pong, 20
#   times each, every value checked; the bytes must have crossed tbrdma's link. The time of
#   the MPI work (MPI_Wtime between barriers, without the ~20 s of process start-up under TCG)
#   on both stacks is printed, not asserted: over this one veth link the two were within the
#   host's noise of each other (docs/testing.md).
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/bench/vm/bench.lib"
. "$TBR_TOP/tests/vm/lib/veth-stacks.sh"
MPI_CHECK=$TBR_TOP/build/progs/mpi_check
[ -x "$MPI_CHECK" ] || fail "$MPI_CHECK not built (make)"
export UCX_WARN_UNUSED_ENV_VARS=n

step "tbrdma (eth backend) and rxe on one veth pair"
verbs_slim
veth_tbrdma shared
veth_rxe
link_tx() { "$CTL" links tbrdma0 | sed -n 's/^link dev=tbrdma0 .* tx_bytes=\([0-9]*\) .*/\1/p'; }

# perftest_tag DEV0 DEV1 [VAR=VALUE...]: ucx_perftest tag_lat 64 B, 1000 iterations, ud_verbs,
# server on DEV1, client on DEV0; prints the client's final line
perftest_tag() {
	local d0=$1 d1=$2 srv
	shift 2
	env UCX_TLS=ud_verbs UCX_NET_DEVICES="$d1:1" "$@" \
		timeout 120 ucx_perftest -p 13337 > /tmp/usrv.log 2>&1 &
	srv=$!
	wait_for 20 sh -c "[ -n \"\$(ss -ltnH 'sport = :13337')\" ]"
	env UCX_TLS=ud_verbs UCX_NET_DEVICES="$d0:1" "$@" \
		timeout 120 ucx_perftest 127.0.0.1 -p 13337 -t tag_lat -n 1000 -s 64 \
		> /tmp/ucli.log 2>&1 ||
		{ grep -v '^ *[0-9]* *[/u]' /tmp/ucli.log /tmp/usrv.log | tail -30
		  fail "ucx_perftest tag_lat $d0 -> $d1 failed"; }
	wait "$srv" || { tail -20 /tmp/usrv.log; fail "ucx_perftest server on $d1 failed"; }
	grep -q '^Final:' /tmp/ucli.log || { cat /tmp/ucli.log; fail "ucx_perftest: no Final line"; }
	grep '^Final:' /tmp/ucli.log
}

step "ucx_perftest tag_lat, ud_verbs, default GID check: tbrdma0 -> tbrdma1"
b0=$(link_tx)
perftest_tag tbrdma0 tbrdma1
b1=$(link_tx)
echo "tbrdma0's link sent $((b1 - b0)) bytes"
[ $((b1 - b0)) -ge 64000 ] || fail "ucx_perftest's 1000 messages did not cross tbrdma's link"

step "the same on rxe, its GID check off (UCX_UD_VERBS_ETH_DGID_CHECK=n)"
perftest_tag rxe0 rxe1 UCX_UD_VERBS_ETH_DGID_CHECK=n

# mpi DEV0 DEV1: mpi_check's two ranks on DEV0 and DEV1 (they inherit mpirun's environment);
# sets WALL (mpirun, ms) and WORK (mpi_check's own total, s)
mpi() {
	local d0=$1 d1=$2 t0
	t0=$(date +%s%N)
	timeout 300 mpirun --allow-run-as-root --oversubscribe --mca pml ucx --mca btl self \
		-x UCX_TLS=self,ud_verbs,rc_verbs \
		-np 1 -x UCX_NET_DEVICES="$d0:1" "$MPI_CHECK" 20 : \
		-np 1 -x UCX_NET_DEVICES="$d1:1" "$MPI_CHECK" 20 > /tmp/mpi.log 2>&1 ||
		{ tail -30 /tmp/mpi.log; fail "mpirun mpi_check on $d0/$d1 failed"; }
	t1=$(date +%s%N)
	WALL=$(((t1 - t0) / 1000000))
	grep -q "mpi_check: ok" /tmp/mpi.log || { cat /tmp/mpi.log; fail "mpi_check: no ok"; }
	grep "^mpi_check:" /tmp/mpi.log
	WORK=$(sed -n 's/^mpi_check: total \([0-9.]*\) s$/\1/p' /tmp/mpi.log)
	# mpirun's own start-up before the first rank ran, and its teardown after the last ended
	awk -v t0="$t0" -v t1="$t1" '/^mpi_check: rank .* started/ {
		s = $5 + 0; e = $NF + 0
		if (!first || s < first) first = s
		if (e > last) last = e }
		END { printf "mpirun wall time %d ms: launch %.0f ms, ranks %.0f ms, exit %.0f ms\n",
		      (t1 - t0) / 1e6, first * 1000 - t0 / 1e6, (last - first) * 1000,
		      t1 / 1e6 - last * 1000 }' /tmp/mpi.log
}

step "warm-up: one rank loads Open MPI and UCX once (mpi_check wants two: exit 2)"
# the first mpirun of a boot reads its libraries cold (launch ~12 s vs ~3 s after, under TCG);
# without this the stack measured first would pay for it
rc=0
timeout 120 mpirun --allow-run-as-root --mca pml ucx --mca btl self -x UCX_TLS=self,ud_verbs,rc_verbs \
	-np 1 -x UCX_NET_DEVICES=tbrdma0:1 "$MPI_CHECK" 1 > /tmp/warm.log 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "usage: mpirun -np 2" /tmp/warm.log ||
	{ cat /tmp/warm.log; fail "warm-up mpirun: exit $rc, expected 2 (usage)"; }

step "Open MPI over UCX: mpi_check on tbrdma0 / tbrdma1"
b0=$(link_tx)
mpi tbrdma0 tbrdma1
wall_tbrdma=$WALL work_tbrdma=$WORK
b1=$(link_tx)
echo "tbrdma0's link sent $((b1 - b0)) bytes"
# 20 x 1 MiB from rank 0, plus the allreduces
[ $((b1 - b0)) -ge $((20 * 1048576)) ] || fail "the MPI traffic did not cross tbrdma's link"

step "the same on rxe0 / rxe1"
export UCX_UD_VERBS_ETH_DGID_CHECK=n
mpi rxe0 rxe1
echo "mpi_check: tbrdma $work_tbrdma s (mpirun $wall_tbrdma ms), rxe $WORK s (mpirun $WALL ms)"
echo "ucx-mpi: ok"
