# Debug-kernel self-test (expected failure): three lost kmalloc objects must be listed by the
# post-scenario kmemleak scan (lib/leak-check), and the harness must fail the test for it although
# the script passes.
# vm-kernel: debug
# vm-expect: kernel BUG: kmemleak: unreferenced object
# vm-timeout: 120
. "$TBR_TOP/tests/vm/lib/guest.sh"

insmod "$TBR_KO_DIR/tbr_selftest_debug/tbr_selftest_debug.ko" bug=leak || true   # refuses to stay loaded
# the report comes after the scenario, from lib/leak-check
exit 0
