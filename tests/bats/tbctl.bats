#!/usr/bin/env bats
# tbctl and tbrdmad's state socket on the host, without the kernel module: every tbctl verb, its
# --json output (jq), exit codes (0 ok, 1 error, 2 usage, 3 unreachable), permission checks
# (SO_PEERCRED, non-root through setpriv), and hostile input straight to the socket.
bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	export D
	D=$(mktemp -d /tmp/tbctl-bats.XXXXXX)
	chmod 755 "$D"
	start_daemon "$D"
	export TBCTL_SOCKET=$D/tbrdmad.sock
}

teardown_file() {
	load helpers
	stop_daemon "$D"
	rm -rf "$D"
}

setup() {
	load helpers
	load_libs
}

# ---- read verbs ---------------------------------------------------------------------------

@test "status: human output with the kernel absent" {
	run "$TBCTL" status
	assert_success
	assert_output --partial "Daemon: tbrdmad"
	assert_output --partial "Kernel: absent"
	assert_output --partial "Links: 0 (0 up)"
}

@test "no verb means status" {
	run "$TBCTL"
	assert_success
	assert_output --partial "Kernel: absent"
}

@test "status --json: schema 1, kernel absent, empty state" {
	run --separate-stderr "$TBCTL" status --json
	assert_success
	echo "$output" | jq -e '.schema == 1 and .ok == true and .method == "status"'
	echo "$output" | jq -e '.kernel.present == false and (.kernel.error | type) == "string"'
	echo "$output" | jq -e '.devices == [] and .summary.links == 0 and .summary.rails_up == 0'
	echo "$output" | jq -e '(.daemon.pid | type) == "number" and .daemon.version != ""'
}

@test "--json output of every read verb is valid JSON with schema 1" {
	local v
	for v in status devices links rails version fabric peers routes partitions counters "links tbrdma0" \
		"rails tbrdma0"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$TBCTL" --json $v
		assert_success
		echo "$output" | jq -e '.schema == 1 and .ok == true' > /dev/null ||
			fail "tbctl --json $v: $output"
	done
	run --separate-stderr "$TBCTL" --json links
	echo "$output" | jq -e '.links == []'
	run --separate-stderr "$TBCTL" --json rails
	echo "$output" | jq -e '.rails == []'
	run --separate-stderr "$TBCTL" --json devices
	echo "$output" | jq -e '.devices == []'
}

@test "peers --json: the daemon's object, sweep on, no host known without the kernel" {
	run --separate-stderr "$TBCTL" --json peers
	assert_success
	echo "$output" | jq -e '.schema == 1 and .ok == true and .method == "peers"'
	echo "$output" | jq -e '.sweep == true and .peers == [] and .self == null and .master == null'
}

@test "routes --json: no device, no table yet; the human table says so" {
	run --separate-stderr "$TBCTL" --json routes
	assert_success
	echo "$output" | jq -e '.method == "routes" and .routes == [] and .version == null'
	echo "$output" | jq -e '.errors == 0 and .device == null and .self == null'
	run --separate-stderr "$TBCTL" routes
	assert_success
	echo "$output" | grep -q "table version (none)"
}

@test "partitions --json: no device, no master, no table; the human header says so" {
	run --separate-stderr "$TBCTL" --json partitions
	assert_success
	echo "$output" | jq -e '.method == "partitions" and .partitions == [] and .table == null'
	echo "$output" | jq -e '.errors == 0 and .device == null and .master == null and .configured == false'
	run --separate-stderr "$TBCTL" partitions
	assert_success
	echo "$output" | grep -q "no partitions configured"
}

@test "fabric --dot: a Graphviz graph, empty without a kernel" {
	run --separate-stderr "$TBCTL" fabric --dot
	assert_success
	[ "${lines[0]}" = "graph tbrdma_fabric {" ]
	[ "${lines[-1]}" = "}" ]
	run --separate-stderr "$TBCTL" fabric --dot extra
	[ "$status" = 2 ]
}

@test "peers with Sweep=no: sweep false, still answered" {
	local d
	d=$(mktemp -d /tmp/tbctl-bats.XXXXXX)
	printf '[Daemon]\nSweep=no\n' > "$d/conf"
	"$TBRDMAD" --socket "$d/s.sock" --state-dir "$d/state" --config "$d/conf" \
		--genl-family tbrdma-absent > "$d/log" 2>&1 &
	echo $! > "$d/pid"
	for _ in $(seq 100); do [ -S "$d/s.sock" ] && grep -q 'ready:' "$d/log" && break; sleep 0.05; done
	run --separate-stderr "$TBCTL" --socket "$d/s.sock" --json peers
	stop_daemon "$d"
	rm -rf "$d"
	assert_success
	echo "$output" | jq -e '.sweep == false and .peers == []'
}

@test "peers: a table with a legend" {
	run "$TBCTL" peers
	assert_success
	assert_output --partial "0 hosts listed."
	run "$TBCTL" --no-legend peers
	assert_success
	assert_output ""
}

@test "counters --json: devices, links, rails arrays; unknown device -> not-found, exit 1" {
	run --separate-stderr "$TBCTL" --json counters
	assert_success
	echo "$output" | jq -e '.schema == 1 and .ok == true and .method == "counters"'
	echo "$output" | jq -e '.devices == [] and .links == [] and .rails == []'
	run --separate-stderr "$TBCTL" --json counters tbrdma9
	assert_failure 1
	echo "$output" | jq -e '.ok == false and .error.code == "not-found"'
	run "$TBCTL" counters tbrdma9
	assert_failure 1
	assert_output --partial "no device tbrdma9"
}

@test "counters: an empty table without the kernel" {
	run "$TBCTL" counters
	assert_success
	assert_output ""
}

@test "raw peers/counters requests: bad device parameter -> invalid-request" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" send <<< '{"method":"counters","device":5}
{"method":"counters","device":""}
{"method":"peers","id":7}'
	assert_success
	assert_line --index 0 --partial '"code":"invalid-request"'
	assert_line --index 1 --partial '"code":"invalid-request"'
	assert_line --index 2 --partial '"method":"peers"'
	assert_line --index 2 --partial '"id":7'
}

@test "eth bind/unbind: the kernel module absent -> exit 1 with a hint" {
	if lsmod 2> /dev/null | grep -q '^tbrdma '; then
		skip "tbrdma is loaded on this host"
	fi
	run "$TBCTL" eth bind lo
	assert_failure 1
	assert_output --partial "not loaded"
	run "$TBCTL" eth unbind eth0 tbrdma1
	assert_failure 1
}

@test "capture: argument errors -> exit 2; the kernel module absent -> exit 1 with a hint" {
	local args
	for args in "capture" "capture -w" "capture -i tbrdma0" "capture -w f -c 0" "capture -w f -c x" \
		"capture -w f -s 10" "capture -w f --rail 16" "capture -w f --qpn 0x1000000" \
		"capture -w f extra" "capture -w f -x" "capture -w f -i 0123456789abcdef0123456789abcdef" \
		"--json capture" "capture --socket x -w f"; do
		# shellcheck disable=SC2086
		run "$TBCTL" $args
		[ "$status" = 2 ] || fail "tbctl $args: exit $status, expected 2 ($output)"
		[[ "$output" == *"--help"* ]] || fail "tbctl $args: no pointer to --help: $output"
	done
	if lsmod 2> /dev/null | grep -q '^tbrdma '; then
		skip "tbrdma is loaded on this host"
	fi
	run "$TBCTL" capture -w "$D/x.pcap" -c 1
	assert_failure 1
	assert_output --partial "not loaded"
	[ ! -e "$D/x.pcap" ] || fail "a pcap file was written without a monitor"
}

@test "--json error replies are valid JSON too" {
	run --separate-stderr "$TBCTL" --json rail disable tbrdma0 1 0
	assert_failure 1
	echo "$output" | jq -e '.schema == 1 and .ok == false and .error.code == "unavailable"'
}

@test "devices, links, rails: tables with a legend" {
	run "$TBCTL" devices
	assert_success
	assert_output --partial "0 devices listed."
	run "$TBCTL" links
	assert_success
	assert_output --partial "0 links listed."
	run "$TBCTL" rails tbrdma0
	assert_success
	assert_output --partial "0 rails listed."
	run "$TBCTL" --no-legend links
	assert_success
	assert_output ""
}

@test "version: tbctl's and the daemon's" {
	run "$TBCTL" version
	assert_success
	assert_line --regexp '^tbctl [0-9.]+ \(schema 1\)$'
	assert_line --regexp '^tbrdmad [0-9.]+ \(schema 1\)$'
}

@test "--help lists every verb, exit 0" {
	run "$TBCTL" --help
	assert_success
	for v in status devices links rails "rail disable" sweep fabric peers counters "eth bind" \
		capture version; do
		assert_output --partial "$v"
	done
}

@test "--socket overrides TBCTL_SOCKET" {
	TBCTL_SOCKET=/nonexistent/sock run "$TBCTL" --socket "$D/tbrdmad.sock" status
	assert_success
}

# ---- exit codes ---------------------------------------------------------------------------

@test "daemon unreachable: no socket -> exit 3 with a hint" {
	run "$TBCTL" --socket "$D/nothing-here.sock" status
	assert_failure 3
	assert_output --partial "is tbrdmad running? systemctl status tbrdmad"
	TBCTL_SOCKET=$D/nothing-here.sock run "$TBCTL" --json links
	assert_failure 3
}

@test "daemon unreachable: peers, counters, fabric -> exit 3 (--json too)" {
	local v
	for v in peers counters fabric "--json peers" "--json counters"; do
		# shellcheck disable=SC2086
		run "$TBCTL" --socket "$D/nothing-here.sock" $v
		[ "$status" = 3 ] || fail "tbctl $v: exit $status, expected 3 ($output)"
	done
}

@test "daemon unreachable: stale socket nobody listens on -> exit 3" {
	/usr/bin/python3 "$SOCKPY" "$D/stale.sock" stale
	run "$TBCTL" --socket "$D/stale.sock" version
	assert_failure 3
	assert_output --partial "hint: is tbrdmad running?"
}

@test "bad arguments -> exit 2" {
	local args
	for args in "bogus" "--bogus status" "-x" "--socket" "devices extra" "status extra" \
		"version extra" "links a b" "rails a b" "rail" "rail frobnicate tbrdma0 1 0" \
		"rail disable" "rail disable tbrdma0 1" "rail disable tbrdma0 1 0 9" \
		"rail disable tbrdma0 x 0" "rail disable tbrdma0 0 0" "rail disable tbrdma0 1 16" \
		"rail enable tbrdma0 1 -1" "rail enable tbrdma0 99999999999 0" "sweep now" \
		"peers x" "counters a b" "fabric x" "eth" "eth frob lo" \
		"eth bind" "eth bind lo tbrdma0 x" "eth bind 0123456789abcdefg"; do
		# shellcheck disable=SC2086
		run "$TBCTL" $args
		[ "$status" = 2 ] || fail "tbctl $args: exit $status, expected 2 ($output)"
		[[ "$output" == *"--help"* ]] || fail "tbctl $args: no pointer to --help: $output"
	done
}

@test "changing request while the module is absent -> exit 1, unavailable" {
	run "$TBCTL" rail disable tbrdma0 1 0
	assert_failure 1
	assert_output --partial "not loaded"
	run "$TBCTL" sweep
	assert_failure 1
}

# ---- permissions (SO_PEERCRED) ------------------------------------------------------------

@test "non-root may read every state" {
	local v
	for v in status devices links rails version fabric peers counters; do
		run --separate-stderr "${NOBODY[@]}" "$TBCTL" --json "$v"
		assert_success
		echo "$output" | jq -e '.ok == true' > /dev/null
	done
}

@test "non-root changing requests -> permission denied, exit 1" {
	run "${NOBODY[@]}" "$TBCTL" rail disable tbrdma0 1 0
	assert_failure 1
	assert_output --partial "permission denied"
	run "${NOBODY[@]}" "$TBCTL" rail enable tbrdma0 1 0
	assert_failure 1
	assert_output --partial "needs root"
	run "${NOBODY[@]}" "$TBCTL" sweep
	assert_failure 1
	run --separate-stderr "${NOBODY[@]}" "$TBCTL" --json rail disable tbrdma0 1 0
	assert_failure 1
	echo "$output" | jq -e '.error.code == "permission-denied"'
}

@test "non-root raw request: the uid comes from the socket, not from the request" {
	run "${NOBODY[@]}" /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" send \
		<<< '{"method":"sweep","uid":0,"root":true}'
	assert_success
	echo "$output" | jq -e '.error.code == "permission-denied"'
}

# ---- hostile input straight to the socket ---------------------------------------------------

@test "malformed requests get JSON errors, one per line, in order" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" send < <(printf '%s\n' \
		'{bad' '[]' '{}' '{"method":5}' '{"method":"frobnicate"}' 'null' '"str"' \
		'{"method":"status"} trailing' '{"method":"links","device":7}' \
		'{"method":"rail-disable","device":"tbrdma0","link":"1","rail":0}' \
		'{"method":"version","id":"last"}')
	assert_success
	[ "$(echo "$output" | wc -l)" = 11 ] || fail "expected 11 replies: $output"
	echo "$output" | jq -e -s 'length == 11 and all(.[]; .schema == 1)'
	echo "$output" | jq -e -s '[.[].error.code] == ["parse-error","invalid-request",
		"invalid-request","invalid-request","unknown-method","invalid-request",
		"invalid-request","parse-error","invalid-request","invalid-request",null]'
	echo "$output" | jq -e -s '.[10].ok == true and .[10].id == "last"'
}

@test "binary garbage, NUL bytes, invalid UTF-8: JSON errors" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" send < <(printf '\x00\x01\x02\n\xff\xfe{}\n{"method":"st\xc3\x28"}\n{"method":"status"\x00}\n')
	assert_success
	echo "$output" | jq -e -s 'length == 4 and all(.[]; .ok == false and .error.code == "parse-error")'
}

@test "oversized request (> 64 KiB line) -> too-large, the connection keeps serving" {
	run /usr/bin/python3 -c '
import socket, sys, json
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
s.sendall(b"{\"method\":\"" + b"x" * 70000 + b"\"}\n" + b"{\"method\":\"version\"}\n")
f = s.makefile("rb")
print(f.readline().decode().strip()); print(f.readline().decode().strip())' "$TBCTL_SOCKET"
	assert_success
	echo "${lines[0]}" | jq -e '.ok == false and .error.code == "too-large"'
	echo "${lines[1]}" | jq -e '.ok == true and .method == "version"'
}

@test "1 MiB without a newline: one too-large reply, then normal service" {
	run /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
s.sendall(b"a" * (1 << 20)); s.sendall(b"\n{\"method\":\"status\"}\n"); s.shutdown(socket.SHUT_WR)
b = b""
while True:
    d = s.recv(65536)
    if not d: break
    b += d
print(b.decode(), end="")' "$TBCTL_SOCKET"
	assert_success
	[ "${#lines[@]}" = 2 ] || fail "expected 2 replies: $output"
	echo "${lines[0]}" | jq -e '.error.code == "too-large"'
	echo "${lines[1]}" | jq -e '.ok == true and .method == "status"'
}

@test "a request at the limit is still parsed" {
	run /usr/bin/python3 -c '
import socket, sys
req = b"{\"method\":\"version\"}"
req += b" " * (65536 - len(req))
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
s.sendall(req + b"\n"); print(s.makefile("rb").readline().decode().strip())' "$TBCTL_SOCKET"
	assert_success
	echo "$output" | jq -e '.ok == true'
}

@test "last request without a newline is answered at EOF; empty lines are ignored" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" send < <(printf '\n\r\n{"method":"version"}')
	assert_success
	[ "${#lines[@]}" = 1 ] || fail "expected 1 reply: $output"
	echo "$output" | jq -e '.ok == true'
}

@test "200 concurrent clients are all answered" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" concurrent 200
	assert_success
	assert_output "ok 200"
}

@test "an idle client and a client that never reads do not block the daemon" {
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"meth"); time.sleep(8)' \
		"$TBCTL_SOCKET" &
	local idle=$!
	/usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" flood 200000 > "$D/flood.out" &
	local flood=$!
	sleep 0.5
	run timeout 5 "$TBCTL" --json status
	assert_success
	wait "$flood"
	kill "$idle" 2> /dev/null || true
	wait "$idle" 2> /dev/null || true
	run timeout 5 "$TBCTL" version
	assert_success
}

@test "abrupt disconnects mid-request and mid-reply" {
	run /usr/bin/python3 "$SOCKPY" "$TBCTL_SOCKET" abrupt 300
	assert_success
	run "$TBCTL" --json status
	assert_success
	echo "$output" | jq -e '.ok == true'
}

@test "the daemon survived everything above" {
	daemon_alive "$D"
	run "$TBCTL" --json status
	assert_success
	! grep -Ei 'assert|sanitizer|segv' "$D/daemon.log"
}

# ---- tables over canned replies (tests/bats/canned.py) --------------------------------------

# canned REPLY: a state socket answering every request with tests/bats/REPLY.json, at $sock (the
# caller's local) as soon as it listens; $pid its process (fd 3 closed: a failing test ends)
canned() {
	sock=$D/$1.sock
	/usr/bin/python3 "$BATS_TEST_DIRNAME/canned.py" "$sock" "$BATS_TEST_DIRNAME/$1.json" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
}

@test "counters: the columns read first fit a terminal; -v all of them; --json every counter" {
	local sock pid
	canned counters-reply
	run "$TBCTL" --socket "$sock" counters
	assert_success
	assert_line --index 0 --regexp '^OBJECT +STATE +TX-FRAMES +TX-BYTES +RX-FRAMES +RX-BYTES +LOST +DROPS +RX-ERRORS +RX-FOREIGN$'
	assert_line --regexp '^tbrdma0 link 1 rail 1 eth enp5s0f1 +up +123456789 +505050505050 +98765432 +404040404040 +12 +3 +1 +- *$'
	assert_line --regexp '^tbrdma0 +- +246913578 +1010101010100 '
	assert_line --regexp '^tbrdma0 eth enp5s0f1 +- +- .* 4$'
	local widest
	widest=$(echo "$output" | awk '{ if (length($0) > w) w = length($0) } END { print w }')
	[ "$widest" -le 120 ] || fail "a line of $widest characters (302 before the default columns)"
	refute_output --partial FRAG-TX
	run "$TBCTL" --socket "$sock" counters -v
	assert_success
	assert_line --index 0 --regexp '^OBJECT +STATE +TX-FRAMES +TX-BYTES .* FRAG-TX .* HELD-DROPS .* RX-FOREIGN$'
	assert_line --regexp '^tbrdma0 link 1 rail 0 eth enp5s0f1 +up +123456789 .* 77 .* 5 .*'
	run --separate-stderr "$TBCTL" --socket "$sock" --json counters
	assert_success
	echo "$output" | jq -e '.rails[0].counters | .frag_tx == 77 and .held_drops == 5 and length == 26'
	kill "$pid"
}

@test "rails: state, speed, ring occupancy and frames fit a terminal; -v every column; --json the ring" {
	local sock pid
	canned rails-reply
	run "$TBCTL" --socket "$sock" rails
	assert_success
	assert_line --index 0 --regexp '^DEVICE +LINK +RAIL +BACKEND +STATE +GB/S +PEER +TX-FULL +RX-EMPTY +TX-FRAMES +RX-FRAMES +LOST +DROPS$'
	# shares of the time since the rail came up; a down rail has none
	assert_line --regexp '^tbrdma0 +1 +0 +tb +up +40 \(2x20\) +02a1b2fffec3d4e5 +42\.1% +99\.9% +123456789012 '
	assert_line --regexp '^tbrdma0 +1 +1 +eth +down +10 \(1x10\) +[0-9a-f]+ +- +- +123456789 '
	local widest
	widest=$(echo "$output" | awk '{ if (length($0) > w) w = length($0) } END { print w }')
	[ "$widest" -le 120 ] || fail "a line of $widest characters (156 with every column)"
	refute_output --partial FRAG-TX
	run "$TBCTL" --socket "$sock" rails -v
	assert_success
	assert_line --index 0 --regexp '^DEVICE .* STATE +CUT +GB/S +EXPECT +PEER +CREDITS +TX-FULL +TX-EMPTY +TX-MEAN +RX-FULL +RX-EMPTY +RX-MEAN .* FRAG-TX +FRAG-RX +FRAG-DROPS +RX-FOREIGN$'
	assert_line --regexp '^tbrdma0 +1 +0 +tb +up +no .* 42\.1% +5\.1% +87\.3% +0\.0% +99\.9% +0\.0% .* -$'
	assert_line --regexp '^tbrdma0 +1 +0 +tb +up +no +40 \(2x20\) +40 \(2x20\) +02a1b2fffec3d4e5 +255 +42\.1% '
	assert_line --regexp '^tbrdma0 +1 +1 +eth +down +yes +10 \(1x10\) +- .* 77 +0 +0 +4$'
	run --separate-stderr "$TBCTL" --socket "$sock" --json rails
	assert_success
	echo "$output" | jq -e '.rails[0].ring.tx_full == 0.4213 and .rails[1].ring == null'
	kill "$pid"
}

@test "rails: a slow cable: SLOW below what both hosts showed, EXPECT with -v, expected_lane_mbps in --json" {
	local sock pid
	# link 1 at 2 x 20; link 2 at 2 x 10 where both hosts showed 20 per lane: SLOW; link 3 at
	# 2 x 10 to a peer that showed 10 (tbrdmad's model_flag_slow, test_negotiate): not slow
	canned rails-slow-reply
	run "$TBCTL" --socket "$sock" rails
	assert_success
	assert_line --regexp '^tbrdma0 +1 +0 +tb +up +40 \(2x20\) +02a1b2fffec3d4e5 '
	assert_line --regexp '^tbrdma0 +2 +0 +tb +up +20 \(2x10\) SLOW +02a1b2fffec3d4e6 '
	assert_line --regexp '^tbrdma0 +3 +0 +tb +up +20 \(2x10\) +02a1b2fffec3d4e7 '
	[ "$(grep -c SLOW <<< "$output")" = 1 ]
	# a SLOW cable's line with 12-digit counters still fits (link 2's frames: 123456789012)
	local widest
	widest=$(echo "$output" | awk '{ if (length($0) > w) w = length($0) } END { print w }')
	[ "$widest" -le 120 ] || fail "a line of $widest characters"
	run "$TBCTL" --socket "$sock" rails -v
	assert_success
	assert_line --index 0 --regexp '^DEVICE .* STATE +CUT +GB/S +EXPECT +PEER '
	assert_line --regexp '^tbrdma0 +1 +0 +tb +up +no +40 \(2x20\) +40 \(2x20\) +02a1b2fffec3d4e5 '
	assert_line --regexp '^tbrdma0 +2 +0 +tb +up +no +20 \(2x10\) SLOW +40 \(2x20\) +02a1b2fffec3d4e6 '
	assert_line --regexp '^tbrdma0 +3 +0 +tb +up +no +20 \(2x10\) +20 \(2x10\) +02a1b2fffec3d4e7 '
	run --separate-stderr "$TBCTL" --socket "$sock" --json rails
	assert_success
	echo "$output" | jq -e '[.rails[] | [.slow, .expected_lane_mbps]] == [[false, 20000], [true, 20000], [false, 10000]]'
	kill "$pid"
}
