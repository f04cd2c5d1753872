# Verbs objects through the provider, no rail needed: PD/MR (access checks, new key on
# re-registration), CQ (resize keeps pending CQEs, completion events, overflow -> CQ_ERR),
# RC/UC QP state machine with attribute validation, flush of every WR in order on ERROR,
# too-large SGE lists, SRQ (tests/progs/verbs_objects.c); the extended verbs (ibv_wr_* on RC, UC
# and UD QPs, ibv_create_cq_ex polling, bad input) between two QPs of tbrdma0 through loopback
# (tests/progs/verbs_ex.c); ibv_rereg_mr (translation, access, PD; stale keys, bad input) the
# same way (tests/progs/rereg_mr.c); UD multicast, a group of three QPs, detach, bad input
# (tests/progs/mcast.c); memory windows of type 1 and 2 (bind, remote use checked against the
# window, LOCAL_INV, SEND_WITH_INV, stale keys, bad binds; a type 2 window invalidated only on
# its own QP, freed by destroying it, and not served to a new QP with its QPN, brought back with
# the module's test knob test_qpn_span; tests/progs/verbs_mw.c).
# Also on the debug kernel when it is cached (make check's debug subset: every verbs object
# created, used, destroyed and leak-checked under KASAN, lockdep and kmemleak; ~150 s there).
# vm-kernel: 6.1 debug
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/verbs_objects
[ -x "$PROG" ] || fail "$PROG not built (make)"

tbr_load
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
"$PROG" objects || fail "verbs_objects objects"
"$TBR_TOP/build/progs/verbs_ex" tbrdma0 || fail "verbs_ex"
"$TBR_TOP/build/progs/rereg_mr" tbrdma0 || fail "rereg_mr"
"$TBR_TOP/build/progs/mcast" tbrdma0 || fail "mcast"
"$TBR_TOP/build/progs/verbs_mw" tbrdma0 || fail "verbs_mw"
rmmod tbrdma
echo "verbs-objects: ok"
