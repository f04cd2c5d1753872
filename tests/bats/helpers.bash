# tests/bats/helpers.bash: start/stop a tbrdmad on a temporary socket for the bats tests.
# The daemon runs against a generic netlink family that does not exist (--genl-family), so the
# tests see "module absent" whatever the host has loaded.
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
TBRDMAD=$TOP/build/tbrdmad/tbrdmad
TBCTL=$TOP/build/tbctl/tbctl
SOCKPY=$BATS_TEST_DIRNAME/sock.py
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

load_libs() {
	bats_load_library bats-support
	bats_load_library bats-assert
}

# start_daemon DIR [ARGS...]: tbrdmad on DIR/tbrdmad.sock, waits for the socket; pid in DIR/pid
start_daemon() {
	local dir=$1
	shift
	"$TBRDMAD" --socket "$dir/tbrdmad.sock" --state-dir "$dir/state" --config /dev/null \
		--genl-family tbrdma-absent --log-level debug "$@" > "$dir/daemon.log" 2>&1 &
	echo $! > "$dir/pid"
	for _ in $(seq 100); do
		[ -S "$dir/tbrdmad.sock" ] && grep -q 'ready:' "$dir/daemon.log" && return 0
		sleep 0.05
	done
	echo "tbrdmad did not start:" >&2
	cat "$dir/daemon.log" >&2
	return 1
}

stop_daemon() {
	local dir=$1 pid
	pid=$(cat "$dir/pid" 2> /dev/null) || return 0
	kill -TERM "$pid" 2> /dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2> /dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$pid" 2> /dev/null || true
}

daemon_alive() {
	kill -0 "$(cat "$1/pid")"
}
