# A local user racing the kernel through its own mmap'd rings (tests/progs/hostile.c race): a
# thread keeps the producer index of an RC QP's RQ, then of a UD QP's SQ full of sends to our own
# address (no route: each completes at once), one ring ahead of the kernel while the QP moves to
# ERR and zero-WR post_send/post_recv doorbells ring. Every call returns within 1 s; the kernel's
# soft lockup (4 s) and RCU stall (5 s) detectors, lowered for this test, report nothing.
# vm-kernel: 6.1 6.12
# vm-timeout: 180
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/hostile
[ -x "$PROG" ] || fail "$PROG not built (make)"

# a CPU stuck with interrupts off is reported after 4 s (soft lockup) / 5 s (RCU stall)
echo 2 > /proc/sys/kernel/watchdog_thresh
echo 5 > /sys/module/rcupdate/parameters/rcu_cpu_stall_timeout
tbr_load
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
step "race the RQ flush and the UD send kick for 3 s each"
ls -l /dev/infiniband/
HW=/sys/class/infiniband/tbrdma0/ports/1/hw_counters
rq0=$(cat $HW/kick_requeues) bo0=$(cat $HW/kick_backoffs)
setpriv --reuid=65534 --regid=65534 --clear-groups "$PROG" race 3 || fail "hostile race (as nobody)"
# (issue 46) the SQ kick ran out of its budget on the raced ring and its continuation went on
# at once or backed off (core/tbr_kick.h; the destroyed QPs' counts stay in the port's)
rq=$(($(cat $HW/kick_requeues) - rq0)) bo=$(($(cat $HW/kick_backoffs) - bo0))
echo "kick_requeues +$rq kick_backoffs +$bo"
[ $((rq + bo)) -gt 0 ] || fail "the raced UD ring never ran the kick out of its budget"
if dmesg | grep -Ei 'soft lockup|rcu.*stall|hung_task|blocked for more'; then
	fail "the kernel reported the lines above"
fi
rmmod tbrdma
echo "verbs-race: ok"
