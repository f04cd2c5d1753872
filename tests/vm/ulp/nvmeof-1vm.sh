# NVMe over Fabrics, RDMA transport, in ONE VM: two emulated hosts (tbrdma0/tbr0 and
# tbrdma1/tbr1) joined by an in-kernel emulated cable of 2 rails. nvme-rdma and nvmet-rdma make
# their rdma_cm IDs in the initial network namespace only (drivers/nvme/{host,target}/rdma.c),
# so both hosts stay there (no netns, unlike pair.sh's pair_split): tbr0 10.88.0.1/32 and tbr1
# 10.88.0.2/32, with pair.sh's cross_route policy routing, so traffic between the two local
# addresses leaves through tbr0/tbr1 instead of the loopback device. The RoCE GIDs follow the
# addresses, so rdma_cm resolves 10.88.0.1 to tbrdma1 (out) and the connect request arrives at
# tbrdma0 (the listener's device): the NVMe traffic crosses the rails, asserted by tbrdma0's
# rail frame counters (at least a frame per 4 KiB of every pass). Host 0 is the target (nvmet +
# nvmet-rdma, a 128 MiB RAM disk) on 10.88.0.1:4420; host 1 the host (nvme-rdma): discover,
# connect, random data written with O_DIRECT at 4 KiB (NVMEOF_MIB_4K, default 2 MiB) and at 1 MiB
# (NVMEOF_MIB, default 8), each read back and compared with the source and with the backing
# store; a third pass at 1 MiB (rails capped at 8 Mbit/s, so the write outlasts the cutter's
# polling) loses rail 1 (rail-set --cut) mid-write and completes intact on rail 0; rail 1 comes
# back. Then disconnect, reconnect, and rmmod tbrdma under both bound ULPs at once (the RDMA
# core's device removal, no hang): the unload unregisters the newest device first, so nvme-rdma
# lets go of tbrdma1 over rails that still reach the target, then nvmet-rdma of tbrdma0 (the
# other order would have the host see its target vanish first: error recovery); no nvme or tbrdma
# error in dmesg (the harness fails on any BUG/WARNING/hung task). Not in make check: run it with
#   TBR_VM_TESTS=$PWD/tests/vm/ulp tests/vm/run -j 1 nvmeof-1vm
# vm-timeout: 600
# vm-kernel: 6.1 6.12
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/ulp/nvmeof.lib"
. "$TBR_TOP/tests/vm/ulp/cut.lib"
MIB=${NVMEOF_MIB:-8}
MIB_4K=${NVMEOF_MIB_4K:-2}
TARGET=10.88.0.1
HOST=10.88.0.2

tbr_load
"$CTL" dev-new > /dev/null || fail "dev-new failed"
"$CTL" cable-new tbrdma0 tbrdma1 --rails 2 > /dev/null || fail "cable-new failed"
ip link set tbr0 up
ip link set tbr1 up
cross_route $TARGET tbr0 $HOST tbr1
for d in tbrdma0 tbrdma1; do
	wait_for 15 grep -q ACTIVE /sys/class/infiniband/$d/ports/1/state
done
wait_for 10 gid_index tbrdma0 $TARGET
wait_for 10 gid_index tbrdma1 $HOST
ip route get $TARGET | tee /tmp/route
grep -q "dev tbr1 .*src $HOST" /tmp/route || fail "$TARGET is not routed out of tbr1"
ping -c 1 -W 5 $TARGET > /dev/null || fail "no IP over the rails (ping $TARGET)"

nvmet_export $TARGET
nvme_attach $TARGET
# the queues' RC connections: nvme-rdma's IDs on tbrdma1 to the target, nvmet-rdma's on tbrdma0
rdma resource show cm_id | tee /tmp/cm
grep -q "tbrdma1/1 .*CONNECT.*dst-addr $TARGET:4420" /tmp/cm ||
	fail "no connected rdma_cm ID on tbrdma1 to $TARGET:4420"
grep -q "tbrdma0/1 .*CONNECT.*src-addr $TARGET:4420" /tmp/cm ||
	fail "no connected rdma_cm ID on tbrdma0 at $TARGET:4420"

# pass N BS MIB: write_back over the rails, then the backing store compared with the source
pass() {
	local t0=$SECONDS f0 d
	f0=$(frames)
	write_back "$@"
	d=$(($(frames) - f0))
	# written and read back: 2 x MIB MiB crossed, at most 4 KiB (TBR_FRAME_MAX) a frame
	[ "$d" -ge $(($3 * 512)) ] || fail "pass $1: only $d frames crossed the rails for 2 x $3 MiB"
	[ "$(backing_sum "$3")" = "$SUM" ] || fail "pass $1: backing store differs"
	step "pass $1: $3 MiB at $2 written and read back intact, backing store matches ($((SECONDS - t0)) s, $d frames)"
}
pass 1 4096 "$MIB_4K"
pass 2 1048576 "$MIB"

# pass 3: the host's writes are the target's RDMA READs of its pages, so tbrdma0 receives them:
# rail 1 is cut once rail 0 brought a sixteenth of the write (cut.lib's cutter on rx_frames)
for r in 0 1; do "$CTL" rail-set tbrdma0 1 "$r" --rate 8M > /dev/null || fail "rail-set $r --rate"; done
cutter rx_frames
after_write() { cut_done rx_frames; }
pass 3 1048576 "$MIB"
for r in 0 1; do "$CTL" rail-set tbrdma0 1 "$r" --rate 0 > /dev/null || fail "rail-set $r --rate 0"; done
rdma statistic show link tbrdma0/1

nvme_detach

# device removal with nvme-rdma and nvmet-rdma bound: both let go, rmmod must not hang
remove_under $TARGET "nvme-rdma and nvmet-rdma"
no_errors
echo "nvmeof-1vm: ok"
