# Harness self-test of the two-VM mode: two VMs joined by 2 virtio rails (-netdev dgram). Both rails
# carry traffic; the host script hot-unplugs rail 1 of VM a through QMP mid-test, the guest sees the
# NIC vanish while rail 0 keeps working, then the host plugs it back and udev-visible state returns.
# vm-count: 2
# vm-rails: 2
# vm-host: yes
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"

me=1 peer=2 other=b
[ "$VM_ROLE" = a ] || { me=2 peer=1 other=a; }
rail_if() { # rail_if N: the guest netdev of rail N (MAC ends in the rail's ports)
	local n=$1 i
	for i in /sys/class/net/*; do
		[ "$(cat "$i/device/vendor" 2>/dev/null)" = 0x1af4 ] || continue
		echo "$(cat "$i/address") $(basename "$i")"
	done | sort | sed -n "$((n + 1))p" | cut -d' ' -f2
}
modprobe virtio_net
wait_for 20 test -n "$(rail_if 1)"
for r in 0 1; do
	ifc=$(rail_if $r)
	ip addr add "10.9.$r.$me/24" dev "$ifc"
	ip link set "$ifc" up
done
vm_signal up
vm_wait "$other.up"
for r in 0 1; do
	ping -c 2 -W 5 "10.9.$r.$peer" > /dev/null || fail "no traffic over rail $r"
done
step "both rails carry traffic"
nics() { ls /sys/class/net | wc -l; }
fewer_nics() { [ "$(nics)" -lt "$1" ]; }
nics_are() { [ "$(nics)" -eq "$1" ]; }
nics_before=$(nics)
vm_signal pinged
if [ "$VM_ROLE" = a ]; then
	vm_wait host.unplugged 60
	wait_for 20 fewer_nics "$nics_before"
	ping -c 2 -W 5 "10.9.0.$peer" > /dev/null || fail "rail 0 died with rail 1"
	step "rail 1 unplugged, rail 0 still carries traffic"
	vm_signal checked-unplug
	vm_wait host.plugged 60
	wait_for 20 nics_are "$nics_before"
	step "rail 1 is back"
fi
vm_signal done
vm_wait "$other.done"
