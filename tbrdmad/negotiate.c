// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rail negotiation's codec and agreement rule (negotiate.h, docs/sweep.md). Wire format, big
 * endian, exactly RAILS_HDR_LEN + n * RAILS_ENTRY_LEN bytes:
 *
 *   0  u32 magic "TBSW"     4 u8 sweep header version (1)   5 u8 type (2 = RAILS)
 *   6  u8 RAILS version (1) 7 u8 n_rails (0..16)            8 u64 sender GUID
 *   16 u32 sender's link id 20 u32 link max frame           24 u32 best lane Mb/s  28..31 zero
 *   per rail: u8 id, u8 flags, u8 lanes, u8 zero, u32 max frame
 *
 * The decoder takes bytes from any peer: every length, count and id is checked before use.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fabric.h"
#include "negotiate.h"
#include "util.h"

int rails_encode(const RailsMsg *m, uint8_t *buf, size_t len)
{
	uint16_t seen = 0;
	size_t need;

	if (m->n_rails > RAILS_MAX)
		return -EMSGSIZE;
	need = RAILS_HDR_LEN + (size_t)m->n_rails * RAILS_ENTRY_LEN;
	if (len < need)
		return -EMSGSIZE;
	memset(buf, 0, need);
	be_put32(buf, SWEEP_MAGIC);
	buf[4] = SWEEP_VERSION;
	buf[5] = SWEEP_TYPE_RAILS;
	buf[6] = RAILS_VERSION;
	buf[7] = m->n_rails;
	be_put64(buf + 8, m->sender);
	be_put32(buf + 16, m->link);
	be_put32(buf + 20, m->max_frame);
	be_put32(buf + 24, m->best_lane_mbps);
	for (unsigned i = 0; i < m->n_rails; i++) {
		const RailAdv *r = &m->rails[i];
		uint8_t *p = buf + RAILS_HDR_LEN + i * RAILS_ENTRY_LEN;

		if (r->id >= RAILS_MAX || (seen & (1u << r->id)))
			return -EINVAL;
		seen |= 1u << r->id;
		p[0] = r->id;
		p[1] = r->flags;
		p[2] = r->lanes;
		be_put32(p + 4, r->max_frame);
	}
	return (int)need;
}

int rails_decode(RailsMsg *m, const uint8_t *buf, size_t len, char *why, size_t whylen)
{
	uint16_t seen = 0;

	memset(m, 0, sizeof(*m));
	if (len < RAILS_HDR_LEN)
		return failf(why, whylen, -EBADMSG, "short RAILS message (%zu bytes)", len);
	if (be_get32(buf) != SWEEP_MAGIC)
		return failf(why, whylen, -EBADMSG, "bad magic");
	if (buf[4] != SWEEP_VERSION)
		return failf(why, whylen, -EPROTONOSUPPORT, "header version %u not supported", buf[4]);
	if (buf[5] != SWEEP_TYPE_RAILS)
		return failf(why, whylen, -EBADMSG, "not a RAILS message (type %u)", buf[5]);
	m->version = buf[6];
	if (m->version != RAILS_VERSION)
		return failf(why, whylen, -EPROTONOSUPPORT, "RAILS version %u not supported",
			   m->version);
	m->n_rails = buf[7];
	if (m->n_rails > RAILS_MAX)
		return failf(why, whylen, -EBADMSG, "rail count %u over %d", m->n_rails, RAILS_MAX);
	if (len != RAILS_HDR_LEN + (size_t)m->n_rails * RAILS_ENTRY_LEN)
		return failf(why, whylen, -EBADMSG, "length %zu does not fit %u rails", len,
			   m->n_rails);
	m->sender = be_get64(buf + 8);
	m->link = be_get32(buf + 16);
	m->max_frame = be_get32(buf + 20);
	m->best_lane_mbps = be_get32(buf + 24);	/* 0 from senders before it (zero there) */
	if (!m->sender)
		return failf(why, whylen, -EBADMSG, "sender GUID 0");
	for (unsigned i = 0; i < m->n_rails; i++) {
		const uint8_t *p = buf + RAILS_HDR_LEN + i * RAILS_ENTRY_LEN;
		RailAdv *r = &m->rails[i];

		r->id = p[0];
		r->flags = p[1];
		r->lanes = p[2];
		r->max_frame = be_get32(p + 4);
		if (r->id >= RAILS_MAX)
			return failf(why, whylen, -EBADMSG, "rail id %u out of range", r->id);
		if (seen & (1u << r->id))
			return failf(why, whylen, -EBADMSG, "rail id %u twice", r->id);
		seen |= 1u << r->id;
	}
	return 0;
}

static const RailAdv *find(const RailsMsg *m, unsigned id)
{
	for (unsigned i = 0; i < m->n_rails && i < RAILS_MAX; i++)
		if (m->rails[i].id == id)
			return &m->rails[i];
	return NULL;
}

/* the smaller known limit; 0 (unknown) only if both are unknown */
static uint32_t min_known(uint32_t a, uint32_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

void rails_agree(const RailsMsg *a, const RailsMsg *b, RailsAgreed *out)
{
	unsigned lanes = 0;
	bool e2e = true;

	memset(out, 0, sizeof(*out));
	out->max_frame = min_known(a->max_frame, b->max_frame);
	for (unsigned id = 0; id < RAILS_MAX; id++) {
		const RailAdv *x = find(a, id), *y = find(b, id);

		if (!x || !y)
			continue;
		out->n_rails++;
		out->mask |= 1u << id;
		if ((x->flags & RAIL_ADV_UP) && (y->flags & RAIL_ADV_UP))
			out->n_up++;
		out->max_frame = min_known(out->max_frame, min_known(x->max_frame, y->max_frame));
		e2e = e2e && (x->flags & RAIL_ADV_E2E) && (y->flags & RAIL_ADV_E2E);
		lanes += min_known(x->lanes, y->lanes);
	}
	out->e2e = out->n_rails && e2e;
	out->lanes = lanes > 255 ? 255 : (uint8_t)lanes;
}

bool rails_agreed_equal(const RailsAgreed *a, const RailsAgreed *b)
{
	return a->n_rails == b->n_rails && a->mask == b->mask && a->n_up == b->n_up && a->max_frame == b->max_frame &&
	       a->e2e == b->e2e && a->lanes == b->lanes;
}
