# Debug-kernel self-test (expected failure): a read of a freed slab object must bring a KASAN
# report, and the harness must fail the test for it although the script passes.
# vm-kernel: debug
# vm-expect: kernel BUG: KASAN
# vm-timeout: 120
. "$TBR_TOP/tests/vm/lib/guest.sh"

insmod "$TBR_KO_DIR/tbr_selftest_debug/tbr_selftest_debug.ko" bug=uaf || true   # refuses to stay loaded
klog_has 'BUG: KASAN' || fail "no 'BUG: KASAN' report"
exit 0
