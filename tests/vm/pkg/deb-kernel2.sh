# Issue 16's acceptance, the next kernel: on the clean Debian where deb-install.setup installed the
# packages (its own setup boot, or TBR_VM_SETUP_IMG=RESULTS/deb-install/setup.img to reuse that
# installed system), the second kernel of the root's /var/cache/tbrdma-kernel2 (the release's next
# ABI: image, headers and the metapackage upgrades, as a kernel update brings them) is installed
# with apt: DKMS's kernel hooks build and install tbrdma.ko for it (vermagic checked); then `apt
# purge` of the three packages removes the module of both kernels, and the root's file list is the
# one before the install plus the second kernel's own files.
# Run by hand: TBR_VM_TESTS=$PWD/tests/vm/pkg tests/vm/run -j 1 deb-kernel2[@pkg-bookworm]
# vm-kernel: pkg-trixie pkg-bookworm
# vm-init: systemd
# vm-setup: 3600
# vm-timeout: 3000
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/pkg/files.lib"
export DEBIAN_FRONTEND=noninteractive
K=$(uname -r)
P=/root/pkgtest
T0=$SECONDS
el() { echo "$((SECONDS - T0))s"; }
for p in tbrdma-dkms tbrdmad ibverbs-provider-tbrdma; do
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' "$p" | grep -q ' ii $' || fail "$p not installed"
done
dkms status

step "a second kernel: DKMS builds for it ($(el))"
C=/var/cache/tbrdma-kernel2
K2=$(cat $C/KVER)
[ "$K2" != "$K" ] || fail "the second kernel is the running one"
ls $C
root_files > /tmp/files.k2pre
t=$SECONDS
# without Recommends, as the root itself was debootstrapped: the VM has no network, and the new
# image's Recommends (apparmor on 13) are not in the cache (apt failed fetching it)
apt-get install -y --no-install-recommends $C/*.deb > /tmp/k2.log 2>&1 || { tail -n 40 /tmp/k2.log; fail "installing kernel $K2 failed"; }
grep -v -e '^(Reading database' /tmp/k2.log | tail -n 30
echo "kernel $K2 installed, DKMS build included: $((SECONDS - t)) s"
dkms status
dkms status tbrdma -k "$K2" | grep -q ': installed' || fail "dkms did not install tbrdma for $K2"
ls /lib/modules/"$K2"/updates/dkms/tbrdma.ko* || fail "no tbrdma.ko for $K2"
[ "$(modinfo -k "$K2" -F vermagic tbrdma | cut -d' ' -f1)" = "$K2" ] || fail "vermagic is not $K2"
dkms status tbrdma -k "$K" | grep -q ': installed' || fail "the running kernel's tbrdma is gone"
root_files > /tmp/files.k2post

step "apt purge ($(el))"
purge_packages
! ls /lib/modules/*/updates/dkms/tbrdma.ko* 2> /dev/null || fail "a tbrdma.ko is left"
# expected: the files before the install plus what the second kernel brought, not tbrdma's
comm -13 /tmp/files.k2pre /tmp/files.k2post | grep -v -e tbrdma -e "^/lib/modules/$K2/updates" \
	-e "^/usr/lib/modules/$K2/updates" > /tmp/k2.added || true
echo "the second kernel added $(wc -l < /tmp/k2.added) files"
sort -u $P/files.before /tmp/k2.added > /tmp/files.expected
files_as_expected /tmp/files.expected
step "done ($(el))"
