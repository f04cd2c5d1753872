# tb-load on Debian's 6.12 kernel: thunderbolt.ko and tbrdma.ko load together, the service driver
# and our XDomain property directory are registered, thunderbolt-net stays loadable, unload is
# clean, twice.
# vm-kernel: 6.12
# vm-timeout: 300
case "$(uname -r)" in 6.12.*) ;; *) echo "FAIL: booted $(uname -r), not a 6.12 kernel"; exit 1 ;; esac
. "$TBR_TOP/tests/vm/tests/tb-load.sh"
