# Verbs end to end over one emulated rail: ibv_rc_pingpong and ibv_uc_pingpong between tbrdma0
# and tbrdma1, both through the kernel-bypass provider.
# vm-timeout: 180
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 1
step "ibv_rc_pingpong"
h1 ibv_rc_pingpong -d tbrdma1 -g "$GID1" -s 4096 -n 50 > /tmp/srv.log 2>&1 &
srv=$!
sleep 1
ibv_rc_pingpong -d tbrdma0 -g "$GID0" -s 4096 -n 50 10.88.0.2 2>&1 | tee /tmp/cli.log ||
	{ cat /tmp/srv.log; "$CTL" links; fail "ibv_rc_pingpong client failed"; }
wait "$srv" || { cat /tmp/srv.log; fail "ibv_rc_pingpong server failed"; }
grep -q "iters in" /tmp/cli.log || fail "no result line"
