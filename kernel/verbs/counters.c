// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: port counters.
 *  - hardware counters (`rdma statistic show link tbrdmaN/1`, sysfs
 *    ports/1/hw_counters): the transport counters of every QP of the
 *    device, live and destroyed, and the frames and bytes the device sent
 *    to itself (loopback_*, loop.c);
 *  - the standard IB port counters (sysfs ports/1/counters: port_xmit_data,
 *    port_rcv_packets, ...), which the RDMA core reads as PerfMgt
 *    PortCounters and PortCountersExtended MADs through process_mad: the
 *    frames of every link of the device (rails and loopback) since it was
 *    made (struct tbr_rails.cnt), data in 4-byte words as IB counts it;
 *    port_rcv_constraint_errors: frames refused for their P_Key.
 *  - per QP (`rdma res show qp -dd`, driver attributes): the QP's own
 *    transport counters and, for a connected RC QP, what its requester
 *    knows of the path (RTTs, reordering, PSNs in flight, window).
 * Per-rail and per-link counters are in the generic netlink dumps
 * (docs/netlink.md).
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

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
	[TBR_XCNT_TAIL_PROBES].name = "tail_probes",
	[TBR_XCNT_CWND_CUTS].name = "cwnd_cuts",
	[TBR_XCNT_DUPLICATES].name = "duplicates",
	[TBR_XCNT_OUT_OF_WINDOW].name = "out_of_window",
	[TBR_XCNT_RX_MALFORMED].name = "rx_malformed",
	[TBR_XCNT_RX_INVALID].name = "rx_invalid",
	[TBR_XCNT_NAKS_SENT].name = "naks_sent",
	[TBR_XCNT_NAKS_RCVD].name = "naks_rcvd",
	[TBR_XCNT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[TBR_XCNT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[TBR_XCNT_TX_STALLS].name = "tx_stalls",
	[TBR_XCNT_ACKS_PIGGYBACKED].name = "acks_piggybacked",
	[TBR_XCNT_BUSY_POLLS].name = "busy_polls",
	[TBR_XCNT_BUSY_POLL_RX].name = "busy_poll_rx",
	[TBR_XCNT_BUSY_POLL_FRAMES].name = "busy_poll_frames",
	[TBR_XCNT_PKEY_VIOLATIONS].name = "pkey_violations",
	[TBR_XCNT_KICK_REQUEUES].name = "kick_requeues",
	[TBR_XCNT_KICK_BACKOFFS].name = "kick_backoffs",
	[TBR_XCNT_LOOPBACK_FRAMES].name = "loopback_frames",
	[TBR_XCNT_LOOPBACK_BYTES].name = "loopback_bytes",
	[TBR_XCNT_RX_NO_QP].name = "rx_no_qp",
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

static u64 tbr_port_cnt(struct tbr_dev *tdev, enum tbr_cnt c)
{
	return atomic64_read(&tdev->rails.cnt[c]);
}

/* PortCounters fields stop at their maximum (IBA 16.1.3.5) */
static __be16 tbr_sat16(u64 v)
{
	return cpu_to_be16(min_t(u64, v, U16_MAX));
}

static __be32 tbr_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

static void tbr_pma_port_counters(struct tbr_dev *tdev,
				  struct ib_pma_portcounters *pc, u8 port_select)
{
	pc->port_select = port_select;
	pc->port_rcv_errors = tbr_sat16(tbr_port_cnt(tdev, TBR_CNT_RX_ERRORS));
	pc->port_xmit_discards = tbr_sat16(tbr_port_cnt(tdev, TBR_CNT_TX_LOST));
	pc->port_xmit_data = tbr_sat32(tbr_port_cnt(tdev, TBR_CNT_TX_BYTES) / 4);
	pc->port_rcv_data = tbr_sat32(tbr_port_cnt(tdev, TBR_CNT_RX_BYTES) / 4);
	pc->port_xmit_packets = tbr_sat32(tbr_port_cnt(tdev, TBR_CNT_TX_FRAMES));
	pc->port_rcv_packets = tbr_sat32(tbr_port_cnt(tdev, TBR_CNT_RX_FRAMES));
	/* frames a QP refused for their P_Key (IBA: partition enforcement) */
	pc->port_rcv_constraint_errors =
		min_t(u64, tbr_port_cnt(tdev, TBR_CNT_PKEY_VIOLATIONS), U8_MAX);
}

/* every frame goes to one peer: all packets are unicast ones */
static void tbr_pma_port_counters_ext(struct tbr_dev *tdev,
				      struct ib_pma_portcounters_ext *pc,
				      u8 port_select)
{
	u64 tx = tbr_port_cnt(tdev, TBR_CNT_TX_FRAMES);
	u64 rx = tbr_port_cnt(tdev, TBR_CNT_RX_FRAMES);

	pc->port_select = port_select;
	pc->port_xmit_data = cpu_to_be64(tbr_port_cnt(tdev, TBR_CNT_TX_BYTES) / 4);
	pc->port_rcv_data = cpu_to_be64(tbr_port_cnt(tdev, TBR_CNT_RX_BYTES) / 4);
	pc->port_xmit_packets = cpu_to_be64(tx);
	pc->port_rcv_packets = cpu_to_be64(rx);
	pc->port_unicast_xmit_packets = cpu_to_be64(tx);
	pc->port_unicast_rcv_packets = cpu_to_be64(rx);
}

/*
 * Context: process or the MAD layer's work. Answers the PerfMgt Get of
 * ClassPortInfo, PortCounters and PortCountersExtended the RDMA core sends
 * locally (@in_wc NULL) for sysfs; every other MAD, and every MAD received
 * from the network, goes on to the MAD agents untouched.
 */
static int tbr_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
			   const struct ib_wc *in_wc, const struct ib_grh *in_grh,
			   const struct ib_mad *in, struct ib_mad *out,
			   size_t *out_size, u16 *out_pkey_index)
{
	struct tbr_dev *tdev = to_tbr_dev(ibdev);
	struct ib_pma_mad *pma = (struct ib_pma_mad *)out;
	struct ib_class_port_info *cpi;
	u8 port_select;

	if (in_wc || in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;
	/* PortCounters and PortCountersExtended: the byte after the first */
	port_select = ((const struct ib_pma_mad *)in)->data[1];
	memset(out, 0, sizeof(*out));
	out->mad_hdr = in->mad_hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	if (in->mad_hdr.attr_id == IB_PMA_CLASS_PORT_INFO) {
		cpi = (struct ib_class_port_info *)pma->data;
		cpi->base_version = 1;
		cpi->class_version = 1;
		cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS) {
		tbr_pma_port_counters(tdev, (void *)pma->data, port_select);
	} else if (in->mad_hdr.attr_id == IB_PMA_PORT_COUNTERS_EXT) {
		tbr_pma_port_counters_ext(tdev, (void *)pma->data,
					  port_select);
	} else {
		return IB_MAD_RESULT_SUCCESS;
	}
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

/*
 * `rdma res show qp -dd`: the driver attributes of one QP. Context: process
 * (netlink); takes qp->lock. The counters the QP itself counts (not the
 * device's loopback ones), then, for a connected RC QP, its path: srtt_ns,
 * rtt_hi_ns, min_rtt_ns, reo_ns (reordering measured), reo_wnd_ns (RACK's
 * window now), inflight (PSNs), cwnd (PSNs, 0: no window), sq_queued (WRs
 * not retired), timer_in_ns (0: no timer armed); for every QP tx_stalled
 * (waiting for TX room on its link) and tx_stall_listed (on the device's
 * list that a tx_ready walks) (docs/json.md).
 */
static int tbr_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	u64 v[TBR_XCNT_MAX] = {};
	bool path, stalled, listed;
	struct tbr_tqp_path p;
	struct nlattr *nest;
	unsigned long flags;
	u64 now;
	int i;

	spin_lock_irqsave(&qp->lock, flags);
	tbr_xport_qp_counters(qp, v);
	path = tbr_xport_qp_path(qp, &p);
	stalled = tbr_xport_qp_tx_stalled(qp, &listed);
	spin_unlock_irqrestore(&qp->lock, flags);
	now = ktime_get_ns();

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < TBR_XCNT_LOOPBACK_FRAMES; i++)
		if (rdma_nl_put_driver_u64(msg, tbr_counter_descs[i].name, v[i]))
			goto err;
	if (path &&
	    (rdma_nl_put_driver_u64(msg, "srtt_ns", p.srtt) ||
	     rdma_nl_put_driver_u64(msg, "rtt_hi_ns", p.rtt_hi) ||
	     rdma_nl_put_driver_u64(msg, "min_rtt_ns", p.min_rtt) ||
	     rdma_nl_put_driver_u64(msg, "reo_ns", p.reo) ||
	     rdma_nl_put_driver_u64(msg, "reo_wnd_ns", p.reo_wnd) ||
	     rdma_nl_put_driver_u32(msg, "inflight", p.inflight) ||
	     rdma_nl_put_driver_u32(msg, "cwnd", p.cwnd) ||
	     rdma_nl_put_driver_u32(msg, "sq_queued", p.sq_queued) ||
	     rdma_nl_put_driver_u64(msg, "timer_in_ns", p.deadline == TBR_NO_DEADLINE ? 0 :
				    p.deadline > now ? p.deadline - now : 1)))
		goto err;
	if (rdma_nl_put_driver_u32(msg, "tx_stalled", stalled) ||
	    rdma_nl_put_driver_u32(msg, "tx_stall_listed", listed))
		goto err;
	nla_nest_end(msg, nest);
	return 0;

err:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

const struct ib_device_ops tbr_counter_ops = {
	.alloc_hw_port_stats = tbr_alloc_hw_port_stats,
	.fill_res_qp_entry = tbr_fill_res_qp_entry,
	.get_hw_stats = tbr_get_hw_stats,
	.process_mad = tbr_process_mad,
};
