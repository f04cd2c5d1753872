# NFS over RDMA in one VM: two emulated hosts (tests/vm/lib/pair.sh, pair_up 2) joined by an
# in-kernel emulated cable of 2 rails. Host 1 (namespace h1: tbrdma1, tbr1 10.88.0.2) is the
# server: kernel nfsd with its RDMA listener on port 20049 (svcrdma), rpcbind, nfsdcld,
# rpc.mountd and exportfs of a tmpfs, all started from one shell in h1, so they share one mount
# namespace (`ip netns exec` makes a private one per invocation; /proc/fs/nfsd, rpc_pipefs,
# /var/lib/nfs and the export live in it; later server commands enter it with nsenter). Host 0
# (initial namespace: tbrdma0, tbr0 10.88.0.1) is the client (xprtrdma):
# mount -t nfs -o rdma,port=20049,vers=NFSRDMA_VERS (default 4.2).
# Why this works in one kernel (6.1 source): nfsd's state is per network namespace (the nfsd
# filesystem is keyed by the mounting namespace, rpc.nfsd writes the ports there); svcrdma's
# listener is rdma_create_id(net of the svc_serv, ...) (svc_rdma_transport.c), xprtrdma's is
# rdma_create_id(xprt->xprt_net, ...) (verbs.c, the mounting process's namespace); with rdma
# netns exclusive mode each side's rdma_cm sees only its own device, so the RPC traffic crosses
# the emulated rails (asserted: tbrdma0's rail frame counters grow by at least a frame per 4 KiB,
# TBR_FRAME_MAX, of every copy). 6.1's cma_listen_on_all gives the wildcard listener a child on
# every device, tbrdma0's too, but the child keeps h1's namespace and a connect request is matched
# in the receiving netdev's namespace, so only tbrdma1's serves.
# Two passes, each a set of random files (3000 B, 200 KiB and NFSRDMA_MIB MiB, default 8): the
# client copies its set onto the export (checked by sha256 on the server side, read back with the
# page cache dropped), then the server writes a set into the export and the client copies it out
# (checked against the server's sums). Pass 2 cuts rail 1 (rail-set --cut) a sixteenth into each
# copy (both rails capped at 4 Mbit/s, so the copy outlasts the cutter's polling) and restores
# it after; the copies complete intact on rail 0 with no reconnect of the RPC
# transport (its connect count in /proc/self/mountstats stays 1). Then umount, rmmod tbrdma with
# nfsd's rdma listener still up (must not hang), nfsd stopped; no nfs/rpcrdma/svcrdma/tbrdma error
# in dmesg. Not in make check: run it with
#   TBR_VM_TESTS=$PWD/tests/vm/ulp tests/vm/run -j 1 nfsrdma-1vm
# vm-timeout: 600
# vm-kernel: 6.1 6.12
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/ulp/cut.lib"
. "$TBR_TOP/tests/vm/lib/pair.sh"
MIB=${NFSRDMA_MIB:-8}
VERS=${NFSRDMA_VERS:-4.2}
EXPORT=/srv/nfsrdma
MNT=/mnt/nfsrdma
SRV=10.88.0.2
CLI=10.88.0.1

mkset() {
	mkdir -p "$1"
	head -c 3000 /dev/urandom > "$1/small"
	head -c $((200 * 1024)) /dev/urandom > "$1/medium"
	head -c $((MIB * 1048576)) /dev/urandom > "$1/large"
	(cd "$1" && sha256sum small medium large) > "$1.sums"
}
no_errors() {
	if dmesg | grep -v 'module verification failed' |
		grep -iE 'nfs.*(error|fail|not responding|timed out)|rpcrdma.*(error|fail)|svcrdma.*(error|fail)|tbrdma.*(error|fail)'; then
		fail "errors in dmesg"
	fi
}
# srv CMD...: CMD in the server's network and mount namespaces (and its root: the guest runs
# chrooted, and entering a mount namespace alone moves to the namespace's root)
srv() { nsenter -t "$(cat /tmp/srvns.pid)" -m -n -r -w "$@"; }

pair_up 2
modprobe nfsd
modprobe rpcrdma
modprobe nfs
modprobe nfsv4
modprobe nfsv3

step "server in h1: nfsd with rdma 20049, exporting $EXPORT to $CLI"
# one shell: its mount namespace holds the nfsd fs, rpc_pipefs, nfs-utils' state and the export;
# a sleeper keeps it for nsenter
h1 env EXPORT="$EXPORT" MIB="$MIB" CLI="$CLI" bash -e -s << 'EOF' || fail "server setup in h1 failed"
mount -t nfsd nfsd /proc/fs/nfsd
mount -t tmpfs nfsstate /var/lib/nfs
mkdir -p "$EXPORT" /run/rpcbind /run/rpc_pipefs /var/lib/nfs/nfsdcld
mount -t rpc_pipefs sunrpc /run/rpc_pipefs
nfsdcld
mount -t tmpfs -o size=$((8 * MIB + 64))m nfsrdma "$EXPORT"
echo "$EXPORT $CLI/32(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" > /etc/exports
rpcbind
exportfs -ra
rpc.mountd
rpc.nfsd -G 10 -L 10 --rdma=20049 4
cat /proc/fs/nfsd/portlist
grep -qx 'rdma 20049' /proc/fs/nfsd/portlist
setsid sleep 100000 < /dev/null > /dev/null 2>&1 &
echo $! > /tmp/srvns.pid
EOF
# nfsd runs in h1 only: the initial namespace has no nfsd threads and no rdma listener
srv cat /proc/fs/nfsd/threads
[ "$(srv cat /proc/fs/nfsd/threads)" -gt 0 ] || fail "no nfsd threads in h1"
h1 rdma resource show cm_id | tee /tmp/cm1
rdma resource show cm_id | tee /tmp/cm0
grep -q 'tbrdma1.*LISTEN.*20049' /tmp/cm1 || fail "no rdma_cm listener on tbrdma1:20049 in h1"
# (6.1's cma_listen_on_all gives a wildcard listener a child on every device, tbrdma0's included,
# but the child keeps h1's namespace, and a request is matched in the receiving netdev's one)

mkdir -p "$MNT"
t0=$SECONDS
mount -t nfs -o "rdma,port=20049,vers=$VERS" "$SRV:/" "$MNT" || fail "mount over rdma failed"
grep " $MNT " /proc/mounts
grep -q " $MNT nfs.*proto=rdma" /proc/mounts || fail "$MNT is not an NFS mount over rdma"
step "mounted $SRV:/ on $MNT over rdma, vers=$VERS ($((SECONDS - t0)) s)"
# the RC connection: the client's ID on tbrdma0 to h1's address, the server's on tbrdma1
rdma resource show cm_id | tee /tmp/cm0 | grep -q "tbrdma0/1 .*CONNECT.*dst-addr $SRV:20049" ||
	fail "no connected rdma_cm ID on tbrdma0 to $SRV:20049"
h1 rdma resource show cm_id | tee /tmp/cm1 | grep -q "tbrdma1/1 .*CONNECT.*src-addr $SRV:20049" ||
	{ cat /tmp/cm1; fail "no connected rdma_cm ID on tbrdma1 from $SRV:20049"; }

BYTES=$((MIB * 1048576 + 3000 + 200 * 1024))
# crossed F0 WHAT: the rails carried at least a frame per 4 KiB (TBR_FRAME_MAX) of the set since F0
crossed() {
	local d=$(($(frames) - $1))
	echo "$2: $d frames on the rails for $BYTES bytes"
	[ "$d" -ge $((BYTES / 4096)) ] || fail "$2: only $d frames crossed the rails"
}

pass() {
	local n=$1 t0 t1 f0
	mkset "/tmp/a2b.$n"
	[ -z "${2:-}" ] || cutter tx_frames
	f0=$(frames)
	t0=$SECONDS
	cp -r "/tmp/a2b.$n" "$MNT/a2b.$n" || fail "pass $n: copy to the server failed"
	sync -f "$MNT" || fail "pass $n: sync failed"
	t1=$SECONDS
	crossed "$f0" "pass $n client -> server"
	[ -z "${2:-}" ] || cut_done tx_frames
	srv bash -c "cd '$EXPORT/a2b.$n' && sha256sum --quiet -c /tmp/a2b.$n.sums" ||
		fail "pass $n: the server's copy differs"
	echo 3 > /proc/sys/vm/drop_caches
	(cd "$MNT/a2b.$n" && sha256sum --quiet -c "/tmp/a2b.$n.sums") || fail "pass $n: read back differs"
	step "pass $n: $((BYTES / 1024)) KiB client -> server in $((t1 - t0)) s (${2:-no cut}), the server's copy and the read back intact"

	srv bash -c "$(declare -f mkset); MIB=$MIB; mkset '$EXPORT/b2a.$n' && cp '$EXPORT/b2a.$n.sums' /tmp/b2a.$n.srv.sums" ||
		fail "pass $n: the server's set"
	echo 3 > /proc/sys/vm/drop_caches
	[ -z "${2:-}" ] || cutter rx_frames
	f0=$(frames)
	t0=$SECONDS
	cp -r "$MNT/b2a.$n" "/tmp/b2a.$n" || fail "pass $n: copy from the server failed"
	t1=$SECONDS
	crossed "$f0" "pass $n server -> client"
	[ -z "${2:-}" ] || cut_done rx_frames
	(cd "/tmp/b2a.$n" && sha256sum --quiet -c "/tmp/b2a.$n.srv.sums") || fail "pass $n: copy from the server differs"
	step "pass $n: $((BYTES / 1024)) KiB server -> client in $((t1 - t0)) s (${2:-no cut}), intact"
	rm -rf "/tmp/a2b.$n" "/tmp/b2a.$n"
}
pass 1
# the emulated rails are faster than the cutter's polling under TCG (pass 1's 8 MiB took a few
# seconds; a cut came after the copy): pass 2 caps each rail at 4 Mbit/s, so a copy takes
# ~8 s with both rails and twice as long on rail 0 alone (at 8 Mbit/s, niced beside a debug
# kernel run at host load ~8, the cutter's poll lagged ~1,300 frames and cut at 85% of the copy)
for r in 0 1; do "$CTL" rail-set tbrdma0 1 "$r" --rate 4M > /dev/null || fail "rail-set $r --rate"; done
pass 2 cut
for r in 0 1; do "$CTL" rail-set tbrdma0 1 "$r" --rate 0 > /dev/null || fail "rail-set $r --rate 0"; done
sed -n "\\|^device $SRV:/ mounted on $MNT |,/^device /p" /proc/self/mountstats |
	grep -E '^\s*(age|xprt):' | tee /tmp/xprt
grep -q '^\s*xprt:\s*rdma' /tmp/xprt || fail "no rdma transport in mountstats"
[ "$(awk '$1 == "xprt:" { print $5 }' /tmp/xprt)" = 1 ] || fail "the rdma transport reconnected"
rdma statistic show link tbrdma0/1

t0=$SECONDS
umount "$MNT" || fail "umount failed"
! grep -q " $MNT " /proc/mounts || fail "$MNT still mounted"
step "unmounted ($((SECONDS - t0)) s)"
t0=$SECONDS
timeout 120 rmmod tbrdma || fail "rmmod tbrdma with nfsd's rdma listener up failed or hung"
step "tbrdma removed with nfsd's rdma listener in h1 up in $((SECONDS - t0)) s"
srv rpc.nfsd 0 || fail "rpc.nfsd 0"
srv exportfs -au
kill "$(cat /tmp/srvns.pid)"
no_errors
echo "nfsrdma-1vm: ok"
