# NFS over RDMA across tbrdma: two VMs joined by 2 virtio NIC rails (eth backend). b is the server:
# kernel nfsd with its RDMA listener on port 20049 (svcrdma), rpcbind, nfsdcld, rpc.mountd and
# exportfs started by hand (no systemd here), exporting a tmpfs. a is the client (xprtrdma):
# mount -t nfs -o rdma,port=20049,vers=NFSRDMA_VERS (default 4.2; 3 adds nolock).
# Two passes, each a set of random files (3000 B, 200 KiB and NFSRDMA_MIB MiB, default 8, 32 on
# the debug kernel): a copies its set onto the export (b checks the server's copy by sha256
# against a's sums, a reads it back over the wire with its page cache dropped), then b puts a
# set into the export and a copies it out (checked against b's sums). Payloads above the inline
# threshold move by RDMA Read (client to server) and RDMA Write (server to client) on memory the
# client registers with fast registration (IB_WR_REG_MR), small ones inline in SENDs. Pass 2
# loses one of the two rails in each copy (a takes its rail NIC down once rail 0 carried a
# sixteenth of the copy's frames, and up again after it) and must complete intact on the other,
# with no reconnect of the RPC transport (its connect count stays 1).
# Then a removes tbrdma under the mount (rmmod must not hang) and loads it again: the mount
# reconnects to the new device, pass 1's files read back intact and a new set is written and
# checked by b. Then umount; b removes tbrdma with nfsd's rdma listener up; no
# nfs/rpcrdma/svcrdma/tbrdma error in either dmesg (the harness fails on any BUG/WARNING/hung
# task). Not in make check (minutes under TCG): run it with
#   TBR_VM_TESTS=$PWD/tests/vm/ulp tests/vm/run -j 1 nfsrdma
# and bigger files with VM_ENV=NFSRDMA_MIB NFSRDMA_MIB=64.
# vm-count: 2
# vm-rails: 2
# vm-timeout: 900
# vm-kernel: 6.1 6.12
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/ulp/cut.lib"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=(eth_hello_ms=250)
# on the debug kernel 32 MiB: there the cutter's poll (seconds per `tbrdma-ctl links`) lagged
# ~1,400 frames behind an 8 MiB copy, whose ~1,000 frames a rail were then nearly all through
case $(uname -r) in
*-tbrdbg) MIB=${NFSRDMA_MIB:-32} ;;
*) MIB=${NFSRDMA_MIB:-8} ;;
esac
VERS=${NFSRDMA_VERS:-4.2}
EXPORT=/srv/nfsrdma
MNT=/mnt/nfsrdma
other=b
[ "$VM_ROLE" = a ] || other=a
eth_up 2
vm_signal up
vm_wait "$other.up" 120

# mkset DIR: the random files of one pass in DIR, and their sums (relative names) in DIR.sums
mkset() {
	mkdir -p "$1"
	head -c 3000 /dev/urandom > "$1/small"
	head -c $((200 * 1024)) /dev/urandom > "$1/medium"
	head -c $((MIB * 1048576)) /dev/urandom > "$1/large"
	(cd "$1" && sha256sum small medium large) > "$1.sums"
}

# check DIR SUMS WHAT: every file of SUMS is in DIR with its sum
check() {
	(cd "$1" && sha256sum --quiet -c "$2") || fail "$3: differs from the source"
}

# publish NAME FILE: FILE into $VM_SHARED/ROLE.NAME for the other VM, whole or not at all
publish() {
	cp "$2" "$VM_SHARED/$VM_ROLE.$1.tmp"
	mv "$VM_SHARED/$VM_ROLE.$1.tmp" "$VM_SHARED/$VM_ROLE.$1"
}

# no nfs/nfsd/rpcrdma error, timeout or lost server logged; no tbrdma error
no_errors() {
	if dmesg | grep -v 'module verification failed' |
		grep -iE 'nfs.*(error|fail|not responding|timed out)|rpcrdma.*(error|fail)|svcrdma.*(error|fail)|tbrdma.*(error|fail)'; then
		fail "errors in dmesg"
	fi
}

if [ "$VM_ROLE" = b ]; then
	modprobe nfsd
	modprobe rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	# nfs-utils' state on a tmpfs; NFSv4 client records kept by nfsdcld over rpc_pipefs, as
	# Debian's nfsdcld.service does (the legacy v4recovery directory fails to remove a client's
	# record at its DESTROY_CLIENTID, "Failed to remove expired client state directory")
	mount -t tmpfs nfsstate /var/lib/nfs
	mkdir -p "$EXPORT" /run/rpcbind /run/rpc_pipefs /var/lib/nfs/nfsdcld
	mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs
	nfsdcld || fail "nfsdcld"
	mount -t tmpfs -o size=$((8 * MIB + 64))m nfsrdma "$EXPORT"
	# a tmpfs has no UUID: fsid=0 names it (and makes it NFSv4's root, so a mounts "/")
	echo "$EXPORT $PEER/32(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" > /etc/exports
	rpcbind || fail "rpcbind"
	exportfs -ra || fail "exportfs"
	rpc.mountd || fail "rpc.mountd"
	# a short grace period: NFSv4 OPENs wait for its end (90 s by default)
	rpc.nfsd -G 10 -L 10 --rdma=20049 4 || fail "rpc.nfsd"
	cat /proc/fs/nfsd/portlist
	grep -qx 'rdma 20049' /proc/fs/nfsd/portlist || fail "nfsd has no rdma 20049 listener"
	step "server: $EXPORT exported to $PEER, nfsd on rdma $ME:20049 ($(cat /proc/fs/nfsd/versions))"
	vm_signal server
	for n in 1 2; do
		vm_wait "a.sums.$n" 600
		check "$EXPORT/a2b.$n" "$VM_SHARED/a.sums.$n" "pass $n: the server's copy"
		step "pass $n: the server's copy of a's files matches"
		vm_signal "checked.$n"
		mkset "$EXPORT/b2a.$n"
		publish "sums.$n" "$EXPORT/b2a.$n.sums"
	done
	# after a's tbrdma went and came back: a set written over the new connection
	vm_wait a.sums.3 600
	check "$EXPORT/a2b.3" "$VM_SHARED/a.sums.3" "after the reconnect: the server's copy"
	step "after the reconnect: the server's copy of a's files matches"
	vm_signal checked.3
	vm_wait a.unmounted 300
	# device removal with nfsd's rdma listener (a wildcard rdma_cm ID) and its connections
	t0=$SECONDS
	timeout 120 rmmod tbrdma || fail "rmmod tbrdma with nfsd's rdma listener failed or hung"
	step "server: tbrdma removed with nfsd's rdma listener in $((SECONDS - t0)) s"
	rpc.nfsd 0
	exportfs -au
	no_errors
	vm_signal finished
	vm_wait a.finished 120
	exit 0
fi

# the kernel's own module autoload runs the initramfs's modprobe, which has no modules: load them
modprobe rpcrdma
modprobe nfs
modprobe nfsv3
modprobe nfsv4
mkdir -p "$MNT"
vm_wait b.server 120
t0=$SECONDS
# NFSv4: the export is the pseudo root (fsid=0); NFSv3: its path, and no NLM (no rpc.statd here)
SRC=$PEER:/ OPTS=rdma,port=20049,vers=$VERS
[ "${VERS%%.*}" != 3 ] || { SRC=$PEER:$EXPORT OPTS=$OPTS,nolock; }
mount -t nfs -o "$OPTS" "$SRC" "$MNT" || fail "mount over rdma failed"
grep " $MNT " /proc/mounts
grep -q " $MNT nfs.*proto=rdma" /proc/mounts || fail "$MNT is not an NFS mount over rdma"
step "mounted $SRC on $MNT over rdma, vers=$VERS ($((SECONDS - t0)) s)"

rail0=$(echo "$RAIL_IFS" | sed -n 1p)
rail1=$(echo "$RAIL_IFS" | sed -n 2p)
# cut.lib's counter for its cutter: rail 0's frames as its NIC counts them (a frame is one packet
# at MTU 9000; a hello now and then), read with no exec. A `tbrdma-ctl links` takes seconds on
# the debug kernel, where the cutter polling it acted 4,000-5,000 frames late, after the copy.
rail_ctr() {
	local n
	[ "$1" = 0 ] || fail "rail_ctr: rail 0 only"
	read -r n < "/sys/class/net/$rail0/statistics/${2%_frames}_packets"
	echo "$n"
}
rail_cut() { ip link set "$rail1" down; }
rail_restore() { ip link set "$rail1" up; }

# pass N [cut]: a's set onto the export, checked by b and read back over the wire; then b's set
# copied out of the export and checked against b's sums; with "cut", rail 1 goes down in each copy
pass() {
	local n=$1 t0 t1
	mkset "/tmp/a2b.$n"
	[ -z "${2:-}" ] || cutter tx_frames
	t0=$SECONDS
	cp -r "/tmp/a2b.$n" "$MNT/a2b.$n" || fail "pass $n: copy to the server failed"
	sync -f "$MNT" || fail "pass $n: sync failed"
	t1=$SECONDS
	[ -z "${2:-}" ] || cut_done tx_frames
	publish "sums.$n" "/tmp/a2b.$n.sums"
	vm_wait "b.checked.$n" 120
	echo 3 > /proc/sys/vm/drop_caches
	check "$MNT/a2b.$n" "/tmp/a2b.$n.sums" "pass $n: a's files read back"
	step "pass $n: $((MIB * 1024 + 203)) KiB a -> b in $((t1 - t0)) s (${2:-no cut}), the server's copy and the read back intact"

	vm_wait "b.sums.$n" 300
	echo 3 > /proc/sys/vm/drop_caches
	[ -z "${2:-}" ] || cutter rx_frames
	t0=$SECONDS
	cp -r "$MNT/b2a.$n" "/tmp/b2a.$n" || fail "pass $n: copy from the server failed"
	t1=$SECONDS
	[ -z "${2:-}" ] || cut_done rx_frames
	check "/tmp/b2a.$n" "$VM_SHARED/b.sums.$n" "pass $n: b's files copied out"
	step "pass $n: $((MIB * 1024 + 203)) KiB b -> a in $((t1 - t0)) s (${2:-no cut}), intact"
	rdma statistic show link tbrdma0/1
}
pass 1
pass 2 cut
# the transport's counters (connect count, RPCs, registrations) as the client sees them
sed -n "\\|^device $SRC mounted on $MNT |,/^device /p" /proc/self/mountstats |
	grep -E '^\s*(age|xprt):' | tee /tmp/xprt
# xprt: rdma SRCPORT BINDS CONNECTS ...: the cuts were absorbed below the RC connection
[ "$(awk '$1 == "xprt:" { print $5 }' /tmp/xprt)" = 1 ] || fail "the rdma transport reconnected"

# device removal under the mount: xprtrdma must let go of tbrdma0 (6.1: RDMA_CM_EVENT_DEVICE_REMOVAL;
# 6.12: also its ib_client's remove callback), rmmod must not hang; then tbrdma comes back on the same rails and the hard mount reconnects to
# the new device: pass 1's files read back intact, a new set written and checked by b
t0=$SECONDS
timeout 120 rmmod tbrdma || fail "rmmod tbrdma under the NFS/RDMA mount failed or hung"
step "tbrdma removed under the mount in $((SECONDS - t0)) s"
[ ! -e /sys/class/infiniband/tbrdma0 ] || fail "tbrdma0 outlived its module"
t0=$SECONDS
eth_up 2
echo 3 > /proc/sys/vm/drop_caches
timeout 300 bash -c "cd '$MNT/a2b.1' && sha256sum --quiet -c /tmp/a2b.1.sums" ||
	fail "pass 1's files did not read back intact after tbrdma came back"
step "the mount reconnected over the new tbrdma0: pass 1's files read back intact ($((SECONDS - t0)) s)"
mkdir /tmp/a2b.3
cp /tmp/a2b.1/small /tmp/a2b.1/medium /tmp/a2b.3/
(cd /tmp/a2b.3 && sha256sum small medium) > /tmp/a2b.3.sums
cp -r /tmp/a2b.3 "$MNT/a2b.3" || fail "the copy to the server after the reconnect failed"
sync -f "$MNT" || fail "sync after the reconnect failed"
publish sums.3 /tmp/a2b.3.sums
vm_wait b.checked.3 120
sed -n "\\|^device $SRC mounted on $MNT |,/^device /p" /proc/self/mountstats | grep -E '^\s*xprt:'

t0=$SECONDS
umount "$MNT" || fail "umount failed"
! grep -q " $MNT " /proc/mounts || fail "$MNT still mounted"
step "unmounted ($((SECONDS - t0)) s)"
vm_signal unmounted
vm_wait b.finished 180
no_errors
vm_signal finished
echo "nfsrdma: ok"
