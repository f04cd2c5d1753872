# Issue 45, item 2: the firmware connection manager (ICM) as drivers/thunderbolt/icm.c runs it on
# Titan Ridge and later (the stand-in's fw_cm=2: XDomains added with link 0, the remote UUID from
# the firmware so needs_uuid is false; one DMA tunnel per XDomain, a second tb_xdomain_enable_paths
# gets -EOPNOTSUPP and the core's "only one tunnel is supported by the firmware"). Two VMs, one
# 2-lane cable, one boot:
#  1. tbrdma recognises the ICM although xd->link is 0 and asks for 1 rail; 1 rail up on both ends,
#     ib_write_bw and a verified transfer (the integrity program);
#  2. Debian's thunderbolt-net on the same XDomain, tbrdma holding the tunnel: its enable_paths is
#     refused (the core's line, its "failed to enable DMA paths"), tbrdma's rail goes on carrying;
#  3. thunderbolt-net holding the tunnel, tbrdma second: tbrdma says once why it has no rail, IP
#     over thunderbolt0 goes on; thunderbolt-net unloaded, tbrdma takes the tunnel by itself;
#     tbrdma unloads at once; `tbctl doctor` says so: the firmware CM told by the domain's boot_acl,
#     its tunnel check FAIL with the hint (thunderbolt-net holding the tunnel), PASS once free;
#  4. one host ICM whose CM tbrdma cannot recognise (fw_cm_needs_uuid, test only), the other the
#     software CM: both ask for 2 rails, the ICM end keeps the 1 it got (-EOPNOTSUPP on rail 1),
#     its READY says 1 and the software-CM end tears its second rail down: 1 rail on both ends,
#     ib_write_bw across;
#  5. a second cable to the same host (the host script plugs it into both VMs): the ICM removes the
#     first cable's XDomain (same remote UUID, another port), tbrdma comes up on the second cable's.
# vm-kernel: 6.1
# vm-count: 2
# vm-rails: 1
# vm-host: yes
# vm-device: edu
# vm-timeout: 480
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/eth.lib"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a
PROG=$TBR_TOP/build/progs/integrity
ST=/sys/module/tbrdma/parameters/tb_state
PATHS=/sys/module/thunderbolt/parameters/paths
TBCTL=$TBR_TOP/build/tbctl/tbctl	# (no tbrdmad here: doctor's daemon check FAILs too)
npaths() { grep -c . "$PATHS"; }
# integrity TAG MIB: a verified transfer over tbrdma0 (b serves, a sends and checks)
integrity() {
	if [ "$VM_ROLE" = b ]; then
		"$PROG" -d tbrdma0 -g "$GID" --timeout "$PAIR_ACK_TIMEOUT" --mib "$2" server > "/tmp/$1.log" 2>&1 &
		local srv=$!
		wait_for 20 int_listening
		vm_signal "$1.listening"
		wait "$srv" || { cat "/tmp/$1.log"; "$CTL" links; fail "integrity server ($1)"; }
	else
		vm_wait "b.$1.listening" 60
		"$PROG" -d tbrdma0 -g "$GID" --timeout "$PAIR_ACK_TIMEOUT" --mib "$2" client "$PEER" > "/tmp/$1.log" 2>&1 ||
			{ cat "/tmp/$1.log"; "$CTL" links; fail "integrity client ($1)"; }
	fi
	tail -2 "/tmp/$1.log"
	vm_signal "$1.done"
	vm_wait "$other.$1.done" 60
}
sync_step() { vm_signal "$1"; vm_wait "$other.$1" 120; }
xds() { local d n=0; for d in "$TBD"/0-[1-9]*; do [ -e "$d" ] && [[ $d != *.* ]] && n=$((n + 1)); done; echo $n; }

step "1. Titan Ridge ICM (fw_cm=2): link 0, one rail, verified traffic"
tbsim_load cable_mac=52:54: fw_cm=2
klog_has 'tbsim: domain .*, firmware (icm_tr: Titan Ridge and later) connection manager' ||
	fail "the stand-in is not in icm_tr mode"
[ "$(cat $TBD/domain0/security)" = user ] || fail "security $(cat $TBD/domain0/security)"
# as icm.c on Titan Ridge: 16 boot ACL entries (domain.c shows boot_acl only for such a CM)
[ "$(cat $TBD/domain0/boot_acl)" = ",,,,,,,,,,,,,,," ] || fail "boot_acl $(cat $TBD/domain0/boot_acl)"
wait_for 60 xd_dev
XD=$(xd_dev)
[ "$(cat "$XD/rx_lanes")" = 2 ] || fail "lanes $(cat "$XD/rx_lanes"): a 2-lane link would make 2 rails under a software CM"
tb_up 1 icm
# before the ICM was recognised from needs_uuid, link 0 read as software CM: "asking for 2 rail(s)"
klog_has 'tbrdma: peer .*, 20 Gb/s x2 lanes, firmware CM: asking for 1 rail(s)' ||
	fail "ICM with link 0 not recognised: $(dmesg | grep 'tbrdma: peer')"
klog_has 'tbrdma: 1 rail(s) to .*paths on' || fail "no rails line"
! klog_has 'only one tunnel is supported by the firmware' || fail "a second tunnel was asked for"
grep -q 'services=1 rails=1' $ST || fail "tb_state: $(cat $ST)"
[ "$(npaths)" = 1 ] || fail "not 1 path pair: $(cat $PATHS)"
perf_pair w1 ib_write_bw -s 65536 -n 100
integrity int1 16

step "2. thunderbolt-net second on the XDomain: the firmware refuses its tunnel, tbrdma carries on"
modprobe thunderbolt_net || fail "modprobe thunderbolt_net"
wait_for 30 svc_of "$XD" network
NSVC=$(svc_of "$XD" network)
wait_for 30 test -e "$NSVC/driver"
wait_for 60 test -e /sys/class/net/thunderbolt0
ip link set thunderbolt0 up
# its login succeeds (XDomain requests need no tunnel), then its enable_paths is refused
wait_for 60 klog_has 'failed to enable DMA paths'
dmesg | grep -E 'only one tunnel|failed to enable DMA paths|tbrdma: (no rails|the firmware)'
klog_has 'thunderbolt .*: only one tunnel is supported by the firmware' ||
	fail "the core's line for the refused tunnel is missing"
[ "$(cat /sys/class/net/thunderbolt0/carrier)" = 0 ] || fail "thunderbolt0 has carrier without a tunnel"
[ "$(npaths)" = 1 ] || fail "not only tbrdma's path pair: $(cat $PATHS)"
grep -q 'services=1 rails=1' $ST || fail "tbrdma lost its rail: $(cat $ST)"
doctor_expect tunnel warn "^thunderbolt-net bound to 0-1 without a tunnel \\(no carrier\\): it takes the one DMA tunnel if tbrdma lets go$" \
	'^modprobe -r thunderbolt_net and blacklist it'
perf_pair w2 ib_write_bw -s 65536 -n 100

step "3. thunderbolt-net holds the tunnel, tbrdma second: one clear line, no rail, no hang; then it is free"
sync_step unload3
timeout 30 rmmod tbrdma || fail "rmmod tbrdma"
rmmod thunderbolt_net || fail "rmmod thunderbolt_net"
[ "$(npaths)" = 0 ] || fail "a path pair left behind: $(cat $PATHS)"
sync_step unloaded3
modprobe thunderbolt_net || fail "modprobe thunderbolt_net"
tn_up
ping -c 2 -W 5 "$TN_PEER" > /dev/null || fail "no IP over thunderbolt0"
sync_step tn3
insmod "$TBR_KO_DIR/tbrdma/tbrdma.ko" || fail "insmod tbrdma"
wait_for 60 klog_has 'tbrdma: no rails: the firmware connection manager allows one DMA tunnel per XDomain and another service of 0-1 holds it'
dmesg | grep -E 'tbrdma: (no rails|peer|rail setup)'
# said once: the peer's HELLO retries and READYs must not repeat it (nor retry into the core's warning)
sleep 5
[ "$(dmesg | grep -c 'tbrdma: no rails:')" = 1 ] || fail "the no-rails line is not said exactly once"
! klog_has 'tbrdma: rail setup failed' || fail "a bare 'rail setup failed' instead of the reason"
grep -q 'services=1 rails=0' $ST || fail "tb_state: $(cat $ST)"
[ "$(npaths)" = 1 ] || fail "not only thunderbolt-net's path pair: $(cat $PATHS)"
ping -c 2 -W 5 "$TN_PEER" > /dev/null || fail "IP over thunderbolt0 stopped when tbrdma came"
doctor_expect thunderbolt pass '^loaded; domain0: firmware connection manager \(boot_acl\), security user$' ''
doctor_check tunnel fail "^thunderbolt-net holds 0-1's one DMA tunnel \\(firmware connection manager\\)$" \
	'^modprobe -r thunderbolt_net and blacklist it, or run tbrdma.s eth backend over thunderbolt0'
sync_step checked3
# thunderbolt-net lets the tunnel go: tbrdma, which waits for xd->ntunnels to be 0, takes it
rmmod thunderbolt_net || fail "rmmod thunderbolt_net"
tb_up 1 freed
doctor_expect tunnel pass "^thunderbolt-net bound to no peer \\(the firmware connection manager's one DMA tunnel per peer is tbrdma's\\)$" ''
[ "$(dmesg | grep -c 'tbrdma: no rails:')" = 1 ] || fail "the no-rails line is not said exactly once"
perf_pair w3 ib_write_bw -s 65536 -n 50
timeout 30 rmmod tbrdma || fail "rmmod tbrdma hangs or fails"
sync_step done3

step "4. ICM not recognised at probe on a, software CM on b: -EOPNOTSUPP on rail 1, READY binds 1 rail"
rmmod thunderbolt || fail "rmmod of the stand-in"
sync_step unloaded4
N4=$(dmesg | wc -l)
klog4_has() { dmesg | tail -n +$((N4 + 1)) | grep -q -- "$1"; }
if [ "$VM_ROLE" = a ]; then
	tbsim_load cable_mac=52:54: fw_cm=2 fw_cm_needs_uuid=1
else
	tbsim_load cable_mac=52:54:
fi
tb_up 1 fallback
dmesg | tail -n +$((N4 + 1)) | grep -E 'tbrdma: (peer|[0-9] rail|the firmware)'
klog4_has 'tbrdma: peer .*, software CM: asking for 2 rail(s)' || fail "the test knob did not hide the ICM"
if [ "$VM_ROLE" = a ]; then
	klog4_has 'tbrdma: the firmware connection manager refused a DMA tunnel for rail 1 (one per XDomain; not recognised at probe): going on with 1 rail(s)' ||
		fail "no fallback line on the ICM end"
else
	klog4_has 'tbrdma: peer .* has 1 rail(s) up, we have 2: going on with 1' ||
		fail "the software-CM end did not bind to the peer's READY"
fi
grep -q 'services=1 rails=1' $ST || fail "tb_state: $(cat $ST)"
[ "$(npaths)" = 1 ] || fail "not 1 path pair: $(cat $PATHS)"
"$CTL" links tbrdma0
perf_pair w4 ib_write_bw -s 65536 -n 100

step "5. a second cable to the same host: the firmware CM removes the first cable's XDomain"
timeout 30 rmmod tbrdma || fail "rmmod tbrdma"
rmmod thunderbolt || fail "rmmod of the stand-in"
sync_step unloaded5
N5=$(dmesg | wc -l)
klog5_has() { dmesg | tail -n +$((N5 + 1)) | grep -q -- "$1"; }
tbsim_load cable_mac=52:54: fw_cm=2
tb_up 1 cable0
[ "$(xds)" = 1 ] && [ -d "$TBD/0-1" ] || fail "XDomains before the second cable: $(ls $TBD)"
sync_step plug5	# the host plugs a second cable (port 3) into both VMs
vm_wait host.plugged 60
wait_for 60 klog5_has 'tbsim: firmware CM: the host behind XDomain 0-1 connects again on port 3: 0-1 removed'
wait_for 30 test ! -e "$TBD/0-1"
wait_for 60 test -d "$TBD/0-3"
klog5_has 'thunderbolt 0-1: host disconnected' || fail "no 'host disconnected' for 0-1"
wait_for 60 klog5_has 'tbrdma 0-3\.[0-9]*: tbrdma: 1 rail(s) to'
wait_for 60 rails_up_is 1
dmesg | tail -n +$((N5 + 1)) | grep -E 'tbsim: (cable|firmware)|host disconnected|tbrdma: [0-9] rail'
sync_step moved5
ping -c 2 -W 5 "$PEER" > /dev/null || fail "no IP over the second cable's rail"
perf_pair w5 ib_write_bw -s 65536 -n 100
# the first cable's link is still up, but the firmware reported it once: no XDomain comes back there
[ "$(xds)" = 1 ] && [ -d "$TBD/0-3" ] || fail "XDomains after the replacement: $(ls $TBD)"
sync_step finished
