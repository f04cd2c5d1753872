# The tb rail backend without a Thunderbolt controller (QEMU has none): thunderbolt.ko and
# tbrdma.ko load together, our tb_service_driver is registered on the thunderbolt bus, our XDomain
# property directory is registered (tb_state), the tbsvc modalias is in the module, thunderbolt-net
# stays loadable next to us (independent services), and unload is clean, twice (the property
# directory key is free again after rmmod). Harness: any kernel WARNING/BUG fails the test.
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
KO=$TBR_KO_DIR/tbrdma/tbrdma.ko

tb_refs() { awk '$1 == "thunderbolt" { print $3 }' /proc/modules; }

step "modinfo: tbsvc alias and dependency"
modinfo -F alias "$KO" | grep -qx 'tbsvc:ktbrdmap00000001v\*r\*' || fail "no tbsvc alias: $(modinfo -F alias "$KO")"
modinfo -F depends "$KO" | tr ',' '\n' | grep -qx thunderbolt || fail "thunderbolt not a dependency"

for round in 1 2; do
	step "round $round: load"
	dmesg -C
	tbr_load
	grep -q '^thunderbolt ' /proc/modules || fail "thunderbolt.ko not loaded"
	awk '$1 == "thunderbolt" { print $4 }' /proc/modules | grep -q tbrdma ||
		fail "thunderbolt not used by tbrdma: $(grep '^thunderbolt ' /proc/modules)"
	[ "$(tb_refs)" -ge 1 ] || fail "thunderbolt refcount $(tb_refs)"
	[ -d /sys/bus/thunderbolt/drivers/tbrdma ] || fail "no /sys/bus/thunderbolt/drivers/tbrdma"
	bound=$(find /sys/bus/thunderbolt/drivers/tbrdma/ -maxdepth 1 -type l ! -name module)
	[ -z "$bound" ] || fail "bound to a service without hardware? $bound"
	state=$(cat /sys/module/tbrdma/parameters/tb_state)
	echo "tb_state: $state"
	for want in driver=registered dir=registered key=tbrdma protocol=1.1.1 nego=2.2 services=0 rails=0; do
		grep -qw -- "$want" <<< "$state" || fail "tb_state lacks $want: $state"
	done
	klog_has 'tbrdma: tb: service driver registered, XDomain property directory "tbrdma"' ||
		fail "no registration line in dmesg"
	klog_has 'Thunderbolt backend not available' && fail "tb backend failed"
	rdma dev show | grep -q tbrdma0 || fail "tbrdma0 missing"

	step "round $round: thunderbolt-net next to us"
	modprobe thunderbolt_net || modprobe thunderbolt-net || fail "thunderbolt-net does not load"
	[ -d /sys/bus/thunderbolt/drivers/thunderbolt-net ] || fail "no thunderbolt-net driver"
	[ -d /sys/bus/thunderbolt/drivers/tbrdma ] || fail "tbrdma driver gone"
	if [ "$round" = 1 ]; then
		rmmod tbrdma || fail "rmmod tbrdma with thunderbolt-net loaded"
		[ -d /sys/bus/thunderbolt/drivers/thunderbolt-net ] || fail "thunderbolt-net lost"
		rmmod thunderbolt_net || fail "rmmod thunderbolt_net"
	else
		rmmod thunderbolt_net || fail "rmmod thunderbolt_net"
		rmmod tbrdma || fail "rmmod tbrdma"
	fi
	[ -d /sys/bus/thunderbolt/drivers/tbrdma ] && fail "driver left after rmmod"
	[ "$(tb_refs)" = 0 ] || fail "thunderbolt refcount $(tb_refs) after rmmod"
	rmmod thunderbolt || fail "rmmod thunderbolt"
done
echo "tb-load: ok on $(uname -r)"
