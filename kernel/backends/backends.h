/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the rail backends (link/rail.h, struct tbr_backend), for main.c's
 * table; a backend names only itself.
 */
#ifndef TBRDMA_BACKENDS_H
#define TBRDMA_BACKENDS_H

#include "link/rail.h"

extern const struct tbr_backend tbr_emu_backend;	/* emu.c: emulated cables */
extern const struct tbr_backend tbr_eth_backend;	/* eth.c: rails over netdevs */
extern const struct tbr_backend tbr_tb_backend;		/* tb.c: Thunderbolt/USB4 */

#endif /* TBRDMA_BACKENDS_H */
