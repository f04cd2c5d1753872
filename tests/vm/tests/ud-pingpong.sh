# UD QPs and address handles between two emulated hosts over one emulated rail: ibv_ud_pingpong
# (1 B .. 2048 B, the active MTU) and perftest ib_send_bw/ib_send_lat -c UD. Every receive
# buffer starts with a 40-byte RoCE v2 GRH the verbs layer fills in (ud_pingpong posts size + 40).
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
echo "ud-pingpong: ok"
