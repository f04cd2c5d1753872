# Issue 12, M3: two VMs joined by two "cables"
# (virtio NICs) through the Thunderbolt stand-in: two XDomains (ports 1 and 3) to the same host,
# both cables' rails (2 each) join ONE link (4 rails up). The host unplugs cable 1 of VM a by QMP
# (device_del) during a verified transfer: that XDomain goes away on both sides (a: the NIC is gone;
# b: the link's keepalives stop), its rails go down, the transfer completes with every byte right
# over the other cable; then the last cable is unplugged too: the port goes DOWN; both replugged:
# 4 rails and ACTIVE again with no command typed.
# vm-kernel: 6.1
# vm-count: 2
# vm-rails: 2
# vm-host: yes
# vm-device: edu
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a
xds() { local d n=0; for d in "$TBD"/0-[1-9]*; do [ -e "$d" ] && [[ $d != *.* ]] && n=$((n + 1)); done; echo $n; }
xds_are() { [ "$(xds)" = "$1" ]; }
int_listening() { [ -n "$(ss -ltnH 'sport = :18600')" ]; }
port_is() { grep -q "$1" /sys/class/infiniband/tbrdma0/ports/1/state; }

step "load, two cables"
tbsim_load cable_mac=52:54:
wait_for 90 xds_are 2
[ -d "$TBD/0-1" ] && [ -d "$TBD/0-3" ] || fail "XDomains: $(ls $TBD)"
[ "$(cat "$TBD/0-1/unique_id")" = "$(cat "$TBD/0-3/unique_id")" ] || fail "two cables, two hosts?"
tb_up 4
"$CTL" links tbrdma0 | grep -c '^  rail ' | grep -qx 4 || fail "not 4 rails in one link"
vm_signal up
vm_wait "$other.up" 120

step "unplug cable 1 of a during a verified transfer"
PROG=$TBR_TOP/build/progs/integrity
if [ "$VM_ROLE" = b ]; then
	"$PROG" -d tbrdma0 -g "$GID" --mib 64 server > /tmp/int.log 2>&1 &
	srv=$!
	wait_for 20 int_listening
	vm_signal listening
	wait "$srv" || { cat /tmp/int.log; fail "integrity server"; }
else
	vm_wait b.listening 60
	"$PROG" -d tbrdma0 -g "$GID" --mib 64 client "$PEER" > /tmp/int.log 2>&1 &
	cli=$!
	vm_signal transfer
	wait "$cli" || { cat /tmp/int.log; "$CTL" links; fail "integrity client"; }
fi
cat /tmp/int.log | tail -3
vm_wait host.unplugged1 60
wait_for 60 xds_are 1
[ -d "$TBD/0-1" ] || fail "cable 0 (port 1) gone too: $(ls $TBD)"
wait_for 30 rails_up_is 2
dmesg | grep -E 'tbsim: (cable|link)|rail\(s\) to .* down' || true
vm_signal checked1
vm_wait "$other.checked1" 60

step "unplug the last cable: port DOWN"
vm_wait host.unplugged2 60
wait_for 60 xds_are 0
wait_for 30 port_is DOWN
vm_signal checked2
vm_wait "$other.checked2" 60

step "replug both: back with no command"
vm_wait host.replugged 60
wait_for 90 xds_are 2
wait_for 90 rails_up_is 4
wait_for 30 port_is ACTIVE
ping -c 2 -W 5 "$PEER" > /dev/null || fail "no IP after the replug"
"$CTL" links tbrdma0
vm_signal finished
vm_wait "$other.finished" 60
