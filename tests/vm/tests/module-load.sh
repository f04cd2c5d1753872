# tbrdma.ko registers tbrdma0 (RoCE link layer, one port, netdev tbr0) and unregisters on rmmod.
# First the harness itself: the boot arguments that keep hot kernel text from being patched hold,
# and stall_watch runs.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"

step "harness: no hot kernel text patched at run time"
harness_keys_steady
step "harness: stall_watch records the host's stalls (lib/init)"
pgrep -x stall_watch > /dev/null || fail "stall_watch is not running"
[ "$(chrt -p "$(pgrep -x stall_watch)" | grep -c SCHED_FIFO)" = 1 ] ||
	fail "stall_watch does not run SCHED_FIFO"
grep -q '^# stall_watch since' /run/stall_watch.txt || fail "no /run/stall_watch.txt"
stall_report

step "load"
tbr_load
rdma dev show
rdma dev show tbrdma0 > /dev/null || fail "tbrdma0 is not in 'rdma dev'"
[ "$(ls /sys/class/infiniband/tbrdma0/ports)" = 1 ] || fail "expected exactly one port"
[ "$(cat /sys/class/infiniband/tbrdma0/ports/1/link_layer)" = Ethernet ] ||
	fail "link layer is not Ethernet"
rdma link show tbrdma0/1 | grep -q 'netdev tbr0' || fail "tbrdma0 is not bound to netdev tbr0"
ip link show tbr0 > /dev/null || fail "no netdev tbr0"
[ "$(cat /sys/class/infiniband/tbrdma0/node_type)" = "1: CA" ] || fail "node type is not CA"

step "unload"
rmmod tbrdma
rdma dev show | grep -q tbrdma && fail "tbrdma0 still registered after rmmod"
ip link show tbr0 > /dev/null 2>&1 && fail "tbr0 still present after rmmod"

step "load again (the name tbrdma0 was released)"
tbr_load
rdma dev show tbrdma0 > /dev/null || fail "tbrdma0 missing after reload"
rmmod tbrdma
echo "module-load: ok"
