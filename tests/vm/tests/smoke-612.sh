# Debian's 6.12 kernel: tbrdma.ko built against its headers loads, registers tbrdma0, unloads.
# vm-kernel: 6.12
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"

case "$(uname -r)" in 6.12.*) ;; *) fail "booted $(uname -r), not a 6.12 kernel" ;; esac
tbr_load
rdma dev show tbrdma0 > /dev/null || fail "tbrdma0 is not in 'rdma dev'"
[ "$(cat /sys/class/infiniband/tbrdma0/ports/1/link_layer)" = Ethernet ] ||
	fail "link layer is not Ethernet"
rmmod tbrdma
rdma dev show | grep -q tbrdma && fail "tbrdma0 still registered after rmmod"
echo "smoke-612: ok on $(uname -r)"
