# `rdma res show qp -dd`: the driver attributes of live QPs (kernel/verbs/counters.c): each QP's
# own transport counters and, for a connected RC QP, what its requester knows of the path
# (srtt_ns, rtt_hi_ns, min_rtt_ns, reo_ns, reo_wnd_ns, inflight, cwnd; rdma prints drv_NAME). Two emulated hosts over
# 2 rails losing 3% of the frames; read while an ibv_rc_pingpong (64 B) runs: its RC QP shows
# measured RTTs (0 < min_rtt_ns <= srtt_ns, min_rtt_ns <= rtt_hi_ns, all under a second), a
# reordering window within its bound (timeout / 2), at most a window in flight, no congestion
# window (cwnd_min 0, the default), and retransmits of its own (the drops happened) that the
# device's hw counter includes. docs/json.md lists the attributes.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 2
for r in 0 1; do
	"$CTL" rail-set tbrdma0 1 "$r" --drop 3 || fail "rail-set $r failed"
done

step "ibv_rc_pingpong running, its QPs read"
h1 ibv_rc_pingpong -d tbrdma1 -g "$GID1" -s 64 -n 1000000 > /tmp/srv.log 2>&1 &
srv=$!
wait_for 20 pair_listening
ibv_rc_pingpong -d tbrdma0 -g "$GID0" -s 64 -n 1000000 10.88.0.2 > /tmp/cli.log 2>&1 &
cli=$!
# rc_qp: tbrdma0's RC QP as NAME=VALUE lines of its driver attributes (rdma prints them as
# drv_NAME) in /tmp/qp.env; fails while it has no RTT sample or retransmit yet (under TCG one
# rdma or python3 start takes ~0.5 s, so no wait_for poll)
rc_qp() {
	rdma -j -dd res show qp link tbrdma0/1 > /tmp/qp.json || return 1
	python3 -c '
import json, sys
qps = [q for q in json.load(open("/tmp/qp.json"))
       if q.get("ifname") == "tbrdma0" and q.get("type") == "RC"]
if len(qps) != 1 or "drv_srtt_ns" not in qps[0]:
    sys.exit("no RC QP with path attributes on tbrdma0: %s" % qps)
for k, v in qps[0].items():
    if k.startswith("drv_"):
        print("%s=%s" % (k[4:], v))' > /tmp/qp.env || return 1
	. /tmp/qp.env
	[ "$srtt_ns" -gt 0 ] && [ "$retransmits" -gt 0 ]
}
for i in $(seq 30); do rc_qp 2> /tmp/qp.err && break; sleep 2; done
[ "$i" -lt 30 ] || rc_qp || { cat /tmp/qp.err /tmp/qp.json; pair_diag; fail "no RC QP with RTTs and retransmits"; }
rdma -dd res show qp link tbrdma0/1
srtt=$srtt_ns hi=$rtt_hi_ns lo=$min_rtt_ns reo_wnd=$reo_wnd_ns rtx=$retransmits
echo "srtt ${srtt} ns, rtt_hi ${hi} ns, min_rtt ${lo} ns, reo_wnd ${reo_wnd} ns," \
	"inflight ${inflight}, cwnd ${cwnd}, retransmits ${rtx}"
[ "$lo" -gt 0 ] && [ "$lo" -le "$srtt" ] && [ "$lo" -le "$hi" ] ||
	fail "RTTs out of order: min $lo, srtt $srtt, hi $hi"
[ "$srtt" -lt 1000000000 ] && [ "$hi" -lt 1000000000 ] || fail "RTT of a second or more"
# the QP's local ACK timeout (ibv_rc_pingpong: 14, 67 ms); RACK's window is at most half of it
[ "$reo_wnd" -le 33554432 ] || fail "reordering window $reo_wnd ns beyond timeout / 2"
[ "$inflight" -le 1024 ] || fail "$inflight PSNs in flight, more than the window"
[ "$cwnd" = 0 ] || fail "cwnd $cwnd with cwnd_min 0"
dev_rtx=$(rdma statistic show link tbrdma0/1 | grep -o ' retransmits [0-9]*' | awk '{print $2}')
[ "$rtx" -le "$dev_rtx" ] || fail "the QP's $rtx retransmits beyond the device's $dev_rtx"
# the other end's RC QP sends too (a ping-pong of SENDs): its path is measured as well
h1 rdma -j -dd res show qp link tbrdma1/1 > /tmp/qp1.json
python3 -c '
import json, sys
qps = [q for q in json.load(open("/tmp/qp1.json"))
       if q.get("ifname") == "tbrdma1" and q.get("type") == "RC"]
if len(qps) != 1 or not qps[0].get("drv_srtt_ns", 0) > 0:
    sys.exit("tbrdma1: no RC QP with a measured srtt_ns: %s" % qps)' || fail "tbrdma1's QP"
kill "$cli" "$srv" 2> /dev/null
wait "$cli" "$srv" 2> /dev/null || true
echo "qp-path: ok"
