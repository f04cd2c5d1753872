# Issue 45: tests/hw/run, the hardware acceptance script, run as a user runs it on two machines,
# against the Thunderbolt stand-in (tests/tbsim) in two VMs joined by two 2-lane cables (4 tb
# rails in one link). The production tbrdma.ko, the provider from the build tree (RDMAV_DRIVERS),
# tbrdmad started by hand (this boot has no systemd; tbsim-systemd covers udev and the units),
# tbctl on PATH. Both VMs run the same command with no role: the lower GUID drives, the other
# serves (the control socket on tbr0's address). The unplug and replug are the script's hooks
# (--unplug-cmd / --replug-cmd): they ask the .host script, which QMP-unplugs cable 1 of VM a
# (both VMs lose that XDomain) and plugs it back. Asserted: the script's exit status 0 on both
# sides, the step lines it prints, and that each side's one report file holds the expected
# sections (steps, versions, tb_state, XDomain sysfs, tbctl JSON, the kernel log); that the
# driver's report shows the unplug with traffic across it, and the server's its own view of it.
# By hand, the one-cable path (the unplug takes the link down, the control connection waits idle):
#   VM_ENV=HW_RUN_ONE_CABLE HW_RUN_ONE_CABLE=1 tests/vm/run hw-run
# the host removes cable 1 from both VMs before the stand-in loads, the hooks unplug cable 0.
# The script's own failures are exercised too: a bad option exits 2; a run before the
# stand-in is loaded FAILs setup/thunderbolt, goes no further and exits 1, with a report.
# vm-kernel: 6.1
# vm-count: 2
# vm-rails: 2
# vm-host: yes
# vm-device: edu
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/tbsim.lib"
other=b
[ "$VM_ROLE" = a ] || other=a
RUN=$TBR_TOP/tests/hw/run
S=$VM_SHARED

step "usage errors exit 2"
set +e
"$RUN" --bogus > /tmp/usage.log 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || { cat /tmp/usage.log; fail "an unknown option exited $rc, not 2"; }
grep -q "unknown option '--bogus'" /tmp/usage.log || fail "no clear message for a bad option"
"$RUN" --help | grep -q '^EXIT STATUS' || fail "--help has no EXIT STATUS section"

export PATH=$TBR_TOP/build/tbctl:$PATH

step "no Thunderbolt module yet: the setup fails, exit 1"
set +e
"$RUN" --settle 1 --no-interactive --report-dir /tmp/neg > /tmp/neg.log 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat /tmp/neg.log; fail "a run with no thunderbolt module exited $rc, not 1"; }
grep -q '^FAIL setup/thunderbolt .*not loaded' /tmp/neg.log || { cat /tmp/neg.log; fail "setup/thunderbolt did not FAIL"; }
grep -q '^SKIP connect ' /tmp/neg.log || fail "the run went on after a failed setup"
grep -q '^=== tbctl --json rails ===' /tmp/neg/tbrdma-hw-report-*.txt || fail "no full report from the failed run"

ONE=${HW_RUN_ONE_CABLE:-0}
if [ "$ONE" = 1 ]; then
	vm_signal one-cable
	vm_wait host.one-cable 60
fi
step "the stand-in, tbrdma, tbrdmad ($([ "$ONE" = 1 ] && echo one || echo two) 2-lane cable(s))"
tbsim_load cable_mac=52:54:
mkdir -p /run/tbrdmad
"$TBR_TOP/build/tbrdmad/tbrdmad" --config /dev/null --state-dir /tmp/tbrdmad-state \
	> /tmp/tbrdmad.log 2>&1 &

step "tests/hw/run, both sides, roles by GUID"
hook() { # the hook's text: ask the host for ACTION, wait for its answer
	echo "touch '$S/hook.$1'; for i in \$(seq 600); do [ -e '$S/host.$1' ] && exit 0; sleep 0.1; done; exit 1"
}
mkdir -p "/tmp/rep"
set +e
"$RUN" --settle 120 --peer-wait 180 --unplug-wait 120 --mib 2 --lat-iters 100 --bw-iters 50 \
	--ack-timeout "$PAIR_ACK_TIMEOUT" --unplug-cmd "$(hook unplug)" --replug-cmd "$(hook replug)" \
	--report-dir /tmp/rep > "$S/$VM_ROLE.run.log" 2>&1
rc=$?
set -e
cp "$S/$VM_ROLE.run.log" /tmp/run.log
cp /tmp/rep/tbrdma-hw-report-*.txt "$S/$VM_ROLE.report.txt" 2> /dev/null || true
[ "$rc" = 0 ] || fail "tests/hw/run exited $rc"
R=$(ls /tmp/rep/tbrdma-hw-report-*.txt)
[ "$(echo "$R" | wc -l)" = 1 ] || fail "not one report file: $R"
tail -3 /tmp/run.log | grep -qx "Report: $R" || fail "the run does not say where the report is"
grep -q 'Attach it' /tmp/run.log || fail "the run does not say to attach the report"

step "the report ($VM_ROLE)"
has() { grep -q -- "$1" "$R" || fail "the report has no '$1'"; }
for s in steps 'versions: uname' 'versions: loaded modules (/sys/module)' \
	'versions: tbrdma module (modinfo: the installed file)' 'versions: packages' \
	'tbrdma module parameters (tb_state)' 'thunderbolt module parameters' \
	'sysfs: /sys/bus/thunderbolt/devices' 'tbctl --json status' 'tbctl --json rails' \
	'tbctl --json counters' 'kernel log: thunderbolt, tbrdma, IOMMU'; do
	has "=== $s ==="
done
has 'result: .* 0 failed'
has 'tb_state:driver=registered dir=registered'
grep -Eq '^tbrdma: .*refcnt [0-9]+ ' "$R" || fail "the report has no loaded tbrdma module line"
has 'DEVTYPE=thunderbolt_xdomain'
has 'rx_lanes: 2'
has 'the TEST STAND-IN'
for s in setup/thunderbolt setup/cm setup/xdomains setup/tbrdma setup/services setup/provider \
	setup/tbrdmad setup/fabric setup/rails connect; do
	grep -Eq "^PASS $s " "$R" || fail "no PASS $s in the report"
done
NC=2 NR=4
[ "$ONE" = 0 ] || NC=1 NR=2
grep -Eq "^PASS setup/xdomains +$NC cable\\(s\\)" "$R" || fail "not $NC cable(s) in setup/xdomains"
grep -Eq "^PASS setup/rails +$NR tb rail\\(s\\) up" "$R" || fail "not $NR rails in setup/rails"
grep -Eq '^PASS setup/cm .*software' "$R" || fail "no software CM in setup/cm"
role=$(sed -n 's/^host: .* role: \([a-z]*\) .*/\1/p' "$R")
echo "this VM's role: $role"
echo "$role" > "$S/$VM_ROLE.role"
if [ "$role" = client ] && [ "$ONE" = 1 ]; then
	grep -Eq '^PASS traffic/verified .*2 rail\(s\): ' "$R" || fail "traffic/verified not over 2 rails"
	grep -Eq '^PASS unplug +cable 0-[0-9]+: no cable left: port DOWN, 0 rail\(s\) up; replugged: 1 cable\(s\), 2 rail\(s\) up' "$R" ||
		fail "the unplug line is not the port DOWN and back"
	grep -Eq '^PASS replug/verified .*2 rail\(s\): ' "$R" || fail "replug/verified not over 2 rails"
	grep -q "the serving side's view of the unplug: PASS" "$R" || fail "no view of the unplug from the server"
elif [ "$ONE" = 1 ]; then
	grep -Eq '^PASS unplug/seen +cable 0-[0-9]+ went and came back:.* 0 cable\(s\) 0 rail\(s\) DOWN;.* 1 cable\(s\) 2 rail\(s\) ACTIVE; ' "$R" ||
		fail "the server's view of the unplug"
	grep -Eq '^PASS replug/verified +integrity server ok; 2 rail\(s\): ' "$R" || fail "the server's replug/verified"
elif [ "$role" = client ]; then
	grep -Eq '^PASS traffic/verified .*4 rail\(s\): ' "$R" || fail "traffic/verified not over 4 rails"
	# a figure, or the plain statement that perftest could give none (never "inf us" as one)
	grep -Eq '^PASS traffic/latency +ib_write_lat 64 B: (t_min [0-9.]+ us|[0-9]+ iterations, no figure: perftest could not estimate the CPU clock)' "$R" ||
		fail "no latency"
	grep -Eq '^PASS traffic/bandwidth ' "$R" || fail "no bandwidth sample"
	grep -Eq '^PASS unplug +cable 0-[0-9]+: 2 of 4 rail\(s\) up, port ACTIVE; after the unplug 2 rail\(s\)' "$R" ||
		fail "the unplug line is not one cable with the other's 2 rails carrying"
	grep -Eq '^PASS unplug .*the transfer across it: total [0-9]+ bytes verified' "$R" ||
		fail "no verified transfer across the unplug"
	grep -Eq '^PASS replug/verified .*4 rail\(s\): ' "$R" || fail "replug/verified not over 4 rails"
	grep -q "the serving side's view of the unplug: PASS" "$R" || fail "no view of the unplug from the server"
	[ -e "$S/host.unplug" ] && [ -e "$S/host.replug" ] || fail "the hooks did not drive the host"
else
	grep -Eq '^PASS traffic/verified +integrity server ok; 4 rail\(s\): ' "$R" || fail "the server's rails did not all carry"
	grep -Eq '^PASS unplug/seen +cable 0-[0-9]+ went and came back:.* 1 cable\(s\) 2 rail\(s\) ACTIVE;.* 2 cable\(s\) 4 rail\(s\) ACTIVE; ' "$R" ||
		fail "the server's view of the unplug"
	grep -Eq '^PASS unplug/transfer ' "$R" || fail "no unplug/transfer on the server"
	grep -Eq '^PASS replug/verified +integrity server ok; 4 rail\(s\): ' "$R" || fail "the server's replug/verified"
fi
vm_signal checked
vm_wait "$other.checked" 120
[ "$(cat "$S/a.role" "$S/b.role" | sort | tr '\n' ' ')" = "client server " ] ||
	fail "roles: a $(cat "$S/a.role"), b $(cat "$S/b.role")"
step "done"
