# tbrdma: RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings.
#   make deps    install every Debian 12 package the build, tests and demo need
#   make         build everything that exists (tbrdma.ko for the VM tests' kernel, test modules)
#   make check   deps + build + host unit tests + QEMU VM tests; ends with "N passed, N failed"
#   make demo    boot a VM and show what tbrdma does today (see README.md)
#   make vm-shell  a developer shell inside a booted test VM
# KVER/KDIR select the kernel headers for the module (default: Debian's linux-image-amd64 ABI).
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
KVER ?= $(shell $(TOP)/tests/vm/kernel-abi 6.1)
KVER612 := $(shell $(TOP)/tests/vm/kernel-abi 6.12 2>/dev/null)

all: kernel selftest-modules tools provider progs daemon

# test tools (tbrdma-ctl: genl control of devices, cables, rails)
tools:
	$(MAKE) -C tests/tools

# tbrdmad (daemon) and tbctl (CLI): build/tbrdmad/tbrdmad, build/tbctl/tbctl
daemon:
	$(MAKE) -C tbrdmad
	$(MAKE) -C tbctl

# userspace provider (libtbrdma-rdmav34.so) and the C programs VM tests run
provider progs:
	$(MAKE) -C $(if $(filter progs,$@),tests/progs,provider)

deps:
	@$(TOP)/tests/deps.sh

kernel:
	$(MAKE) -C kernel KVER=$(KVER)

# the VM harness's WARN self-test module, for every kernel the VM tests boot
selftest-modules:
	$(MAKE) -C kernel KVER=$(KVER) SRC=$(TOP)/tests/vm/selftest NAME=tbr_selftest_warn
	$(MAKE) -C kernel KVER=$(KVER612) SRC=$(TOP)/tests/vm/selftest NAME=tbr_selftest_warn
	$(MAKE) -C kernel KVER=$(KVER612)

check:
	@$(TOP)/tests/check.sh

demo:
	@$(TOP)/tests/deps.sh
	@$(MAKE) -s all
	@$(TOP)/tests/vm/demo

vm-shell: all
	@$(TOP)/tests/vm/run --shell

# everything built; the downloaded kernels and VM results (build/vm) stay
clean:
	rm -rf $(filter-out $(TOP)/build/vm,$(wildcard $(TOP)/build/*))

.PHONY: all deps kernel selftest-modules tools provider progs daemon check demo vm-shell clean
