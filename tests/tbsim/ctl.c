// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the control channel. As in the real ctl.c/xdomain.c, every control
 * packet received (from any cable) is handled in order by one worker, the
 * "control RX ring work" (process context): XDomain discovery requests are
 * scheduled to the discovery code, other XDomain packets are offered to the
 * registered protocol handlers first (a handler returning > 0 consumes the
 * packet), then matched against the pending tb_xdomain_request() calls with
 * the real rules (type XDOMAIN_RESP, route without bit 63, protocol UUID,
 * size at least response_size / 4). Connection-manager work that talks to
 * the local host router (enabling DMA paths) also needs this worker: its
 * "register write" is answered only when the worker gets to it, as the
 * router's response frame on the real control ring would be. A handler that
 * blocks the worker therefore stalls path setup, as on hardware, up to the
 * real 5 s config timeout.
 */
#include <linux/crc32.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>

#include "tbsim.h"

struct tbsim_ctl_pkt {
	struct list_head node;
	u8 type;
	bool token;			/* a host router "register write" */
	refcount_t ref;			/* token: waiter + worker */
	struct completion done;		/* token */
	size_t size;
	u32 buf[TBSIM_CTL_MAX / 4];
};

struct tbsim_req {
	struct list_head node;		/* reqs, req_lock */
	const void *request;
	void *response;
	size_t response_size;
	struct completion done;
	bool matched;
};

static const uuid_t tbsim_xdp_uuid =
	UUID_INIT(0xb638d70e, 0x42ff, 0x40bb,
		  0x97, 0xc2, 0x90, 0xe2, 0xc0, 0xb2, 0xff, 0x07);

static LIST_HEAD(rxq);
static DEFINE_SPINLOCK(rxq_lock);
static unsigned int rxq_len;
static LIST_HEAD(reqs);
static DEFINE_MUTEX(req_lock);
static LIST_HEAD(handlers);
static DEFINE_MUTEX(handlers_lock);
static struct work_struct rx_work;

static void pkt_put(struct tbsim_ctl_pkt *p)
{
	if (!p->token || refcount_dec_and_test(&p->ref))
		kfree(p);
}

/* Real ctl.c: only an XDOMAIN_RESP (or ERROR) can answer an XDomain request */
static bool req_match(const struct tbsim_req *r, const struct tbsim_ctl_pkt *p)
{
	const struct tbsim_xdp_hdr *res = (const void *)p->buf, *req = r->request;

	if (p->type == TB_CFG_PKG_ERROR)
		return true;
	if (p->type != TB_CFG_PKG_XDOMAIN_RESP)
		return false;
	/* sic: bytes against dwords, as ctl.c compares */
	if (p->size < r->response_size / 4 || p->size < sizeof(*res))
		return false;
	if ((res->route_hi & ~BIT(31)) != req->route_hi || res->route_lo != req->route_lo)
		return false;
	return uuid_equal(&res->uuid, &req->uuid);
}

/* tb_xdomain_handle_request(): true when the packet is consumed */
static bool handle_event(struct tbsim_ctl_pkt *p)
{
	const struct tbsim_xdp_hdr *hdr = (const void *)p->buf;
	struct tb_protocol_handler *h, *tmp;
	unsigned int length;
	int ret = 0;

	if (p->size < sizeof(*hdr))
		return true;
	length = hdr->length_sn & TBSIM_LENGTH_MASK;
	if (length != p->size / 4 - 3)
		return true;
	if (uuid_equal(&hdr->uuid, &tbsim_xdp_uuid)) {
		if (p->type == TB_CFG_PKG_XDOMAIN_REQ) {
			tbsim_xdp_request(p->buf, p->size);
			return true;
		}
		return false;
	}
	mutex_lock(&handlers_lock);
	list_for_each_entry_safe(h, tmp, &handlers, list) {
		if (!uuid_equal(&hdr->uuid, h->uuid))
			continue;
		mutex_unlock(&handlers_lock);
		ret = h->callback(p->buf, p->size, h->data);
		mutex_lock(&handlers_lock);
		if (ret)
			break;
	}
	mutex_unlock(&handlers_lock);
	return ret > 0;
}

static void dispatch(struct tbsim_ctl_pkt *p)
{
	struct tbsim_req *r;

	if (p->type == TB_CFG_PKG_XDOMAIN_REQ || p->type == TB_CFG_PKG_XDOMAIN_RESP)
		tbsim_fault_xd_guid(p->buf, p->size, false);
	if ((p->type == TB_CFG_PKG_XDOMAIN_REQ || p->type == TB_CFG_PKG_XDOMAIN_RESP) &&
	    handle_event(p))
		return;
	mutex_lock(&req_lock);
	list_for_each_entry(r, &reqs, node) {
		if (!req_match(r, p))
			continue;
		memcpy(r->response, p->buf, min(p->size, r->response_size));
		r->matched = true;
		list_del_init(&r->node);
		complete(&r->done);
		break;
	}
	mutex_unlock(&req_lock);
}

static void rx_work_fn(struct work_struct *work)
{
	struct tbsim_ctl_pkt *p;

	for (;;) {
		spin_lock_bh(&rxq_lock);
		p = list_first_entry_or_null(&rxq, struct tbsim_ctl_pkt, node);
		if (p) {
			list_del(&p->node);
			rxq_len--;
		}
		spin_unlock_bh(&rxq_lock);
		if (!p)
			return;
		if (p->token)
			complete(&p->done);
		else
			dispatch(p);
		pkt_put(p);
		cond_resched();
	}
}

static void rxq_add(struct tbsim_ctl_pkt *p)
{
	spin_lock_bh(&rxq_lock);
	list_add_tail(&p->node, &rxq);
	rxq_len++;
	spin_unlock_bh(&rxq_lock);
	queue_work(tbsim.wq, &rx_work);
}

/*
 * A control packet from cable @c (softirq, CRC checked). The route is the
 * one of the port it came in on (as the router rewrites it); bit 63 is kept.
 */
void tbsim_ctl_rx(struct tbsim_cable *c, const void *buf, size_t size, u8 type)
{
	struct tbsim_ctl_pkt *p;

	if (size < 12 || size > TBSIM_CTL_MAX || size % 4 || READ_ONCE(rxq_len) > 256)
		return;
	p = kzalloc(sizeof(*p), GFP_ATOMIC);
	if (!p)
		return;
	memcpy(p->buf, buf, size);
	p->buf[0] = (p->buf[0] & BIT(31)) | upper_32_bits((u64)c->port);
	p->buf[1] = lower_32_bits((u64)c->port);
	p->size = size;
	p->type = type;
	rxq_add(p);
}

int tbsim_ctl_send(struct tbsim_cable *c, const void *buf, size_t size, u8 type)
{
	struct tbsim_wire w = { .kind = TBSIM_WIRE_CTL, .eof = type };
	u32 copy[TBSIM_CTL_MAX / 4];

	if (size < 12 || size > TBSIM_CTL_MAX || size % 4)
		return -EINVAL;
	if (!c)
		return -ENOTCONN;
	memcpy(copy, buf, size);
	if (tbsim_fault_xd_guid(copy, size, true))
		buf = copy;
	return tbsim_cable_xmit(c, &w, buf, size);
}

/*
 * A register write to the local host router and its response, through the
 * control worker (see the top). Process context, no tbsim lock held.
 * 0 or -ETIMEDOUT.
 */
int tbsim_ctl_roundtrip(void)
{
	struct tbsim_ctl_pkt *p = kzalloc(sizeof(*p), GFP_KERNEL);
	int ret = 0;

	if (!p)
		return -ENOMEM;
	p->token = true;
	refcount_set(&p->ref, 2);
	init_completion(&p->done);
	rxq_add(p);
	if (!wait_for_completion_timeout(&p->done, msecs_to_jiffies(TBSIM_CFG_TIMEOUT_MS)))
		ret = -ETIMEDOUT;
	pkt_put(p);
	return ret;
}

static struct tbsim_cable *xd_cable(struct tb_xdomain *xd)
{
	return READ_ONCE(container_of(xd, struct tbsim_xd, xd)->cable);
}

int tb_xdomain_response(struct tb_xdomain *xd, const void *response,
			size_t size, enum tb_cfg_pkg_type type)
{
	return tbsim_ctl_send(xd_cable(xd), response, size, type);
}

int tb_xdomain_request(struct tb_xdomain *xd, const void *request,
		       size_t request_size, enum tb_cfg_pkg_type request_type,
		       void *response, size_t response_size,
		       enum tb_cfg_pkg_type response_type, unsigned int timeout_msec)
{
	struct tbsim_req *r;
	int ret;

	if (request_size < sizeof(struct tbsim_xdp_hdr))
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->request = request;
	r->response = response;
	r->response_size = response_size;
	init_completion(&r->done);
	if (!uuid_equal(&((const struct tbsim_xdp_hdr *)request)->uuid, tbsim_xdp_proto()))
		tbsim_fault_step(TBSIM_STEP_REQUEST, request, request_size);
	mutex_lock(&req_lock);
	list_add_tail(&r->node, &reqs);
	mutex_unlock(&req_lock);
	if (tbsim_fault_xd_tx(request, request_size))
		ret = 0;	/* lost on the cable: no answer will come */
	else
		ret = tbsim_ctl_send(xd_cable(xd), request, request_size, request_type);
	if (ret == -ENOTCONN)
		ret = -EIO;	/* the router answers an ERROR: no such route */
	if (!ret && !wait_for_completion_timeout(&r->done, msecs_to_jiffies(timeout_msec)))
		ret = -ETIMEDOUT;
	mutex_lock(&req_lock);
	if (r->matched)
		ret = 0;
	else
		list_del(&r->node);
	mutex_unlock(&req_lock);
	kfree(r);
	return ret;
}

int tb_register_protocol_handler(struct tb_protocol_handler *handler)
{
	if (!handler->uuid || !handler->callback)
		return -EINVAL;
	if (uuid_equal(handler->uuid, &tbsim_xdp_uuid))
		return -EINVAL;
	mutex_lock(&handlers_lock);
	list_add_tail(&handler->list, &handlers);
	mutex_unlock(&handlers_lock);
	return 0;
}

void tb_unregister_protocol_handler(struct tb_protocol_handler *handler)
{
	mutex_lock(&handlers_lock);
	list_del_init(&handler->list);
	mutex_unlock(&handlers_lock);
}

/* The XDomain discovery UUID, for xdomain.c's packets */
const uuid_t *tbsim_xdp_proto(void)
{
	return &tbsim_xdp_uuid;
}

void tbsim_ctl_flush(void)
{
	flush_work(&rx_work);
}

int tbsim_ctl_init(void)
{
	INIT_WORK(&rx_work, rx_work_fn);
	return 0;
}

void tbsim_ctl_exit(void)
{
	struct tbsim_ctl_pkt *p, *tmp;

	cancel_work_sync(&rx_work);
	list_for_each_entry_safe(p, tmp, &rxq, node) {
		list_del(&p->node);
		if (p->token)
			complete(&p->done);
		pkt_put(p);
	}
}
