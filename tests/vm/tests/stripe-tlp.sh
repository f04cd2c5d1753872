# Tail losses over 4 emulated rails with 5% drop + 5% duplicate on every rail (both directions),
# issue 19's case: rping -V (TLP_PINGS, default 2000, verified pings; rdma_cm programs a ~2.1 s
# retransmit timeout) must average < 150 ms a ping and see fewer than one timeout per 50 pings
# (measured under TCG: 2000 in 9.5 s idle, 10.7 s beside route-ring, 72 s in a loaded make check;
# 0.5-2.8 s a ping without probes; the issue's target is 2000 in < 60 s), and ibv_rc_pingpong
# -c (64 B, 1000 iterations, timeout 67 ms; as the client times it) must average < 20 ms per
# iteration (0.4-5.5 ms with, 14-17 ms without on a quiet host) and see fewer than 20 timeouts
# (0-1 with, ~200 lost tails without). Without the tail loss probes a lost last frame (or its ACK) of a
# ping-pong waits for that timer. The rail counters prove the faults happened, the device's
# tail_probes counter that probes repaired them. Then, same boot, for comparison (printed, not
# asserted): the module parameter tail_probe=0, TLP_OFF_PINGS (default 5) pings, 200 iterations.
# vm-timeout: 600
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
PINGS=${TLP_PINGS:-2000}
# the debug kernel (KASAN, lockdep under TCG) runs ~10x slower: fewer pings, 10x the time bounds
# (a ping without probes still takes 0.5-2.8 s); the timeout count stays the probes' proof
SLOW=1
case $(uname -r) in *-tbrdbg) PINGS=${TLP_PINGS:-300} SLOW=10 ;; esac

pair_up 4
modprobe rdma_ucm
for r in 0 1 2 3; do
	"$CTL" rail-set tbrdma0 1 "$r" --drop 5 --dup 5 || fail "rail-set $r failed"
done

# dreq_file DIR DEV: ib_cm's count of DREQs DEV's port 1 sent (tx) or received (rx); tbrdma1's
# sysfs is seen in h1 only
dreq_file() { echo "/sys/class/infiniband/$2/ports/1/cm_$1_msgs/dreq"; }

# rping_v N SECS [GRACE [lenient]]: N verified pings, the client given SECS (+ 30 s) and the
# server GRACE (30) s more (it starts first and must outlive a client that made it); sets SECS to
# the client's time. "lenient": the server's end is printed, not asserted (below).
# The server ends on the client's DREQ (RDMA_CM_EVENT_DISCONNECTED). ib_cm sends a DREQ once and
# cancels its retries when the client destroys its cm_id, which rping does right after
# rdma_disconnect (cm.c's cm_destroy_id, state DREQ_SENT): a DREQ lost to the emulated drop (2
# in 144 short runs) leaves the server waiting for ever, on any lossy fabric, rxe's too. ib_cm's
# own counters tell that case (the client sent a DREQ, the server received none) from any other
# end: then the server is stopped and its end printed; any other end must be exit 0
rping_v() {
	local srv t0 rc=0 limit=$(($2 + 30)) dreq_tx dreq_rx end
	dreq_tx=$(cat "$(dreq_file tx tbrdma0)")
	dreq_rx=$(h1 cat "$(dreq_file rx tbrdma1)")
	h1 timeout $((limit + ${3:-30})) rping -s -a 10.88.0.2 -C "$1" -V > /tmp/srv.log 2>&1 &
	srv=$!
	sleep 3
	t0=$(date +%s.%N)
	timeout "$limit" rping -c -a 10.88.0.2 -C "$1" -V > /tmp/cli.log 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		# the logs last: a failure report shows the end of script.log
		pair_diag
		echo "rping client:"; cat /tmp/cli.log; echo "rping server:"; cat /tmp/srv.log
		fail "rping client exit $rc after $(echo "$(date +%s.%N) - $t0" | bc) s" \
			"(124: ran out of its $limit s): $(tail -1 /tmp/cli.log)"
	fi
	SECS=$(echo "$(date +%s.%N) - $t0" | bc)
	# a DREQ crosses in milliseconds; the server gets 10 s before the counters are read
	end=$((SECONDS + 10))
	while kill -0 "$srv" 2> /dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
	dreq_tx=$(($(cat "$(dreq_file tx tbrdma0)") - dreq_tx))
	dreq_rx=$(($(h1 cat "$(dreq_file rx tbrdma1)") - dreq_rx))
	if kill -0 "$srv" 2> /dev/null && [ "$dreq_tx" -gt 0 ] && [ "$dreq_rx" = 0 ]; then
		echo "rping server: the client's DREQ was lost (ib_cm: $dreq_tx sent, 0 received, no" \
			"retry after the client's cm_id was destroyed); server stopped"
		# $srv is the subshell that runs h1: the rping under it gets the signal
		pkill -x rping
		wait "$srv" || true
		return 0
	fi
	wait "$srv" || rc=$?
	[ "$rc" = 0 ] || [ "${4:-}" = lenient ] ||
		{ cat /tmp/srv.log; fail "rping server failed (exit $rc;" \
			"DREQs: $dreq_tx sent, $dreq_rx received)"; }
	[ "$rc" = 0 ] || echo "rping server: exit $rc (not asserted)"
}
# rc_pp N: ibv_rc_pingpong -c, 64 B x N; sets MS, per iteration as the client timed it
# (connection setup excluded: under a loaded host it alone costs seconds)
rc_pp() {
	local us
	pair_run -g ibv_rc_pingpong -c -s 64 -n "$1"
	us=$(sed -n 's/.* \([0-9.]*\) usec\/iter.*/\1/p' /tmp/cli.log)
	[ -n "$us" ] || { cat /tmp/cli.log; fail "ibv_rc_pingpong printed no usec/iter"; }
	MS=$(echo "$us / 1000" | bc -l)
}
# dev_count NAME: hw counter NAME summed over both ends' devices
dev_count() {
	{ rdma statistic show link tbrdma0/1; h1 rdma statistic show link tbrdma1/1; } |
		grep -o " $1 [0-9]*" | awk '{s += $2} END {print s + 0}'
}

step "rping -V: $PINGS verified pings over 4 faulty rails"
tmo0=$(dev_count timeouts)
BOUND=$(echo "$PINGS * 0.15 * $SLOW / 1" | bc)	# seconds: 150 ms a ping, below
rping_v "$PINGS" "$BOUND"
rp_tmo=$(($(dev_count timeouts) - tmo0))
echo "rping -V: $PINGS pings in $SECS s, $rp_tmo timeouts (issue 19's target: 2000 in < 60 s)"
# The wall bound is 5x the 30 ms a ping the issue asks for: make check runs this beside other
# VMs, fuzzers and DKMS builds (2000 pings took 72 s there once, 9.5-10.7 s on a quieter host);
# without probes a ping costs 0.5-2.8 s. The timeouts are the load-robust proof: each lost tail
# without a probe is one (~400 in 2000 pings at these faults).
[ "$(echo "$SECS < $BOUND" | bc)" = 1 ] ||
	{ pair_diag; fail "rping took $SECS s for $PINGS pings (>= $((150 * SLOW)) ms each)"; }
[ "$rp_tmo" -lt $((PINGS / 50)) ] || { pair_diag; fail "rping: $rp_tmo timeouts in $PINGS pings"; }

step "ibv_rc_pingpong -c: 64 B x 1000 over 4 faulty rails"
probes0=$(dev_count tail_probes)
tmo0=$(dev_count timeouts)
rc_pp 1000
pp_probes=$(($(dev_count tail_probes) - probes0))
pp_tmo=$(($(dev_count timeouts) - tmo0))
printf 'ibv_rc_pingpong -c: %.2f ms per iteration; %d tail probes, %d timeouts\n' \
	"$MS" "$pp_probes" "$pp_tmo"
# 20 ms: a sanity bound only (5.5 ms beside two other VM tests, 0.35-0.7 ms on a quiet host; a
# loaded make check is slower still); the timeouts below are what tells probes from none
[ "$(echo "$MS < 20 * $SLOW" | bc)" = 1 ] || { pair_diag; fail "ibv_rc_pingpong: $MS ms per iteration"; }
# without probes each of the ~200 lost tails is a timeout; with them only
# TBR_TLP_MAX probes lost in a row are
[ "$pp_tmo" -lt 20 ] || { pair_diag; fail "ibv_rc_pingpong: $pp_tmo timeouts in 1000 iterations"; }

"$CTL" links > /tmp/links
grep "^link dev=tbrdma[01]" /tmp/links | sed 's/ tx_lost.* drops=/ drops=/; s/ credit_stalls.*//'
drops=$(sed -n "s/^link dev=tbrdma0 .* drops=\([0-9]*\).*/\1/p" /tmp/links)
dups=$(sed -n "s/^link dev=tbrdma0 .* dups=\([0-9]*\).*/\1/p" /tmp/links)
[ "${drops:-0}" -gt 100 ] && [ "${dups:-0}" -gt 100 ] ||
	fail "faults did not happen (drops=$drops dups=$dups)"
rdma statistic show link tbrdma0/1 | tee /tmp/stat0
h1 rdma statistic show link tbrdma1/1 | tee /tmp/stat1
probes=$(cat /tmp/stat0 /tmp/stat1 | grep -o ' tail_probes [0-9]*' | awk '{s += $2} END {print s + 0}')
tmo=$(cat /tmp/stat0 /tmp/stat1 | grep -o ' timeouts [0-9]*' | awk '{s += $2} END {print s + 0}')
echo "tail probes $probes, timeouts $tmo (both ends)"
[ "$probes" -gt 0 ] || fail "no tail probe sent"

step "for comparison: tail_probe=0, same faults"
echo 0 > /sys/module/tbrdma/parameters/tail_probe
n=${TLP_OFF_PINGS:-5}
# 0.5-2.8 s a ping without probes. The server's end is not asserted here: without probes the
# ACK of its last SEND, if lost, waits for the retransmit timer (2.1 s, up to 4x a try) while the
# client, which has what it needs, tears its QP down: the server's retries then end in an error
# or outlast its limit (a CI rehearsal's server ran out of 30 s more, 2026-12-03). rping's own
# race on a lossy link; the probes (the asserted runs above) close it within a PTO
rping_v "$n" $((n * 3)) 60 lenient
echo "without probe: rping -V $n pings in $SECS s ($(echo "scale=3; $SECS / $n" | bc) s per ping)"
# ibv_rc_pingpong has rping's race: the side done first destroys its QP, and if the ACK of the
# other side's last SEND was lost that side retries into nothing until RETRY_EXC_ERR (the
# retransmit timer, 67 ms x 8, without a probe to repair the loss at once; a CI rehearsal's
# client, 2026-12-05, after all 200 iterations had passed on the server). Printed, not asserted.
h1 timeout 120 ibv_rc_pingpong -d tbrdma1 -g "$GID1" -c -s 64 -n 200 > /tmp/srv.log 2>&1 &
srv=$!
wait_for 20 pair_listening
timeout 120 ibv_rc_pingpong -d tbrdma0 -g "$GID0" -c -s 64 -n 200 10.88.0.2 > /tmp/cli.log 2>&1 || true
wait "$srv" || true
for end in cli srv; do
	if grep -q 'usec/iter' "/tmp/$end.log"; then
		echo "without probe: ibv_rc_pingpong -c ($end): $(grep 'usec/iter' "/tmp/$end.log")"
	else
		echo "without probe: ibv_rc_pingpong -c ($end): $(grep -m1 -i 'failed' "/tmp/$end.log")"
	fi
done
echo 1 > /sys/module/tbrdma/parameters/tail_probe
echo "stripe-tlp: ok"
