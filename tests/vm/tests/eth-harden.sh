# eth rails against a hostile or churning segment (issue 13), one VM, veth pairs, raw-socket
# peers from tests/tools/eth-peer.py (docs/eth.md's wire format). Peer table: a peer that comes
# back under a new GUID 12 times is accepted every time (dead peers expire, with their rails),
# 9 live peers at once: 8 get in and the full table is logged; a real device recreated joins.
# vm-timeout: 200
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/tests/rail.lib"

PEER=$TBR_TOP/tests/tools/eth-peer.py
links_up() { "$CTL" links "$1" | grep -q "^link dev=$1 .*rails_up=$2 "; }
peers_of() { "$CTL" eth "$1" | sed -n "s/^eth dev=$1 ifname=$2 .* peers=\([0-9]*\) .*/\1/p"; }

modprobe veth
tbr_load eth_hello_ms=100
ip link add ha type veth peer name hb
ip link set ha up
ip link set hb up
"$CTL" eth-bind tbrdma0 ha || fail "eth-bind ha"

step "a peer back under a new GUID 12 times: accepted every time (the table holds 8)"
python3 "$PEER" churn hb 12 --wait 15 | tee /tmp/churn || fail "a new peer was ignored"
[ "$(grep -c '^accepted' /tmp/churn)" = 12 ] || fail "not all 12 accepted"
p=$(peers_of tbrdma0 ha)
[ -n "$p" ] && [ "$p" -le 8 ] || fail "peers=$p"
dmesg | grep -q 'ha: eth peer [0-9a-f]* expired' || fail "no expiry logged"

step "9 live peers at once: 8 get in, the full table is logged"
rc=0; python3 "$PEER" flood hb 9 --time 4 > /tmp/flood || rc=$?
cat /tmp/flood
[ "$rc" = 1 ] && [ "$(grep -c '^accepted' /tmp/flood)" = 8 ] || fail "flood: rc $rc"
dmesg | grep -q 'ha: eth peer table full (8 live peers)' || fail "full table not logged"

step "a real device, recreated twice, joins each time"
for i in 1 2; do
	d=$("$CTL" dev-new) || fail "dev-new"
	"$CTL" eth-bind "$d" hb || fail "eth-bind hb"
	wait_for 15 links_up tbrdma0 1
	wait_for 15 links_up "$d" 1
	"$CTL" dev-del "$d" || fail "dev-del"
	wait_for 15 sh -c "! '$CTL' links tbrdma0 | grep -q 'rails_up=1 '"
done
"$CTL" eth tbrdma0
rmmod tbrdma || fail "rmmod"
echo "eth-harden: ok"
