// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the ring symbols (ring.c), exported from a file that sees what
 * drivers/thunderbolt/nhi.c of the same kernel sees: the same headers, in the
 * same order, including the real module's internal nhi.h, nhi_regs.h and
 * tb.h from Debian's linux-source package (tests/vm/lib/setup-tbsrc; nothing
 * of them is copied here). A modversions CRC (genksyms) hashes the full type
 * of an exported symbol as its translation unit sees it, down to every struct
 * reachable from it (struct tb -> struct tb_switch, struct tb_nhi ->
 * struct tb_nhi_ops, ...) and is UNKNOWN for those only declared. Exported
 * from here, the stand-in's CRCs are the real thunderbolt.ko's, so modules
 * Debian built against it (thunderbolt-net) load against the stand-in
 * unchanged; tests/tbsim/abi-check compares them at build time.
 */
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/errno.h>
#include <linux/pci.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/property.h>
#include <linux/string_helpers.h>

#include "nhi.h"
#include "nhi_regs.h"
#include "tb.h"

EXPORT_SYMBOL_GPL(__tb_ring_enqueue);
EXPORT_SYMBOL_GPL(tb_ring_poll);
EXPORT_SYMBOL_GPL(tb_ring_poll_complete);
EXPORT_SYMBOL_GPL(tb_ring_alloc_tx);
EXPORT_SYMBOL_GPL(tb_ring_alloc_rx);
EXPORT_SYMBOL_GPL(tb_ring_start);
EXPORT_SYMBOL_GPL(tb_ring_stop);
EXPORT_SYMBOL_GPL(tb_ring_free);
