# Verbs end to end over one emulated rail between two emulated hosts (tbrdma0 in the initial
# netns, tbrdma1 in netns h1): ibv_devinfo shows both ports ACTIVE with a RoCE v2 GID, and
# ibv_rc_pingpong (1 B .. 1 MiB), ibv_srq_pingpong and ibv_uc_pingpong pass through the
# kernel-bypass provider; ibv_xsrq_pingpong fails at once with EOPNOTSUPP (95: no XRC) on both
# ends; ibv_rc_pingpong -t (completion timestamps) agrees with its own timing; ibv_rereg_mr of
# every kind with the peer on the other host, the races with traffic and rdma-core's RESET -> RTS
# flow (tests/progs/rereg_peer); completion timestamps of extended CQs
# with RC traffic to the peer, the 1 GHz clock and ibv_query_rt_values_ex, the wc fields and
# CQ flags refused (tests/progs/cq_ts); an SRQ armed with a limit raises
# IBV_EVENT_SRQ_LIMIT_REACHED when real traffic drains it below the limit, exactly once
# (tests/progs/srq_limit).
# On 6.1 with the host's (Debian 12) user space, and as xport-pingpong@trixie on Debian 13 (6.12,
# rdma-core 56): make check's one run of Debian 13's user space (docs/testing.md).
# vm-kernel: 6.1 trixie
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 1
step "ibv_devinfo -v: ports ACTIVE, Ethernet, RoCE v2 GID"
for side in "" h1; do
	dev=tbrdma0
	[ -z "$side" ] || dev=tbrdma1
	$side ibv_devinfo -v -d $dev > /tmp/devinfo.$dev 2>&1 || fail "ibv_devinfo -d $dev failed"
	grep -q 'state:.*PORT_ACTIVE' /tmp/devinfo.$dev || fail "$dev port not ACTIVE"
	grep -q 'link_layer:.*Ethernet' /tmp/devinfo.$dev || fail "$dev link layer not Ethernet"
	grep -q 'GID\[ *[0-9]*\]:.*::ffff:10\.88\.0\..*, RoCE v2' /tmp/devinfo.$dev ||
		fail "$dev shows no IPv4 RoCE v2 GID"
done

step "ibv_xsrq_pingpong: no XRC, a clean EOPNOTSUPP on both ends (docs/architecture.md)"
# the device does not advertise XRC; ibv_open_xrcd fails at once (errno 95) and both ends exit
for dev in tbrdma0 tbrdma1; do
	! grep -qw XRC /tmp/devinfo.$dev || fail "$dev advertises XRC"
done
h1 timeout 20 ibv_xsrq_pingpong -d tbrdma1 -g "$GID1" > /tmp/srv.log 2>&1 &
srv=$!
rc=0
timeout 20 ibv_xsrq_pingpong -d tbrdma0 -g "$GID0" 10.88.0.2 > /tmp/cli.log 2>&1 || rc=$?
src=0
wait "$srv" || src=$?
cat /tmp/cli.log
[ "$rc" = 1 ] && [ "$src" = 1 ] || fail "ibv_xsrq_pingpong exits $rc/$src, expected 1/1"
grep -q "XRC Domain 95" /tmp/cli.log && grep -q "XRC Domain 95" /tmp/srv.log ||
	fail "ibv_xsrq_pingpong did not fail with EOPNOTSUPP: $(cat /tmp/cli.log /tmp/srv.log)"

# peer_prog PROG: tests/progs/PROG's server in h1 (output in /tmp/srv.log), its client here
# (/tmp/cli.log); both must succeed
peer_prog() {
	local prog=$1 srv
	h1 "$TBR_TOP/build/progs/$prog" -d tbrdma1 -g "$GID1" server > /tmp/srv.log 2>&1 &
	srv=$!
	"$TBR_TOP/build/progs/$prog" -d tbrdma0 -g "$GID0" client 10.88.0.2 > /tmp/cli.log 2>&1 ||
		{ cat /tmp/cli.log /tmp/srv.log; pair_diag; fail "$prog client failed"; }
	wait "$srv" || { cat /tmp/srv.log; fail "$prog server failed"; }
}

step "ibv_rereg_mr with the peer on the other host (tests/progs/rereg_peer)"
peer_prog rereg_peer
cat /tmp/cli.log

step "completion timestamps on extended CQs with RC traffic (tests/progs/cq_ts)"
peer_prog cq_ts
cat /tmp/cli.log /tmp/srv.log

# pingpong TOOL SIZE ITERS [extra args]: server in h1, client here; both must succeed
pingpong() {
	local tool=$1 size=$2 iters=$3
	shift 3
	pair_run -g "$tool" -s "$size" -n "$iters" "$@"
	echo "$tool -s $size: $(grep 'iters in' /tmp/cli.log)"
}

step "ibv_rc_pingpong 1 B .. 1 MiB"
for size in 1 64 4095 4096 4097 65536 1048576; do
	pingpong ibv_rc_pingpong "$size" 20
done
step "ibv_rc_pingpong -t: receive completions timestamped (an extended CQ, unmodified)"
# rc_pingpong asks ibv_create_cq_ex for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and prints the
# receive-to-receive gap in clock cycles; on main it stops at "The device isn't completion
# timestamp capable" (completion_timestamp_mask 0).
# Cycles of hca_core_clock (1000000 kHz: ns) per gap must agree with each side's own us/iter:
# (n - 1) gaps fit in the run (<= 1.5 x), and a gap is more than a tenth of an iteration (the
# first iteration, not a gap, may hold a stall; a clock off by 1000x fails either way).
pingpong ibv_rc_pingpong 4096 200 -t
for log in /tmp/cli.log /tmp/srv.log; do
	avg=$(sed -n 's/^Average receive completion clock cycles = \([0-9.]*\)$/\1/p' $log)
	us=$(sed -n 's/.* iters in .* = \([0-9.]*\) usec\/iter$/\1/p' $log)
	[ -n "$avg" ] && [ -n "$us" ] || fail "ibv_rc_pingpong -t printed no average ($log): $(cat $log)"
	awk -v a="$avg" -v u="$us" 'BEGIN { exit !(a > 0 && a >= u * 100 && a <= u * 1500) }' ||
		fail "receive gap $avg cycles (ns), the run's $us us/iter: not the same clock"
	echo "rc_pingpong -t $log: $avg ns between receives, $us us/iter"
done
step "ibv_rc_pingpong with an SRQ"
pingpong ibv_srq_pingpong 4096 20 -q 4
step "ibv_uc_pingpong"
for size in 1 4096 65536; do
	pingpong ibv_uc_pingpong "$size" 20
done
step "SRQ limit event from real traffic (tests/progs/srq_limit)"
peer_prog srq_limit
cat /tmp/srv.log
