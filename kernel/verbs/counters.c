// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: port hardware counters (`rdma statistic show link tbrdmaN/1`): the
 * transport counters of every QP of the device, live and destroyed, and the
 * frames and bytes the device sent to itself (loopback_*, loop.c). Per-rail
 * and per-link counters are in the generic netlink dumps (docs/netlink.md).
 */
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

static const struct rdma_stat_desc tbr_counter_descs[TBR_XCNT_MAX] = {
	[TBR_XCNT_TX_FRAMES].name = "tx_frames",
	[TBR_XCNT_TX_BYTES].name = "tx_bytes",
	[TBR_XCNT_RX_FRAMES].name = "rx_frames",
	[TBR_XCNT_RX_BYTES].name = "rx_bytes",
	[TBR_XCNT_RETRANSMITS].name = "retransmits",
	[TBR_XCNT_FAST_RETRANSMITS].name = "fast_retransmits",
	[TBR_XCNT_SPURIOUS_RETRANSMITS].name = "spurious_retransmits",
	[TBR_XCNT_TIMEOUTS].name = "timeouts",
	[TBR_XCNT_DUPLICATES].name = "duplicates",
	[TBR_XCNT_OUT_OF_WINDOW].name = "out_of_window",
	[TBR_XCNT_RX_MALFORMED].name = "rx_malformed",
	[TBR_XCNT_RX_INVALID].name = "rx_invalid",
	[TBR_XCNT_NAKS_SENT].name = "naks_sent",
	[TBR_XCNT_NAKS_RCVD].name = "naks_rcvd",
	[TBR_XCNT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[TBR_XCNT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[TBR_XCNT_TX_STALLS].name = "tx_stalls",
	[TBR_XCNT_LOOPBACK_FRAMES].name = "loopback_frames",
	[TBR_XCNT_LOOPBACK_BYTES].name = "loopback_bytes",
};

static struct rdma_hw_stats *tbr_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(tbr_counter_descs, TBR_XCNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* Context: process. Sums every live QP (under its lock) and the retired. */
static int tbr_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			    u32 port, int index)
{
	struct tbr_dev *tdev = to_tbr_dev(ibdev);
	u64 v[TBR_XCNT_MAX] = {};
	unsigned long idx, flags;
	struct tbr_qp *qp;
	void *entry;
	int i;

	xa_for_each(&tdev->qp_xa, idx, entry) {
		qp = tbr_qp_get(tdev, idx);
		if (!qp)
			continue;
		spin_lock_irqsave(&qp->lock, flags);
		tbr_xport_qp_counters(qp, v);
		spin_unlock_irqrestore(&qp->lock, flags);
		tbr_qp_put(qp);
	}
	for (i = 0; i < TBR_XCNT_MAX; i++)
		stats->value[i] = v[i] + atomic64_read(&tdev->xcnt_retired[i]);
	if (tdev->rails.loop) {
		stats->value[TBR_XCNT_LOOPBACK_FRAMES] =
			atomic64_read(&tdev->rails.loop->cnt[TBR_CNT_TX_FRAMES]);
		stats->value[TBR_XCNT_LOOPBACK_BYTES] =
			atomic64_read(&tdev->rails.loop->cnt[TBR_CNT_TX_BYTES]);
	}
	return TBR_XCNT_MAX;
}

const struct ib_device_ops tbr_counter_ops = {
	.alloc_hw_port_stats = tbr_alloc_hw_port_stats,
	.get_hw_stats = tbr_get_hw_stats,
};
