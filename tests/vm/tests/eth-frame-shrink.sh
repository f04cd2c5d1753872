# eth rails: the MTU shrinks under running RC and UC connections (issue 13 item 9). tbrdma0 and
# tbrdma1 (netns h1) joined by a veth pair at MTU 9000 (4144-byte frames). ib_write_bw (RC),
# ib_read_bw (RC), ib_write_bw -c UC and verified RC traffic (tests/progs/integrity: WRITE, READ,
# SEND checked byte for byte) run while both ends drop to MTU 1500: the connections keep their
# 4144-byte frames, which now cross in fragments (frag_tx/frag_rx move on both devices), and every
# run ends successfully with its data verified. The link's frame size follows the MTU (1476), so a
# QP made after the shrink sends no fragment. Negative: with eth_fragment=0 the same shrink fails a
# running RC connection (retry exceeded), as it did before fragmentation.
# vm-kernel: 6.1
# (passes on 6.12 too: `tests/vm/run --kernel 6.12 eth-frame-shrink`; not in make check, for its time budget)
# vm-timeout: 300
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
PROG=$TBR_TOP/build/progs/integrity
[ -x "$PROG" ] || fail "$PROG not built (make)"
SEED=$(date +%s)

# snap: counters of both devices into /tmp/links; c DEV NAME / l DEV NAME: rail 0 / link counter
snap() { { "$CTL" links tbrdma0; h1 "$CTL" links tbrdma1; } > /tmp/links; }
c() { cnt "$1" 1 0 "$2" | head -1; }
l() { lcnt "$1" 1 "$2" | head -1; }
link_frame() { snap; grep -q "^link dev=tbrdma0 .*max_frame=$1" /tmp/links; }
mtu() { ip link set ve0a mtu "$1"; ip link set ve0b mtu "$1"; }

modprobe veth
tbr_load
"$CTL" dev-new > /dev/null || fail "dev-new failed"
ip link add ve0a type veth peer name ve0b
mtu 9000
"$CTL" eth-bind tbrdma0 ve0a || fail "eth-bind ve0a"
"$CTL" eth-bind tbrdma1 ve0b || fail "eth-bind ve0b"
ip link set ve0a up
ip link set ve0b up
pair_split
wait_for 15 link_frame 4144
ping -c 2 -W 5 10.88.0.2 > /dev/null || fail "no IP over the eth rail"

declare -A SRV CLI TOOL CONN
listening() { [ -n "$(h1 ss -ltnH "sport = :$1")" ]; }
# until SECONDS CMD...: poll CMD for SECONDS of wall time (wait_for counts polls, and a poll
# takes seconds in a TCG guest on a loaded host)
until_t() {
	local end=$((SECONDS + $1))
	shift
	while [ "$SECONDS" -lt "$end" ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
# start NAME:PORT:TOOL[:CONN]... -- ARGS...: for each NAME, TOOL's server in h1 on PORT (with
# -c CONN if given), then (all listening) its client here, all in the background; TOOL
# "integrity" is tests/progs/integrity. Returns when every client is connected.
start() {
	local np=() n f
	while [ "$1" != -- ]; do
		IFS=: read -r -a f <<< "$1"
		np+=("${f[0]}:${f[1]}")
		TOOL[${f[0]}]=${f[2]}
		CONN[${f[0]}]=${f[3]:+-c ${f[3]}}
		shift
	done
	shift
	for n in "${np[@]}"; do
		if [ "${TOOL[${n%:*}]}" = integrity ]; then
			h1 "$PROG" -d tbrdma1 -g "$GID1" -p "${n#*:}" server > "/tmp/${n%:*}.srv" 2>&1 &
		else
			# shellcheck disable=SC2086
			h1 "${TOOL[${n%:*}]}" -d tbrdma1 -x "$GID1" -F -p "${n#*:}" ${CONN[${n%:*}]} \
				"$@" > "/tmp/${n%:*}.srv" 2>&1 &
		fi
		SRV[${n%:*}]=$!
	done
	for n in "${np[@]}"; do
		until_t 60 listening "${n#*:}" || { cat "/tmp/${n%:*}.srv"; fail "${n%:*}: no server"; }
		if [ "${TOOL[${n%:*}]}" = integrity ]; then
			"$PROG" -d tbrdma0 -g "$GID0" -p "${n#*:}" --seed "$SEED" "$@" client \
				10.88.0.2 > "/tmp/${n%:*}.cli" 2>&1 &
		else
			# shellcheck disable=SC2086
			"${TOOL[${n%:*}]}" -d tbrdma0 -x "$GID0" -F -p "${n#*:}" ${CONN[${n%:*}]} \
				"$@" 10.88.0.2 > "/tmp/${n%:*}.cli" 2>&1 &
		fi
		CLI[${n%:*}]=$!
	done
	echo "${np[*]%:*} started (${SECONDS}s)"
}
running() { kill -0 "${CLI[$1]}" 2> /dev/null; }
# finish NAME: both ends exited 0
finish() {
	wait "${CLI[$1]}" || { cat "/tmp/$1.cli" "/tmp/$1.srv"; snap; cat /tmp/links; fail "$1: client failed"; }
	wait "${SRV[$1]}" || { cat "/tmp/$1.srv"; fail "$1: server failed"; }
}
# Progress is read from the veth pair's byte counters with builtins only: forks take seconds in
# a TCG guest on a loaded host, while the transfers run at tens of MB/s.
mkfifo /tmp/tick.fifo
exec 9<> /tmp/tick.fifo
tick() { read -r -t 0.05 -u 9 _ || true; }
vb() {
	local a b
	read -r a < /sys/class/net/ve0a/statistics/tx_bytes
	read -r b < /sys/class/net/ve0b/statistics/tx_bytes
	VB=$((a + b))
}
# frags: fragments sent by both devices (from the last snap)
frags() { echo $(( $(c tbrdma0 frag_tx) + $(c tbrdma1 frag_tx) )); }
# progress MIB: wait until the veth pair has carried MIB MiB more than at the last vb
progress() {
	local want=$((VB + ($1 << 20))) end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		vb
		[ "$VB" -gt "$want" ] && return 0
		tick
	done
	snap
	cat /tmp/links
	fail "the link did not move $1 MiB in 60 s"
}
# shrink: both ends to MTU 1500 while every run named is still running; the link follows
shrink() {
	local n
	# checked before the MTU changes: with eth_fragment=0 the connection may
	# fail (retry exceeded, what the negative step wants) before the second
	# `ip link set` returns
	for n in "$@"; do
		running "$n" || { cat "/tmp/$n.cli"; fail "$n ended before the shrink: make it longer"; }
	done
	mtu 1500
	wait_for 10 link_frame 1476
}

step "verified RC traffic (WRITE, READ, SEND) across the shrink, seed $SEED"
dmesg -C
vb
start integrity:18600:integrity -- --mib 32
progress 8
shrink integrity
finish integrity
tail -1 /tmp/integrity.cli
grep -q "integrity client: ok" /tmp/integrity.cli || fail "integrity client did not finish"
grep -q "integrity server: ok" /tmp/integrity.srv || fail "integrity server did not finish"
[ "$(dmesg | grep -c 'frame 4144 -> 1476, larger ones fragmented')" = 2 ] ||
	fail "both devices should have resized their rail live (fragmenting)"
snap
[ "$(c tbrdma0 frag_tx)" -gt 0 ] || fail "the verified traffic crossed without fragments"
[ "$(c tbrdma1 frag_rx)" -gt 0 ] || fail "tbrdma1 reassembled nothing"

# one connection at a time: several polling perftests on the VM's 2 CPUs starve each other
port=18515
for spec in write:ib_write_bw read:ib_read_bw uc:ib_write_bw:UC; do
	n=${spec%%:*}
	step "$n: ${spec#*:} at MTU 9000, both ends drop to 1500 while it runs"
	mtu 9000
	wait_for 10 link_frame 4144
	snap
	f1=$(frags)
	vb
	start "$n:$port:${spec#*:}" -- -s 65536 -n 3000
	port=$((port + 1))
	progress 1
	b0=$VB t0=${EPOCHREALTIME/./}
	progress 16
	b1=$VB t1=${EPOCHREALTIME/./}
	shrink "$n"
	vb
	progress 1
	b2=$VB t2=${EPOCHREALTIME/./}
	progress 16
	b3=$VB t3=${EPOCHREALTIME/./}
	finish "$n"
	snap
	echo "$n: the veth pair moved $(( (b1 - b0) / (t1 - t0) )) MB/s at MTU 9000," \
		"$(( (b3 - b2) / (t3 - t2) )) MB/s after the shrink; $(( $(frags) - f1 )) fragments;" \
		"perftest: $(grep -E '^ *[0-9]+ +[0-9]+ ' "/tmp/$n.cli" | tail -1 | tr -s ' ')"
	[ $(( $(frags) - f1 )) -gt 100 ] || fail "$n: its frames crossed the shrink unfragmented"
done
dmesg | grep "eth rail" || true
snap
grep -E "^(link|  rail)" /tmp/links
for d in tbrdma0 tbrdma1; do
	echo "$d: frag_tx=$(c $d frag_tx) frag_rx=$(c $d frag_rx) frag_drops=$(c $d frag_drops)" \
		"tx_lost=$(c $d tx_lost) rx_nobuf=$(c $d rx_nobuf)"
	[ "$(c $d frag_tx)" -gt 100 ] || fail "$d sent $(c $d frag_tx) fragments"
	[ "$(c $d frag_rx)" -gt 30 ] || fail "$d reassembled $(c $d frag_rx) frames"
	[ "$(c $d tx_lost)" = 0 ] || fail "$d: the rail cycled ($(c $d tx_lost) TX frames lost)"
done

step "a QP made after the shrink uses the 1476-byte frames: no fragment"
f0=$(c tbrdma0 frag_tx) f1=$(c tbrdma1 frag_tx) n0=$(c tbrdma0 tx_frames)
start new:18518:ib_write_bw -- -s 65536 -n 100
finish new
snap
echo "new QP: $(( $(c tbrdma0 tx_frames) - n0 )) frames, $(( $(c tbrdma0 frag_tx) - f0 )) fragments"
[ $(( $(c tbrdma0 tx_frames) - n0 )) -gt 4000 ] || fail "the new QP's write did not cross the rail"
[ "$(c tbrdma0 frag_tx)" = "$f0" ] || fail "the new QP's frames were fragmented"
[ "$(c tbrdma1 frag_tx)" = "$f1" ] || fail "the new QP's responder fragmented"

step "negative: eth_fragment=0, MTU 9000 again; the shrink fails a running RC connection"
echo 0 > /sys/module/tbrdma/parameters/eth_fragment
dmesg -C
mtu 9000
wait_for 10 link_frame 4144
wait_for 10 test "$(dmesg | grep -c 'frame 1476 -> 4144, not fragmented')" = 2
t0=$SECONDS
vb
start neg:18519:ib_write_bw -- -s 65536 -n 5000
progress 4
shrink neg
rc=0
until_t 90 eval '! running neg' ||
	{ kill "${CLI[neg]}"; fail "eth_fragment=0: the connection hung 90 s after the shrink"; }
wait "${CLI[neg]}" || rc=$?
kill "${SRV[neg]}" 2> /dev/null || true
wait "${SRV[neg]}" || true
grep -iE "status|error|fail" /tmp/neg.cli | head -5 || true
[ "$rc" != 0 ] || fail "eth_fragment=0: the shrink did not fail the connection (the test proves nothing)"
grep -qiE "status 12|retry|completion with error" /tmp/neg.cli ||
	fail "eth_fragment=0: the client failed, not with retry exceeded: $(tail -3 /tmp/neg.cli)"
echo "eth_fragment=0: the RC connection failed $((SECONDS - t0)) s after start, as expected"
snap
[ "$(c tbrdma0 frag_tx)" = "$f0" ] || fail "eth_fragment=0 still fragmented"
echo ok
