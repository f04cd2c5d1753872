# tests/vm/lib/guest.sh: helpers for VM test scripts (source it inside the guest).
# shellcheck shell=bash
set -euo pipefail
: "${TBR_TOP:?guest.sh runs inside a tests/vm guest}"
TBR_KO_DIR=$TBR_TOP/build/kmod/$(uname -r)
# tests/vm/lib/bin first: rping with its teardown race told apart from a failure (see there)
export PATH=$TBR_TOP/tests/vm/lib/bin:$PATH

fail() {
	echo "FAIL: $*" >&2
	stall_report >&2 || true	# never in the way of the verdict
	[ -z "${VM_SHARED:-}" ] || : > "$VM_SHARED/${VM_ROLE:-a}.failed"   # the others stop waiting
	exit 1
}
# stall_report: one line, how long the host left this guest without CPU (lib/init's
# tests/progs/stall_watch): the gaps it wrote down, the longest and the last five
stall_report() {
	local f=${STALL_WATCH_FILE:-/run/stall_watch.txt}
	[ -r "$f" ] || { echo "stall_watch: not running"; return 0; }
	awk 'NR == 1 { since = $4; min = $8 }
		NR > 1 {
			n++
			if ($2 > max) { max = $2; at = $1 }
			last[n % 5] = sprintf("%.1f s %.0f ms", $1, $2)
		}
		END {
			printf "stall_watch: since %.1f s, %d gap(s) of %d ms or more", since, n, min
			if (n) printf "; longest %.0f ms ending at %.1f s; the last:", max, at
			for (i = (n > 5 ? n - 4 : 1); i <= n; i++) printf " %s%s", last[i % 5], i < n ? "," : ""
			printf "\n"
		}' "$f"
}
# step TEXT: a scenario step, with the seconds since the script started (where a slow test
# spends its time)
step() { echo "--- $* [${SECONDS}s]"; }

# tbr_load: the modules tbrdma needs (thunderbolt for the tb backend's symbols, RDMA core),
# then tbrdma.ko built for this kernel
tbr_load() {
	modprobe thunderbolt
	modprobe ib_core
	modprobe ib_uverbs
	insmod "$TBR_KO_DIR/tbrdma/tbrdma.ko" "$@"
}

# vm_signal NAME: tell the other VM (and the host script) that NAME happened
vm_signal() { : > "$VM_SHARED/$VM_ROLE.$1"; }

# vm_wait WHO.NAME [SECONDS]: wait for a signal, fail after SECONDS (default 60) or as soon as
# another VM or the host script failed
vm_wait() {
	local i f
	for ((i = 0; i < ${2:-60} * 10; i++)); do
		[ -e "$VM_SHARED/$1" ] && return 0
		for f in "$VM_SHARED"/*.failed; do
			[ -e "$f" ] && { echo "FAIL: $(basename "$f" .failed) failed" >&2; exit 1; }
		done
		sleep 0.1
	done
	fail "timed out waiting for $1"
}

# klog_has BRE: the kernel log has a line matching BRE. Not `dmesg | grep -q`: under pipefail,
# grep -q leaves at the first match and dmesg, still writing a long log, dies of SIGPIPE and
# fails the pipeline (eth-harden@6.12 once: "full table not logged" with the line in the log).
# grep -c reads to the end (and the guests' /dev has no fd/ for a process substitution)
klog_has() { dmesg | grep -c -- "$1" > /dev/null; }

# tbr_trace_start DAT EVENT...: record the tbrdma tracepoints EVENT... (kernel/tbr_trace.h,
# docs/tracing.md) with `trace-cmd record` (Debian's trace-cmd, the host's: the guest's root is
# the host's) into DAT until tbr_trace_stop DAT REPORT, which stops it (SIGINT, as ^C), writes
# `trace-cmd report` into REPORT and fails when the ring buffer lost events (the per-CPU overrun
# and dropped events that `trace-cmd report --stat` shows from the file, report's EVENTS
# DROPPED). Enabling patches the tracepoints' static keys: do it while their code does not run
# (no traffic yet), as harness_keys_steady's note says why; this waits until trace-cmd has
# enabled every EVENT
TBR_TRACEFS=/sys/kernel/tracing
tbr_trace_start() {
	local dat=$1 e args=() i
	shift
	command -v trace-cmd > /dev/null || fail "trace-cmd missing (the host's: make deps)"
	[ -d $TBR_TRACEFS/events ] || mount -t tracefs nodev $TBR_TRACEFS
	[ -d $TBR_TRACEFS/events/tbrdma ] || fail "no tbrdma tracepoints in $TBR_TRACEFS/events"
	for e; do
		[ -d "$TBR_TRACEFS/events/tbrdma/$e" ] || fail "no tracepoint tbrdma:$e"
		args+=(-e "tbrdma:$e")
	done
	rm -f "$dat" "$dat".cpu*
	trace-cmd record -b 8192 -o "$dat" "${args[@]}" > "$dat.log" 2>&1 &
	TBR_TRACE_PID=$!
	for ((i = 0; i < 300; i++)); do
		for e; do
			[ "$(cat "$TBR_TRACEFS/events/tbrdma/$e/enable")" = 1 ] || continue 2
		done
		[ "$(cat $TBR_TRACEFS/tracing_on)" = 1 ] && return 0
		kill -0 "$TBR_TRACE_PID" 2> /dev/null || { cat "$dat.log"; fail "trace-cmd record ended"; }
		sleep 0.1
	done
	cat "$dat.log"
	fail "trace-cmd record did not enable $* in 30 s"
}
tbr_trace_stop() {
	local dat=$1 report=$2 lost
	kill -INT "$TBR_TRACE_PID"
	wait "$TBR_TRACE_PID" || { cat "$dat.log"; fail "trace-cmd record failed"; }
	trace-cmd report -i "$dat" > "$report" 2> "$report.err" ||
		{ cat "$report.err"; fail "trace-cmd report -i $dat failed"; }
	# the per-CPU ring buffer statistics record kept at its end
	trace-cmd report -i "$dat" --stat > "$dat.stat" 2>&1 || { cat "$dat.stat"; fail "trace-cmd report --stat failed"; }
	grep -q '^ *overrun:' "$dat.stat" || { cat "$dat.stat"; fail "trace-cmd report --stat: no overrun figures"; }
	lost=$(awk '/^ *overrun:/ { n += $2 } /^ *dropped events:/ { n += $3 } END { print n + 0 }' "$dat.stat")
	[ "$lost" = 0 ] || fail "the trace ring buffer lost $lost events (trace-cmd report --stat: overrun, dropped)"
	! grep -q 'EVENTS DROPPED' "$report" || fail "trace-cmd report: $(grep -m1 'EVENTS DROPPED' "$report")"
}

# harness_keys_steady: the boot arguments that keep the guest from patching hot kernel text at run
# time hold (tests/vm/boot: tsc=unstable, nohz=off; multi-threaded TCG now and then runs a stale
# int3 after such a patch): sched_clock never marked stable, no CPU's tick in a NOHZ mode, the
# receive-timestamp key held on by lib/init's netstamp_hold
harness_keys_steady() {
	! klog_has "sched_clock: Marking stable" || fail "sched_clock was marked stable at run time"
	local modes
	modes=$(awk '$1 == ".nohz_mode" || $1 == ".nohz" { print $3 }' /proc/timer_list | sort -u)
	[ -n "$modes" ] || fail "/proc/timer_list shows no nohz state"
	[ "$modes" = 0 ] || fail "a CPU's tick went tickless (nohz: $(echo $modes))"
	local pid
	pid=$(cat /run/netstamp_hold.pid 2>/dev/null) || fail "no netstamp_hold started (lib/init)"
	[ "$(cat /proc/$pid/comm 2>/dev/null)" = netstamp_hold ] ||
		fail "netstamp_hold (pid $pid) is not running"
	ls -l /proc/$pid/fd | grep -c 'socket:' > /dev/null || fail "netstamp_hold holds no socket"
}

# unchrooted CMD...: run CMD (exec'd) outside the chroot lib/init runs the scenario in, in a mount
# namespace of its own. The kernel refuses CLONE_NEWUSER (unshare -U) to a chrooted caller with
# EPERM: this leaves the chroot (to the initramfs root) and moves the root onto / and into it, as
# switch_root does, so the caller's root is its mount namespace's root again. Root only.
unchrooted() {
	unshare -m --propagation private python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
cwd, top = os.getcwd(), os.open("/", os.O_RDONLY)
os.makedirs("/tmp/.unchroot", exist_ok=True)
os.chroot("/tmp/.unchroot")
os.fchdir(top)
for _ in range(64):
    os.chdir("..")
os.chroot(".")
os.chdir("/newroot")	# lib/init: R
if libc.mount(b".", b"/", None, 8192, None):	# MS_MOVE
    sys.exit("unchrooted: mount --move: " + os.strerror(ctypes.get_errno()))
os.chroot(".")
os.chdir(cwd)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 10; i++)); do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "timed out after ${t}s: $*"
}

# within SECONDS CMD...: poll CMD until it succeeds, for SECONDS of wall time (a loaded TCG guest
# makes every poll slow: wait_for counts polls, this counts time); on failure the test's diag, if
# it defines one, runs before fail
within() {
	local secs=$1 end=$((SECONDS + $1))
	shift
	while ((SECONDS < end)); do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.3
	done
	"$@" > /dev/null 2>&1 && return 0
	! declare -F diag > /dev/null || diag
	fail "not within $secs s: $*"
}

# ACK_TIMEOUT: the local ACK timeout (IBTA exponent) for QPs of tests whose receiver may drain
# its rails' RX rings slowly: 14, the tools' default (67 ms; tbrdma's RTO stretches to at most 4x),
# except on the debug kernel (KASAN + lockdep under TCG, ~10x slower), where a resent frame can
# wait behind those rings longer than that on a loaded host (2026-12-03: RETRY_EXC_ERR with no
# frame lost in tbsim-cable, stripe-cut and tbsim-hostile): 18 (1.07 s), as an application on a
# slow host would choose.
# PAIR_ACK_TIMEOUT: the local ACK timeout (perftest -u) of RC QPs between two VMs, 17: 537 ms,
# x 8 tries = 4.3 s before RETRY_EXC_ERR (18 on the debug kernel, as ACK_TIMEOUT). perftest's
# default, 14 (67 ms x 8 = 0.54 s), is shorter than the time a loaded host leaves a guest without
# CPU (stall_watch: up to 1.2 s at host load ~9, docs/testing.md), and a peer that cannot answer
# fails the QP, as RC must. The same holds for a resent frame that waits behind full rings of
# the Thunderbolt stand-in (tbsim-cable's unplug at load ~10, 2026-12-06: RETRY_EXC_ERR, no
# stall over 0.18 s), so the tbsim tests use it too. Tests of how fast a failure shows keep
# their own timeout.
case $(uname -r) in
*-tbrdbg) ACK_TIMEOUT=18 PAIR_ACK_TIMEOUT=18 ;;
*) ACK_TIMEOUT=14 PAIR_ACK_TIMEOUT=17 ;;
esac

# gid_index DEV IPV4: the index of DEV's RoCE v2 GID ::ffff:IPV4 (fails while it is absent)
# (builtins only: a fork per GID costs seconds under TCG)
gid_index() {
	local want g i v t
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ }
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		i=${g##*/}
		read -r v 2> /dev/null < "$g" || continue
		[ "$v" = "$want" ] || continue
		read -r t 2> /dev/null < "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$i" || continue
		[ "$t" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}
