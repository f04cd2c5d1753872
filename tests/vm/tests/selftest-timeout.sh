# Harness self-test (expected failure): a scenario that hangs must be killed by its timeout and
# reported as such; the runner counts it as passed only if it failed with a timeout.
# vm-expect: timeout
# vm-timeout: 25
. "$TBR_TOP/tests/vm/lib/guest.sh"

sleep 100000
