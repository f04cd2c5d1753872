# Two VMs joined by 4 virtio NIC rails, eth backend: ONE device each (tbrdma0), the link has 4
# eth rails; ib_write_bw, ib_read_bw, ib_send_bw (a few sizes) and ib_write_lat across the VMs;
# both rails carried traffic.
# vm-count: 2
# vm-rails: 4
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=()
eth_up 4
vm_signal up
vm_wait "$([ "$VM_ROLE" = a ] && echo b || echo a).up" 120
i=0
for t in ib_write_bw ib_read_bw ib_send_bw; do
	for s in 4096 65536; do
		perf_pair "p$i" "$t" -s "$s" -n 20
		i=$((i + 1))
	done
done
perf_pair "p$i" ib_write_lat -s 64 -n 100
"$CTL" links tbrdma0 | tee /tmp/links
for r in 0 1 2 3; do
	n=$(sed -n "s/^  rail dev=tbrdma0 link=1 id=$r .* tx_frames=\([0-9]*\).*/\1/p" /tmp/links)
	[ "${n:-0}" -gt 100 ] || fail "rail $r carried no traffic (tx_frames=${n:-none})"
done
vm_signal finished
vm_wait "$([ "$VM_ROLE" = a ] && echo b || echo a).finished" 60
