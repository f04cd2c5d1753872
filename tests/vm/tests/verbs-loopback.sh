# Same-device loopback (issue 18): both ends of every connection on ONE device, no rail between
# them (kernel/link/loop.c): ibv_rc/uc/ud/srq_pingpong with -c (every received buffer checked), rping
# -v -V (10 verified pings), ucmatose, udaddy (rdma_cm over QP1), perftest ib_write_bw, ib_read_bw,
# ib_send_bw, ib_write_lat (-x GID; not -R: Debian 12's perftest 4.5-0.17 crashes in its rdma_cm
# retry when its client's REQ beats the server's listen, docs/testing.md), all unmodified, each bounded by
# `timeout`. The loopback counters (tbrdma-ctl devs loop_*, rdma statistic loopback_*) carry the
# bytes while the cable's link counters stay still. tbrdma0 also has a 2-rail emulated cable to
# tbrdma1 (netns h1): the same perftest runs across it, for the numbers. tbrdma2 has no cable at
# all (port DOWN): RC pingpong, UD pingpong and rping still loop back on it. Then an RC QP to a GID
# whose MAC no link leads to completes with RETRY_EXC_ERR within its retry budget
# (tests/progs/unreachable: 8 x 67 ms), never waits forever. 71 s (6.12) at load 4 on 2 cores, 366 s (6.1) at load 7-10.
# vm-kernel: 6.1
# (passes on 6.12 too: `tests/vm/run --kernel 6.12 verbs-loopback`; not in make check, for its time budget)
# vm-timeout: 600
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 2
modprobe rdma_ucm
"$CTL" dev-new > /dev/null || fail "dev-new failed"
# its netdev: tbr1 is free again in this namespace (tbrdma1's is in h1)
nd2=$("$CTL" devs | sed -n 's/^dev dev=tbrdma2 .*netdev=\([^ ]*\).*/\1/p')
ip link set "$nd2" up
ip addr add 10.89.0.1/24 dev "$nd2"
wait_for 10 gid_index tbrdma2 10.89.0.1
GID2=$(gid_index tbrdma2 10.89.0.1)
grep -q DOWN /sys/class/infiniband/tbrdma2/ports/1/state || fail "tbrdma2 (no cable) not DOWN"

# loop_cnt DEV NAME: a loopback counter of DEV; link_cnt NAME: tbrdma0's cable link counter
loop_cnt() { "$CTL" devs | sed -n "s/^dev dev=$1 .* loop_$2=\([0-9]*\).*/\1/p"; }
link_cnt() { "$CTL" links tbrdma0 | sed -n "s/^link dev=tbrdma0 id=1 .* $1=\([0-9]*\).*/\1/p"; }
# mark / moved WHAT MIN_BYTES: what a step moved went over tbrdma0's loopback link, not its rails
mark() { LB0=$(loop_cnt tbrdma0 tx_bytes); LK0=$(link_cnt tx_bytes); }
moved() {
	local lb lk
	lb=$(($(loop_cnt tbrdma0 tx_bytes) - LB0))
	lk=$(($(link_cnt tx_bytes) - LK0))
	echo "$1: loopback $lb bytes, cable $lk bytes"
	[ "$lb" -ge "$2" ] || fail "$1: $lb loopback bytes, expected >= $2"
	# IPv6/ARP housekeeping may use the cable meanwhile, RDMA data may not
	[ "$lk" -lt 65536 ] || fail "$1: $lk bytes went over the cable"
}

# listening NS: a TCP listener on perftest's/pingpong's port in NS ("" or h1);
# cm_listening COMM: an rdma_cm listener of program COMM (rdma_cm ids show in `rdma resource`)
listening() { $1 ss -ltnH 'sport = :18515' | grep -q .; }
cm_listening() { rdma resource show cm_id | grep -q "state LISTEN .* comm $1 "; }

# pp TOOL DEV GIDX ADDR ARGS...: a pingpong whose server and client are both on DEV
pp() {
	local tool=$1 dev=$2 gidx=$3 addr=$4 srv
	shift 4
	timeout 60 "$tool" -d "$dev" -g "$gidx" "$@" > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 10 listening ""
	if ! timeout 60 "$tool" -d "$dev" -g "$gidx" "$@" "$addr" > /tmp/cli.log 2>&1; then
		cat /tmp/cli.log /tmp/srv.log
		fail "$tool $* on $dev alone: client failed"
	fi
	wait "$srv" || { cat /tmp/srv.log; fail "$tool $* on $dev alone: server failed"; }
	echo "$tool $* ($dev alone): $(grep 'iters in' /tmp/cli.log)"
}

# cm NAME SERVER_CMD -- CLIENT_CMD: an rdma_cm pair, the client once the server listens
cm() {
	local name=$1 srv s=() c=()
	shift
	while [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	c=("$@")
	timeout 60 "${s[@]}" > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 20 cm_listening "${s[0]}"
	if ! timeout 60 "${c[@]}" > /tmp/cli.log 2>&1; then
		cat /tmp/cli.log /tmp/srv.log
		fail "$name: client failed"
	fi
	wait "$srv" || { cat /tmp/srv.log; fail "$name: server failed"; }
}

step "RC, UC, UD, SRQ pingpong on tbrdma0 alone, every buffer checked (-c)"
mark
for size in 1 65536 1048576; do
	pp ibv_rc_pingpong tbrdma0 "$GID0" 10.88.0.1 -c -s "$size" -n 20
done
pp ibv_uc_pingpong tbrdma0 "$GID0" 10.88.0.1 -c -s 4096 -n 20
pp ibv_srq_pingpong tbrdma0 "$GID0" 10.88.0.1 -c -s 4096 -n 20 -q 4
for size in 1 2048; do
	pp ibv_ud_pingpong tbrdma0 "$GID0" 10.88.0.1 -c -s "$size" -n 20
done
moved pingpong $((2 * 20 * 1048576))

step "rdma_cm on tbrdma0 alone: rping -v -V, ucmatose, udaddy"
mark
cm rping rping -s -a 10.88.0.1 -C 10 -v -V -- rping -c -a 10.88.0.1 -C 10 -v -V
grep -c 'ping data' /tmp/cli.log | grep -qx 10 || { cat /tmp/cli.log; fail "rping: not 10 pings"; }
cm ucmatose ucmatose -b 10.88.0.1 -- ucmatose -s 10.88.0.1
tail -1 /tmp/cli.log
cm udaddy udaddy -b 10.88.0.1 -- udaddy -s 10.88.0.1
tail -1 /tmp/cli.log
moved rdma_cm 1000

# perf WHERE TOOL ARGS...: WHERE loop (both ends tbrdma0) or cable (server tbrdma1 in h1), with
# -x GID; prints "WHERE TOOL ARGS: <the last result row>"
perf() {
	local where=$1 tool=$2 ns="" sdev=tbrdma0 addr=10.88.0.1 sx cx srv
	shift 2
	sx=(-x "$GID0")
	cx=(-x "$GID0")
	case $where in
	cable) ns=h1; sdev=tbrdma1; addr=10.88.0.2; sx=(-x "$GID1") ;;
	esac
	$ns timeout 90 "$tool" -d "$sdev" "${sx[@]}" -F "$@" > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 20 listening "$ns"
	if ! timeout 90 "$tool" -d tbrdma0 "${cx[@]}" -F "$@" "$addr" > /tmp/cli.log 2>&1; then
		cat /tmp/cli.log /tmp/srv.log
		fail "$where $tool $*: client failed"
	fi
	wait "$srv" || { cat /tmp/srv.log; fail "$where $tool $*: server failed"; }
	printf '%-9s %-12s %-22s %s (ibv_wr* API %s)\n' "$where" "$tool" "$*" \
		"$(grep -E '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log | tail -1 | tr -s ' ')" \
		"$(sed -n 's/^ *ibv_wr\* API *: *//p' /tmp/cli.log)"
}

step "perftest on tbrdma0 alone, then across the 2-rail cable"
echo "columns: bw: bytes iters peak avg[MB/s] Mpps; lat: bytes iters min max typical avg ... [us]"
mark
for t in ib_write_bw ib_read_bw ib_send_bw; do
	perf loop "$t" -s 65536 -n 200
done
perf loop ib_write_lat -s 64 -n 500
moved perftest $((3 * 200 * 65536))
for where in cable; do
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		perf "$where" "$t" -s 65536 -n 200
	done
	perf "$where" ib_write_lat -s 64 -n 500
done
# Debian's perftest posts through ibv_wr_* only on the devices it knows by PCI id (mlx5, EFA), so
# it reports "ibv_wr* API OFF" on tbrdma (as on rxe) either way; the old post path is still
# asked for once explicitly (tests/progs/verbs_ex covers ibv_wr_*, in verbs-objects)
perf cable ib_write_bw -s 65536 -n 200 --use_old_post_send
perf cable ib_send_bw -s 65536 -n 200 --use_old_post_send

step "counters: tbrdma-ctl devs (loop_*), rdma statistic (loopback_*)"
"$CTL" devs | grep '^dev dev=tbrdma0 '
rdma statistic show link tbrdma0/1 | tee /tmp/stat
lf=$(grep -o 'loopback_frames [0-9]*' /tmp/stat | cut -d' ' -f2)
[ "${lf:-0}" -gt 0 ] || fail "rdma statistic: no loopback_frames"
[ "$lf" = "$(loop_cnt tbrdma0 tx_frames)" ] || fail "rdma statistic and genl disagree: $lf"
[ "$(loop_cnt tbrdma1 tx_frames)" = 0 ] || fail "tbrdma1 looped frames back it never sent itself"

step "tbrdma2: no cable at all (port DOWN), still loops back"
pp ibv_rc_pingpong tbrdma2 "$GID2" 10.89.0.1 -c -s 65536 -n 20
pp ibv_ud_pingpong tbrdma2 "$GID2" 10.89.0.1 -c -s 1024 -n 20
cm "rping tbrdma2" rping -s -a 10.89.0.1 -C 10 -v -V -- rping -c -a 10.89.0.1 -C 10 -v -V
[ "$(loop_cnt tbrdma2 tx_frames)" -gt 0 ] || fail "tbrdma2: no loopback frames counted"

step "RC to a GID no link leads to: RETRY_EXC_ERR within the retry budget"
ip neigh replace 10.88.0.9 lladdr 02:00:00:00:00:09 dev tbr0 nud permanent
timeout 30 "$TBR_TOP/build/progs/unreachable" -d tbrdma0 -g "$GID0" 10.88.0.9 3 ||
	fail "unreachable peer: no error completion within 3 s"
echo "verbs-loopback: ok"
