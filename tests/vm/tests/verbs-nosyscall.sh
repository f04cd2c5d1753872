# Kernel bypass: strace shows that ibv_poll_cq, ibv_post_recv and ibv_req_notify_cq make no
# system call (2000 rounds between two getppid() markers in tests/progs/verbs_objects.c),
# while a post_send doorbell (NEED_DOORBELL, no rail polls the SQ) is one uverbs call (write/ioctl) on cmd_fd.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/verbs_objects
[ -x "$PROG" ] || fail "$PROG not built (make)"

tbr_load
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/

N=2000
strace -f -e trace=all -o /tmp/strace.log "$PROG" nosyscall $N || fail "verbs_objects nosyscall"
grep -n "getppid" /tmp/strace.log; grep -c . /tmp/strace.log
markers=$(grep -n 'getppid()' /tmp/strace.log | cut -d: -f1 | tr '\n' ' ')
set -- $markers
[ $# = 4 ] || fail "expected 4 getppid markers in the trace, found $#"
count=$(($2 - $1 - 1))
if [ "$count" != 0 ]; then
	sed -n "$(($1 + 1)),$(($2 - 1))p" /tmp/strace.log | head -20
	fail "$count system calls during $N x (poll_cq + post_recv + req_notify_cq)"
fi
echo "no system call in $N rounds of poll_cq + post_recv + req_notify_cq"
doorbell=$(sed -n "$(($3 + 1)),$(($4 - 1))p" /tmp/strace.log)
echo "post_send: $doorbell"
[ "$(($4 - $3 - 1))" = 1 ] && echo "$doorbell" | grep -Eq '(write|ioctl)\(3, .*= [0-9]+$' ||
	fail "post_send with NEED_DOORBELL set: expected exactly one uverbs call (write or ioctl on fd 3)"

# control: the same strace does see the verbs that must enter the kernel
grep -q 'mmap(.*MAP_SHARED, 3' /tmp/strace.log || grep -q 'mmap(NULL, [0-9]*, PROT_READ|PROT_WRITE, MAP_SHARED' /tmp/strace.log ||
	fail "the trace shows no mmap of a queue"
grep -Eq 'ioctl\(3|write\(3' /tmp/strace.log || fail "the trace shows no uverbs command"
rmmod tbrdma
echo "verbs-nosyscall: ok"
