# Debug-kernel self-test (expected failure): two mutexes taken in both orders must bring lockdep's
# circular-dependency warning, and the harness must fail the test for it although the script
# passes.
# vm-kernel: debug
# vm-expect: kernel possible circular locking dependency
# vm-timeout: 120
. "$TBR_TOP/tests/vm/lib/guest.sh"

insmod "$TBR_KO_DIR/tbr_selftest_debug/tbr_selftest_debug.ko" bug=lockdep || true   # refuses to stay loaded
klog_has 'possible circular locking dependency' || fail "no 'possible circular locking dependency' report"
exit 0
