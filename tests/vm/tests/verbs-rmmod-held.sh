# rmmod tbrdma while a process holds a PD, MRs, CQ, QPs and an SRQ with their rings mmap'd:
# the RDMA core disassociates the context, rmmod completes while the process still runs (and
# keeps polling its mapped CQ), kill -9 then cleans up, and the kernel log stays free of
# warnings (the harness fails the test on any WARNING/BUG). Then load again and repeat with
# kill -9 before rmmod.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/verbs_objects
[ -x "$PROG" ] || fail "$PROG not built (make)"

setup() {
	tbr_load
	ip link set tbr0 up
	ip addr add 10.77.0.1/24 dev tbr0
	wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
}

start_holder() {
	rm -f /tmp/hold.out
	"$PROG" hold > /tmp/hold.out 2>&1 &
	HOLDER=$!
	wait_for 20 grep -q ready /tmp/hold.out
	rdma resource show qp | grep -q "pid $HOLDER" || { rdma resource show; fail "holder has no QP"; }
}

step "rmmod while the process holds objects"
setup
start_holder
timeout 30 rmmod tbrdma || fail "rmmod did not complete with a live user context"
lsmod | grep -q '^tbrdma ' && fail "tbrdma still loaded"
kill -0 "$HOLDER" || fail "holder died at disassociation: $(cat /tmp/hold.out)"
sleep 0.5
kill -9 "$HOLDER"
wait "$HOLDER" 2> /dev/null || true

step "kill -9 first, then rmmod"
setup
start_holder
kill -9 "$HOLDER"
wait "$HOLDER" 2> /dev/null || true
timeout 30 rmmod tbrdma || fail "rmmod after kill -9"

step "reload works"
setup
"$PROG" objects > /dev/null || fail "verbs_objects after reload"
rmmod tbrdma
dmesg | grep -Ei 'tbrdma|uverbs' | tail -5
echo "verbs-rmmod-held: ok"
