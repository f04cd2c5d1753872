# Issue 45, the negative control of the stand-in's NHI framing (docs/thunderbolt.md, "Frames and
# PDFs"). A real NHI cuts a ring frame into transport packets of at most 256 bytes, tags the last
# with the descriptor's EOF PDF and every other with its SOF PDF, and the receiver closes a frame
# at the first packet whose PDF is in its RX ring's eof_mask. tbrdma before wave 3 sent every frame
# with SOF PDF == EOF PDF (its code), so each frame was closed after its first packet: its rails
# came up (negotiation goes over the control channel), small frames such as a ping passed, and
# every data frame was cut. This test keeps that old framing (tbrdma's test-only parameter
# tb_test_sof_eq_eof=1) in the suite:
#  1. on the strict model (the default): verified RC traffic must FAIL, and the stand-in must
#     count frames cut after their first packet (rx_cut); if it passes, the model has drifted back
#     to an ideal NHI and the test fails saying so;
#  2. on the ideal model (the stand-in's ideal_frames=1: whole frames with the sender's PDFs), the
#     same framing passes: the strict model is what makes step 1 fail.
# tbsim-pair, tbsim-cable and the others run the real framing on the strict model.
# vm-count: 2
# vm-rails: 1
# vm-device: edu
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a
PROG=$TBR_TOP/build/progs/integrity
stat_of() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" /sys/module/thunderbolt/parameters/stats; }

# integrity TAG T: 1 MiB of verified RC WRITE/READ/SEND (tests/progs/integrity) from a to b with
# the local ACK timeout 4.096 us * 2^T; its exit status (the server's on b, the client's on a).
# The negative control takes T 12 (16.8 ms, 7 retries: a cut frame fails the QP in well under a
# second); the positive control takes the suite's two-VM timeout (guest.sh PAIR_ACK_TIMEOUT), as a
# TCG VM can stall for 300 ms on a loaded host, longer than 7 retries of 16.8 ms stretched to at
# most 4x (a CI run failed step 2 so: READ retry exceeded after a 299 ms stall).
integrity() {
	local rc=0
	if [ "$VM_ROLE" = b ]; then
		"$PROG" -d tbrdma0 -g "$GID" --timeout "$2" --mib 1 server > "/tmp/int-$1.log" 2>&1 &
		local srv=$!
		wait_for 20 int_listening
		vm_signal "listening-$1"
		wait "$srv" || rc=$?
	else
		vm_wait "b.listening-$1" 60
		"$PROG" -d tbrdma0 -g "$GID" --timeout "$2" --mib 1 client "$PEER" > "/tmp/int-$1.log" 2>&1 || rc=$?
	fi
	tail -3 "/tmp/int-$1.log"
	return "$rc"
}

step "strict NHI model, old framing (SOF PDF == EOF PDF): rails up, ping passes"
TB_LOAD_ARGS=(tb_test_sof_eq_eof=1)
tbsim_load cable_mac=52:54:
[ "$(cat /sys/module/thunderbolt/parameters/ideal_frames)" = N ] || fail "the stand-in's default is not the strict model"
tb_up 2 strict
# integrity's TCP (its plan, its results) goes over tbr0 too: its segments must fit one transport
# packet, or TCP, not RDMA, would be what fails here (the route's MTU; RoCE takes tbr0's)
ip route replace 10.77.0.0/24 dev tbr0 src "$ME" mtu lock 200 || fail "route MTU"
cut0=$(stat_of rx_cut)
echo "after tb_up (ping): rx_cut=$cut0"

step "strict NHI model, old framing: verified RC traffic must fail"
if integrity strict 12; then
	fail "the strict NHI model delivered frames sent with SOF PDF == EOF PDF: it has drifted back to an ideal NHI (stats: $(cat /sys/module/thunderbolt/parameters/stats))"
fi
cat /sys/module/thunderbolt/parameters/stats
stat_of rx_cut > "$VM_SHARED/$VM_ROLE.cut"
vm_signal strict-done
vm_wait "$other.strict-done" 60
# the data frames went from a to b: b's NHI cut them, a's saw only ACKs (one packet each)
cut=$(($(cat "$VM_SHARED/a.cut") + $(cat "$VM_SHARED/b.cut")))
[ "$cut" -gt 0 ] ||
	fail "the traffic failed, but not because the NHI cut frames (rx_cut $cut on both hosts): another cause"
echo "negative control holds: with SOF PDF == EOF PDF the receiving NHIs closed $cut frame(s) after their first 256-byte packet (rx_cut), and RC traffic failed"

step "ideal model (ideal_frames=1), the same old framing: verified RC traffic passes"
vm_signal reload
vm_wait "$other.reload" 60
rmmod tbrdma || fail "rmmod tbrdma"
rmmod thunderbolt || fail "rmmod of the stand-in"
tbsim_load cable_mac=52:54: ideal_frames=1
tb_up 2 ideal
integrity ideal "$PAIR_ACK_TIMEOUT" || fail "the old framing fails on the ideal model too: step 1 proves nothing about framing"
[ "$(stat_of rx_cut)" = 0 ] || fail "the ideal model cut frames: $(cat /sys/module/thunderbolt/parameters/stats)"
vm_signal ideal-done
vm_wait "$other.ideal-done" 60
rmmod tbrdma || fail "rmmod tbrdma"
rmmod thunderbolt || fail "rmmod of the stand-in"
