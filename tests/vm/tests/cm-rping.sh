# rdma_cm between two emulated hosts over two emulated rails: QP1 (GSI, over the UD path)
# carries the CM MADs. rping (10 verified ping-pongs), ucmatose and rdma_server/rdma_client.
# Then packet capture (issue 47, docs/capture.md): `tbctl capture` on tbrdma0 during ib_write_bw,
# ib_read_lat and rping with 10% of the server's frames dropped; tshark (the host's Debian package: the
# guest's root is the host's) decodes the file as RoCE v2: BTH opcodes, QPNs and PSNs as perftest
# printed them, CM MADs to QP1, marked retransmissions after the drops, frames on both rails, none
# twice or out of order per rail (tests/vm/lib/capture-check; the steps are tests/vm/lib/capture.sh,
# which rail-612 runs on 6.12 too). Last, rmmod tbrdma while ib_cm,
# rdma_cm and rdma_ucm stay loaded (the MAD agents hold QP1 until the device unregisters). No perftest -R: Debian 12's perftest 4.5-0.17 crashes in its rdma_cm
# retry whenever its client's REQ beats the server's listen (docs/testing.md, flakes).
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/lib/capture.sh"

pair_up 2
modprobe rdma_ucm
step "port capabilities"
# IB_PORT_CM_SUP is bit 16 of port_cap_flags
caps=$(ibv_devinfo -v -d tbrdma0 | awk '/port_cap_flags:/ {print $2; exit}')
[ $((caps & 0x10000)) != 0 ] || fail "tbrdma0 port_cap_flags $caps without CM_SUP"

step "rping"
t0=$(date +%s.%N)
cap_srv rping -s -a 10.88.0.2 -C 10 -v
cap_cli rping rping -c -a 10.88.0.2 -C 10 -v
grep -c 'ping data' /tmp/cli.log | grep -qx 10 || { cat /tmp/cli.log; fail "rping: not 10 pings"; }
echo "rping: 10 pings in $(echo "$(date +%s.%N) - $t0" | bc) s"

step "ucmatose"
cap_srv ucmatose -b 10.88.0.2
cap_cli ucmatose ucmatose -s 10.88.0.2
tail -3 /tmp/cli.log

step "rdma_server / rdma_client"
cap_srv rdma_server -s 10.88.0.2
cap_cli rdma_client rdma_client -s 10.88.0.2
tail -2 /tmp/cli.log

capture_steps

step "rmmod with the CM modules loaded"
rmmod tbrdma || fail "rmmod tbrdma failed"
lsmod | grep -q '^rdma_cm' || fail "rdma_cm was unloaded too"
echo "cm-rping: ok"
