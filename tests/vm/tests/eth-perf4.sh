# Two VMs joined by 4 virtio NIC rails, eth backend: ONE device each (tbrdma0), the link has 4
# eth rails; ib_{write,read,send}_bw (4 KiB, 64 KiB) and ib_{write,read,send}_lat across the VMs;
# every rail carried traffic; the latency tools again in the poll mode (busy_poll_us), which must have run.
# vm-count: 2
# vm-rails: 4
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=()
eth_perf 4
