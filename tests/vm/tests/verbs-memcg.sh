# Queue memory a user makes the kernel allocate is charged to its memory cgroup (tests/progs/
# hostile.c hog): in a cgroup v2 group with memory.max = 256 MiB (the VM has 1536 MiB), creating
# CQs, RC QPs and SRQs of the largest sizes fails with ENOMEM before 512 MiB of queues were asked
# for, nobody is OOM-killed, and the group's memory comes back when the objects go. Then the
# per-context cap: with uctx_queue_mb=64 and no cgroup limit, ENOMEM before 128 MiB. The rdma
# cgroup: with rdma.max "tbrdma0 hca_object=8" a user's 9th verbs object (a QP, then an MR)
# fails with EAGAIN while a user outside the cgroup makes 16 QPs.
# vm-kernel: 6.1 6.12
# vm-timeout: 180
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/hostile
[ -x "$PROG" ] || fail "$PROG not built (make)"
CG=/sys/fs/cgroup
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

tbr_load
ip link set tbr0 up
grep -q cgroup2 /proc/mounts || mount -t cgroup2 none $CG
echo +memory > $CG/cgroup.subtree_control
mkdir $CG/hog
echo 256M > $CG/hog/memory.max
[ ! -e $CG/hog/memory.swap.max ] || echo 0 > $CG/hog/memory.swap.max

step "a user in a 256 MiB memory cgroup asks for queues until refused"
sh -c "echo \$\$ > $CG/hog/cgroup.procs && exec ${NOBODY[*]} $PROG hog 256" ||
	fail "hostile hog in the cgroup"
grep -E '^(oom|oom_kill|max) ' $CG/hog/memory.events
grep -q '^oom_kill 0$' $CG/hog/memory.events || fail "an OOM kill in the cgroup"
grep -q '^max 0$' $CG/hog/memory.events && fail "the cgroup never reached memory.max: nothing charged"
cur=$(cat $CG/hog/memory.current)
echo "memory.current after the objects went: $cur"
[ "$cur" -lt $((32 << 20)) ] || fail "$cur bytes still charged after the objects were destroyed"
dmesg | grep -i "out of memory\|oom-kill" && fail "OOM killer ran"

step "rdma cgroup (issue 46): rdma.max 'tbrdma0 hca_object=8' refuses a user's 9th object; others unaffected"
# ib_uverbs charges every device's contexts (hca_handle) and objects (hca_object: PD, MR, CQ,
# QP, SRQ, AH, MW ...) to the caller's rdma cgroup: the cgroup's refusal is EAGAIN
# (tests/progs/verbs_objects.c rdmacg); a user outside it, meanwhile, makes 16 RC QPs up to RTS
VO=$TBR_TOP/build/progs/verbs_objects
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
echo +rdma > $CG/cgroup.subtree_control
mkdir $CG/rdmacg
echo "tbrdma0 hca_handle=1 hca_object=8" > $CG/rdmacg/rdma.max
cat $CG/rdmacg/rdma.max
mkfifo /tmp/rdmacg.hold
sh -c "echo \$\$ > $CG/rdmacg/cgroup.procs && exec ${NOBODY[*]} $VO rdmacg 8" \
	< /tmp/rdmacg.hold > /tmp/rdmacg.log 2>&1 &
RCG=$!
exec 3> /tmp/rdmacg.hold
wait_for 20 grep -q '^ready' /tmp/rdmacg.log
cat /tmp/rdmacg.log
cat $CG/rdmacg/rdma.current
grep -Eq '^tbrdma0 hca_handle=1 hca_object=8 ?$' $CG/rdmacg/rdma.current ||
	fail "the cgroup's rdma.current is not its limit"
"${NOBODY[@]}" "$VO" qps 16 || fail "a user outside the cgroup could not make 16 QPs"
exec 3>&-
wait "$RCG" || { cat /tmp/rdmacg.log; fail "verbs_objects rdmacg in the cgroup"; }
cat $CG/rdmacg/rdma.current
grep -Eq '^tbrdma0 hca_handle=0 hca_object=0 ?$' $CG/rdmacg/rdma.current ||
	fail "the cgroup's objects were not uncharged"

step "per-context cap: uctx_queue_mb=64, no cgroup limit"
echo 64 > /sys/module/tbrdma/parameters/uctx_queue_mb
"${NOBODY[@]}" "$PROG" hog 64 || fail "hostile hog against uctx_queue_mb"
rmmod tbrdma
echo "verbs-memcg: ok"
