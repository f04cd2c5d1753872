# tests/vm/lib/rail.sh: helpers for the rail-*.sh VM tests (source after guest.sh).
# shellcheck shell=bash
CTL=$TBR_TOP/build/tools/tbrdma-ctl

# port_is DEV ACTIVE|DOWN: the port state the RDMA core reports (sysfs)
port_is() { grep -q "$2" "/sys/class/infiniband/$1/ports/1/state"; }

# netdev_of DEV / guid_of DEV: from `tbrdma-ctl devs`
netdev_of() { "$CTL" devs | sed -n "s/^dev dev=$1 .*netdev=\([^ ]*\).*/\1/p"; }
guid_of() { "$CTL" devs | sed -n "s/^dev dev=$1 .*guid=\([0-9a-f]*\).*/\1/p"; }

# cnt DEV LINK RAIL NAME: a rail counter from the last `tbrdma-ctl links > /tmp/links`
cnt() {
	sed -n "s/^  rail dev=$1 link=$2 id=$3 .* $4=\([0-9]*\).*/\1/p" /tmp/links
}
# lcnt DEV LINK NAME: a link counter
lcnt() {
	sed -n "s/^link dev=$1 id=$2 .* $3=\([0-9]*\).*/\1/p" /tmp/links
}

# expect_err REGEX CMD...: CMD must fail (exit 1) with a message matching REGEX on stderr
expect_err() {
	local re=$1 rc=0
	shift
	"$@" > /tmp/expect.out 2> /tmp/expect.err || rc=$?
	[ "$rc" = 1 ] || fail "'$*' exited $rc, expected 1 ($(cat /tmp/expect.err))"
	grep -Eq "$re" /tmp/expect.err || fail "'$*': message '$(cat /tmp/expect.err)' lacks '$re'"
	echo "refused as expected: $* -> $(cat /tmp/expect.err)"
}

# mgmt_listen_start DEV COUNT / mgmt_listen_wait: a listener in the background, ready on return
mgmt_listen_start() {
	rm -f /tmp/mgmt.out /tmp/mgmt.err
	"$CTL" mgmt-listen "$1" --count "$2" --timeout 20 > /tmp/mgmt.out 2> /tmp/mgmt.err &
	MGMT_PID=$!
	wait_for 5 grep -q listening /tmp/mgmt.err
}
mgmt_listen_wait() {
	wait "$MGMT_PID" || fail "mgmt-listen failed or timed out: $(cat /tmp/mgmt.err) $(cat /tmp/mgmt.out)"
}

# mgmt_roundtrip FROM TO TEXT: TEXT sent on FROM's link 1 arrives once at TO, intact
mgmt_roundtrip() {
	local hex
	hex=$(printf %s "$3" | od -An -v -tx1 | tr -d ' \n')
	mgmt_listen_start "$2" 1
	"$CTL" mgmt-send "$1" 1 "$3" || fail "mgmt-send $1 -> $2 failed"
	mgmt_listen_wait
	cat /tmp/mgmt.out
	grep -q "^mgmt dev=$2 link=1 rail=[0-9]* peer=$(guid_of "$1") len=${#3} hex=$hex text=$3\$" \
		/tmp/mgmt.out || fail "datagram $1 -> $2 wrong or missing"
}
