# The verbs objects test on Debian's 6.12 kernel (create_cq takes a uverbs_attr_bundle there).
# vm-kernel: 6.12
# vm-timeout: 240
. "$TBR_TOP/tests/vm/lib/guest.sh"
export RDMAV_DRIVERS=$TBR_TOP/build/provider/libtbrdma
PROG=$TBR_TOP/build/progs/verbs_objects
[ -x "$PROG" ] || fail "$PROG not built (make)"
case "$(uname -r)" in 6.12.*) ;; *) fail "booted $(uname -r), not a 6.12 kernel" ;; esac

tbr_load
ip link set tbr0 up
ip addr add 10.77.0.1/24 dev tbr0
wait_for 10 grep -q "ffff:0a4d:0001" -r /sys/class/infiniband/tbrdma0/ports/1/gids/
"$PROG" objects || fail "verbs_objects objects on $(uname -r)"
rmmod tbrdma
echo "verbs-612: ok on $(uname -r)"
