# Debug-kernel self-test (expected failure): might_sleep() under a spinlock must bring
# DEBUG_ATOMIC_SLEEP's report, and the harness must fail the test for it although the script
# passes.
# vm-kernel: debug
# vm-expect: kernel BUG: sleeping function called from invalid context
# vm-timeout: 120
. "$TBR_TOP/tests/vm/lib/guest.sh"

insmod "$TBR_KO_DIR/tbr_selftest_debug/tbr_selftest_debug.ko" bug=sleep || true   # refuses to stay loaded
klog_has 'BUG: sleeping function called from invalid context' || fail "no 'BUG: sleeping function called from invalid context' report"
exit 0
