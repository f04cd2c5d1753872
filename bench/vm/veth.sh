# bench: tbrdma vs rdma_rxe over the same veth pair in one VM (not a test: `make bench` boots it).
# tbrdma: eth backend, tbrdma0 on ve0a <-> tbrdma1 on ve0b (tbrdma1/tbr1 in netns h1, as in
# tests/vm/tests/eth-veth.sh). rxe: rxe0 on ve0a <-> rxe1 on ve0b, both in init_net (rxe in 6.1
# works only there), with policy routing so traffic between the two local addresses really
# crosses the veth pair instead of the loopback device.
# vm-timeout: 900
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"	# CTL, RDMAV_DRIVERS, h1, pair_split
. "$TBR_TOP/bench/vm/bench.lib"
links_up() { "$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "; }

step "setup: veth pair ve0a/ve0b, MTU 9000"
verbs_slim
modprobe veth
tbr_load eth_hello_ms=200
"$CTL" dev-new > /dev/null || fail "dev-new failed"
ip link add ve0a type veth peer name ve0b
ip link set ve0a mtu 9000
ip link set ve0b mtu 9000
"$CTL" eth-bind tbrdma0 ve0a || fail "eth-bind ve0a"
"$CTL" eth-bind tbrdma1 ve0b || fail "eth-bind ve0b"
ip link set ve0a up
ip link set ve0b up
wait_for 15 links_up tbrdma0 1
pair_split	# tests/vm/lib/pair.sh: tbrdma1/tbr1 into h1, addresses, GID0/GID1
TGID0=$GID0 TGID1=$GID1
ping -c 2 -W 5 10.88.0.2 > /dev/null || fail "no IP over tbrdma's eth rail"

step "rxe on the same veth pair"
rxe_load
A=10.77.0.1 B=10.77.0.2
ip addr add $A/32 dev ve0a
ip addr add $B/32 dev ve0b
for i in all default ve0a ve0b; do
	sysctl -qw net.ipv4.conf.$i.rp_filter=0 net.ipv4.conf.$i.accept_local=1
done
sysctl -qw net.ipv4.conf.ve0a.arp_ignore=1 net.ipv4.conf.ve0b.arp_ignore=1
# locally sent traffic to the other end's address leaves through the veth; the local table is
# consulted after that, so received packets are still delivered locally
ip rule add pref 10 iif lo to $B lookup 100
ip rule add pref 11 iif lo to $A lookup 101
ip route add $B dev ve0a src $A table 100
ip route add $A dev ve0b src $B table 101
ip rule del pref 0 lookup local
ip rule add pref 50 lookup local
ip neigh replace $B lladdr "$(cat /sys/class/net/ve0b/address)" dev ve0a nud permanent
ip neigh replace $A lladdr "$(cat /sys/class/net/ve0a/address)" dev ve0b nud permanent
rdma link add rxe0 type rxe netdev ve0a
rdma link add rxe1 type rxe netdev ve0b
wait_for 10 gid_index rxe0 $A
wait_for 10 gid_index rxe1 $B
RGID0=$(gid_index rxe0 $A)
RGID1=$(gid_index rxe1 $B)
ip rule show
before=$(cat /sys/class/net/ve0a/statistics/tx_packets)

for tool in $TOOLS; do
	for size in $(bench_sizes "$tool"); do
		SRV_NS=h1 SRV_DEV=tbrdma1 SRV_GID=$TGID1 CLI_DEV=tbrdma0 CLI_GID=$TGID0 SRV_ADDR=10.88.0.2 \
			local_perf veth tbrdma "$tool" "$size"
		SRV_NS= SRV_DEV=rxe1 SRV_GID=$RGID1 CLI_DEV=rxe0 CLI_GID=$RGID0 SRV_ADDR=$B \
			local_perf veth rxe "$tool" "$size"
	done
done
"$CTL" links tbrdma0
echo "ve0a tx_packets: $before before, $(cat /sys/class/net/ve0a/statistics/tx_packets) after"
rdma link del rxe0
rdma link del rxe1
echo "ok"
