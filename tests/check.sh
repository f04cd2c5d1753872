#!/bin/bash
# tests/check.sh: what `make check` runs. Installs dependencies, builds, then runs every suite:
#   build   the module against Debian's 6.1 and 6.12 headers (W=1 must be warning-free), then
#           tests/lint/kernel-layers.py on its objects (no call circle, link layer clean), then
#           provider/pabi-check (the provider's pabiN.h against the installed libibverbs, and
#           against rdma-core's tags if TBR_RDMA_CORE_GIT names a mirror of rdma-core)
#   unit    host unit tests of the transport core (cmocka, TAP), plain and ASan+UBSan
#   bats    tbrdmad's unit tests (cmocka, TAP, plain and ASan+UBSan) and the bats tests of
#           tbrdmad/tbctl on the host (tests/bats, no kernel module needed)
#   fuzz    `make fuzz-smoke`: every libFuzzer target for FUZZ_SECONDS (60) with its corpus; at
#           nice 10 in the background while the VM suite runs, so it takes the CPU the VMs leave
#   pkg     make deb (lintian clean) and tests/pkg/lifecycle.sh (dpkg -i, DKMS for two kernels,
#           purge, on an overlay copy of this machine); niced, in the background like fuzz
#   vm      QEMU VM tests (tests/vm/run)
# One line per test ("PASS name" / "FAIL name: why"), at the end the failures again ("  failed:
#   name: why"), then "N passed, N failed". Exit 1 on failure.
# Env: CHECK_SUITES="build unit bats vm" to run a subset; VM_JOBS for tests/vm/run -j.
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
LOG=$TOP/build/check
mkdir -p "$LOG"
SUITES=${CHECK_SUITES:-build unit bats fuzz pkg vm}
JOBS=$(nproc)
T0=$(date +%s)
: > "$LOG/results"

record() { # record LINE...: print and keep result lines
	local l
	for l in "$@"; do echo "$l"; echo "$l" >> "$LOG/results"; done
}

tap_to_results() { # tap_to_results PREFIX < TAP -> PASS/FAIL lines
	# cmocka closes each group with "# ok - GROUP": the group's cases are named PREFIX/GROUP/case
	local prefix=$1 line group
	local -a pending=()
	while IFS= read -r line; do
		case "$line" in
		"not ok "*) pending+=("FAIL $(sed -E 's/^not ok [0-9]+ (- )?//' <<< "$line")") ;;
		"ok "*) pending+=("PASS $(sed -E 's/^ok [0-9]+ (- )?//' <<< "$line")") ;;
		"# ok - "*|"# not ok - "*)
			group=${line##* - }
			for line in "${pending[@]}"; do record "${line%% *} $prefix/$group/${line#* }"; done
			pending=() ;;
		esac
	done
	for line in "${pending[@]}"; do record "${line%% *} $prefix/${line#* }"; done
}

suite_build() {
	local series kver out sites labels
	for series in 6.1 6.12; do
		kver=$(tests/vm/kernel-abi "$series")
		out=$LOG/build-$series.log
		rm -rf "build/kmod/$kver/tbrdma"	# every file compiled, so every warning is seen
		if make -s -j"$JOBS" -C kernel KVER="$kver" W=1 > "$out" 2>&1; then
			if grep -q 'warning:' "$out"; then
				record "FAIL build/kmod-$series: W=1 warnings ($out)"
				grep 'warning:' "$out" | head -5 | sed 's/^/  | /'
			else
				record "PASS build/kmod-$series ($kver, W=1 clean)"
			fi
			# the layering rules of docs/architecture.md, on the objects just built
			layers=$LOG/layers-$series.log
			tests/lint/kernel-layers.py "build/kmod/$kver/tbrdma" > "$layers" 2>&1
			grep -E '^(PASS|FAIL) ' "$layers" |
				sed -E "s#^(PASS|FAIL) layers/#\1 build/layers-$series/#" |
				while IFS= read -r l; do record "$l"; done
			grep '^  | ' "$layers" | head -10
			grep -q '^PASS layers/no-circle' "$layers" || grep -q '^FAIL' "$layers" ||
				record "FAIL build/layers-$series: kernel-layers.py failed ($layers)"
			# the capture tap's cost while no monitor is up (docs/capture.md): every call site
			# is a jump label of tbr_link_tap_key, a patched-out jump, not a load and a test
			sites=$(grep -ho 'static_branch_unlikely(&tbr_link_tap_key)' kernel/link/*.c | wc -l)
			labels=$(readelf -rW "build/kmod/$kver/tbrdma/tbrdma.ko" |
				awk '/^Relocation section/ { s = $3 } s ~ /__jump_table/ && / tbr_link_tap_key/' | wc -l)
			if [ "$sites" -ge 2 ] && [ "$labels" = "$sites" ]; then
				record "PASS build/tap-jump-labels-$series ($sites call sites, each a jump label)"
			else
				record "FAIL build/tap-jump-labels-$series: $sites call sites, $labels jump labels of tbr_link_tap_key"
			fi
		else
			record "FAIL build/kmod-$series: build failed ($out)"
			tail -n 10 "$out" | sed 's/^/  | /'
		fi
	done
	# the transport core's benchmark (bench/core_bench.c, make bench's section 1): built, every
	# target byte checked (-c), and each point with its figures, the two-copy pipeline's included
	out=$LOG/core-bench.log
	if make -s -C bench > "$LOG/core-bench-build.log" 2>&1 &&
		build/bench/core_bench -c -r 1,4 -s 4K,64K -t 0.05 > "$out" 2>&1 &&
		awk -F, 'NR > 1 { n++; if (NF != 14 || $3 <= 0 || $13 <= 0) bad++ }
			END { exit !(n == 4 && !bad) }' "$out"; then
		record "PASS build/core-bench (4 points, bytes verified)"
	else
		record "FAIL build/core-bench ($out, $LOG/core-bench-build.log)"
		tail -n 5 "$out" "$LOG/core-bench-build.log" | sed 's/^/  | /'
	fi
	# the bare link under make bench's VM figures (bench/pktfloor.c): a ping-pong (its
	# ping first, so the pong comes up under its resent warm-up frames) and a blast over a veth pair
	# in a network namespace of its own, the host's links untouched
	out=$LOG/pktfloor.log
	if unshare -n bash -c '
		set -e
		ip link add pf0 mtu 9000 type veth peer name pf1 mtu 9000
		ip link set pf0 up
		ip link set pf1 up
		mac=$(ip link show pf1 | awk "/link\/ether/ { print \$2 }")
		build/bench/pktfloor ping pf0 "$mac" 200 64 & ping=$!
		build/bench/pktfloor pong pf1 & pong=$!
		wait $ping
		build/bench/pktfloor stop pf0 "$mac"
		wait $pong
		build/bench/pktfloor sink pf1 & sink=$!
		build/bench/pktfloor blast pf0 "$mac" 8192 1
		build/bench/pktfloor stop pf0 "$mac"
		wait $sink' > "$out" 2>&1 &&
		grep -Eq 'ping 200 x 64 B: one-way median [0-9.]+ us' "$out" &&
		grep -Eq 'sink [0-9.]+ MB/s' "$out"; then
		record "PASS build/pktfloor (ping-pong and blast over a veth pair)"
	else
		record "FAIL build/pktfloor ($out)"
		tail -n 5 "$out" | sed 's/^/  | /'
	fi
	# the provider's private-ABI header (provider/pabiN.h) against the installed libibverbs, and
	# against rdma-core's own tags when TBR_RDMA_CORE_GIT names a git mirror of rdma-core
	out=$LOG/pabi.log
	{ make -s -C provider check; provider/pabi-check tags; } > "$out" 2>&1
	grep -E '^(PASS|FAIL) ' "$out" | while IFS= read -r l; do record "$l"; done
	grep '^SKIP ' "$out"
	grep -q '^PASS pabi/installed/provider' "$out" || grep -q '^FAIL' "$out" ||
		record "FAIL pabi/installed: make -C provider check failed ($out)"
}

suite_unit() {
	local target
	[ -f tests/unit/Makefile ] || return 0
	for target in check check-asan; do
		local out=$LOG/unit-$target.log
		nice -n 10 make -s -j"$JOBS" -C tests/unit "$target" > "$out" 2>&1
		local rc=$?
		tap_to_results "unit${target#check}" < "$out"
		if [ "$rc" != 0 ] && ! grep -q '^not ok' "$out"; then
			record "FAIL unit${target#check}/build: make $target failed ($out)"
			tail -n 10 "$out" | sed 's/^/  | /'
		fi
	done
}

suite_bats() {
	local target out rc
	for target in check check-asan; do
		out=$LOG/tbrdmad-$target.log
		make -s -j"$JOBS" -C tbrdmad "$target" > "$out" 2>&1
		rc=$?
		tap_to_results "tbrdmad${target#check}" < "$out"
		if [ "$rc" != 0 ] && ! grep -q '^not ok' "$out"; then
			record "FAIL tbrdmad${target#check}/build: make $target failed ($out)"
			tail -n 10 "$out" | sed 's/^/  | /'
		fi
	done
	out=$LOG/bats.log
	bats --tap tests/bats > "$out" 2>&1
	rc=$?
	tap_to_results bats < "$out"
	if [ "$rc" != 0 ] && ! grep -q '^not ok' "$out"; then
		record "FAIL bats/run: bats failed ($out)"
		tail -n 10 "$out" | sed 's/^/  | /'
	fi
}

suite_fuzz() { # one PASS/FAIL line per fuzzer
	local out=$LOG/fuzz.log rc
	# niced and one at a time beside the VMs: a single input may then wait long for the CPU
	nice -n 10 make -s fuzz-smoke FUZZ_JOBS=1 FUZZ_TIMEOUT=120 > "$out" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL) ' "$out" | while IFS= read -r l; do record "$l"; done
	if [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$out"; then
		record "FAIL fuzz/run: make fuzz-smoke failed ($out)"
		tail -n 10 "$out" | sed 's/^/  | /'
	fi
}

suite_pkg() { # make deb (lintian clean), then the packages' life on a copy of this machine
	local out=$LOG/deb.log
	if nice -n 10 make -s deb > "$out" 2>&1; then
		record "PASS build/deb ($(ls build/deb/*.deb | wc -l) packages, lintian clean)"
		out=$LOG/pkg.log
		nice -n 10 tests/pkg/lifecycle.sh > "$out" 2>&1
		grep -E '^(PASS|FAIL) |^  \| ' "$out" | while IFS= read -r l; do
			case "$l" in PASS\ *|FAIL\ *) record "$l" ;; *) echo "$l" ;; esac
		done
		grep -q '^FAIL ' "$out" || grep -q '^PASS pkg/purge-clean' "$out" ||
			record "FAIL pkg/run: tests/pkg/lifecycle.sh ended early ($out)"
	else
		record "FAIL build/deb: make deb failed ($out)"
		tail -n 10 "$out" | sed 's/^/  | /'
	fi
}

suite_vm() {
	local out=$LOG/vm.log
	tests/vm/run ${VM_JOBS:+-j "$VM_JOBS"} 2>&1 | tee "$out" | while IFS= read -r l; do
		case "$l" in PASS\ *|FAIL\ *) echo "$l" >> "$LOG/results" ;; esac
		echo "$l"
	done
}

# make check must not touch the host's boot: the kernel images installed before deps, compared
# at the end (a test of tests/deps.sh and of everything the suites run)
kernel_images() {
	dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' 'linux-image*' 2> /dev/null |
		grep -v '^un' || true
}
kimg0=$(kernel_images)

if ! tests/deps.sh; then
	record "FAIL deps: tests/deps.sh failed"
else
	# the VMs' Debian 13 root (tests of vm-kernel trixie): debootstrap is mostly download, so
	# on an empty cache it runs beside the build; tests/vm/run waits for it (its lock)
	case " $SUITES " in *" vm "*)
		nice -n 10 tests/vm/lib/setup-userspace trixie > "$LOG/userspace.log" 2>&1 & ;;
	esac
	# the build suite compiles the module (W=1, as `make` does) first, so `make all` reuses it
	case " $SUITES " in *" build "*) suite_build ;; esac
	if ! make -s -j"$JOBS" all > "$LOG/make.log" 2>&1; then
		record "FAIL build/all: make failed ($LOG/make.log)"
		tail -n 20 "$LOG/make.log" | sed 's/^/  | /'
	else
		bg_pids=
		for s in $SUITES; do
			case "$s" in
			build) ;;
			# unit, fuzz and pkg run niced in the background during the VM suite (their lines
			# are printed when it ends); none of them depends on a clock (unit's tests run on
			# emulated time), so a loaded CPU makes them slower, never flaky
			unit|fuzz|pkg) case " $SUITES " in
				*" vm "*) "suite_$s" > "$LOG/$s.results" & bg_pids+=" $s:$!" ;;
				*) "suite_$s" ;;
				esac ;;
			*) "suite_$s" ;;
			esac
		done
		for p in $bg_pids; do
			wait "${p#*:}"
			cat "$LOG/${p%%:*}.results"
		done
	fi
fi
if [ "$(kernel_images)" = "$kimg0" ]; then
	record "PASS host/kernel-images (dpkg -l 'linux-image*' unchanged: $(grep -c . <<< "$kimg0") installed)"
else
	record "FAIL host/kernel-images: dpkg -l 'linux-image*' changed during make check"
	diff <(echo "$kimg0") <(kernel_images) | sed 's/^/  | /'
fi
passed=$(grep -c '^PASS' "$LOG/results")
failed=$(grep -c '^FAIL' "$LOG/results")
echo "check: $(( $(date +%s) - T0 ))s wall"
# the failures again at the end, where a log cut to its head and tail still shows them (not as
# FAIL lines: each failure is counted once, above)
grep '^FAIL' "$LOG/results" | sed 's/^FAIL /  failed: /' || true
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
