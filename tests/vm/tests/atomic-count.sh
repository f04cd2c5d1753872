# RC atomics between two emulated hosts over one emulated rail: ibv_devinfo reports
# atomic_cap ATOMIC_HCA; two client processes on host 0 each post N ATOMIC_FETCH_AND_ADD of 1 to
# one counter of host 1 (tests/progs/atomic_count): the final value is exactly 2N, each client's
# fetched values increase; then CMP_AND_SWP (hit and miss) and an RDMA READ of the result.
# perftest's ib_atomic_bw and ib_atomic_lat (FETCH_AND_ADD and CMP_AND_SWAP) run too.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

PROG=$TBR_TOP/build/progs/atomic_count
N=${ATOMIC_N:-2000}
pair_up 1

step "ibv_devinfo: atomic_cap"
ibv_devinfo -v -d tbrdma0 | grep -q 'atomic_cap:.*ATOMIC_HCA' ||
	fail "tbrdma0 does not report ATOMIC_HCA"

step "atomic_count: 2 clients x $N FETCH_AND_ADD"
h1 "$PROG" -d tbrdma1 -g "$GID1" -s 2 -n "$N" > /tmp/srv.log 2>&1 &
srv=$!
wait_for 20 pair_listening 18600
"$PROG" -d tbrdma0 -g "$GID0" -n "$N" 10.88.0.2 > /tmp/cli1.log 2>&1 &
c1=$!
"$PROG" -d tbrdma0 -g "$GID0" -n "$N" 10.88.0.2 > /tmp/cli2.log 2>&1 &
c2=$!
rc=0
wait "$c1" || rc=1
wait "$c2" || rc=1
wait "$srv" || rc=1
cat /tmp/cli1.log /tmp/cli2.log /tmp/srv.log
[ $rc = 0 ] || fail "atomic_count failed"
grep -q "counter $((2 * N)) after 2 x $N" /tmp/srv.log || fail "counter is not $((2 * N))"

# perf TOOL ARGS...: perftest server in h1, client here
perf() {
	local tool=$1
	shift
	pair_run -x "$tool" -F "$@"
	echo "$tool $*: $(grep -E '^ *8 +[0-9]+ ' /tmp/cli.log | tr -s ' ')"
}
step "perftest atomics"
for a in FETCH_AND_ADD CMP_AND_SWAP; do
	perf ib_atomic_bw -A "$a" -n 200
	perf ib_atomic_lat -A "$a" -n 200
done
echo "atomic-count: ok"
