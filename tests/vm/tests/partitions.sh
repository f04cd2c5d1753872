# P_Key partitions (issue 46, docs/sweep.md "Partitions"): three emulated hosts A-B-C cabled as
# a line (fabric.lib fabric_chain), one tbrdmad each. Before any daemon every port has the
# default partition 0xffff in slot 0 (sysfs pkeys, what ibv_query_pkey reads). The master A
# (Priority=200) publishes three partitions: 0x8001 with A and C full, 0x8003 with B and C full,
# and the default partition with everyone limited but A full; every daemon gives its P_Keys to
# its kernel. rping and ucmatose (rdma_cm: the default partition's P_Key on RoCE) run A -> C; B
# and C, both limited, cannot connect (C's QP1 refuses B's CM MADs, counted). ib_write_bw
# --pkey_index 1 (0x8001) runs A -> C; B, no member of 0x8001 (its slot 1 is 0x8003), gets no
# completion and C takes no data, its violation counters move (hw_counters, genl stats,
# PortCounters, tbctl counters). A's daemon restarts with a fourth partition (0x8002, A and B)
# while ib_write_bw B -> C runs on 0x8003: the new partition lands in a new slot of A's and B's
# tables, the running QPs (B's in the table that changed) finish untouched. (Not A -> C: that QP
# is routed through B, and routes follow the daemons' records, which the restart may let expire;
# not measured, kept out of this step.)
# vm-timeout: 420
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"
. "$TBR_TOP/tests/vm/tests/fabric.lib"

# pkey H SLOT: host H's P_Key in SLOT as sysfs has it (0x....)
pkey() { in_h "$1" cat "/sys/class/infiniband/tbrdma$1/ports/1/pkeys/$2"; }
# hw H NAME: host H's port hw counter NAME
hw() { in_h "$1" cat "/sys/class/infiniband/tbrdma$1/ports/1/hw_counters/$2"; }
# viol H: host H's P_Key violations summed over its links (genl stats)
viol() {
	"$CTL" links "tbrdma$1" | sed -n 's/^link .* pkey_violations=\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}
# table_is H SLOT=PKEY...: host H's sysfs P_Key table has these slots
table_is() {
	local h=$1 kv
	shift
	for kv in "$@"; do
		[ "$(pkey "$h" "${kv%%=*}")" = "${kv#*=}" ] || return 1
	done
}

step "three hosts A-B-C as a line; the default partition, full, in slot 0 of every port"
fabric_chain 3
GA=${GUID[0]} GB=${GUID[1]} GC=${GUID[2]}
for ((h = 0; h < N; h++)); do
	table_is "$h" 0=0xffff 1=0x0000 15=0x0000 || fail "host $h: not the default table"
done
ibv_devinfo -v -d tbrdma0 | grep -q "max_pkeys:.*16" || fail "max_pkeys is not 16"

step "daemons; the master A publishes the partitions; every kernel takes its P_Keys"
cat > /tmp/part1.conf << EOC
[Partition]
Name=tenant1
PKey=0x8001
Members=$GA=full $GC=full
[Partition]
Name=tenant3
PKey=0x8003
Members=$GB=full $GC=full
[Partition]
PKey=0x7fff
Members=ALL=limited $GA=full
EOC
{ printf '[Daemon]\nPriority=200\n'; cat /tmp/part1.conf; } > /tmp/part1a.conf
t0=$SECONDS
for ((h = 0; h < N; h++)); do
	rm -rf "/tmp/st$h"
	start_d "$h" "$( ((h)) && echo /tmp/part1.conf || echo /tmp/part1a.conf)"
done
for ((i = 0; i < 300; i++)); do agree 3 && break; sleep 0.1; done
agree 3 || fail "no agreement on 3 hosts"
[ "$(master_of 1)" = "$GA" ] || fail "A is not the master"
wait_for 20 table_is 0 0=0xffff 1=0x8001 2=0x0000
wait_for 20 table_is 1 0=0x7fff 1=0x8003 2=0x0000
wait_for 20 table_is 2 0=0x7fff 1=0x8001 2=0x8003 3=0x0000
echo "partitions in every kernel after $((SECONDS - t0)) s"
grep "sweep: partitions:" /tmp/tbrdmad-2.log | tail -1
"$T" --socket "$(sock 0)" partitions
"$T" --socket "$(sock 2)" partitions --json > /tmp/part.2
jq -e '.configured and (.table | map(.pkey)) == ["0x7fff", "0x8001", "0x8003"]
	and (.table[1] | .index == 1 and .name == "tenant1" and .membership == "full")
	and ([.partitions[].partition] | sort) == ["0x0001", "0x0003", "0x7fff"]' /tmp/part.2 > /dev/null ||
	{ cat /tmp/part.2; fail "tbctl partitions of C"; }
AA=$(addr_of 0) BA=$(addr_of 1) CA=$(addr_of 2)

step "rdma_cm on the default partition: A (full) -> C (limited): rping, ucmatose"
rping_to 2 "$CA" 3 0
modprobe rdma_ucm
in_h 2 timeout 60 ucmatose -b "$CA" > /tmp/ucma.srv 2>&1 &
srv=$!
sleep 3
timeout 60 ucmatose -s "$CA" > /tmp/ucma.cli 2>&1 || { cat /tmp/ucma.cli /tmp/ucma.srv; fail "ucmatose A -> C"; }
wait "$srv" || { cat /tmp/ucma.srv; fail "ucmatose server on C"; }
tail -2 /tmp/ucma.cli

step "B and C, both limited: rping B -> C gets no connection, C's QP1 counts the MADs"
v0=$(viol 2) h0=$(hw 2 pkey_violations)
in_h 2 timeout 20 rping -s -a "$CA" -C 1 -v > /tmp/rping.bc.srv 2>&1 &
srv=$!
wait_for 10 in_h 2 sh -c "rdma resource show cm_id | grep -q 'LISTEN.* src-addr $CA:'"
if in_h 1 timeout 15 rping -c -a "$CA" -C 1 -v > /tmp/rping.bc.cli 2>&1; then
	cat /tmp/rping.bc.cli; fail "rping B -> C connected: two limited members talked"
fi
wait "$srv" || true
grep -q "ping data" /tmp/rping.bc.cli && fail "rping B -> C moved data"
v1=$(viol 2) h1=$(hw 2 pkey_violations)
echo "C: P_Key violations $v0 -> $v1 (genl), $h0 -> $h1 (hw_counters)"
((v1 > v0 && h1 > h0)) || fail "C counted no violation for B's CM MADs"

step "ib_write_bw --pkey_index 1 (0x8001): A -> C"
GIA=$(host_gid 0 "$AA") GIC=$(host_gid 2 "$CA")
bw() { # bw CLIENT SERVER GIDC GIDS ADDR PORT ARGS...: ib_write_bw, server first; logs /tmp/bw.C-S.*
	local c=$1 s=$2 gc=$3 gs=$4 dst=$5 p=$6
	shift 6
	in_h "$s" timeout "${BWT:-90}" ib_write_bw -d "tbrdma$s" -x "$gs" -F -p "$p" "$@" \
		> "/tmp/bw.$c-$s.srv" 2>&1 &
	BWSRV=$!
	wait_for 10 in_h "$s" sh -c "[ -n \"\$(ss -ltnH 'sport = :$p')\" ]"
	in_h "$c" timeout "${BWT:-90}" ib_write_bw -d "tbrdma$c" -x "$gc" -F -p "$p" "$@" "$dst" \
		> "/tmp/bw.$c-$s.cli" 2>&1
}
# bw_why C S: what ended ib_write_bw C -> S (perftest's error lines, printed before its buffered
# header), then every host's links: the end of a log is what a failed run shows
bw_why() {
	cat "/tmp/bw.$1-$2.cli" "/tmp/bw.$1-$2.srv"
	echo "before: $BW_BEFORE"
	echo "after:  $(fwd_state)"
	for h in 0 1 2; do "$CTL" links "tbrdma$h"; done
	for h in 0 2; do rdma statistic show link "tbrdma$h/1"; done
	grep -ihE 'error|fail|status|timeout|retry' "/tmp/bw.$1-$2.cli" "/tmp/bw.$1-$2.srv" | head -6
}
# fwd_state: B's forwarding drops and A's link counters, to tell a run's drops from earlier steps
fwd_state() {
	echo "B:$("$CTL" links tbrdma1 | grep '^link' |
		grep -o ' id=[0-9]\| fwd_drop_[a-z]*=[1-9][0-9]*' | tr -d '\n');" \
		"A:$(rdma statistic show link tbrdma0/1 |
		grep -o ' retransmits [0-9]*\| timeouts [0-9]*\| tail_probes [0-9]*' | tr -d '\n')"
}
BW_BEFORE=$(fwd_state)
bw 0 2 "$GIA" "$GIC" "$CA" 18600 --pkey_index 1 -s 65536 -n 300 ||
	{ bw_why 0 2; fail "ib_write_bw A -> C on 0x8001"; }
wait "$BWSRV" || { cat /tmp/bw.0-2.srv; fail "ib_write_bw server on C"; }
grep -E '^ *65536 ' /tmp/bw.0-2.cli
echo "before: $BW_BEFORE"
echo "after:  $(fwd_state)"

step "B (slot 1: 0x8003), no member of 0x8001, on pkey_index 1 -> C: no completion, no data, counted"
GIB=$(host_gid 1 "$BA")
v0=$(viol 2) h0=$(hw 2 pkey_violations) r0=$(hw 2 rx_bytes)
c0=$(in_h 2 cat /sys/class/infiniband/tbrdma2/ports/1/counters/port_rcv_constraint_errors)
if BWT=30 bw 1 2 "$GIB" "$GIC" "$CA" 18601 --pkey_index 1 -s 65536 -n 50; then
	cat /tmp/bw.1-2.cli; fail "ib_write_bw B -> C completed on a partition B is not in"
fi
kill "$BWSRV" 2>/dev/null || true
wait "$BWSRV" || true
v1=$(viol 2) h1=$(hw 2 pkey_violations) r1=$(hw 2 rx_bytes)
c1=$(in_h 2 cat /sys/class/infiniband/tbrdma2/ports/1/counters/port_rcv_constraint_errors)
echo "C: violations $v0 -> $v1 (genl), $h0 -> $h1 (hw), PortRcvConstraintErrors $c0 -> $c1," \
	"rx_bytes $r0 -> $r1"
grep -E "Completion|error|Failed" /tmp/bw.1-2.cli | head -3 || true
((v1 > v0 && h1 > h0 && c1 > c0)) || fail "C's violation counters did not move"
[ "$r1" = "$r0" ] || fail "C took $((r1 - r0)) bytes from B"
"$T" --socket "$(sock 2)" counters --json | jq -e '[.. | objects | .pkey_violations? // empty]
	| any(. > 0)' > /dev/null || fail "tbctl counters shows no pkey_violations"

step "A's daemon restarts with partition 0x8002 (A, B) while B -> C runs on 0x8003"
{ cat /tmp/part1a.conf; printf '[Partition]\nName=tenant2\nPKey=0x8002\nMembers=%s=full %s=full\n' \
	"$GA" "$GB"; } > /tmp/part2a.conf
in_h 2 timeout 120 ib_write_bw -d tbrdma2 -x "$GIC" -F -p 18602 --pkey_index 2 -s 65536 -D 60 \
	> /tmp/bw.chg.srv 2>&1 &
BWSRV=$!
wait_for 10 in_h 2 sh -c "[ -n \"\$(ss -ltnH 'sport = :18602')\" ]"
in_h 1 timeout 120 ib_write_bw -d tbrdma1 -x "$GIB" -F -p 18602 --pkey_index 1 -s 65536 -D 60 \
	"$CA" > /tmp/bw.chg.cli 2>&1 &
BWCLI=$!
sleep 5
kill "${PID[0]}"
wait "${PID[0]}" || true
start_d 0 /tmp/part2a.conf
wait_for 50 table_is 0 0=0xffff 1=0x8001 2=0x8002
wait_for 20 table_is 1 0=0x7fff 1=0x8003 2=0x8002
table_is 2 0=0x7fff 1=0x8001 2=0x8003 3=0x0000 || fail "C's table changed"
echo "the new partition in A's and B's kernels $((SECONDS - t0)) s after the start"
kill -0 "$BWCLI" || { cat /tmp/bw.chg.cli; fail "ib_write_bw B -> C ended before the change was in"; }
wait "$BWCLI" || { cat /tmp/bw.chg.cli /tmp/bw.chg.srv; fail "ib_write_bw B -> C failed across the change"; }
wait "$BWSRV" || { cat /tmp/bw.chg.srv; fail "ib_write_bw server on C failed across the change"; }
grep -E '^ *65536 ' /tmp/bw.chg.cli
grep "sweep: partitions:" /tmp/tbrdmad-1.log | tail -2
"$T" --socket "$(sock 0)" partitions
echo "partitions: ok"
