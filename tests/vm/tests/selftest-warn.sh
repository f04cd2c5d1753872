# Harness self-test (expected failure): the script passes, but a kernel WARNING appears in the
# log, so the harness must fail the test. The runner counts it as passed only if it failed so.
# vm-expect: kernel
# vm-timeout: 60
. "$TBR_TOP/tests/vm/lib/guest.sh"

insmod "$TBR_KO_DIR/tbr_selftest_warn/tbr_selftest_warn.ko" || true   # refuses to stay loaded
klog_has 'deliberate warning' || fail "the self-test module printed no warning"
exit 0
