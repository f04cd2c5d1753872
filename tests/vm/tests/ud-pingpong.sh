# UD QPs and address handles between two emulated hosts over one emulated rail: ibv_ud_pingpong
# (1 B .. 2048 B, the active MTU) and perftest ib_send_bw/ib_send_lat -c UD. Every receive
# buffer starts with a 40-byte RoCE v2 GRH the verbs layer fills in (ud_pingpong posts size + 40).
# rdma_cm multicast across the two hosts: mckey with three receiving QPs (a group of three) on
# tbrdma1 and the sender on tbrdma0; every receiver gets every datagram.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"

pair_up 1

step "ibv_devinfo: active MTU 2048 (a UD datagram)"
ibv_devinfo -d tbrdma0 | grep -q 'active_mtu:.*2048' || fail "active_mtu is not 2048"

# pingpong SIZE ITERS: server in h1, client here; both must succeed
pingpong() {
	pair_run -g ibv_ud_pingpong -s "$1" -n "$2"
	echo "ibv_ud_pingpong -s $1: $(grep 'iters in' /tmp/cli.log)"
}

step "ibv_ud_pingpong"
for size in 1 64 1000 2048; do
	pingpong "$size" 50
done

# perf TOOL ARGS...: perftest server in h1, client here
perf() {
	local tool=$1
	shift
	pair_run -x "$tool" -F "$@"
	echo "$tool $*: $(grep -E '^ *[0-9]+ +[0-9]+ ' /tmp/cli.log | tail -1 | tr -s ' ')"
}
step "perftest UD"
perf ib_send_bw -c UD -s 2048 -n 200
perf ib_send_lat -c UD -s 2048 -n 200

step "rdma_cm multicast: mckey, three receivers on tbrdma1 (h1), the sender on tbrdma0"
modprobe rdma_ucm
# stdbuf: mckey prints through stdio, block-buffered into a file
h1 timeout 60 stdbuf -oL mckey -m 239.2.3.4 -b 10.88.0.2 -c 3 -C 20 > /tmp/mck-r.log 2>&1 &
mck=$!
# receivers poll once their joins are done (mckey sleeps 3 s after joining, as does the sender)
end=$((SECONDS + 30))
until [ "$(grep -c "joined dgid" /tmp/mck-r.log)" -ge 3 ]; do
	[ "$SECONDS" -lt "$end" ] || { cat /tmp/mck-r.log; fail "mckey receivers did not join in 30 s"; }
	sleep 0.2
done
if ! timeout 60 stdbuf -oL mckey -m 239.2.3.4 -b 10.88.0.1 -s -C 20 > /tmp/mck-s.log 2>&1; then
	cat /tmp/mck-s.log /tmp/mck-r.log
	fail "mckey sender failed"
fi
wait "$mck" || { cat /tmp/mck-s.log /tmp/mck-r.log; fail "mckey receivers failed (datagrams lost?)"; }
grep -q "data transfers complete" /tmp/mck-r.log || { cat /tmp/mck-r.log; fail "mckey receivers"; }
echo "mckey: 3 receivers on tbrdma1 got 20 datagrams each from tbrdma0"
echo "ud-pingpong: ok"
