# Debug-kernel self-test (expected failure): one boot commits each class of bug the debug kernel
# must catch (tests/vm/debug/selftest/tbr_selftest_debug.ko): a sleep in atomic context
# (DEBUG_ATOMIC_SLEEP), two mutexes taken in both orders (lockdep), a use after free (KASAN) and
# three lost kmalloc objects (the post-scenario kmemleak scan, lib/leak-check). The script checks
# each report in turn and the harness must fail the test with every one of them in the kernel
# log although the script passes (vm-expect: all of the patterns, " && "). Lockdep turns itself
# off after its report and KASAN reports once, so each class is committed once; the checkers
# are independent of each other.
# vm-kernel: debug
# vm-expect: kernel BUG: sleeping function called from invalid context && possible circular locking dependency && BUG: KASAN && BUG: kmemleak: unreferenced object
# vm-timeout: 180
. "$TBR_TOP/tests/vm/lib/guest.sh"

ko=$TBR_KO_DIR/tbr_selftest_debug/tbr_selftest_debug.ko
for bug in sleep:'BUG: sleeping function called from invalid context' \
	lockdep:'possible circular locking dependency' uaf:'BUG: KASAN'; do
	insmod "$ko" bug="${bug%%:*}" || true	# refuses to stay loaded
	klog_has "${bug#*:}" || fail "bug=${bug%%:*}: no '${bug#*:}' report"
done
# the leak's report comes after the scenario, from lib/leak-check
insmod "$ko" bug=leak || true
exit 0
