// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sweep's management message (docs/sweep.md "Message format"): encoder, fragmentation to a
 * link's frame size, strict decoder. The decoder takes datagrams from any peer and must reject,
 * never crash (tests/fuzz/fuzz_sweep.c).
 */
#include <errno.h>
#include <string.h>

#include "fabric-msg.h"
#include "util.h"

/* ---- codec (big-endian) ---------------------------------------------------------------- */

static size_t rec_len(const HostRecord *r)
{
	return SWEEP_REC_LEN + 8u * r->n_neigh + 12u * r->n_assign + 10u * r->n_pkey;
}

int sweep_encode(const SweepMsg *m, uint8_t *buf, size_t len)
{
	size_t off = SWEEP_HDR_LEN;

	if (len < SWEEP_HDR_LEN || m->n_records > FABRIC_HOSTS_MAX)
		return -EMSGSIZE;
	memset(buf, 0, SWEEP_HDR_LEN);
	be_put32(buf, SWEEP_MAGIC);
	buf[4] = SWEEP_VERSION;
	buf[5] = m->type;
	be_put16(buf + 6, m->n_records);
	be_put64(buf + 8, m->sender);
	be_put64(buf + 16, m->master);
	be_put32(buf + 24, m->epoch);
	buf[28] = m->priority;
	for (unsigned i = 0; i < m->n_records; i++) {
		const HostRecord *r = &m->rec[i];
		uint8_t *p = buf + off;

		if (r->n_neigh > FABRIC_NEIGH_MAX || r->n_assign > FABRIC_ASSIGN_MAX ||
		    r->n_pkey > PKEY_ENTRIES_MAX || off + rec_len(r) > len)
			return -EMSGSIZE;
		memset(p, 0, SWEEP_REC_LEN);
		be_put64(p, r->guid);
		be_put64(p + 8, r->seq);
		be_put32(p + 16, r->age_ms);
		p[20] = r->priority;
		p[21] = r->flags;
		p[22] = r->n_neigh;
		p[23] = r->n_assign;
		be_put32(p + 24, r->addr);
		be_put64(p + 28, r->master);
		be_put32(p + 36, r->epoch);
		p[40] = r->n_pkey;
		p += SWEEP_REC_LEN;
		for (unsigned j = 0; j < r->n_neigh; j++, p += 8)
			be_put64(p, r->neigh[j]);
		for (unsigned j = 0; j < r->n_assign; j++, p += 12) {
			be_put64(p, r->assign[j].guid);
			be_put32(p + 8, r->assign[j].addr);
		}
		for (unsigned j = 0; j < r->n_pkey; j++, p += 10) {
			be_put64(p, r->pkey[j].guid);
			be_put16(p + 8, r->pkey[j].pkey);
		}
		off += rec_len(r);
	}
	return (int)off;
}

int sweep_fragment(const SweepMsg *m, size_t frame, unsigned *pos, SweepMsg *out,
		   unsigned *skipped)
{
	size_t used = SWEEP_HDR_LEN + rec_len(&m->rec[0]);

	if (!m->n_records || used > frame)
		return -EMSGSIZE;
	if (*pos == 0)
		*pos = 1;
	else if (*pos >= m->n_records)
		return 0;
	*out = *m;
	out->n_records = 1;
	for (; *pos < m->n_records; ++*pos) {
		size_t rl = rec_len(&m->rec[*pos]);

		if (used + rl <= frame) {
			out->rec[out->n_records++] = m->rec[*pos];
			used += rl;
		} else if (SWEEP_HDR_LEN + rec_len(&m->rec[0]) + rl > frame) {
			++*skipped;		/* would not fit any message */
		} else {
			break;			/* next message */
		}
	}
	return out->n_records;
}

int sweep_decode(SweepMsg *m, const uint8_t *buf, size_t len, char *why, size_t whylen)
{
	size_t off = SWEEP_HDR_LEN;

	memset(m, 0, sizeof(*m));
	if (len < SWEEP_HDR_LEN)
		return failf(why, whylen, -EBADMSG, "short message (%zu bytes)", len);
	if (len > SWEEP_MSG_MAX)
		return failf(why, whylen, -EBADMSG, "message too long (%zu bytes)", len);
	if (be_get32(buf) != SWEEP_MAGIC)
		return failf(why, whylen, -EBADMSG, "bad magic");
	m->version = buf[4];
	if (m->version != SWEEP_VERSION)
		return failf(why, whylen, -EPROTONOSUPPORT, "version %u not supported", m->version);
	m->type = buf[5];
	if (m->type != SWEEP_TYPE_STATE)
		return failf(why, whylen, -EPROTONOSUPPORT, "unknown type %u", m->type);
	m->n_records = be_get16(buf + 6);
	m->sender = be_get64(buf + 8);
	m->master = be_get64(buf + 16);
	m->epoch = be_get32(buf + 24);
	m->priority = buf[28];
	if (!m->sender)
		return failf(why, whylen, -EBADMSG, "sender GUID 0");
	if (m->n_records < 1 || m->n_records > FABRIC_HOSTS_MAX)
		return failf(why, whylen, -EBADMSG, "record count %u out of 1..%d", m->n_records,
			   FABRIC_HOSTS_MAX);
	for (unsigned i = 0; i < m->n_records; i++) {
		HostRecord *r = &m->rec[i];
		const uint8_t *p = buf + off;

		if (len - off < SWEEP_REC_LEN)
			return failf(why, whylen, -EBADMSG, "record %u truncated", i);
		r->guid = be_get64(p);
		r->seq = be_get64(p + 8);
		r->age_ms = be_get32(p + 16);
		r->priority = p[20];
		r->flags = p[21];
		r->n_neigh = p[22];
		r->n_assign = p[23];
		r->addr = be_get32(p + 24);
		r->master = be_get64(p + 28);
		r->epoch = be_get32(p + 36);
		r->n_pkey = p[40];
		if (!r->guid)
			return failf(why, whylen, -EBADMSG, "record %u: GUID 0", i);
		if (r->n_neigh > FABRIC_NEIGH_MAX || r->n_assign > FABRIC_ASSIGN_MAX ||
		    r->n_pkey > PKEY_ENTRIES_MAX)
			return failf(why, whylen, -EBADMSG,
				     "record %u: too many neighbours/assignments/partition entries", i);
		if (len - off < rec_len(r))
			return failf(why, whylen, -EBADMSG, "record %u truncated", i);
		for (unsigned j = 0; j < i; j++)
			if (m->rec[j].guid == r->guid)
				return failf(why, whylen, -EBADMSG, "record %u: duplicate GUID", i);
		p += SWEEP_REC_LEN;
		for (unsigned j = 0; j < r->n_neigh; j++, p += 8) {
			r->neigh[j] = be_get64(p);
			if (!r->neigh[j] || r->neigh[j] == r->guid)
				return failf(why, whylen, -EBADMSG, "record %u: bad neighbour", i);
		}
		for (unsigned j = 0; j < r->n_assign; j++, p += 12) {
			r->assign[j].guid = be_get64(p);
			r->assign[j].addr = be_get32(p + 8);
			if (!r->assign[j].guid)
				return failf(why, whylen, -EBADMSG, "record %u: assignment to GUID 0", i);
		}
		for (unsigned j = 0; j < r->n_pkey; j++, p += 10) {
			r->pkey[j].guid = be_get64(p);
			r->pkey[j].pkey = be_get16(p + 8);
			if (!(r->pkey[j].pkey & PKEY_PART))
				return failf(why, whylen, -EBADMSG, "record %u: partition 0", i);
		}
		off += rec_len(r);
	}
	if (off != len)
		return failf(why, whylen, -EBADMSG, "%zu trailing bytes", len - off);
	if (m->rec[0].guid != m->sender)
		return failf(why, whylen, -EBADMSG, "first record is not the sender's");
	return 0;
}
