/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbrdma: the Thunderbolt/USB4 rail backend (tb.c, docs/thunderbolt.md). */
#ifndef TBRDMA_TB_H
#define TBRDMA_TB_H

/*
 * Module init, after the host device (tbrdma0) exists: our XDomain property
 * directory, the negotiation protocol handler, the service driver. A
 * failure is logged and the module runs without Thunderbolt rails.
 * Exit, before the devices go: every Thunderbolt rail goes down first.
 * Both context "process", tbr_ctl_mutex not held.
 */
int tbr_tb_init(void);
void tbr_tb_exit(void);

#endif /* TBRDMA_TB_H */
