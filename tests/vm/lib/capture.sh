# tests/vm/lib/capture.sh: the packet capture steps (issue 47, docs/capture.md), run by cm-rping
# on 6.1 and rail-612 on 6.12 (source after guest.sh and pair.sh).
#   capture_steps   on a pair_up of 2 rails with rdma_ucm loaded: `tbctl capture` on tbrdma0
#                   during ib_write_bw, ib_read_lat and rping with 10% of the server's frames
#                   dropped (`rail-set --one-way`, the client's DREQ must arrive: see there);
#                   tshark (the host's Debian package: the guest's root is the host's) decodes the
#                   file as RoCE v2: BTH opcodes, QPNs and PSNs as perftest printed them, CM MADs
#                   to QP1, marked retransmissions after the drops, frames on both rails, none
#                   twice or out of order per rail (tests/vm/lib/capture-check); a management
#                   datagram, IP over tbr0; then the snap length (-s 128 -c 30). The files stay in
#                   VM_OUT (capture.pcap, snap.pcap) for Wireshark
#   cap_srv, cap_cli  a server in h1 and its client (below); cm-rping's rdma_cm steps use them too
# shellcheck shell=bash

# cap_srv CMD...: the server CMD in h1, given time to listen (rdma_cm listeners do not show in
# ss); cap_cli NAME CMD...: the client, then the server must finish successfully
cap_srv() { h1 "$@" > /tmp/srv.log 2>&1 & CAP_SRV=$!; sleep 3; }
cap_cli() {
	local name=$1
	shift
	if ! timeout 60 "$@" > /tmp/cli.log 2>&1; then
		cat /tmp/cli.log; kill "$CAP_SRV" 2>/dev/null || true; cat /tmp/srv.log
		"$CTL" links
		fail "$name: client failed"
	fi
	if ! timeout 30 tail --pid="$CAP_SRV" -f /dev/null; then
		cat /tmp/srv.log; fail "$name: server did not finish"
	fi
	wait "$CAP_SRV" || { cat /tmp/srv.log; fail "$name: server failed"; }
}

capture_steps() {
	step "capture: tbctl capture during ib_write_bw, ib_read_lat and rping with drops"
	command -v tshark > /dev/null || fail "tshark missing (the host's: make deps)"
	CHECK=$TBR_TOP/tests/vm/lib/capture-check
	MAC0=$(cat /sys/class/net/tbr0/address)
	PCAP=$VM_OUT/capture.pcap
	"$TBR_TOP/build/tbctl/tbctl" capture -w "$PCAP" -i tbrdma0 2> /tmp/cap.log &
	CAP=$!
	wait_for 10 grep -q capturing /tmp/cap.log
	ip link show tbrmon0 | grep -q 'link/ether' || fail "no Ethernet monitor tbrmon0: $(ip link show tbrmon0)"
	# cap_qpn: the client's local and remote QPN and PSN of the last pair_run (0x-prefixed hex)
	cap_qpn() {
		sed -n 's/.*local address: .*QPN \(0x[0-9a-f]*\) PSN \(0x[0-9a-f]*\).*/\1 \2/p' /tmp/cli.log | head -1
		sed -n 's/.*remote address: .*QPN \(0x[0-9a-f]*\) PSN \(0x[0-9a-f]*\).*/\1 \2/p' /tmp/cli.log | head -1
	}
	pair_run -x ib_write_bw -F -s 16384 -n 20
	read -r wlq wlp wrq wrp <<< "$(cap_qpn | tr '\n' ' ')"
	pair_run -x ib_read_lat -F -s 64 -n 20
	read -r rlq rlp rrq rrp <<< "$(cap_qpn | tr '\n' ' ')"
	echo "ib_write_bw: local QPN $wlq PSN $wlp, remote QPN $wrq PSN $wrp; ib_read_lat: $rlq $rlp / $rrq $rrp"
	[ -n "$wrp" ] || fail "no QPN/PSN in ib_write_bw's output"
	[ -n "$rrp" ] || fail "no QPN/PSN in ib_read_lat's output"
	# rping with 10% of what the server (tbrdma1) sends dropped: its READs, WRITEs, SENDs and
	# ACKs go again, and the client's SENDs whose ACKs were lost (marked retransmissions from
	# tbrdma0). Not the other way: the client's DREQ must arrive, for ib_cm cancels a DREQ's
	# retries when the client destroys its cm_id right after rdma_disconnect, and a lost DREQ
	# leaves the rping server waiting forever (on any fabric that loses a datagram)
	for r in 0 1; do
		h1 "$CTL" rail-set tbrdma1 1 $r --drop 10 --one-way || fail "rail-set --drop --one-way failed"
	done
	[ "$(h1 "$CTL" links tbrdma1 | grep -c ' drop_ppm=100000 ')" = 2 ] &&
		[ "$("$CTL" links tbrdma0 | grep -c ' drop_ppm=0 ')" = 2 ] ||
		fail "--one-way: not tbrdma1's end only: $("$CTL" links tbrdma0; h1 "$CTL" links tbrdma1)"
	cap_srv rping -s -a 10.88.0.2 -C 20 -v
	cap_cli rping rping -c -a 10.88.0.2 -C 20 -v
	for r in 0 1; do h1 "$CTL" rail-set tbrdma1 1 $r --drop 0; done
	"$CTL" mgmt-send tbrdma0 1 capture-check-mgmt > /dev/null || fail "mgmt-send failed"
	kill -INT "$CAP" 2> /dev/null || echo "tbctl capture ended before ^C"
	wait "$CAP" || { cat /tmp/cap.log; fail "tbctl capture failed"; }
	cat /tmp/cap.log
	ip link show tbrmon0 | grep -q 'state DOWN' || fail "tbrmon0 still up after the capture: $(ip link show tbrmon0)"
	tshark -r "$PCAP" -Y infiniband -T fields -E separator=/t -e frame.number -e eth.src \
		-e udp.srcport -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
		> /tmp/cap.fields 2> /tmp/tshark.err || { cat /tmp/tshark.err; fail "tshark could not read $PCAP"; }
	tshark -r "$PCAP" > /tmp/cap.txt 2> /dev/null
	echo "tshark: $(wc -l < /tmp/cap.txt) frames, $(wc -l < /tmp/cap.fields) RoCE v2; the first RoCE ones:"
	awk '/RRoCE/ && n++ < 4' /tmp/cap.txt
	# ib_write_bw: RDMA WRITE First..Only (6-10) to the server's QP from the client's PSN, ACKs (17)
	# back to the client's QP
	"$CHECK" flow /tmp/cap.fields "$MAC0" "$wrq" "$wlp" 6 7 8 9 10 || fail "ib_write_bw's frames"
	grep -qP "\t17\t0x0*${wlq#0x}\t" /tmp/cap.fields || fail "no ACK to QPN $wlq"
	# ib_read_lat: RDMA READ Request (12) from the client's PSN, Read Response Only (16) back
	"$CHECK" flow /tmp/cap.fields "$MAC0" "$rrq" "$rlp" 12 || fail "ib_read_lat's requests"
	grep -qP "\t16\t0x0*${rlq#0x}\t" /tmp/cap.fields || fail "no READ Response Only to QPN $rlq"
	# rdma_cm: MADs on QP1 as UD SEND Only (100)
	grep -qP "\t100\t0x0*1\t" /tmp/cap.fields || fail "no UD SEND to QP1 (CM MADs)"
	"$CHECK" retrans /tmp/cap.fields "$MAC0" || fail "retransmissions"
	"$CHECK" order /tmp/cap.fields || fail "frames twice or out of order"
	# the rail in the UDP source port: 49152 + rail
	for r in 49152 49153; do
		grep -qP "\t$r\t" /tmp/cap.fields || fail "no rail $((r - 49152)) in the UDP source ports"
	done
	# nothing malformed (headers and lengths as Wireshark expects them); expert errors counted
	n=$(tshark -r "$PCAP" -Y '_ws.malformed' 2> /dev/null | wc -l)
	[ "$n" = 0 ] || fail "$n frames malformed for tshark: $(tshark -r "$PCAP" -Y _ws.malformed 2>&1 | head -3)"
	echo "tshark expert errors: $(tshark -r "$PCAP" -Y '_ws.expert.severity == error' 2> /dev/null | wc -l)"
	# a management datagram: ethertype 0x88B6, tagged code 2 (MGMT), once
	n=$(tshark -r "$PCAP" -Y 'eth.type == 0x88b6 && frame contains "capture-check-mgmt"' 2> /dev/null | wc -l)
	[ "$n" = 1 ] || fail "the management datagram shows $n times, not once"
	tshark -r "$PCAP" -Y 'eth.type == 0x88b6' -T fields -e data.data > /tmp/cap.mgmt 2> /dev/null
	grep -qE "^020[01]0100" /tmp/cap.mgmt || fail "the management datagram's tag is not MGMT, rail 0 or 1, sent"
	# IP over tbr0 (perftest's TCP handshake) shows as it is
	[ "$(tshark -r "$PCAP" -Y "tcp.port == 18515" 2> /dev/null | wc -l)" -gt 0 ] ||
		fail "perftest's TCP connection (IP over the rails) not in the capture"

	step "capture: snap length"
	"$TBR_TOP/build/tbctl/tbctl" capture -w "$VM_OUT/snap.pcap" -s 128 -c 30 2> /tmp/cap.log &
	CAP=$!
	wait_for 10 grep -q capturing /tmp/cap.log
	pair_run -x ib_write_bw -F -s 16384 -n 10
	wait "$CAP" || { cat /tmp/cap.log; fail "tbctl capture -c 30 failed"; }
	tshark -r "$VM_OUT/snap.pcap" -T fields -e frame.cap_len -e frame.len > /tmp/snap.fields 2> /dev/null
	[ "$(wc -l < /tmp/snap.fields)" = 30 ] || fail "-c 30: $(wc -l < /tmp/snap.fields) frames in the file"
	# (the kernel cuts them: the file's frame length is the cut one, docs/capture.md)
	awk '$1 > 128 || $2 > 128 { bad++ } $1 == 128 { cut++ } END { exit !(bad == 0 && cut > 0) }' \
		/tmp/snap.fields || fail "not cut at 128 bytes: $(sort -u /tmp/snap.fields | xargs)"
	echo "snap length 128: 30 frames, $(awk '$1 == 128' /tmp/snap.fields | wc -l) of them cut to 128 bytes"
	# (a later capture's own -s replaces the monitor's: the last request's length applies)
}
