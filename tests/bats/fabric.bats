#!/usr/bin/env bats
# The sweep's host-side surface without the kernel module (docs/sweep.md): `tbctl fabric` and the
# "fabric" method, Sweep=no, the sweep config keys, and the persisted guid2addr map: a valid one
# is loaded, a corrupt one is refused with an error, set aside as .corrupt, and the daemon lives.
bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_libs
	D=$(mktemp -d /tmp/fabric-bats.XXXXXX)
	chmod 755 "$D"
	export TBCTL_SOCKET=$D/tbrdmad.sock
}

teardown() {
	stop_daemon "$D"
	rm -rf "$D"
}

@test "fabric: empty fabric with the module absent, human and --json" {
	start_daemon "$D"
	run "$TBCTL" fabric
	assert_success
	assert_line --partial "pool 10.99.0.0/24, 0 host(s), 0 link(s)"
	run "$TBCTL" fabric --json
	assert_success
	echo "$output" | jq -e '.ok and .method == "fabric" and .role == "none" and .master == null
		and .hosts == [] and .links == [] and .addresses == [] and .epoch == 0'
	# everyone may read it
	run "${NOBODY[@]}" "$TBCTL" --socket "$D/tbrdmad.sock" fabric --json
	assert_success
	run "$TBCTL" fabric extra
	assert_failure 2
}

@test "Sweep=no: the fabric method says unavailable" {
	printf '[Daemon]\nSweep=no\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	grep -q 'sweep: disabled' "$D/daemon.log"
	run -1 --separate-stderr "$TBCTL" fabric --json
	echo "$output" | jq -e '.ok == false and .error.code == "unavailable"'
}

@test "Pool=, Priority=: shown; bad values only warn" {
	printf '[Daemon]\nPool=10.7.0.0/16\nPriority=250\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool == "10.7.0.0/16" and .priority == 250'
	stop_daemon "$D"
	printf '[Daemon]\nPool=10.7.0.0/31\nPriority=256\nHelloSec=0\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	grep -q 'bad value for Pool' "$D/daemon.log"
	grep -q 'bad value for Priority' "$D/daemon.log"
	grep -q 'bad value for HelloSec' "$D/daemon.log"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool == "10.99.0.0/24" and .priority == 100'
}

@test "Pool6=: default, set, off; a bad one only warns (the default stays)" {
	start_daemon "$D"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool6 == "fd74:6272:646d::/64" and .address6 == null'
	stop_daemon "$D"
	printf '[Daemon]\nPool6=fd00:1:2:3::/64\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool6 == "fd00:1:2:3::/64"'
	stop_daemon "$D"
	printf '[Daemon]\nPool6=no\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool6 == null'
	stop_daemon "$D"
	printf '[Daemon]\nPool6=fd00:1:2:3::/48\n' > "$D/conf"
	start_daemon "$D" --config "$D/conf"
	grep -q 'bad value for Pool6' "$D/daemon.log"
	run "$TBCTL" fabric --json
	echo "$output" | jq -e '.pool6 == "fd74:6272:646d::/64"'
}

@test "guid2addr: a valid map is loaded" {
	mkdir -p "$D/state"
	printf '# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1\n0002c9fffe000002 10.99.0.7\n' \
		> "$D/state/guid2addr"
	start_daemon "$D"
	grep -q 'sweep: 2 address(es) in' "$D/daemon.log"
	[ -e "$D/state/guid2addr" ]
}

@test "guid2addr: corrupt maps are refused with an error, kept aside, the daemon serves" {
	local bad
	for bad in 'garbage\n' '# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.300\n' \
		'# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1\n0002c9fffe000002 10.99.0.1\n' \
		'\x00\xff\xfe' '# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1'; do
		mkdir -p "$D/state"
		printf "$bad" > "$D/state/guid2addr"
		start_daemon "$D"
		grep -q 'guid2addr: .*starting with an empty map' "$D/daemon.log"
		[ -e "$D/state/guid2addr.corrupt" ]
		[ ! -e "$D/state/guid2addr" ]
		run "$TBCTL" fabric --json
		assert_success
		daemon_alive "$D"
		stop_daemon "$D"
		rm -rf "$D/state"
	done
}
