// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: test knobs on the control channel (no counterpart in the real
 * module), for the negotiation's loss and hostile-peer tests:
 *   fault_xd_drop="DWORD:MASK:VALUE:COUNT"  the next COUNT requests of
 *       protocol handlers (not the XDomain discovery's) sent through
 *       tb_xdomain_request() whose dword DWORD, masked with MASK,
 *       equals VALUE are lost on the cable (the caller sees its timeout);
 *       reading shows the filter, the drops left and the drops done.
 *   xd_sent (read)   the last TBSIM_SENT_KEEP requests of protocol handlers
 *       sent through tb_xdomain_request(), one per line, dwords in hex (to replay them).
 *   xd_inject (write)  dwords in hex, sent as one XDomain request on the
 *       cable of the port its route (dword 1) names, whose link must be up:
 *       a peer saying whatever it likes.
 *   fault_xd_guid="FROM:TO"  (16 hex digits each; 0:0 off) a peer that lies
 *       about its identity with an honest tbrdma: in every protocol packet
 *       sent (requests and responses), each dword pair (high, low) equal to
 *       GUID FROM becomes TO, and in every one received TO becomes FROM (so
 *       the local tbrdma still sees its own GUID echoed); reading shows the
 *       pair and the dword pairs rewritten each way.
 * Locks: fault_lock (spinlock) guards the filter, the sent ring and the
 * GUID rewrite.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "tbsim.h"

#define TBSIM_SENT_KEEP	8

struct tbsim_sent {
	size_t words;
	u32 w[TBSIM_CTL_MAX / 4];
};

static DEFINE_SPINLOCK(fault_lock);
static u32 drop_dword, drop_mask, drop_value;
static unsigned int drop_left, drop_done;
static struct tbsim_sent sent[TBSIM_SENT_KEEP];
static unsigned int sent_next;

static int drop_set(const char *val, const struct kernel_param *kp)
{
	u32 dw, mask, value;
	unsigned int count;

	if (sscanf(val, "%u:%x:%x:%u", &dw, &mask, &value, &count) != 4 ||
	    dw >= TBSIM_CTL_MAX / 4)
		return -EINVAL;
	spin_lock(&fault_lock);
	drop_dword = dw;
	drop_mask = mask;
	drop_value = value;
	drop_left = count;
	spin_unlock(&fault_lock);
	return 0;
}

static int drop_get(char *buf, const struct kernel_param *kp)
{
	int n;

	spin_lock(&fault_lock);
	n = scnprintf(buf, PAGE_SIZE, "%u:%#x:%#x:%u dropped=%u\n", drop_dword, drop_mask,
		      drop_value, drop_left, drop_done);
	spin_unlock(&fault_lock);
	return n;
}

static const struct kernel_param_ops drop_ops = {
	.set = drop_set,
	.get = drop_get,
};
module_param_cb(fault_xd_drop, &drop_ops, NULL, 0644);
MODULE_PARM_DESC(fault_xd_drop, "DWORD:MASK:VALUE:COUNT: lose the next COUNT matching requests");

/*
 * A request about to be sent (process context): true if it is lost. Only
 * the protocol handlers' requests (not the discovery's) are recorded and
 * may be lost.
 */
bool tbsim_fault_xd_tx(const void *request, size_t size)
{
	const struct tbsim_xdp_hdr *hdr = request;
	const u32 *w = request;
	bool drop = false;

	if (size < sizeof(*hdr) || uuid_equal(&hdr->uuid, tbsim_xdp_proto()))
		return false;
	size = min_t(size_t, size, TBSIM_CTL_MAX);
	spin_lock(&fault_lock);
	sent[sent_next].words = size / 4;
	memcpy(sent[sent_next].w, request, size / 4 * 4);
	sent_next = (sent_next + 1) % TBSIM_SENT_KEEP;
	if (drop_left && drop_dword < size / 4 && (w[drop_dword] & drop_mask) == drop_value) {
		drop_left--;
		drop_done++;
		drop = true;
	}
	spin_unlock(&fault_lock);
	return drop;
}

static int sent_get(char *buf, const struct kernel_param *kp)
{
	unsigned int i, j, k;
	int n = 0;

	spin_lock(&fault_lock);
	for (i = 0; i < TBSIM_SENT_KEEP; i++) {
		k = (sent_next + i) % TBSIM_SENT_KEEP;
		if (!sent[k].words)
			continue;
		for (j = 0; j < sent[k].words; j++)
			n += scnprintf(buf + n, PAGE_SIZE - n, "%s%08x", j ? " " : "",
				       sent[k].w[j]);
		n += scnprintf(buf + n, PAGE_SIZE - n, "\n");
	}
	spin_unlock(&fault_lock);
	return n;
}

static const struct kernel_param_ops sent_ops = {
	.get = sent_get,
};
module_param_cb(xd_sent, &sent_ops, NULL, 0444);
MODULE_PARM_DESC(xd_sent, "the last XDomain requests sent, in hex (test only)");

static int inject_set(const char *val, const struct kernel_param *kp)
{
	struct tbsim_wire wire = { .kind = TBSIM_WIRE_CTL, .eof = TB_CFG_PKG_XDOMAIN_REQ };
	struct tbsim_cable *c;
	unsigned int n = 0;
	int used, ret;
	u32 *w;

	w = kcalloc(TBSIM_CTL_MAX / 4, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	while (n < TBSIM_CTL_MAX / 4 && sscanf(val, "%x%n", &w[n], &used) == 1) {
		val += used;
		n++;
	}
	ret = -ENOTCONN;
	rcu_read_lock();
	list_for_each_entry_rcu(c, &tbsim.cables, node) {
		if (n >= 2 && READ_ONCE(c->sxd) && c->port == w[1]) {
			ret = tbsim_cable_xmit(c, &wire, w, n * 4);
			break;
		}
	}
	rcu_read_unlock();
	kfree(w);
	return ret < 0 ? ret : 0;
}

static const struct kernel_param_ops inject_ops = {
	.set = inject_set,
};
module_param_cb(xd_inject, &inject_ops, NULL, 0200);
MODULE_PARM_DESC(xd_inject, "send these dwords (hex) as an XDomain request (test only)");

static u64 guid_from, guid_to;
static unsigned int guid_tx, guid_rx;

static int guid_set(const char *val, const struct kernel_param *kp)
{
	u64 from, to;

	if (sscanf(val, "%llx:%llx", &from, &to) != 2 || !from != !to)
		return -EINVAL;
	spin_lock(&fault_lock);
	guid_from = from;
	guid_to = to;
	guid_tx = 0;
	guid_rx = 0;
	spin_unlock(&fault_lock);
	return 0;
}

static int guid_get(char *buf, const struct kernel_param *kp)
{
	int n;

	spin_lock(&fault_lock);
	n = scnprintf(buf, PAGE_SIZE, "%016llx:%016llx tx=%u rx=%u\n", guid_from, guid_to,
		      guid_tx, guid_rx);
	spin_unlock(&fault_lock);
	return n;
}

static const struct kernel_param_ops guid_ops = {
	.set = guid_set,
	.get = guid_get,
};
module_param_cb(fault_xd_guid, &guid_ops, NULL, 0644);
MODULE_PARM_DESC(fault_xd_guid, "FROM:TO: present GUID FROM as TO in protocol packets (test only)");

/*
 * Rewrite protocol packet @w (@size bytes; not the discovery's) as
 * fault_xd_guid says: sent (@tx) FROM -> TO, received TO -> FROM. True when
 * a pair was rewritten.
 */
bool tbsim_fault_xd_guid(u32 *w, size_t size, bool tx)
{
	const struct tbsim_xdp_hdr *hdr = (const void *)w;
	size_t i, words = size / 4;
	bool done = false;
	u64 old, new;

	if (size < sizeof(*hdr) || uuid_equal(&hdr->uuid, tbsim_xdp_proto()))
		return false;
	spin_lock(&fault_lock);
	old = tx ? guid_from : guid_to;
	new = tx ? guid_to : guid_from;
	/* the body, after the route, length and protocol UUID */
	for (i = sizeof(*hdr) / 4; old && i + 1 < words; i++) {
		if (w[i] != upper_32_bits(old) || w[i + 1] != lower_32_bits(old))
			continue;
		w[i] = upper_32_bits(new);
		w[i + 1] = lower_32_bits(new);
		if (tx)
			guid_tx++;
		else
			guid_rx++;
		done = true;
		i++;
	}
	spin_unlock(&fault_lock);
	return done;
}
