# One device pair over 4 emulated rails with 5% drop + 5% duplicate + reorder window 16 on every
# rail: 512 MiB (1 GiB in make check-long) of WRITE, READ and SEND traffic of random sizes (tests/progs/integrity) verified byte
# for byte, zero error completions; the rail counters prove the faults happened and the device's
# transport counters (rdma statistic) show the retransmissions that repaired them.
# FAULTS_MIB sets the size (make check-long: 1024); on the debug kernel (KASAN + lockdep under TCG move ~10x less) it
# defaults to 128 MiB, still ~1,600 drops and as many duplicates per direction.
# vm-timeout: 900
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
PROG=$TBR_TOP/build/progs/integrity
case $(uname -r) in
*-tbrdbg) MIB=${FAULTS_MIB:-128} ;;
*) MIB=${FAULTS_MIB:-512} ;;
esac
SEED=$(date +%s)

pair_up 4
for r in 0 1 2 3; do
	"$CTL" rail-set tbrdma0 1 "$r" --drop 5 --dup 5 --reorder 16 || fail "rail-set $r failed"
done
step "integrity: $MIB MiB over 4 faulty rails, seed $SEED"
t0=$SECONDS
h1 "$PROG" -d tbrdma1 -g "$GID1" server > /tmp/srv.log 2>&1 &
srv=$!
"$PROG" -d tbrdma0 -g "$GID0" --seed "$SEED" --mib "$MIB" client 10.88.0.2 > /tmp/cli.log 2>&1 ||
	{ tail -20 /tmp/cli.log; tail -20 /tmp/srv.log; "$CTL" links; fail "integrity client failed (seed $SEED)"; }
wait "$srv" || { tail -20 /tmp/srv.log; fail "integrity server failed (seed $SEED)"; }
tail -3 /tmp/cli.log
grep -q "integrity client: ok" /tmp/cli.log || fail "client did not finish"
grep -q "integrity server: ok" /tmp/srv.log || fail "server did not finish"
echo "integrity: ok in $((SECONDS - t0)) s"

"$CTL" links > /tmp/links
grep "^link dev=tbrdma[01]" /tmp/links | sed 's/ tx_lost.* drops=/ drops=/; s/ credit_stalls.*//'
for dev in tbrdma0 tbrdma1; do
	drops=$(sed -n "s/^link dev=$dev .* drops=\([0-9]*\).*/\1/p" /tmp/links)
	dups=$(sed -n "s/^link dev=$dev .* dups=\([0-9]*\).*/\1/p" /tmp/links)
	[ "${drops:-0}" -gt 1000 ] && [ "${dups:-0}" -gt 1000 ] ||
		fail "$dev: faults did not happen (drops=$drops dups=$dups)"
done
# the TCP control connection went as tbrN fragment frames over the same faulty rails: what tbrN
# gave up, and why (docs/protocol.md 10; each hole waited for the rails, not a fixed hold)
ethtool -S tbr0 | grep -E "ip_rx_(packets|given_up|missing|late|giveup|hold)" | tr -s ' ' | paste -sd' '
h1 ethtool -S tbr1 | grep -E "ip_rx_(packets|given_up|missing|late|giveup|hold)" | tr -s ' ' | paste -sd' '
rdma statistic show link tbrdma0/1 | tee /tmp/stat
rtx=$(grep -o ' retransmits [0-9]*' /tmp/stat | cut -d' ' -f3)
[ "${rtx:-0}" -gt 1000 ] || fail "tbrdma0 shows ${rtx:-no} retransmissions"
echo "stripe-faults: ok"
