#!/bin/bash
# tests/pkg/lifecycle.sh: the Debian packages of `make deb` through their life on a throwaway copy
# of this machine, natively: a private mount namespace with an overlay over / (writes go to
# build/pkgtest/upper and vanish with it; the host is not touched), chrooted into.
#   1. a kernel is "installed" as linux-image-K + linux-headers-K leave it for DKMS: its module
#      lists, depmod, /lib/modules/K/build -> Debian's headers (unpacked in the VM cache)
#   2. dpkg -i tbrdma-dkms tbrdmad ibverbs-provider-tbrdma: DKMS builds and installs tbrdma.ko
#      for it (dkms status, modinfo vermagic; its sources are kernel/'s); the packages enabled
#      and started nothing; conffile, units, rules, provider in place
#   3. a second kernel (the other Debian series) and its headers: run-parts header_postinst.d
#      (what linux-headers' postinst runs): DKMS builds and installs for it too
#   4. dpkg --purge of the three: no file left behind or removed (a listing before and after of
#      every place they touch), dkms knows nothing, modinfo finds no tbrdma
# Prints PASS/FAIL lines. Why not in a VM: dpkg reading its database and DKMS compiling under TCG
# took more than 10 minutes on this 2-core machine (tests/vm/tests/tbsim-systemd runs the
# installed product there, with make install). Needs root (unshare, mount).
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "${1:-}" != --inside ]; then
	W=$TOP/build/pkgtest
	rm -rf "$W"
	mkdir -p "$W/upper" "$W/work" "$W/root"
	export TBR_PKG_K1 TBR_PKG_K2 TBR_PKG_H1 TBR_PKG_H2 TBR_PKG_M1 TBR_PKG_M2
	TBR_PKG_K1=$("$TOP/tests/vm/kernel-abi" 6.1) && TBR_PKG_K2=$("$TOP/tests/vm/kernel-abi" 6.12) &&
	TBR_PKG_H1=$("$TOP/tests/vm/lib/setup-headers" "$TBR_PKG_K1") &&
	TBR_PKG_H2=$("$TOP/tests/vm/lib/setup-headers" "$TBR_PKG_K2") &&
	TBR_PKG_M1=$("$TOP/tests/vm/lib/setup-kernel" 6.1)/lib/modules/$TBR_PKG_K1 &&
	TBR_PKG_M2=$("$TOP/tests/vm/lib/setup-kernel" 6.12)/lib/modules/$TBR_PKG_K2 ||
		{ echo "FAIL pkg/setup: kernels or headers"; exit 1; }
	exec unshare -m --propagation private bash -c '
		set -e
		mount -t overlay -o "lowerdir=/,upperdir=$1/upper,workdir=$1/work" pkgroot "$1/root"
		for d in proc sys dev run tmp; do mount --rbind "/$d" "$1/root/$d"; done
		mount -t tmpfs tmp "$1/root/tmp"
		mount -t tmpfs run "$1/root/run"
		# the tree and the cached headers/modules, read-only at their own paths: the
		# overlay shows only the root file system (a clone under /tmp or on another
		# mount would be missing inside)
		for d in "$3" "$TBR_PKG_H1" "$TBR_PKG_H2" "$TBR_PKG_M1" "$TBR_PKG_M2"; do
			mkdir -p "$1/root$d"
			mount --rbind "$d" "$1/root$d"
			mount -o remount,bind,ro "$1/root$d"
		done
		exec chroot "$1/root" /bin/bash "$2" --inside' sh "$W" "$TOP/tests/pkg/lifecycle.sh" "$TOP"
fi

K1=$TBR_PKG_K1 K2=$TBR_PKG_K2
DEB=$TOP/build/deb
rc=0
pass() { echo "PASS pkg/$1"; }
fail() { echo "FAIL pkg/$1"; rc=1; }
# kernel_installed KVER HEADERS MODULES: what the kernel and headers packages leave for DKMS
kernel_installed() {
	mkdir -p "/lib/modules/$1"
	cp "$3"/modules.order "$3"/modules.builtin "$3"/modules.builtin.modinfo "/lib/modules/$1/"
	depmod -a "$1"
	ln -sfn "$2" "/lib/modules/$1/build"
}
# every place the packages put files, before and after
owned() {
	{ find /etc /lib/modprobe.d /lib/systemd /lib/udev /lib/modules /usr/src /usr/sbin /usr/bin \
		/usr/lib/x86_64-linux-gnu/libibverbs /usr/share/bash-completion /usr/share/man \
		/usr/share/doc /var/lib/dkms /var/lib/tbrdmad 2> /dev/null || :; } | sort
}
dkms_has() { dkms status -m tbrdma -k "$1" 2> /dev/null | grep -q ': installed'; }

kernel_installed "$K1" "$TBR_PKG_H1" "$TBR_PKG_M1"
owned > /tmp/owned.before
DEBS=$(ls "$DEB"/{tbrdma-dkms,tbrdmad,ibverbs-provider-tbrdma}_*.deb) || { echo "FAIL pkg/debs: make deb"; exit 1; }
t=$SECONDS
# shellcheck disable=SC2086
if DEBIAN_FRONTEND=noninteractive dpkg -i $DEBS > /tmp/dpkg.log 2>&1; then
	pass "install (dpkg -i, $((SECONDS - t)) s)"
else
	fail "install: dpkg -i failed"
	sed 's/^/  | /' /tmp/dpkg.log /var/lib/dkms/tbrdma/*/build/make.log 2> /dev/null | tail -30
	exit 1
fi
ko=/lib/modules/$K1/updates/dkms/tbrdma.ko
if dkms_has "$K1" && [ "$(modinfo -k "$K1" -n tbrdma)" = "$ko" ] &&
	modinfo -F vermagic "$ko" | grep -q "^$K1 "; then
	pass "dkms-build ($K1: $ko)"
else
	fail "dkms-build: no tbrdma.ko installed by DKMS for $K1"; dkms status
fi
# the module DKMS built is this tree's: the package's sources are kernel/'s (no srcversion: tbrdma
# has no MODULE_VERSION)
src=$(ls -d /usr/src/tbrdma-*)
diffs=$(cd "$src" && find . -type f ! -name dkms.conf | while read -r f; do
	cmp -s "$f" "$TOP/kernel/$f" || echo "$f"; done)
n=$(cd "$TOP/kernel" && find . -name '*.[ch]' -o -name Kbuild | wc -l)
if [ -z "$diffs" ] && [ "$(find "$src" -type f ! -name dkms.conf | wc -l)" = "$n" ]; then
	pass "dkms-sources ($src: kernel/'s $n files)"
else
	fail "dkms-sources: $src differs from kernel/ (stale build/deb? make deb):$diffs"
fi
miss=
for f in /usr/sbin/tbrdmad /usr/bin/tbctl /lib/systemd/system/tbrdmad.service /lib/udev/rules.d/70-tbrdma.rules \
	/lib/modprobe.d/tbrdma.conf /etc/libibverbs.d/tbrdma.driver /usr/share/man/man8/tbctl.8.gz \
	/usr/lib/x86_64-linux-gnu/libibverbs/libtbrdma-rdmav*.so /usr/share/bash-completion/completions/tbctl; do
	[ -e "$f" ] || miss+=" $f"
done
grep -qx /etc/tbrdmad.conf /var/lib/dpkg/info/tbrdmad.conffiles || miss+=" conffile:/etc/tbrdmad.conf"
[ -z "$miss" ] && pass "files" || fail "files: missing$miss"
if [ -z "$(ls /etc/systemd/system/*.wants/tbrdmad* 2> /dev/null)" ] &&
	[ ! -e /etc/modules-load.d/tbrdma.conf ]; then
	pass "enables-nothing"
else
	fail "enables-nothing: $(ls /etc/systemd/system/*.wants/tbrdmad* /etc/modules-load.d/tbrdma.conf 2>&1)"
fi

kernel_installed "$K2" "$TBR_PKG_H2" "$TBR_PKG_M2"
t=$SECONDS
run-parts --arg="$K2" /etc/kernel/header_postinst.d > /tmp/k2.log 2>&1
if dkms_has "$K2" && modinfo -F vermagic "/lib/modules/$K2/updates/dkms/tbrdma.ko" | grep -q "^$K2 "; then
	pass "dkms-next-kernel ($K2, $((SECONDS - t)) s)"
else
	fail "dkms-next-kernel: nothing installed for $K2"
	sed 's/^/  | /' /tmp/k2.log | tail -20
fi
owned > /tmp/owned.k2

t=$SECONDS
if dpkg --purge ibverbs-provider-tbrdma tbrdmad tbrdma-dkms > /tmp/purge.log 2>&1; then
	pass "purge (dpkg --purge, $((SECONDS - t)) s)"
else
	fail "purge: dpkg --purge failed"; sed 's/^/  | /' /tmp/purge.log | tail -20
fi
owned > /tmp/owned.after
# expected after the purge: what was there before, plus the second kernel's own files; dkms's
# module signing key (made at its first build of any module) is dkms's, purged with dkms
sort -u /tmp/owned.before <(grep "^/lib/modules/$K2" /tmp/owned.k2 | grep -v '/updates') > /tmp/owned.expected
grep -v '^/var/lib/dkms/mok\.\(key\|pub\)$' /tmp/owned.after > /tmp/owned.after2
if diff /tmp/owned.expected /tmp/owned.after2 > /tmp/owned.diff &&
	[ -z "$(dkms status tbrdma 2> /dev/null)" ] && ! modinfo -k "$K1" tbrdma > /dev/null 2>&1 &&
	[ -z "$(dpkg-query -W -f '${db:Status-Abbrev}\n' tbrdma-dkms tbrdmad ibverbs-provider-tbrdma 2> /dev/null | grep -v '^un')" ]; then
	pass "purge-clean (nothing left behind)"
else
	fail "purge-clean: left behind (>) or removed (<):"
	sed 's/^/  | /' /tmp/owned.diff | head -20
	dkms status tbrdma
fi
exit "$rc"
