# Bad input on a connected RC pair between two emulated hosts (tests/progs/badinput.c): bad
# lkey / lkey past its MR / lkey of another PD -> LOC_PROT_ERR; rkey of another PD, unknown rkey,
# past or before the MR, MR or QP without REMOTE_WRITE/READ -> REM_ACCESS_ERR on the requester
# and ERR on the responder; receive WQE too small -> LOC_LEN_ERR / REM_INV_REQ_ERR; post_send in
# RESET/INIT/RTR -> EINVAL, in ERR -> flush; too many SGEs, inline too big, bad opcode -> error
# with bad_wr at the bad WR; RNR and transport retry exhaustion (the frames that reach the QP in
# RESET counted in the server's hw counter rx_no_qp). QPs are reset between cases.
# Then memory windows across the pair (tests/progs/verbs_mw server/client: type 1 and 2 bound,
# WRITE/READ/ATOMIC through them, SEND_WITH_INV, bound again: new rkey works, old one
# REM_ACCESS_ERR). Afterwards the kernel log holds nothing from tbrdma above debug level.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
PROG=$TBR_TOP/build/progs/badinput
[ -x "$PROG" ] || fail "$PROG not built (make)"
LEVELS=emerg,alert,crit,err,warn,notice,info

pair_up 1
before=$(dmesg --level=$LEVELS | wc -l)
step "badinput: one case at a time, QPs reset in between"
# frames that reach a QP not connected are counted on the device (hw counter rx_no_qp): the
# retry-exceeded case's SEND and its 2 retries reach the server's QP in RESET
noqp() { h1 cat /sys/class/infiniband/tbrdma1/ports/1/hw_counters/rx_no_qp; }
noqp0=$(noqp) || fail "no hw counter rx_no_qp"
h1 "$PROG" -d tbrdma1 -g "$GID1" server > /tmp/srv.log 2>&1 &
srv=$!
"$PROG" -d tbrdma0 -g "$GID0" client 10.88.0.2 2>&1 | tee /tmp/cli.log ||
	{ cat /tmp/srv.log; "$CTL" links; fail "badinput client failed"; }
wait "$srv" || { cat /tmp/srv.log; fail "badinput server failed"; }
cat /tmp/srv.log
grep -q "badinput client: .* cases ok" /tmp/cli.log || fail "client did not finish"
grep -q "badinput server: .* cases ok" /tmp/srv.log || fail "server did not finish"
noqp1=$(noqp)
echo "rx_no_qp on tbrdma1: $noqp0 -> $noqp1"
[ $((noqp1 - noqp0)) -ge 3 ] || fail "the SEND to a QP in RESET and its 2 retries: rx_no_qp moved by $((noqp1 - noqp0))"

step "memory windows across the pair (verbs_mw)"
MW=$TBR_TOP/build/progs/verbs_mw
h1 "$MW" tbrdma1 server > /tmp/mwsrv.log 2>&1 &
srv=$!
"$MW" tbrdma0 client 10.88.0.2 || { cat /tmp/mwsrv.log; fail "verbs_mw client failed"; }
wait "$srv" || { cat /tmp/mwsrv.log; fail "verbs_mw server failed"; }
cat /tmp/mwsrv.log

step "kernel log: nothing above debug level from tbrdma during the run"
dmesg --level=$LEVELS | tail -n +"$((before + 1))" > /tmp/dmesg.new
cat /tmp/dmesg.new
if grep -Ei 'tbr|rdma|infiniband|ib_|uverbs' /tmp/dmesg.new; then
	fail "the bad input made the kernel log the lines above"
fi
echo "xport-badinput: ok"
