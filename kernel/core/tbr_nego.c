// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_nego.c - encoder, decoder and agreement of the Thunderbolt backend's
 * rail negotiation messages. Layout and rules: tbr_nego.h.
 */
#include "tbr_nego.h"

static bool is_pow2(u32 v)
{
	return v && !(v & (v - 1));
}

static void uuid_pack(const u8 *u, u32 *w)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		w[i] = (u32)u[4 * i] << 24 | (u32)u[4 * i + 1] << 16 |
		       (u32)u[4 * i + 2] << 8 | u[4 * i + 3];
}

static void uuid_unpack(const u32 *w, u8 *u)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		u[4 * i] = (u8)(w[i] >> 24);
		u[4 * i + 1] = (u8)(w[i] >> 16);
		u[4 * i + 2] = (u8)(w[i] >> 8);
		u[4 * i + 3] = (u8)w[i];
	}
}

const char *tbr_nego_type_name(u8 type)
{
	switch (type) {
	case TBR_NEGO_HELLO: return "hello";
	case TBR_NEGO_HELLO_REPLY: return "hello-reply";
	case TBR_NEGO_READY: return "ready";
	case TBR_NEGO_BYE: return "bye";
	case TBR_NEGO_STATUS: return "status";
	default: return "unknown";
	}
}

void tbr_nego_init(struct tbr_nego_msg *m, u8 type)
{
	memset(m, 0, sizeof(*m));
	m->ver_major = TBR_NEGO_VER_MAJOR;
	m->ver_minor = TBR_NEGO_VER_MINOR;
	m->type = type;
}

static bool has_params(u8 type)
{
	return type == TBR_NEGO_HELLO || type == TBR_NEGO_HELLO_REPLY;
}

/* the messages that may carry the auth words (minor version 2: READY, BYE too) */
static bool has_auth(u8 type)
{
	return has_params(type) || type == TBR_NEGO_READY || type == TBR_NEGO_BYE;
}

static void auth_pack(const struct tbr_nego_msg *m, u32 *w)
{
	w[TBR_NEGO_AUTH_OFF] = m->auth_flags;
	w[TBR_NEGO_AUTH_OFF + 1] = (u32)(m->nonce >> 32);
	w[TBR_NEGO_AUTH_OFF + 2] = (u32)m->nonce;
	w[TBR_NEGO_AUTH_OFF + 3] = (u32)(m->peer_nonce >> 32);
	w[TBR_NEGO_AUTH_OFF + 4] = (u32)m->peer_nonce;
}

static void auth_unpack(const u32 *w, struct tbr_nego_msg *m)
{
	unsigned int i, v = TBR_NEGO_AUTH_OFF;

	m->auth = true;
	m->auth_flags = w[v];
	m->nonce = (u64)w[v + 1] << 32 | w[v + 2];
	m->peer_nonce = (u64)w[v + 3] << 32 | w[v + 4];
	for (i = 0; i < TBR_AUTH_MAC_LEN / 4; i++)
		tbr_put_be32(w[TBR_NEGO_MAC_OFF + i], m->mac + 4 * i);
}

/* Value checks shared by the encoder and the decoder. */
static int check_values(const struct tbr_nego_msg *m)
{
	unsigned int i, j;

	if (m->guid == 0 || m->guid == U64_MAX)
		return -ERANGE;
	if (m->status > TBR_NEGO_ST_AUTH)
		return -ERANGE;
	if (m->type == TBR_NEGO_READY &&
	    (!m->ready_rails || m->ready_rails > TBR_NEGO_MAX_RAILS))
		return -ERANGE;
	if (!has_params(m->type))
		return 0;
	/* a refusing reply carries no usable parameters */
	if (m->type == TBR_NEGO_HELLO_REPLY && m->status != TBR_NEGO_ST_OK)
		return 0;
	if (!m->rails || m->rails > TBR_NEGO_MAX_RAILS || m->nhops != m->rails)
		return -ERANGE;
	for (i = 0; i < m->nhops; i++) {
		if (m->hopid[i] < TBR_NEGO_HOPID_MIN ||
		    m->hopid[i] > TBR_NEGO_HOPID_MAX)
			return -ERANGE;
		for (j = 0; j < i; j++)
			if (m->hopid[j] == m->hopid[i])
				return -ERANGE;
	}
	if (!is_pow2(m->tx_ring) || m->tx_ring < TBR_NEGO_RING_MIN ||
	    m->tx_ring > TBR_NEGO_RING_MAX ||
	    !is_pow2(m->rx_ring) || m->rx_ring < TBR_NEGO_RING_MIN ||
	    m->rx_ring > TBR_NEGO_RING_MAX)
		return -ERANGE;
	if (!is_pow2(m->frame_size) || m->frame_size < TBR_NEGO_FRAME_MIN ||
	    m->frame_size > TBR_NEGO_FRAME_MAX)
		return -ERANGE;
	if (m->link_gbps > TBR_NEGO_SPEED_MAX || m->lanes > TBR_NEGO_LANES_MAX)
		return -ERANGE;
	return 0;
}

static void mac_pack(const u8 *mac, u32 *w)
{
	unsigned int i;

	for (i = 0; i < TBR_AUTH_MAC_LEN / 4; i++)
		w[i] = tbr_get_be32(mac + 4 * i);
}

int tbr_nego_encode(const struct tbr_nego_msg *m, u32 *w, unsigned int nw)
{
	unsigned int i, len = TBR_NEGO_WORDS;

	if (m->auth && has_auth(m->type))
		len = TBR_NEGO_AUTH_WORDS;
	if (nw < len || !m->type || m->type > TBR_NEGO_TYPE_MAX ||
	    m->ver_major != TBR_NEGO_VER_MAJOR || check_values(m))
		return -EINVAL;
	memset(w, 0, len * sizeof(*w));
	w[0] = TBR_NEGO_MAGIC;
	w[1] = (u32)m->ver_major << 24 | (u32)m->ver_minor << 16 |
	       (u32)m->type << 8 | len;
	w[2] = m->seq;
	w[3] = m->status;
	w[4] = (u32)(m->guid >> 32);
	w[5] = (u32)m->guid;
	uuid_pack(m->initiator, &w[6]);
	uuid_pack(m->target, &w[10]);
	if (has_params(m->type)) {
		w[14] = m->caps;
		w[15] = (u32)m->rails << 24 | (u32)m->nhops << 16 | m->link_gbps;
		w[16] = (u32)m->lanes << 24 | m->instance;
		w[17] = (u32)m->tx_ring << 16 | m->rx_ring;
		w[18] = m->frame_size;
		for (i = 0; i < m->nhops; i++)
			w[19 + i / 2] |= (u32)m->hopid[i] << (i & 1 ? 0 : 16);
	} else if (m->type == TBR_NEGO_READY) {
		w[14] = m->ready_rails;
	}
	if (len == TBR_NEGO_AUTH_WORDS) {
		auth_pack(m, w);
		mac_pack(m->mac, &w[TBR_NEGO_MAC_OFF]);
	}
	return len;
}

int tbr_nego_decode(const u32 *w, unsigned int nw, struct tbr_nego_msg *m)
{
	unsigned int len, i, need;
	u32 v;

	memset(m, 0, sizeof(*m));
	if (nw < 4 || w[0] != TBR_NEGO_MAGIC)
		return -EBADMSG;
	m->ver_major = (u8)(w[1] >> 24);
	m->ver_minor = (u8)(w[1] >> 16);
	m->type = (u8)(w[1] >> 8);
	len = w[1] & 0xff;
	m->seq = w[2];
	m->status = w[3];
	/* the declared length must be present and within an XDomain packet */
	if (len < 4 || len > nw || len > TBR_NEGO_MAX_WORDS)
		return -EBADMSG;
	if (m->ver_major != TBR_NEGO_VER_MAJOR)
		return -EPROTONOSUPPORT;
	if (!m->type || m->type > TBR_NEGO_TYPE_MAX)
		return -EBADMSG;
	need = TBR_NEGO_HDR_WORDS;
	if (has_params(m->type))
		need = TBR_NEGO_WORDS;
	else if (m->type == TBR_NEGO_READY)
		need = TBR_NEGO_HDR_WORDS + 1;
	if (len < need)
		return -EBADMSG;
	m->guid = (u64)w[4] << 32 | w[5];
	uuid_unpack(&w[6], m->initiator);
	uuid_unpack(&w[10], m->target);
	if (has_params(m->type)) {
		m->caps = w[14];
		m->rails = (u8)(w[15] >> 24);
		m->nhops = (u8)(w[15] >> 16);
		m->link_gbps = (u16)w[15];
		m->lanes = (u8)(w[16] >> 24);
		m->instance = (u16)w[16];
		m->tx_ring = (u16)(w[17] >> 16);
		m->rx_ring = (u16)w[17];
		m->frame_size = w[18];
		if (m->nhops > TBR_NEGO_MAX_RAILS)
			return -ERANGE;
		for (i = 0; i < m->nhops; i++) {
			v = w[19 + i / 2];
			m->hopid[i] = (u16)(i & 1 ? v : v >> 16);
		}
	} else if (m->type == TBR_NEGO_READY) {
		if (w[14] > TBR_NEGO_MAX_RAILS)
			return -ERANGE;
		m->ready_rails = (u8)w[14];
	}
	if (has_auth(m->type) && len >= TBR_NEGO_AUTH_WORDS)
		auth_unpack(w, m);
	return check_values(m);
}

/* What the MAC covers: the label and words 0-31 as big-endian bytes. */
#define TBR_NEGO_MAC_IN	(16 + TBR_NEGO_MAC_OFF * 4)

static void mac_input(const u32 *w, u8 *buf)
{
	unsigned int i;

	memcpy(buf, TBR_NEGO_MAC_LABEL, 16);
	for (i = 0; i < TBR_NEGO_MAC_OFF; i++)
		tbr_put_be32(w[i], buf + 16 + 4 * i);
}

static bool has_auth_words(const u32 *w, unsigned int nw)
{
	return nw >= TBR_NEGO_AUTH_WORDS &&
	       (w[1] & 0xff) >= TBR_NEGO_AUTH_WORDS &&
	       has_auth((u8)(w[1] >> 8));
}

int tbr_nego_sign(const struct tbr_auth *a, u32 *w, unsigned int nw)
{
	u8 buf[TBR_NEGO_MAC_IN], mac[TBR_AUTH_MAC_LEN];
	int ret;

	if (!has_auth_words(w, nw) || !(w[TBR_NEGO_AUTH_OFF] & TBR_NEGO_AUTH_MAC))
		return -EINVAL;
	mac_input(w, buf);
	ret = tbr_auth_sign(a, buf, sizeof(buf), mac);
	if (ret)
		return ret;
	mac_pack(mac, &w[TBR_NEGO_MAC_OFF]);
	return 0;
}

int tbr_nego_verify(const struct tbr_auth *a, const u32 *w, unsigned int nw,
		    const struct tbr_nego_msg *m, u64 nonce)
{
	u8 buf[TBR_NEGO_MAC_IN];

	if (!m->auth || !(m->auth_flags & TBR_NEGO_AUTH_MAC) ||
	    !has_auth_words(w, nw))
		return -ENOKEY;
	if (m->peer_nonce != nonce)
		return -ESTALE;
	mac_input(w, buf);
	return tbr_auth_verify(a, buf, sizeof(buf), m->mac);
}

int tbr_nego_session_check(const struct tbr_nego_msg *m, u64 ours, u64 theirs)
{
	if (!m->auth || !(m->auth_flags & TBR_NEGO_AUTH_MAC))
		return -ENOKEY;
	if (m->peer_nonce != ours || m->nonce != theirs)
		return -ESTALE;
	return 0;
}

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

int tbr_nego_agree(const struct tbr_nego_msg *local,
		   const struct tbr_nego_msg *remote, u32 min_frame,
		   struct tbr_nego_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!has_params(local->type) || !has_params(remote->type) ||
	    remote->status != TBR_NEGO_ST_OK)
		return -ERANGE;
	res->rails = (u8)min_u32(local->rails, remote->rails);
	res->e2e = (local->caps & remote->caps & TBR_NEGO_CAP_E2E) != 0;
	/* a split frame's halves pair up by order: only on rings that lose none */
	res->split = res->e2e && (local->caps & remote->caps & TBR_NEGO_CAP_SPLIT);
	res->ack_ride = (local->caps & remote->caps & TBR_NEGO_CAP_ACK_RIDE) != 0;
	res->net_frag = (local->caps & remote->caps & TBR_NEGO_CAP_NET_FRAG) != 0;
	res->tx_ring = (u16)min_u32(local->tx_ring, remote->rx_ring);
	res->rx_ring = (u16)min_u32(local->rx_ring, remote->tx_ring);
	res->frame_size = min_u32(local->frame_size, remote->frame_size);
	if (!res->rails || res->frame_size < min_frame ||
	    !res->tx_ring || !res->rx_ring)
		return -ERANGE;
	return 0;
}

unsigned int tbr_nego_rails_for_link(unsigned int lanes, bool fw_cm,
				     unsigned int max)
{
	unsigned int n = lanes ? lanes : 1;

	if (max > TBR_NEGO_MAX_RAILS)
		max = TBR_NEGO_MAX_RAILS;
	if (fw_cm)
		n = 1;
	if (n > max)
		n = max;
	return n ? n : 1;
}

unsigned int tbr_nego_ready_rails(unsigned int ours, unsigned int peer_ready)
{
	if (!peer_ready || peer_ready > TBR_NEGO_MAX_RAILS)
		return ours;
	return ours < peer_ready ? ours : peer_ready;
}
