// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tb backend's negotiation messages on the XDomain control
 * channel (kernel/core/tbr_nego.h): packets of our protocol UUID, requests
 * and responses. tb.c runs the negotiation; docs/thunderbolt.md.
 */
#include <linux/random.h>
#include <linux/thunderbolt.h>
#include <linux/uuid.h>

#include "tbrdma.h"
#include "backends/tb_priv.h"

#define TBT_REQ_TIMEOUT_MS	500

/* Negotiation protocol UUID: 8571be34-32b4-44d6-afca-580725fa832f */
const uuid_t tbt_proto_uuid =
	UUID_INIT(0x8571be34, 0x32b4, 0x44d6,
		  0xaf, 0xca, 0x58, 0x07, 0x25, 0xfa, 0x83, 0x2f);

/* the packet's size with @nw body words */
static size_t tbt_pkt_size(unsigned int nw)
{
	return offsetof(struct tbt_pkt, body) + nw * sizeof(u32);
}

/* The header of @p, whose @nw body words are encoded already. */
static void tbt_fill(struct tbt_conn *conn, struct tbt_pkt *p, u8 sn,
		     unsigned int nw)
{
	u64 route = conn->xd->route;

	p->route_hi = upper_32_bits(route);
	p->route_lo = lower_32_bits(route);
	p->length_sn = ((tbt_pkt_size(nw) - 12) / 4) & TBT_LENGTH_MASK;
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

void tbt_msg_session(struct tbt_conn *conn, struct tbr_nego_msg *m)
{
	if (!conn->peer_proven)
		return;
	m->auth = true;
	m->auth_flags = TBR_NEGO_AUTH_MAC;
	m->nonce = conn->hello_nonce;
	m->peer_nonce = conn->remote.nonce;
}

void tbt_respond(struct tbt_conn *conn, const struct tbr_nego_msg *m, u8 sn,
		 unsigned int nw)
{
	struct tbr_auth a;
	struct tbt_pkt p;
	int len;

	memset(&p, 0, sizeof(p));
	len = tbr_nego_encode(m, p.body, ARRAY_SIZE(p.body));
	if (len < 0)
		goto err;
	nw = clamp_t(unsigned int, nw, len, ARRAY_SIZE(p.body));
	tbt_fill(conn, &p, sn, nw);
	if (m->auth && (m->auth_flags & TBR_NEGO_AUTH_MAC)) {
		tbr_link_auth_get(conn->tdev, &a);
		if (tbr_nego_sign(&a, p.body, len))
			goto err;
	}
	if (!tb_xdomain_response(conn->xd, &p, tbt_pkt_size(nw),
				 TB_CFG_PKG_XDOMAIN_RESP))
		return;
err:
	dev_dbg(&conn->svc->dev, "tbrdma: sending %s failed\n",
		tbr_nego_type_name(m->type));
}

void tbt_respond_status(struct tbt_conn *conn, u32 seq, u32 status, u8 sn,
			unsigned int nw)
{
	struct tbr_nego_msg r;

	tbt_msg_init(conn, &r, TBR_NEGO_STATUS);
	r.seq = seq;
	r.status = status;
	tbt_respond(conn, &r, sn, nw);
}

void tbt_respond_hello(struct tbt_conn *conn, const struct tbr_nego_msg *m,
		       u32 status, u8 sn, unsigned int nw)
{
	struct tbr_nego_msg r = conn->local;	/* fixed since probe */

	r.type = TBR_NEGO_HELLO_REPLY;
	r.seq = m->seq;
	r.status = status;
	if (m->auth && status == TBR_NEGO_ST_OK) {
		/* answer its challenge: signed if we hold the key */
		r.auth = true;
		r.auth_flags = tbr_link_auth_keyed(conn->tdev) ? TBR_NEGO_AUTH_MAC : 0;
		r.nonce = get_random_u64();
		r.peer_nonce = m->nonce;
	}
	tbt_respond(conn, &r, sn, nw);
}

void tbt_auth_refused(struct tbt_conn *conn, u64 guid, int err)
{
	tbr_link_auth_refused(conn->tdev);
	dev_warn_ratelimited(&conn->svc->dev,
			     "tbrdma: refused peer %016llx: %s\n", guid,
			     err == -ENOKEY ? "it holds no fabric key" :
			     err == -ESTALE ? "its reply answers another HELLO (replayed)" :
			     err == -EKEYREJECTED ? "wrong fabric key" :
			     err == -EBADMSG ? "its READY or BYE is not signed with the fabric key" :
			     "a fabric key is required");
}

/*
 * Send @req and decode the answer into @ans. No lock held (the answer
 * arrives on the path that runs the protocol handler). Process context.
 * A HELLO with TBR_NEGO_AUTH_MAC (we hold a fabric key) takes only a
 * HELLO_REPLY that proves the replier holds it too, answering @req's nonce:
 * -ENOKEY, -ESTALE or -EKEYREJECTED otherwise (tbr_nego_verify(), @ans
 * filled).
 */
int tbt_request(struct tbt_conn *conn, const struct tbr_nego_msg *req,
		       struct tbr_nego_msg *ans)
{
	struct tbt_pkt p, r;
	struct tbr_auth a;
	int ret, nw;

	memset(&p, 0, sizeof(p));
	nw = tbr_nego_encode(req, p.body, ARRAY_SIZE(p.body));
	if (nw < 0)
		return -EINVAL;
	tbt_fill(conn, &p, conn->sn++ & 3, nw);
	if ((req->type == TBR_NEGO_READY || req->type == TBR_NEGO_BYE) && req->auth &&
	    (req->auth_flags & TBR_NEGO_AUTH_MAC)) {
		/* a keyed session's READY or BYE (tbt_msg_session) */
		tbr_link_auth_get(conn->tdev, &a);
		ret = tbr_nego_sign(&a, p.body, nw);
		if (ret)
			return ret;
	}
	/* the answer is as long as the request (tbt_respond()) */
	ret = tb_xdomain_request(conn->xd, &p, tbt_pkt_size(nw), TB_CFG_PKG_XDOMAIN_RESP,
				 &r, tbt_pkt_size(nw), TB_CFG_PKG_XDOMAIN_RESP,
				 TBT_REQ_TIMEOUT_MS);
	if (ret)
		return ret;
	if (!uuid_equal(&r.uuid, &tbt_proto_uuid))
		return -EBADMSG;
	ret = tbr_nego_decode(r.body, nw, ans);
	if (ret)
		return ret;
	if (ans->seq != req->seq || memcmp(ans->initiator, req->target, 16) ||
	    memcmp(ans->target, req->initiator, 16))
		return -EBADMSG;
	if (req->type == TBR_NEGO_HELLO && (req->auth_flags & TBR_NEGO_AUTH_MAC) &&
	    ans->type == TBR_NEGO_HELLO_REPLY && ans->status == TBR_NEGO_ST_OK) {
		tbr_link_auth_get(conn->tdev, &a);
		return tbr_nego_verify(&a, r.body, nw, ans, req->nonce);
	}
	return 0;
}
