# tests/vm/lib/pair.sh: two tbrdma devices in one VM joined by an emulated cable, with the
# provider, ready for the rdma-core tools (source after guest.sh).
#   pair_up RAILS   load tbrdma, create tbrdma1, cable tbrdma0 <-> tbrdma1 with RAILS rails,
#                   address tbr0 10.88.0.1/24 and tbr1 10.88.0.2/24, wait for ACTIVE ports
#                   and IPv4 RoCE v2 GIDs; sets GID0 and GID1 (their GID indexes)
# shellcheck shell=bash
CTL=$TBR_TOP/build/tools/tbrdma-ctl
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma

# gid_index DEV IPV4: the index of DEV's RoCE v2 GID ::ffff:IPV4
gid_index() {
	local want g i
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] || continue
		grep -q 'RoCE v2' "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$i" 2>/dev/null &&
			{ echo "$i"; return 0; }
	done
	return 1
}

pair_up() {
	tbr_load
	"$CTL" dev-new > /dev/null || fail "dev-new failed"
	"$CTL" cable-new tbrdma0 tbrdma1 --rails "$1" > /dev/null || fail "cable-new failed"
	ip link set tbr0 up
	ip link set tbr1 up
	ip addr add 10.88.0.1/24 dev tbr0
	ip addr add 10.88.0.2/24 dev tbr1
	wait_for 10 grep -q ACTIVE /sys/class/infiniband/tbrdma0/ports/1/state
	wait_for 10 grep -q ACTIVE /sys/class/infiniband/tbrdma1/ports/1/state
	wait_for 10 gid_index tbrdma0 10.88.0.1
	wait_for 10 gid_index tbrdma1 10.88.0.2
	GID0=$(gid_index tbrdma0 10.88.0.1)
	GID1=$(gid_index tbrdma1 10.88.0.2)
	export GID0 GID1
}
