# Two VMs joined by 2 virtio NIC rails, eth backend: ONE device each (tbrdma0), the link has 2
# eth rails; ib_write_bw, ib_read_bw, ib_send_bw (a few sizes) and ib_write_lat across the VMs;
# both rails carried traffic.
# vm-count: 2
# vm-rails: 2
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=()
eth_perf 2
