# tbrdma: RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings.
#   make deps    install every Debian 12 package the build, tests and demo need
#   make         build everything that exists (tbrdma.ko for the VM tests' kernel, test modules)
#   make check   deps + build + host unit tests + QEMU VM tests; ends with "N passed, N failed"
#   make demo    boot a VM and show what tbrdma does today (see README.md)
#   make vm-shell  a developer shell inside a booted test VM
#   make install / make uninstall   DESTDIR, PREFIX (default /usr/local), KVER: see the end
#   make deb     Debian packages (DKMS module source, daemon + tbctl, provider) into build/deb/
# KVER/KDIR select the kernel headers for the module (default: Debian's linux-image-amd64 ABI).
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
KVER ?= $(shell $(TOP)/tests/vm/kernel-abi 6.1)
KVER612 := $(shell $(TOP)/tests/vm/kernel-abi 6.12 2>/dev/null)
# the debug kernel's release when one is cached (make debug-kernel): its modules are built too
KVERDBG := $(shell $(TOP)/tests/vm/kernel-abi debug 2>/dev/null)

all: kernel selftest-modules tools provider progs daemon

# test tools (tbrdma-ctl: genl control of devices, cables, rails)
tools:
	$(MAKE) -C tests/tools

# tbrdmad (daemon) and tbctl (CLI): build/tbrdmad/tbrdmad, build/tbctl/tbctl
daemon:
	$(MAKE) -C tbrdmad
	$(MAKE) -C tbctl

# userspace provider (libtbrdma-rdmavN.so, N: libibverbs' private ABI) and the C programs VM tests run
provider progs:
	$(MAKE) -C $(if $(filter progs,$@),tests/progs,provider)

deps:
	@$(TOP)/tests/deps.sh

kernel:
	$(MAKE) -C kernel KVER=$(KVER) W=1

# the stand-in for kernel $(1), with the real thunderbolt.ko's internal headers (tests/vm/lib/setup-tbsrc)
# for its exports' modversions CRCs, which tests/tbsim/abi-check compares with the kernel's
tbsim = ksrc=$$($(TOP)/tests/vm/lib/setup-tbsrc $(1)) && kdir=$$($(TOP)/tests/vm/lib/setup-headers $(1)) && \
	$(MAKE) -C kernel KVER=$(1) SRC=$(TOP)/tests/tbsim NAME=thunderbolt W=1 TBSIM_KSRC=$$ksrc && \
	$(TOP)/tests/tbsim/abi-check $(TOP)/build/kmod/$(1)/thunderbolt/Module.symvers $$kdir/Module.symvers

# the VM harness's WARN self-test module, the Thunderbolt stand-in (tests/tbsim) and tbrdma.ko for
# every kernel the VM tests boot (the production tbrdma.ko loads against the stand-in: same CRCs)
selftest-modules:
	$(MAKE) -C kernel KVER=$(KVER) SRC=$(TOP)/tests/vm/selftest NAME=tbr_selftest_warn
	$(MAKE) -C kernel KVER=$(KVER612) SRC=$(TOP)/tests/vm/selftest NAME=tbr_selftest_warn
	$(call tbsim,$(KVER))
	$(call tbsim,$(KVER612))
	$(MAKE) -C kernel KVER=$(KVER612) W=1
ifneq ($(KVERDBG),)
	$(MAKE) -C kernel KVER=$(KVERDBG) SRC=$(TOP)/tests/vm/selftest NAME=tbr_selftest_warn
	$(MAKE) -C kernel KVER=$(KVERDBG) SRC=$(TOP)/tests/vm/debug/selftest NAME=tbr_selftest_debug
	$(call tbsim,$(KVERDBG))
	$(MAKE) -C kernel KVER=$(KVERDBG) W=1
endif

# the debug kernel of the VM harness (KASAN, lockdep, kmemleak...: docs/testing.md), built once
# from Debian's linux-source-6.1 into $(TBR_VM_CACHE) (~25 min on 2 cores); then check-debug runs
# the whole VM suite on it
debug-kernel:
	@$(TOP)/tests/vm/lib/setup-debug-kernel --build > /dev/null
	@$(MAKE) -s all
check-debug: debug-kernel
	@$(TOP)/tests/vm/run --kernel debug
.PHONY: debug-kernel check-debug

check:
	@$(TOP)/tests/check.sh

# the VM runs make check leaves out for its time budget (docs/testing.md): the Thunderbolt
# stand-in's tests on 6.12 too, tbsim-unplug's unplug at every step of setup and teardown,
# route-ring's RDMA between every pair of its five hosts, stripe-faults', stripe-unequal-cut's and
# stripe-tb-eth's full 1 GiB, ip-stripe's 1 GiB over TCP with a rail cut and restored
check-long: all
	@VM_ENV=ROUTE_RING_ALL_PAIRS ROUTE_RING_ALL_PAIRS=1 $(TOP)/tests/vm/run route-ring
	@VM_ENV=TBSIM_UNPLUG_STEPS TBSIM_UNPLUG_STEPS=all $(TOP)/tests/vm/run tbsim-unplug
	@VM_ENV="TBSIM_UNPLUG_STEPS TBSIM_LAT_ROUNDS" TBSIM_UNPLUG_STEPS=all TBSIM_LAT_ROUNDS=5 \
		$(TOP)/tests/vm/run --kernel 6.12 \
		tbsim-unplug tbsim-icm tbsim-framing tbsim-cable tbsim-hostile tbsim-systemd tbsim-pair
	@VM_ENV=FAULTS_MIB FAULTS_MIB=1024 $(TOP)/tests/vm/run stripe-faults
	@VM_ENV=UNEQUAL_MIB UNEQUAL_MIB=1024 $(TOP)/tests/vm/run stripe-unequal-cut
	@VM_ENV=TB_ETH_MIB TB_ETH_MIB=1024 VM_TIMEOUT_SCALE=3 $(TOP)/tests/vm/run stripe-tb-eth
	@VM_ENV=IP_TBNET_FAIR IP_TBNET_FAIR=1 $(TOP)/tests/vm/run ip-tbnet
	@VM_ENV=IP_STRIPE_MIB IP_STRIPE_MIB=1024 VM_TIMEOUT_SCALE=3 $(TOP)/tests/vm/run ip-stripe
.PHONY: check-long

# libFuzzer targets of tests/fuzz (clang, ASan+UBSan): builds them all, runs each for FUZZ_SECONDS
# (60) with its corpus, FUZZ_JOBS (2) at a time; one PASS/FAIL line each, fails on any crash
FUZZ_JOBS ?= 2
fuzz-smoke:
	$(MAKE) -C tests/fuzz -j$(FUZZ_JOBS) smoke FUZZ_JOBS=$(FUZZ_JOBS)

# RAILS=tb (default): one 2-lane Thunderbolt cable through the test-only stand-in (tests/tbsim);
# RAILS=eth: two virtio NICs as eth rails
RAILS ?= tb
demo:
	@$(TOP)/tests/deps.sh
	@$(MAKE) -s all
	@RAILS=$(RAILS) $(TOP)/tests/vm/demo

vm-shell: all
	@$(TOP)/tests/vm/run --shell

# benchmarks (bench/run.sh, < 20 min on 2 cores): transport core vs memcpy on the host, callgrind
# instruction counts, tbrdma vs rdma_rxe in QEMU, striping; regenerates docs/bench.md and
# docs/bench/ (CSV, PNG). BENCH_QUICK=1 make bench: a short smoke run
bench: kernel tools provider
	$(MAKE) -C bench bench
.PHONY: bench

# Debian packages (debian/, docs/packaging.md): tbrdma-dkms, tbrdmad, ibverbs-provider-tbrdma in
# build/deb/, built by dpkg-buildpackage in a copy of the tree (it writes next to the source
# directory) and checked by lintian (errors and warnings fail). Build-Depends: `make deps`.
DEB_VERSION := $(shell dpkg-parsechangelog -l $(TOP)/debian/changelog -SVersion 2>/dev/null)
deb:
	rm -rf build/deb
	mkdir -p build/deb/tbrdma-$(DEB_VERSION)
	if git -C $(TOP) rev-parse --git-dir > /dev/null 2>&1; then \
		git -C $(TOP) ls-files -co --exclude-standard -z | xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar -C $(TOP) --null -T - -cf - | tar -C build/deb/tbrdma-$(DEB_VERSION) -xf -; \
	else \
		tar -C $(TOP) --exclude=./build -cf - . | tar -C build/deb/tbrdma-$(DEB_VERSION) -xf -; \
	fi
	cd build/deb/tbrdma-$(DEB_VERSION) && dpkg-buildpackage -b -us -uc > ../build.log 2>&1 || \
		{ tail -n 30 ../build.log; exit 1; }
	lintian --fail-on error,warning build/deb/tbrdma_$(DEB_VERSION)_*.changes
	@ls build/deb/*.deb

# everything built; the downloaded kernels and VM results (build/vm) stay
clean:
	rm -rf $(filter-out $(TOP)/build/vm,$(wildcard $(TOP)/build/*))

.PHONY: all deps kernel selftest-modules tools provider progs daemon check fuzz-smoke demo vm-shell \
	deb clean

# ---- install / uninstall (issue 7) -------------------------------------------------------------
#   make && sudo make install     tbrdma.ko for KVER (default: the kernel above; on the machine
#                                 itself: make KVER=$(uname -r) install), tbrdmad, tbctl, the
#                                 libibverbs provider, systemd units, udev rules, man pages, bash
#                                 completion, /etc/tbrdmad.conf (only if there is none)
#   make install DESTDIR=/tmp/root PREFIX=/usr   staged (no depmod, no udev/systemd reload)
#   make install MODULES_LOAD=yes also load tbrdma at boot (modules-load.d)
#   make uninstall                removes exactly what install put (same DESTDIR/PREFIX/KVER)
# The module, the provider and the configuration live where the kernel, libibverbs and tbrdmad
# look for them whatever PREFIX is: /lib/modules/KVER/updates, /usr/lib/MULTIARCH/libibverbs,
# /etc. systemd and udev read units and rules under /usr/local/lib too.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
NETWORKDIR ?= $(PREFIX)/lib/systemd/network
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
MODPROBEDIR ?= $(PREFIX)/lib/modprobe.d
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
MODDIR ?= /lib/modules/$(KVER)/updates
MODULES_LOAD ?= no
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
PROVIDER_DIR ?= /usr/lib/$(MULTIARCH)/libibverbs
INSTALL ?= install
# the provider's file: libtbrdma-rdmavN.so, N the installed libibverbs' private ABI (provider/)
PROVIDER_LIB = libtbrdma-rdmav$(firstword $(shell provider/pabi-check installed --print-pabi 2>/dev/null | tail -1)).so
# every file install puts (modules-load.d: with MODULES_LOAD=yes), relative to DESTDIR; the
# configuration is handled on its own
INSTALLED = $(SBINDIR)/tbrdmad $(BINDIR)/tbctl $(MODDIR)/tbrdma.ko \
	$(UNITDIR)/tbrdmad.service $(UNITDIR)/tbrdmad.socket $(UDEVRULESDIR)/70-tbrdma.rules $(UDEVRULESDIR)/90-tbrdma-eth.rules \
	$(NETWORKDIR)/70-tbrdma.link $(MODPROBEDIR)/tbrdma.conf \
	$(MANDIR)/man8/tbrdmad.8 $(MANDIR)/man8/tbctl.8 $(MANDIR)/man5/tbrdmad.conf.5 \
	$(BASHCOMPDIR)/tbctl /etc/libibverbs.d/tbrdma.driver $(PROVIDER_DIR)/$(PROVIDER_LIB) \
	$(MODULESLOADDIR)/tbrdma.conf

# install-user: everything but the module and its modprobe.d/modules-load.d files (what the
# Debian packages tbrdmad and ibverbs-provider-tbrdma ship: debian/rules; the module comes from
# tbrdma-dkms there)
install-user: daemon provider
	$(INSTALL) -D -m 0755 build/tbrdmad/tbrdmad $(DESTDIR)$(SBINDIR)/tbrdmad
	$(INSTALL) -D -m 0755 build/tbctl/tbctl $(DESTDIR)$(BINDIR)/tbctl
	$(MAKE) -C provider install DESTDIR=$(DESTDIR) PROVIDER_DIR=$(PROVIDER_DIR)
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/tbrdmad.service.in > $(DESTDIR)$(UNITDIR)/tbrdmad.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/tbrdmad.service
	$(INSTALL) -D -m 0644 systemd/tbrdmad.socket $(DESTDIR)$(UNITDIR)/tbrdmad.socket
	$(INSTALL) -D -m 0644 systemd/70-tbrdma.rules $(DESTDIR)$(UDEVRULESDIR)/70-tbrdma.rules
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/90-tbrdma-eth.rules.in > $(DESTDIR)$(UDEVRULESDIR)/90-tbrdma-eth.rules
	chmod 0644 $(DESTDIR)$(UDEVRULESDIR)/90-tbrdma-eth.rules
	$(INSTALL) -D -m 0644 systemd/70-tbrdma.link $(DESTDIR)$(NETWORKDIR)/70-tbrdma.link
	$(INSTALL) -D -m 0644 man/tbrdmad.8 $(DESTDIR)$(MANDIR)/man8/tbrdmad.8
	$(INSTALL) -D -m 0644 man/tbctl.8 $(DESTDIR)$(MANDIR)/man8/tbctl.8
	$(INSTALL) -D -m 0644 man/tbrdmad.conf.5 $(DESTDIR)$(MANDIR)/man5/tbrdmad.conf.5
	$(INSTALL) -D -m 0644 tbctl/tbctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/tbctl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf"; \
	else \
		echo "$(INSTALL) -D -m 0644 tbrdmad/tbrdmad.conf $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf"; \
		$(INSTALL) -D -m 0644 tbrdmad/tbrdmad.conf $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf; \
	fi

install: kernel install-user
	$(INSTALL) -D -m 0644 build/kmod/$(KVER)/tbrdma/tbrdma.ko $(DESTDIR)$(MODDIR)/tbrdma.ko
	$(INSTALL) -D -m 0644 systemd/tbrdma-modprobe.conf $(DESTDIR)$(MODPROBEDIR)/tbrdma.conf
	@if [ "$(MODULES_LOAD)" = yes ]; then set -x; $(INSTALL) -D -m 0644 \
		systemd/tbrdma-modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/tbrdma.conf; fi
	@if [ -z "$(DESTDIR)" ]; then \
		set -x; depmod -a $(KVER); \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi; \
		udevadm control --reload 2> /dev/null || true; \
	fi

# the configuration goes only if it is the one install put (unchanged)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@if cmp -s tbrdmad/tbrdmad.conf $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf; then \
		echo "rm -f $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf"; rm -f $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/tbrdmad.conf (changed)"; \
	fi
	@if [ -z "$(DESTDIR)" ]; then \
		set -x; depmod -a $(KVER); \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi; \
		udevadm control --reload 2> /dev/null || true; \
	fi

.PHONY: install install-user uninstall
