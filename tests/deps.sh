#!/bin/bash
# tests/deps.sh: install every Debian 12 package that tbrdma's build, tests, benchmarks and demo
# need. Idempotent and non-interactive; a no-op (well under a second) when all are installed.
# Usage: tests/deps.sh            (root, or sudo available)
#        tests/deps.sh --list     print the package list and exit
set -euo pipefail

# Kernel ABI names are resolved from Debian's meta-packages, so the next point release keeps working.
abi_of() { # $1 = meta package (linux-image-amd64 / linux-image-6.12-amd64) -> linux-image-<abi>
	apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}

# No kernel image and no linux-headers package here: linux-headers-6.12 depends on its image, whose
# installation would change the host's default boot kernel. The VM kernels and the headers the
# module builds against are downloaded and unpacked into a cache (tests/vm/lib/setup-kernel,
# setup-headers); apt's lists must know them, hence the check below. dkms only Recommends
# linux-headers-amd64 (whose image it would pull) and Recommends are never installed here; the
# install itself is refused if apt would bring in any linux-image package (see the end).
packages() {
	[ -n "$(abi_of linux-image-amd64)" ] && [ -n "$(abi_of linux-image-6.12-amd64)" ] || return 1
	cat <<PKGS
build-essential gcc-12 make pkg-config kmod cpio zstd xz-utils file
libelf1 libssl3 zlib1g pahole
libibverbs-dev librdmacm-dev ibverbs-utils rdmacm-utils ibverbs-providers rdma-core perftest
python3-pyverbs nvme-cli nfs-kernel-server nfs-common ucx-utils libucx0 openmpi-bin libopenmpi-dev
libnl-3-dev libnl-genl-3-dev libnl-route-3-dev libsystemd-dev libjson-c-dev libsmartcols-dev
libgcrypt20-dev
libcmocka-dev clang libclang-rt-14-dev llvm
bats bats-assert bats-support jq
qemu-system-x86 qemu-utils busybox-static iproute2 iputils-ping strace procps psmisc
iperf3 ethtool netcat-openbsd
python3 python3-matplotlib gnuplot-nox valgrind linux-perf tshark trace-cmd
debhelper dh-dkms dkms lintian debootstrap
PKGS
}

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"
	done
}

run_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

list=$(packages) || {
	run_root apt-get update -qq
	list=$(packages) || { echo "deps: cannot resolve Debian kernel ABI names" >&2; exit 1; }
}
if [ "${1:-}" = --list ]; then
	echo $list
	exit 0
fi
# shellcheck disable=SC2086
todo=$(missing $list)
[ -z "$todo" ] && exit 0
echo "deps: installing:" $todo
export DEBIAN_FRONTEND=noninteractive
# a test command must not change the host's boot: refuse any plan that installs a kernel image
no_kernel_image() {
	local plan
	# shellcheck disable=SC2086
	plan=$(apt-get -s install -y --no-install-recommends $todo) || return 0	# apt says why below
	if grep -E '^Inst linux-image-' <<< "$plan"; then
		echo "deps: refusing: this would install a kernel image on the host (above)" >&2
		exit 1
	fi
}
no_kernel_image
# shellcheck disable=SC2086
if ! run_root apt-get install -y -qq --no-install-recommends $todo; then
	run_root apt-get update -qq
	no_kernel_image
	# shellcheck disable=SC2086
	run_root apt-get install -y -qq --no-install-recommends $todo
fi
