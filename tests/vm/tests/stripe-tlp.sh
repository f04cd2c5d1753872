# Tail losses over 4 emulated rails with 5% drop + 5% duplicate on every rail (both directions),
# issue 19's case: rping -V (TLP_PINGS, default 2000, verified pings; rdma_cm programs a ~2.1 s
# retransmit timeout) must finish in < 60 s, and ibv_rc_pingpong -c (64 B, 1000 iterations,
# timeout 67 ms) must average < 10 ms per iteration. Without the tail loss probe a lost last frame
# (or its ACK) of a ping-pong waits for that timer: ~1 ping/s and 57 ms per iteration were
# measured. The rail counters prove the faults happened, the device's tail_probes counter that
# probes repaired them.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
PINGS=${TLP_PINGS:-2000}

pair_up 4
modprobe rdma_ucm
for r in 0 1 2 3; do
	"$CTL" rail-set tbrdma0 1 "$r" --drop 5 --dup 5 || fail "rail-set $r failed"
done

step "rping -V: $PINGS verified pings over 4 faulty rails"
h1 timeout 200 rping -s -a 10.88.0.2 -C "$PINGS" -V > /tmp/srv.log 2>&1 &
srv=$!
sleep 3
t0=$(date +%s.%N)
if ! timeout 200 rping -c -a 10.88.0.2 -C "$PINGS" -V > /tmp/cli.log 2>&1; then
	cat /tmp/cli.log /tmp/srv.log
	pair_diag
	fail "rping client failed"
fi
secs=$(echo "$(date +%s.%N) - $t0" | bc)
wait "$srv" || { cat /tmp/srv.log; fail "rping server failed"; }
echo "rping -V: $PINGS pings in $secs s"
[ "$(echo "$secs < 60" | bc)" = 1 ] || { pair_diag; fail "rping took $secs s (>= 60 s)"; }

step "ibv_rc_pingpong -c: 64 B x 1000 over 4 faulty rails"
t0=$(date +%s.%N)
pair_run -g ibv_rc_pingpong -c -s 64 -n 1000
ms=$(echo "($(date +%s.%N) - $t0) * 1000 / 1000" | bc -l)
printf 'ibv_rc_pingpong -c: %.2f ms per iteration\n' "$ms"
[ "$(echo "$ms < 10" | bc)" = 1 ] || { pair_diag; fail "ibv_rc_pingpong: $ms ms per iteration"; }

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
echo "stripe-tlp: ok"
