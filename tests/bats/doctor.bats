#!/usr/bin/env bats
# tbctl doctor on the host (issue 47), without the kernel module: a faked host under
# TBCTL_DOCTOR_ROOT (the thunderbolt bus, tbrdma's RDMA device and netdev, the provider's files
# as drivers/thunderbolt and rdma-core lay them out), a fake libibverbs (fake-ibverbs.c, private
# ABI 34, through TBCTL_LIBIBVERBS) and a canned tbrdmad (canned.py, doctor-reply.json). The good
# setup passes every check (exit 0); each broken one gives its FAIL or WARN and hint, in the human
# output and the JSON (docs/json.md "tbctl doctor"); a FAIL exits 1.
bats_require_minimum_version 1.5.0

NAMES='["thunderbolt","peers","service","tunnel","iommu","provider","ports","gids","daemon","fabric","mtu","fabric-key"]'

setup_file() {
	load helpers
	export B
	B=$(mktemp -d /tmp/doctor-bats.XXXXXX)
	cc -shared -fPIC -DPABI=34 -o "$B/libibverbs-fake.so" "$BATS_TEST_DIRNAME/fake-ibverbs.c"
	cc -shared -fPIC -DPROVIDER -o "$B/provider.so" "$BATS_TEST_DIRNAME/fake-ibverbs.c"
	# one canned daemon for the file (canned.py reads its reply file for every request)
	cp "$BATS_TEST_DIRNAME/doctor-reply.json" "$B/reply.json"
	/usr/bin/python3 "$BATS_TEST_DIRNAME/canned.py" "$B/canned.sock" "$B/reply.json" 3>&- &
	echo $! > "$B/canned.pid"
	for _ in $(seq 200); do [ -S "$B/canned.sock" ] && return 0; sleep 0.05; done
	echo "canned.py did not start" >&2
	return 1
}

teardown_file() {
	kill "$(cat "$B/canned.pid")" 2> /dev/null || true
	rm -rf "$B"
}

T=sys/bus/thunderbolt/devices
P=sys/class/infiniband/tbrdma0/ports/1

# put FILE LINE: LINE into $R/FILE
put() {
	mkdir -p "$(dirname "$R/$1")"
	printf '%s\n' "$2" > "$R/$1"
}

# service NAME KEY DRIVER: an XDomain's service bound to DRIVER ("" for none)
service() {
	put "$T/$1/uevent" DEVTYPE=thunderbolt_service
	put "$T/$1/key" "$2"
	if [ -n "$3" ]; then
		mkdir -p "$R/sys/bus/thunderbolt/drivers/$3"
		ln -s "../../../bus/thunderbolt/drivers/$3" "$R/$T/$1/driver"
	fi
}

# a host that has everything: software CM, one peer with our service bound, IOMMU on, the port
# ACTIVE with the fabric address's GID, the provider for libibverbs' ABI 34
good_host() {
	mkdir -p "$R/sys/module/thunderbolt" "$R/sys/module/tbrdma"
	put "$T/domain0/uevent" DEVTYPE=thunderbolt_domain
	put "$T/domain0/security" user
	put "$T/domain0/deauthorization" 1
	put "$T/domain0/iommu_dma_protection" 1
	put "$T/0-0/uevent" DEVTYPE=thunderbolt_device
	put "$T/0-1/uevent" DEVTYPE=thunderbolt_xdomain
	put "$T/0-1/device_name" hostb
	put "$T/0-1/rx_speed" "20.0 Gb/s"
	put "$T/0-1/rx_lanes" 2
	service 0-1.1 tbrdma tbrdma
	put "$P/state" "4: ACTIVE"
	put "$P/phys_state" "5: LinkUp"
	put "$P/gids/0" fe80:0000:0000:0000:5054:00ff:fe00:0001
	put "$P/gid_attrs/types/0" "IB/RoCE v1"
	put "$P/gids/1" 0000:0000:0000:0000:0000:ffff:0a63:0002
	put "$P/gid_attrs/types/1" "RoCE v2"
	put "$P/gids/2" 0000:0000:0000:0000:0000:0000:0000:0000
	put "$P/gids/3" 0000:0000:0000:0000:0000:ffff:0a63:0002
	put "$P/gid_attrs/types/3" "IB/RoCE v1"
	put sys/class/net/tbr0/mtu 4082
	put etc/libibverbs.d/tbrdma.driver "driver $R/usr/lib/libibverbs/libtbrdma"
	mkdir -p "$R/usr/lib/libibverbs"
	cp "$B/provider.so" "$R/usr/lib/libibverbs/libtbrdma-rdmav34.so"
}

# canned [JQ]: what the canned daemon answers from now on: doctor-reply.json changed by JQ
canned() {
	jq "${1:-.}" "$BATS_TEST_DIRNAME/doctor-reply.json" > "$B/reply.json.new"
	mv "$B/reply.json.new" "$B/reply.json"
}

setup() {
	load helpers
	load_libs
	R=$(mktemp -d /tmp/doctor-bats.XXXXXX)
	export TBCTL_DOCTOR_ROOT=$R TBCTL_LIBIBVERBS=$B/libibverbs-fake.so FAKE_IBV_DEVICES=tbrdma0
	export TBCTL_SOCKET=$B/canned.sock NO_COLOR=1
	unset RDMAV_DRIVERS
	good_host
	canned
}

teardown() {
	rm -rf "$R"
}

# line CHECK: the human output's line of CHECK (and its hint line after it, when it has one)
line() {
	grep -E "^(PASS|WARN|FAIL|SKIP)  $1 " <<< "$output"
}
hint() {
	grep -A1 -E "^(PASS|WARN|FAIL|SKIP)  $1 " <<< "$output" | sed -n '2s/^ *hint: //p'
}
# json CHECK: its object of the --json output
json() {
	"$TBCTL" --json doctor | jq -c --arg n "$1" '.checks[] | select(.name == $n)'
}

@test "doctor: a good setup, every check PASS in order, aligned, exit 0" {
	run "$TBCTL" doctor
	assert_success
	[ "${#lines[@]}" = 13 ]
	[ "$(sed -n '1,12p' <<< "$output" | grep -c '^PASS  ')" = 12 ]
	# the names in order, the messages in one column
	[ "$(sed -n '1,12p' <<< "$output" | awk '{ print $2 }' | jq -Rsc 'split("\n")[:-1]')" = "$NAMES" ]
	[ "$(sed -n '1,12p' <<< "$output" | sed -E 's/^(PASS  [a-z-]+ +).*/\1/' | awk '{ print length }' | sort -u)" = 19 ]
	refute_output --partial hint:
	assert_line "PASS  thunderbolt  loaded; domain0: software connection manager, security user"
	assert_line "PASS  peers        1 XDomain peer: 0-1 (hostb, 2 x 20.0 Gb/s)"
	assert_line "PASS  service      0-1.1 bound to tbrdma"
	assert_line "PASS  tunnel       thunderbolt-net bound to no peer"
	assert_line "PASS  iommu        domain0: IOMMU DMA protection on"
	assert_line "PASS  provider     tbrdma0 opens through libibverbs (provider libtbrdma-rdmav34.so, private ABI 34)"
	assert_line "PASS  ports        tbrdma0 port 1 ACTIVE (LinkUp)"
	assert_line "PASS  gids         tbrdma0 port 1: GID 1 ::ffff:10.99.0.2 (RoCE v2), GID 3 ::ffff:10.99.0.2 (IB/RoCE v1)"
	assert_line --regexp "^PASS  daemon       tbrdmad 0.1.0 \(pid 4242, up 1min 15s\) at .*: 1 device, links 1/1 up, rails 2/2 up$"
	assert_line "PASS  fabric       master 5054000000000002, epoch 3, 2 hosts, 1 link; tbr0 has 10.99.0.2"
	assert_line "PASS  mtu          tbrdma0 link 1: frames of 4144 bytes; tbr0 MTU 4082"
	assert_line "PASS  fabric-key   fabric key configured: every sweep datagram authenticated"
	assert_line "12 checks: 12 passed, 0 warnings, 0 failed, 0 skipped."
	run "$TBCTL" --no-legend doctor
	[ "${#lines[@]}" = 12 ]
}

@test "doctor --json: a good setup: schema 1, the checks in order, all pass, hints null" {
	run --separate-stderr "$TBCTL" --json doctor
	assert_success
	echo "$output" | jq -e '.schema == 1 and .ok == true and .method == "doctor"'
	echo "$output" | jq -e --argjson n "$NAMES" '[.checks[].name] == $n'
	echo "$output" | jq -e 'all(.checks[]; .result == "pass" and .hint == null and (.message | length) > 0)'
	echo "$output" | jq -e '.summary == {"pass": 12, "warn": 0, "fail": 0, "skip": 0}'
	# same as doctor --json
	run --separate-stderr "$TBCTL" doctor --json
	echo "$output" | jq -e '.summary.pass == 12'
	run "$TBCTL" doctor extra
	assert_failure 2
}

@test "doctor: thunderbolt module missing: FAIL with modprobe, the bus checks SKIP, exit 1" {
	rm -rf "${R:?}/sys/module/thunderbolt"
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  thunderbolt  the thunderbolt module is not loaded"
	[ "$(hint thunderbolt)" = "modprobe thunderbolt (a kernel with CONFIG_USB4)" ]
	line peers | grep -q '^SKIP  peers        needs the thunderbolt module'
	line service | grep -q '^SKIP'
	line tunnel | grep -q '^SKIP'
	line iommu | grep -q '^SKIP'
	line provider | grep -q '^PASS'
	assert_line "12 checks: 7 passed, 0 warnings, 1 failed, 4 skipped."
	run -1 --separate-stderr "$TBCTL" --json doctor
	echo "$output" | jq -e '.checks[0] | .result == "fail" and (.hint | test("^modprobe thunderbolt"))'
	echo "$output" | jq -e '[.checks[] | select(.result == "skip") | .name] == ["peers","service","tunnel","iommu"]'
	echo "$output" | jq -e '.summary == {"pass": 7, "warn": 0, "fail": 1, "skip": 4}'
	# loaded without a host controller
	mkdir -p "$R/sys/module/thunderbolt"
	rm -rf "${R:?}/$T/domain0"
	run "$TBCTL" doctor
	assert_failure 1
	line thunderbolt | grep -q 'FAIL  thunderbolt  thunderbolt is loaded but found no host controller (no domain)'
	hint thunderbolt | grep -q 'firmware setup'
}

@test "doctor: provider ABI mismatch: FAIL names both ABIs, hint rebuild" {
	mv "$R/usr/lib/libibverbs/libtbrdma-rdmav34.so" "$R/usr/lib/libibverbs/libtbrdma-rdmav57.so"
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  provider     provider ABI mismatch: libtbrdma-rdmav57.so is built for another libibverbs; this one (private ABI 34) loads libtbrdma-rdmav34.so"
	[ "$(hint provider)" = "rebuild and reinstall the provider against this libibverbs (make install)" ]
	[ "$(grep -c '^FAIL' <<< "$output")" = 1 ]
	json provider | jq -e '.result == "fail" and (.message | test("ABI mismatch"))'
	# no provider at all
	rm -f "$R/etc/libibverbs.d/tbrdma.driver"
	run "$TBCTL" doctor
	assert_failure 1
	line provider | grep -q 'FAIL  provider     no /etc/libibverbs.d/tbrdma.driver'
	hint provider | grep -q 'ibverbs-provider-tbrdma'
}

@test "doctor: no device: libibverbs lists no tbrdma device; with the kernel's, without it" {
	export FAKE_IBV_DEVICES="mlx5_0"
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  provider     ibv_get_device_list shows no tbrdma0 although the kernel has it: the provider loads but does not match the device"
	hint provider | grep -q '^rebuild and reinstall the provider'
	rm -rf "${R:?}/sys/class/infiniband"
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  provider     ibv_get_device_list shows no tbrdma device: the kernel has none (libtbrdma-rdmav34.so present)"
	[ "$(hint provider)" = "modprobe tbrdma" ]
	assert_line "FAIL  ports        no tbrdma RDMA device"
	[ "$(hint ports)" = "modprobe tbrdma" ]
	line gids | grep -q '^SKIP'
	json ports | jq -e '.result == "fail" and .hint == "modprobe tbrdma"'
}

@test "doctor: no peer: FAIL says plug the cable; service and tunnel SKIP" {
	rm -rf "${R:?}/$T/0-1" "${R:?}/$T/0-1.1"
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  peers        no XDomain: no host at the other end of a Thunderbolt/USB4 cable"
	hint peers | grep -q '^plug the cable into the other host'
	line service | grep -q '^SKIP  service      needs an XDomain peer'
	line tunnel | grep -q '^SKIP'
	json peers | jq -e '.result == "fail" and (.hint | test("plug the cable"))'
}

@test "doctor: the peer without tbrdma, and our service unbound: FAIL with the fix" {
	rm -rf "${R:?}/$T/0-1.1"
	service 0-1.1 network ""
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  service      0-1: the peer publishes no tbrdma service"
	[ "$(hint service)" = "load tbrdma on the peer host (modprobe tbrdma)" ]
	rm -rf "${R:?}/$T/0-1.1" "${R:?}/sys/module/tbrdma"
	service 0-1.1 tbrdma ""
	run "$TBCTL" doctor
	assert_line "FAIL  service      0-1.1 (tbrdma) unbound: tbrdma is not loaded here"
	hint service | grep -q '^modprobe tbrdma'
}

@test "doctor: firmware CM with thunderbolt-net holding the tunnel: FAIL; refused it: WARN; software CM: PASS; unknown: WARN" {
	put "$T/domain0/boot_acl" ",,,,,,,,,,,,,,,"
	put "$T/domain0/deauthorization" 0
	service 0-1.2 network thunderbolt-net
	put "$T/0-1.2/net/thunderbolt0/carrier" 1
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "PASS  thunderbolt  loaded; domain0: firmware connection manager (boot_acl), security user"
	assert_line "FAIL  tunnel       thunderbolt-net holds 0-1's one DMA tunnel (firmware connection manager)"
	[ "$(hint tunnel)" = "modprobe -r thunderbolt_net and blacklist it, or run tbrdma's eth backend over thunderbolt0 (docs/thunderbolt.md)" ]
	[ "$(grep -c '^FAIL' <<< "$output")" = 1 ]
	json tunnel | jq -e '.result == "fail" and (.hint | test("modprobe -r thunderbolt_net"))'
	# bound second, the firmware refused its tunnel (no carrier): tbrdma's, a warning, exit 0
	put "$T/0-1.2/net/thunderbolt0/carrier" 0
	run "$TBCTL" doctor
	assert_success
	assert_line "WARN  tunnel       thunderbolt-net bound to 0-1 without a tunnel (no carrier): it takes the one DMA tunnel if tbrdma lets go"
	json tunnel | jq -e '.result == "warn" and (.hint | test("modprobe -r thunderbolt_net"))'
	# the firmware CM without thunderbolt-net: tbrdma has the tunnel
	rm -rf "${R:?}/$T/0-1.2"
	run "$TBCTL" doctor
	assert_success
	assert_line "PASS  tunnel       thunderbolt-net bound to no peer (the firmware connection manager's one DMA tunnel per peer is tbrdma's)"
	# the software CM: a tunnel each
	rm -f "$R/$T/domain0/boot_acl"
	put "$T/domain0/deauthorization" 1
	service 0-1.2 network thunderbolt-net
	run "$TBCTL" doctor
	assert_success
	assert_line "PASS  tunnel       thunderbolt-net bound to 0-1 too: the software connection manager gives each its own tunnel"
	# a CM sysfs does not tell (security none): a warning, exit 0
	put "$T/domain0/deauthorization" 0
	put "$T/domain0/security" none
	run "$TBCTL" doctor
	assert_success
	line thunderbolt | grep -q 'connection manager not told by sysfs (no boot_acl, deauthorization 0), security none'
	line tunnel | grep -q '^WARN  tunnel       thunderbolt-net bound to 0-1: under a firmware connection manager it holds the one DMA tunnel'
}

@test "doctor: daemon down: FAIL with systemctl start; fabric, mtu, fabric-key SKIP" {
	export TBCTL_SOCKET=$R/tbrdmad.sock
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  daemon       cannot reach tbrdmad at $TBCTL_SOCKET: connect: No such file or directory"
	[ "$(hint daemon)" = "systemctl start tbrdmad (journalctl -u tbrdmad says why it stopped)" ]
	line fabric | grep -q '^SKIP'
	assert_line "SKIP  mtu          needs tbrdmad"
	line fabric-key | grep -q '^SKIP'
	# the GIDs without the fabric's address: an IP GID is enough
	assert_line "PASS  gids         tbrdma0 port 1: 3 GIDs"
	[ "$(grep -c '^FAIL' <<< "$output")" = 1 ]
	# nothing on stderr: the failure is a check's line
	run --separate-stderr "$TBCTL" doctor
	[ -z "$stderr" ]
	run -1 --separate-stderr "$TBCTL" --json doctor
	echo "$output" | jq -e '.checks[] | select(.name == "daemon") | .result == "fail" and (.message | test("cannot reach tbrdmad"))'
	echo "$output" | jq -e '.summary.fail == 1 and .summary.skip == 3'
}

@test "doctor: the real tbrdmad without the kernel module: daemon FAIL, modprobe tbrdma" {
	export TBCTL_SOCKET=$R/tbrdmad.sock
	start_daemon "$R"
	run "$TBCTL" doctor
	stop_daemon "$R"
	assert_failure 1
	line daemon | grep -qE '^FAIL  daemon       tbrdmad [0-9.]+ \(pid [0-9]+\) runs without the kernel.s state: '
	[ "$(hint daemon)" = "modprobe tbrdma" ]
	line fabric | grep -q '^FAIL  fabric       the sweep has no device'
}

@test "doctor: port DOWN: FAIL, no rail up; mtu SKIP (no link up)" {
	put "$P/state" "1: DOWN"
	put "$P/phys_state" "3: Disabled"
	canned '.by_method.links.links[0].state = "down" | .by_method.status.summary.links_up = 0 | .by_method.status.summary.rails_up = 0'
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  ports        tbrdma0 port 1 DOWN (Disabled): no rail up"
	[ "$(hint ports)" = "tbctl links and tbctl rails say which link or rail is down (cable, the peer's tbrdma)" ]
	assert_line "SKIP  mtu          needs a link up (tbrdmad's links)"
	json ports | jq -e '.result == "fail" and (.message | test("DOWN"))'
}

@test "doctor: warnings only (no IOMMU, no fabric key, small frames, no sweep): exit 0" {
	put "$T/domain0/iommu_dma_protection" 0
	canned '.by_method.fabric.authenticated = false | .by_method.links.links[0].max_frame = 1448'
	run "$TBCTL" doctor
	assert_success
	assert_line "WARN  iommu        domain0: no IOMMU DMA protection: a peer's DMA is not confined to the buffers given to it"
	hint iommu | grep -q 'intel_iommu=on'
	assert_line "WARN  fabric-key   no fabric key: any host on a cable can join the fabric and take part in the sweep"
	[ "$(hint fabric-key)" = "FabricKeyFile= in /etc/tbrdmad.conf, the same key on every host (tbrdmad.conf(5))" ]
	assert_line "WARN  mtu          tbrdma0 link 1: frames of 1448 bytes (less than a page of payload); tbr0 MTU 4082"
	hint mtu | grep -q 'MTU to 4168'
	assert_line "12 checks: 9 passed, 3 warnings, 0 failed, 0 skipped."
	run --separate-stderr "$TBCTL" --json doctor
	assert_success
	echo "$output" | jq -e '[.checks[] | select(.result == "warn") | .name] == ["iommu","mtu","fabric-key"]'
	# Sweep=no: the fabric method is unavailable
	canned '.by_method.fabric = {"ok": false, "error": {"code": "unavailable", "message": "the sweep is disabled (Sweep=no)"}}'
	run "$TBCTL" doctor
	assert_success
	assert_line "WARN  fabric       no sweep: the sweep is disabled (Sweep=no)"
	line fabric-key | grep -q '^SKIP'
	# no master yet
	canned '.by_method.fabric.master = null | .by_method.fabric.hosts = [{"guid": "5054000000000001"}]'
	run "$TBCTL" doctor
	assert_failure 1
	assert_line "FAIL  fabric       no master elected (1 host known)"
}
