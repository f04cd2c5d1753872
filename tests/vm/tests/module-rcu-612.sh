# Module lifetime (issue 13 item 7) on 6.12 with lazy RCU (rcu_nocbs=all: call_rcu callbacks
# may wait ~10 s for a batch): a modprobe / cable / rmmod loop, then bridge's rmmod (its exit
# runs rcu_barrier) makes every pending callback run: one left in tbrdma's freed code would fault.
# This passed before tbrdma's exit had its own rcu_barrier too: every link is freed before a tbrN
# is unregistered, and netdev unregistration runs rcu_barrier (netdev_run_todo), so the audit's
# use after unload was latent, not reachable; the explicit barrier keeps it so when the teardown
# order changes. A rail removal forced to time out
# (fault_rail_stuck, rail_remove_ms) unlists the rail before eth frees its peer: RAIL_GET then
# touches no freed memory (slub_debug=P poisons it, a stale pointer would fault). A dump request
# nobody reads does not pin the module (the daemon-basic flake: rmmod "in use" while tbrdmad's
# refresh dump waited for its next recvmsg).
# vm-kernel: 6.12
# vm-cmdline: rcu_nocbs=all slub_debug=P
# vm-timeout: 200
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

links_up() { "$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "; }
lazy=/sys/module/rcutree/parameters/enable_rcu_lazy
echo "rcu: $(dmesg | grep -o 'Offload RCU callbacks from CPUs: [^.]*' | head -1) lazy=$(cat "$lazy" 2>/dev/null || echo n/a)"

step "modprobe / cable / rmmod loop"
for i in 1 2 3 4; do
	tbr_load
	d1=$("$CTL" dev-new) || fail "dev-new failed"
	cid=$("$CTL" cable-new tbrdma0 "$d1" --rails 2) || fail "cable-new failed"
	wait_for 10 links_up tbrdma0 2
	"$CTL" cable-del "$cid" || fail "cable-del failed"	# links freed through call_rcu
	"$CTL" dev-del "$d1" || fail "dev-del failed"
	rmmod tbrdma || fail "rmmod failed (round $i)"
done
step "every RCU callback queued so far runs now (bridge's exit: rcu_barrier)"
modprobe bridge
rmmod bridge

step "a dump request nobody reads does not pin the module"
tbr_load
python3 "$TBR_TOP/tests/tools/genl-dump-unread.py" 1 > /tmp/dump.out &
P=$!
wait_for 10 grep -q sent /tmp/dump.out
rmmod tbrdma || fail "rmmod failed with an unread dump request"
kill "$P"

step "a rail removal that times out leaves RAIL_GET before eth frees the peer"
modprobe veth
tbr_load eth_hello_ms=100 rail_remove_ms=300
"$CTL" dev-new > /dev/null || fail "dev-new failed"
ip link add vra type veth peer name vrb
"$CTL" eth-bind tbrdma0 vra || fail "eth-bind vra"
"$CTL" eth-bind tbrdma1 vrb || fail "eth-bind vrb"
ip link set vra up
ip link set vrb up
wait_for 15 links_up tbrdma0 1
echo 1 > /sys/module/tbrdma/parameters/fault_rail_stuck
"$CTL" eth-unbind tbrdma0 vra || fail "eth-unbind vra"
klog_has 'TX frames never returned, leaking the rail' || fail "the removal did not time out"
[ "$(cat /sys/module/tbrdma/parameters/fault_rail_stuck)" = N ] || fail "fault knob not one-shot"
"$CTL" links | tee /tmp/links
grep -q "rail dev=tbrdma0 .*ifname=vra" /tmp/links && fail "the timed-out rail is still listed"
grep -q "^link dev=tbrdma0 " /tmp/links && fail "tbrdma0's link without rails is still listed"
# the other side is untouched and its normal removal still works
"$CTL" eth-unbind tbrdma1 vrb || fail "eth-unbind vrb"
"$CTL" links | grep -q "^  rail " && fail "rails left after both unbinds"
rmmod tbrdma || fail "rmmod failed after a leaked rail"
echo "module-rcu-612: ok"
