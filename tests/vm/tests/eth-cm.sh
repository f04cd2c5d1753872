# Two VMs joined by 2 virtio NIC rails (eth backend), one device each: rdma_cm across the VMs
# (rping -V: RDMA READ and WRITE of 65535 bytes, rping's largest, verified, on QPs that rdma_cm
# made and connected) and UD (ibv_ud_pingpong), i.e. QP1/GSI, CM MADs and UD datagrams over the
# rails between two kernels.
# Not perftest's -R: Debian 12's perftest 4.5-0.17 crashes retrying a rejected data connection
# (docs/testing.md, the flakes); no test runs it.
# vm-count: 2
# vm-rails: 2
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
ETH_LOAD_ARGS=()
modprobe rdma_ucm
eth_up 2
other=$([ "$VM_ROLE" = a ] && echo b || echo a)
vm_signal up
vm_wait "$other.up" 120

# across TAG SERVER-CMD -- CLIENT-CMD: b runs the server, a the client once b is listening
across() {
	local tag=$1 i
	shift
	local -a srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$VM_ROLE" = b ]; then
		"${srv[@]}" > "/tmp/$tag.log" 2>&1 &
		local pid=$!
		sleep 3	# rdma_cm listeners show in no socket table: give it time to bind
		vm_signal "$tag.listening"
		wait "$pid" || { cat "/tmp/$tag.log"; fail "$tag: server ${srv[*]} failed"; }
		vm_signal "$tag.done"
	else
		vm_wait "b.$tag.listening" 90
		for i in 1 2 3; do	# the listener may still be binding on a slow TCG guest
			"${cli[@]}" > "/tmp/$tag.log" 2>&1 && break
			[ "$i" = 3 ] && { cat "/tmp/$tag.log"; "$CTL" links; fail "$tag: client ${cli[*]} failed"; }
			sleep 2
		done
		echo "$tag: ok"
		tail -n 3 "/tmp/$tag.log"
		vm_wait "b.$tag.done" 90
	fi
}

across rping rping -s -a 10.99.0.2 -C 20 -S 65535 -V -- rping -c -a 10.99.0.2 -C 20 -S 65535 -V
across ud ibv_ud_pingpong -d tbrdma0 -g "$GID" -s 1024 -n 20 -- \
	ibv_ud_pingpong -d tbrdma0 -g "$GID" -s 1024 -n 20 10.99.0.2
vm_signal finished
vm_wait "$other.finished" 60
