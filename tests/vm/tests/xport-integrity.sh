# RC data integrity between two emulated hosts (tests/progs/integrity.c): seeded random patterns
# of 0 B .. 16 MiB, with the edges around the frame payload (4096 B here), moved by RDMA WRITE (+ SEND
# notification), WRITE_WITH_IMM, RDMA READ, SEND and SEND_WITH_IMM (multi-SGE on both sides,
# inline), each verified byte for byte with guard bytes on the other side; ATOMICs when the
# device reports atomic_cap != NONE. Server tbrdma1 in netns h1, client tbrdma0. First over a
# 1-rail cable, then again after replacing it with a 4-rail cable (every rail must carry).
# The seed is printed; rerun a failure with it: integrity ... --seed N.
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
SEED=$(date +%s)

pair_up 1
step "integrity over 1 rail, seed $SEED"
pair_integrity "$SEED" 192

step "replace the cable by a 4-rail one"
"$CTL" cable-del "$("$CTL" cables | sed -n 's/^cable id=\([0-9]*\).*/\1/p' | head -1)" ||
	fail "cable-del failed"
"$CTL" cable-new tbrdma0 tbrdma1 --rails 4 > /dev/null || fail "cable-new --rails 4 failed"
wait_for 10 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
wait_for 10 h1 grep -q ACTIVE /sys/class/infiniband/tbrdma1/ports/1/state
"$CTL" links > /tmp/links
grep "^link dev=tbrdma0" /tmp/links
grep -q "^link dev=tbrdma0 .* state=up rails_up=4 rails=4" /tmp/links || fail "no 4-rail link"
wait_for 10 ping -c 1 -W 1 10.88.0.2

SEED=$((SEED + 1))
step "integrity over 4 rails, seed $SEED"
pair_integrity "$SEED" 96
"$CTL" links > /tmp/links
for r in 0 1 2 3; do
	n=$(sed -n "s/^  rail dev=tbrdma0 link=[0-9]* id=$r .* tx_frames=\([0-9]*\).*/\1/p" /tmp/links)
	echo "rail $r: ${n:-?} frames sent"
	[ "${n:-0}" -ge 1000 ] || fail "rail $r carried only ${n:-0} frames"
done
echo "xport-integrity: ok"
