# Two VMs, 2 virtio rails, eth backend: ib_write_bw runs from a to b over the 2-rail link; the host
# hot-unplugs rail NIC 1 of VM a through QMP mid-transfer. The transfer must complete without an
# error completion, a's rail over the unplugged NIC must be gone, b's must go down (hellos stop),
# the surviving rail must have carried traffic after the unplug, and nothing was sent to the
# closed NIC.
# vm-count: 2
# vm-rails: 2
# vm-host: yes
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=(eth_hello_ms=250)
eth_up 2
other=b
[ "$VM_ROLE" = a ] || other=a
vm_signal up
vm_wait "$other.up" 120
rail_tx() { "$CTL" links tbrdma0 | sed -n "s/^  rail dev=tbrdma0 link=1 id=$1 .* tx_frames=\([0-9]*\).*/\1/p"; }
if [ "$VM_ROLE" = b ]; then
	ib_write_bw -d tbrdma0 -x "$GID" -F -s 65536 -n 3000 > /tmp/srv.log 2>&1 &
	srv=$!
	wait_for 20 perf_listening
	vm_signal listening
	wait_for 60 links_up 1
	step "b: rail over the unplugged NIC went down (hellos stopped)"
	wait "$srv" || { cat /tmp/srv.log; "$CTL" links; fail "server failed"; }
else
	vm_wait b.listening 60
	before0=$(rail_tx 0)
	ib_write_bw -d tbrdma0 -x "$GID" -F -s 65536 -n 3000 "$PEER" > /tmp/cli.log 2>&1 &
	cli=$!
	# rail 1 busy: its NIC (the one the host unplugs) sent 500 frames since the start; read
	# from sysfs by the shell itself, so that a poll costs no process while the transfer has
	# the guest's CPUs (a tbctl poll took seconds here, half the transfer)
	rail1_tx=/sys/class/net/$(echo $RAIL_IFS | cut -d' ' -f2)/statistics/tx_packets
	read -r base1 < "$rail1_tx"
	rail1_busy() { local n; read -r n < "$rail1_tx" && [ "$n" -gt $((base1 + 500)) ]; }
	wait_for 60 rail1_busy
	step "a: both rails busy, the host unplugs rail 1"
	vm_signal transferring
	vm_wait host.unplugged 60
	# the host's nic-del returns once this guest ejected the NIC, after its driver unregistered
	# the netdev and the rail went with it: is the transfer still running? (asked before the
	# tbctl polls below, each slow while the transfer has the CPUs)
	running=yes
	kill -0 "$cli" 2> /dev/null || running=no
	wait_for 20 links_up 1
	mid0=$(rail_tx 0)
	"$CTL" links tbrdma0
	if [ "$running" = no ]; then
		wait "$cli"
		echo "ib_write_bw exited with $?:"
		cat /tmp/cli.log
		fail "the transfer ended before the unplug took effect"
	fi
	step "a: NIC unplugged mid-transfer, link has 1 rail up"
	t0=$SECONDS
	wait "$cli" || { cat /tmp/cli.log; "$CTL" links; fail "ib_write_bw failed after the unplug"; }
	grep -E '^ *65536 ' /tmp/cli.log | tr -s ' '
	end0=$(rail_tx 0)
	"$CTL" links tbrdma0 | tee /tmp/links
	grep -q "rails=1 " /tmp/links || fail "the unplugged NIC's rail is still in the link"
	echo "rail 0 tx_frames: $before0 before, $mid0 at unplug, $end0 at the end ($((SECONDS - t0))s after)"
	[ "$end0" -gt $((mid0 + 1000)) ] || fail "the surviving rail carried no traffic after the unplug"
	klog_has "unregistered, its eth rails go" || fail "no unregister handling logged"
	# nothing is sent to the ejected NIC once it is closed (the debug kernel logged "eth1 selects
	# TX queue 0, but real number of TX queues is 0" for each frame and hello sent there)
	! klog_has "selects TX queue" || fail "frames were sent to the closed NIC"
fi
vm_signal finished
vm_wait "$other.finished" 120
