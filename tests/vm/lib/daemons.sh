# tests/vm/lib/daemons.sh: one tbrdmad per emulated host (source after guest.sh): host 0 in the
# initial network namespace, host H > 0 in namespace hH (pair.sh host_ns).
#   in_h H CMD...     run CMD in host H
#   sock H            host H's daemon socket
#   start_d H [CONFIG]  start host H's tbrdmad (device tbrdmaH, state /tmp/stH, log
#                     /tmp/tbrdmad-H.log, CONFIG default /dev/null); its pid in PID[H]
# shellcheck shell=bash
D=$TBR_TOP/build/tbrdmad/tbrdmad
T=$TBR_TOP/build/tbctl/tbctl
[ -x "$D" ] && [ -x "$T" ] || fail "no tbrdmad/tbctl (run make)"
declare -a PID

in_h() { local h=$1; shift; if [ "$h" = 0 ]; then "$@"; else ip netns exec "h$h" "$@"; fi; }
sock() { echo "/tmp/tbrdmad-$1.sock"; }

start_d() { # $! must be tbrdmad itself (ip netns exec execs it), not a subshell
	local args=(--device "tbrdma$1" --socket "$(sock "$1")" --state-dir "/tmp/st$1"
		    --config "${2:-/dev/null}" --log-level debug)
	if [ "$1" = 0 ]; then
		"$D" "${args[@]}" >> "/tmp/tbrdmad-$1.log" 2>&1 &
	else
		ip netns exec "h$1" "$D" "${args[@]}" >> "/tmp/tbrdmad-$1.log" 2>&1 &
	fi
	PID[$1]=$!
}
