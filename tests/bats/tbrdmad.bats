#!/usr/bin/env bats
# tbrdmad itself on the host without the kernel module: options, config file, one daemon per
# socket, clean exit on SIGTERM/SIGINT (socket removed), client limit.
bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_libs
	D=$(mktemp -d /tmp/tbrdmad-bats.XXXXXX)
	chmod 755 "$D"
}

teardown() {
	stop_daemon "$D"
	rm -rf "$D"
}

@test "--help, --version exit 0; bad options exit 2" {
	run "$TBRDMAD" --help
	assert_success
	assert_output --partial "--socket PATH"
	run "$TBRDMAD" --version
	assert_success
	assert_output --regexp '^tbrdmad [0-9.]+ \(schema 1\)$'
	run "$TBRDMAD" --bogus
	assert_failure 2
	run "$TBRDMAD" --socket relative.sock
	assert_failure 2
	run "$TBRDMAD" --log-level loud
	assert_failure 2
	run "$TBRDMAD" extra-arg
	assert_failure 2
}

@test "starts without the module, serves, says why the kernel is absent" {
	start_daemon "$D"
	grep -q 'kernel: generic netlink family "tbrdma-absent" not found' "$D/daemon.log"
	run "$TBCTL" --socket "$D/tbrdmad.sock" --json status
	assert_success
	echo "$output" | jq -e '.kernel.present == false and .kernel.family == "tbrdma-absent"'
	[ -d "$D/state" ]
	# world-writable socket: everyone may read, the daemon checks who writes
	[ "$(stat -c %a "$D/tbrdmad.sock")" = 666 ]
}

@test "SIGTERM: clean exit 0, socket removed" {
	start_daemon "$D"
	local pid
	pid=$(cat "$D/pid")
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc"
	rm -f "$D/pid"
	[ ! -e "$D/tbrdmad.sock" ]
	grep -q 'stopping' "$D/daemon.log"
}

@test "SIGINT: clean exit 0" {
	start_daemon "$D"
	local pid
	pid=$(cat "$D/pid")
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc"
	rm -f "$D/pid"
}

@test "a second daemon on the same socket refuses to start (exit 1), the first keeps serving" {
	start_daemon "$D"
	run "$TBRDMAD" --socket "$D/tbrdmad.sock" --config /dev/null --state-dir "$D/state2" \
		--genl-family tbrdma-absent
	assert_failure 1
	assert_output --partial "another tbrdmad"
	run "$TBCTL" --socket "$D/tbrdmad.sock" version
	assert_success
}

@test "a stale socket file is replaced" {
	/usr/bin/python3 "$SOCKPY" "$D/tbrdmad.sock" stale
	start_daemon "$D"
	run "$TBCTL" --socket "$D/tbrdmad.sock" version
	assert_success
}

@test "config file: Socket=, SocketMode=, MaxClients=, Device=; unknown keys only warn" {
	cat > "$D/tbrdmad.conf" <<-EOC
	# test configuration
	[Daemon]
	Socket=$D/from-config.sock
	SocketMode=0600
	MaxClients=2
	Device=tbrdma1
	NoSuchKey=1
	EOC
	"$TBRDMAD" --config "$D/tbrdmad.conf" --state-dir "$D/state" --genl-family tbrdma-absent \
		> "$D/daemon.log" 2>&1 &
	echo $! > "$D/pid"
	for _ in $(seq 100); do [ -S "$D/from-config.sock" ] && break; sleep 0.05; done
	[ -S "$D/from-config.sock" ]
	[ "$(stat -c %a "$D/from-config.sock")" = 600 ]
	grep -q 'unknown key NoSuchKey' "$D/daemon.log"
	run "$TBCTL" --socket "$D/from-config.sock" --json status
	assert_success
	echo "$output" | jq -e '.daemon.device_filter == "tbrdma1"'
	# MaxClients=2: two idle clients held open, the third is told "busy"
	run /usr/bin/python3 -c '
import socket, sys, time
a = [socket.socket(socket.AF_UNIX) for _ in range(3)]
for s in a: s.connect(sys.argv[1]); time.sleep(0.1)
a[2].settimeout(5); print(a[2].makefile("rb").readline().decode().strip())' "$D/from-config.sock"
	assert_success
	echo "$output" | jq -e '.ok == false and .error.code == "busy"'
	run "$TBCTL" --socket "$D/from-config.sock" version
	assert_success
}

@test "sd_notify: READY=1 and STATUS= reach NOTIFY_SOCKET" {
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(10)
print(s.recv(4096).decode())' "$D/notify" > "$D/notify.out" &
	local listener=$!
	for _ in $(seq 50); do [ -S "$D/notify" ] && break; sleep 0.05; done
	NOTIFY_SOCKET=$D/notify start_daemon "$D"
	wait "$listener"
	grep -q '^READY=1' "$D/notify.out"
	grep -q '^STATUS=Waiting for the tbrdma kernel module' "$D/notify.out"
}

# stress_daemon BINARY RSS_BOUND_KB: 10k hostile requests and abrupt disconnects from
# sock-stress.py against BINARY (no kernel module), every reply checked; RSS after the run at
# most RSS_BOUND_KB above RSS after the warm-up; correct answers afterwards; SIGTERM: exit 0
stress_daemon() {
	local bin=$1 bound=$2 pid rc=0 warm end
	TBRDMAD=$bin start_daemon "$D" --log-level info
	pid=$(cat "$D/pid")
	run /usr/bin/python3 "$TOP/tests/bats/sock-stress.py" "$D/tbrdmad.sock" "$pid" 10000 \
		"${TBRDMAD_STRESS_SEED:-6}"
	echo "$output"
	assert_success
	assert_line --partial "sent 10000 lines"
	assert_line PASS
	warm=$(sed -n 's/^RSS_WARM //p' <<< "$output")
	end=$(sed -n 's/^RSS_END //p' <<< "$output")
	echo "RSS ${warm} kB -> ${end} kB (bound +${bound} kB)"
	[ "$end" -le $((warm + bound)) ] || fail "RSS grew from $warm kB to $end kB"
	daemon_alive "$D"
	run "$TBCTL" --socket "$D/tbrdmad.sock" --json status
	assert_success
	echo "$output" | jq -e '.ok and .kernel.present == false and .daemon.clients == 1'
	run "$TBCTL" --socket "$D/tbrdmad.sock" version
	assert_success
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	rm -f "$D/pid"
	[ "$rc" = 0 ] || { cat "$D/daemon.log"; fail "exit $rc"; }
	if grep -E 'Sanitizer|runtime error' "$D/daemon.log"; then fail "sanitizer report"; fi
}

@test "socket stress: 10k random/malformed/huge requests, abrupt disconnects; ASan+UBSan daemon stays up, answers right, leaks nothing" {
	local asan=$TOP/build/tbrdmad/asan/tbrdmad
	[ -x "$asan" ] || make -s -C "$TOP/tbrdmad" asan-daemon
	# a small quarantine so that RSS means something; LeakSanitizer runs at exit (exit 66)
	ASAN_OPTIONS=detect_leaks=1:exitcode=66:quarantine_size_mb=16 \
	UBSAN_OPTIONS=print_stacktrace=1 stress_daemon "$asan" 24576
}

@test "socket stress: the same against the plain daemon, RSS growth under 3 MiB" {
	stress_daemon "$TBRDMAD" 3072
}

# issue 13 item 13: one unprivileged user cannot take the socket's client slots
@test "state socket: 256 connections as nobody get MaxClientsPerUser=16; root's tbctl still works" {
	start_daemon "$D"
	"${NOBODY[@]}" /usr/bin/python3 "$TOP/tests/bats/sock-quota.py" hold "$D/tbrdmad.sock" 256 \
		> "$D/hold.out" 2>&1 &
	local holder=$!
	for _ in $(seq 600); do
		grep -q '^HELD' "$D/hold.out" && break
		kill -0 "$holder" 2> /dev/null || break
		sleep 0.1
	done
	cat "$D/hold.out"
	grep -qx 'HELD 16 BUSY 240' "$D/hold.out" || { kill "$holder"; fail "nobody's connections"; }
	run "$TBCTL" --socket "$D/tbrdmad.sock" --json status
	kill "$holder"
	wait "$holder" || true
	assert_success
	echo "$output" | jq -e '.ok and .daemon.clients == 17'
	grep -q 'refusing a client of pid [0-9]* uid 65534: 16 connections of that uid' "$D/daemon.log"
}

# issue 13 item 13: the output limit (1 MiB) is checked per request, not per read, so a client
# pipelining requests without reading its replies holds at most the limit plus one reply
@test "state socket: a pipelined flood of 40000 requests queues at most 1 MiB + one reply; all answered in order" {
	start_daemon "$D" --log-level info
	run /usr/bin/python3 "$TOP/tests/bats/sock-quota.py" flood "$D/tbrdmad.sock" \
		"$(cat "$D/pid")" 40000
	echo "$output"
	assert_success
	assert_line "REPLIES 40000"
	local peak rss
	peak=$(sed -n 's/^PEAK //p' <<< "$output")
	rss=$(sed -n 's/^RSS //p' <<< "$output")
	[ "$peak" -ge $((1 << 20)) ] || fail "peak $peak: the flood did not reach the limit"
	[ "$peak" -le $(((1 << 20) + 4096)) ] || fail "peak output queue $peak bytes"
	[ "$rss" -le 65536 ] || fail "RSS $rss kB"
}

# issue 13 item 11: the fabric key file must not be readable by others
@test "FabricKeyFile=: a world-readable key is refused (the daemon exits); a 0600 key is used" {
	head -c 32 /dev/urandom > "$D/fabric.key"
	chmod 0644 "$D/fabric.key"
	printf '[Daemon]\nFabricKeyFile=%s\n' "$D/fabric.key" > "$D/keyed.conf"
	run "$TBRDMAD" --socket "$D/tbrdmad.sock" --state-dir "$D/state" --config "$D/keyed.conf" \
		--genl-family tbrdma-absent
	assert_failure
	assert_output --partial "mode 0644: others may read or write the key"
	chmod 0600 "$D/fabric.key"
	start_daemon "$D" --config "$D/keyed.conf"
	grep -q 'management datagrams authenticated (HMAC-SHA256' "$D/daemon.log"
	run "$TBCTL" --socket "$D/tbrdmad.sock" --json fabric
	assert_success
	echo "$output" | jq -e '.authenticated == true and .sweeps.rx_unauthenticated == 0'
}
