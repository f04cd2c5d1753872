// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tb backend's negotiation messages on the XDomain control
 * channel (kernel/core/tbr_nego.h): packets of our protocol UUID, requests
 * and responses. tb.c runs the negotiation; docs/thunderbolt.md.
 */
#include <linux/thunderbolt.h>
#include <linux/uuid.h>

#include "tbrdma.h"
#include "backends/tb_priv.h"

#define TBT_REQ_TIMEOUT_MS	500

/* Negotiation protocol UUID: 8571be34-32b4-44d6-afca-580725fa832f */
const uuid_t tbt_proto_uuid =
	UUID_INIT(0x8571be34, 0x32b4, 0x44d6,
		  0xaf, 0xca, 0x58, 0x07, 0x25, 0xfa, 0x83, 0x2f);

static void tbt_fill(struct tbt_conn *conn, struct tbt_pkt *p, u8 sn)
{
	u64 route = conn->xd->route;

	memset(p, 0, sizeof(*p));
	p->route_hi = upper_32_bits(route);
	p->route_lo = lower_32_bits(route);
	p->length_sn = ((sizeof(*p) - 12) / 4) & TBT_LENGTH_MASK;
	p->length_sn |= ((u32)sn << TBT_SN_SHIFT) & TBT_SN_MASK;
	uuid_copy(&p->uuid, &tbt_proto_uuid);
}

void tbt_msg_init(struct tbt_conn *conn, struct tbr_nego_msg *m, u8 type)
{
	tbr_nego_init(m, type);
	m->guid = tbr_dev_guid(conn->tdev);
	memcpy(m->initiator, conn->xd->local_uuid, 16);
	memcpy(m->target, conn->xd->remote_uuid, 16);
}

/* Answer a request from the handler. conn->lock held. */
void tbt_respond(struct tbt_conn *conn, const struct tbr_nego_msg *m, u8 sn)
{
	struct tbt_pkt p;

	tbt_fill(conn, &p, sn);
	if (tbr_nego_encode(m, p.body, ARRAY_SIZE(p.body)) < 0 ||
	    tb_xdomain_response(conn->xd, &p, sizeof(p), TB_CFG_PKG_XDOMAIN_RESP))
		dev_dbg(&conn->svc->dev, "tbrdma: sending %s failed\n",
			tbr_nego_type_name(m->type));
}

void tbt_respond_status(struct tbt_conn *conn, u32 seq, u32 status, u8 sn)
{
	struct tbr_nego_msg r;

	tbt_msg_init(conn, &r, TBR_NEGO_STATUS);
	r.seq = seq;
	r.status = status;
	tbt_respond(conn, &r, sn);
}

/*
 * Send @req and decode the answer into @ans. No lock held (the answer
 * arrives on the path that runs the protocol handler). Process context.
 */
int tbt_request(struct tbt_conn *conn, const struct tbr_nego_msg *req,
		       struct tbr_nego_msg *ans)
{
	struct tbt_pkt p, r;
	int ret;

	tbt_fill(conn, &p, conn->sn++ & 3);
	if (tbr_nego_encode(req, p.body, ARRAY_SIZE(p.body)) < 0)
		return -EINVAL;
	ret = tb_xdomain_request(conn->xd, &p, sizeof(p), TB_CFG_PKG_XDOMAIN_RESP,
				 &r, sizeof(r), TB_CFG_PKG_XDOMAIN_RESP,
				 TBT_REQ_TIMEOUT_MS);
	if (ret)
		return ret;
	if (!uuid_equal(&r.uuid, &tbt_proto_uuid))
		return -EBADMSG;
	ret = tbr_nego_decode(r.body, ARRAY_SIZE(r.body), ans);
	if (ret)
		return ret;
	if (ans->seq != req->seq || memcmp(ans->initiator, req->target, 16) ||
	    memcmp(ans->target, req->initiator, 16))
		return -EBADMSG;
	return 0;
}
