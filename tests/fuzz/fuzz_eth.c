// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_eth.c - libFuzzer target: what an eth rail binding does with the
 * frames from the segment (kernel/core/tbr_eth_wire.c, as kernel/backends/eth.c and
 * eth_frag.c call it). The input is a sequence of frames, each a 2-byte big
 * endian length and that many bytes after the Ethernet header; FRAGs go
 * through one peer's reassembly state, in order. Checks, besides the
 * sanitizers: a parsed header announces no more payload than there is and
 * re-encodes to the same bytes (the reserved field aside); an accepted
 * HELLO is for this device from another one, with a session, its values in
 * range, "hears us" only unicast with our session, and it re-encodes and
 * parses to the same hello; an accepted FRAME is for us with 1..4096 bytes;
 * an accepted FRAG lies inside a frame of 1..4096 bytes and re-encodes to
 * its header. A FRAME's packet is walked as a bundle, as eth_rx.c walks it:
 * each further record a FRAME whose payload is there, the walk ending when
 * fewer than a header's bytes are left. Reassembly against a shadow model: a piece continues the
 * frame only at the offset reached with the same id, length and code; a
 * completed frame is exactly the bytes of its pieces, in order; at most two
 * drops per piece, and the state is idle after a drop or a completion.
 * A HELLO's auth part (fabric key): the MAC check takes a hello only
 * unicast, with the flag, answering one of our two nonces; a hello signed
 * with the (stand-in) key checks, and fails with any byte it covers
 * changed or from another station.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_eth_wire.h"
#include "fuzz_input.h"
#include "fuzz_mac.h"

#define SELF		0x0123456789abcdefULL	/* this binding's device GUID */
#define SESSION		0x5eed1234U		/* and its session */
#define MAX_FRAMES	64

static const uint8_t smac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t other[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x56 };
#define NONCE_CUR	0x1111111111111111ULL
#define NONCE_PREV	0x2222222222222222ULL

static void hello_auth_check(const struct tbr_eth_hdr *h, const uint8_t *p, uint32_t plen,
			     const struct tbr_eth_hello *m, uint8_t *buf)
{
	struct tbr_eth_hello m2;
	struct tbr_eth_hdr hh;
	unsigned int i;
	int rc;

	rc = tbr_eth_hello_verify(&fuzz_auth, smac, h, p, plen, m, NONCE_CUR, NONCE_PREV);
	if (!rc && (!m->unicast || !m->auth || !(m->auth_flags & TBR_ETH_AUTH_MAC) ||
		    (m->peer_nonce != NONCE_CUR && m->peer_nonce != NONCE_PREV)))
		abort();
	if (rc && rc != -ENOKEY && rc != -ESTALE && rc != -EKEYREJECTED && rc != -EINVAL)
		abort();
	if (!m->unicast)
		return;
	hh = *h;
	hh.len = TBR_ETH_HELLO_AUTH_LEN;
	/* our own hello (with the auth part), signed: checks; from another station or changed: fails */
	tbr_eth_hello_auth_build(buf, m->nonce, NONCE_PREV, TBR_ETH_AUTH_MAC);
	if (tbr_eth_hello_sign(&fuzz_auth, smac, hh.src, hh.dst, buf) ||
	    tbr_eth_hello_parse(&hh, buf, TBR_ETH_HELLO_AUTH_LEN, SELF, SESSION, &m2) ||
	    tbr_eth_hello_verify(&fuzz_auth, smac, &hh, buf, TBR_ETH_HELLO_AUTH_LEN, &m2,
				 NONCE_CUR, NONCE_PREV))
		abort();
	if (!tbr_eth_hello_verify(&fuzz_auth, other, &hh, buf, TBR_ETH_HELLO_AUTH_LEN, &m2,
				  NONCE_CUR, NONCE_PREV))
		abort();
	i = (unsigned int)(m->nonce % TBR_ETH_HELLO_MAC_OFF);
	buf[i] ^= 0x80;
	if (!tbr_eth_hello_parse(&hh, buf, TBR_ETH_HELLO_AUTH_LEN, SELF, SESSION, &m2) &&
	    !tbr_eth_hello_verify(&fuzz_auth, smac, &hh, buf, TBR_ETH_HELLO_AUTH_LEN, &m2,
				  NONCE_CUR, NONCE_PREV))
		abort();
}

static void hello_check(const struct tbr_eth_hdr *h, const uint8_t *p, uint32_t plen)
{
	struct tbr_eth_hello m, m2;
	uint8_t buf[TBR_ETH_HELLO_AUTH_LEN];

	memset(&m, 0, sizeof(m));	/* padding: compared with memcmp below */
	memset(&m2, 0, sizeof(m2));
	if (tbr_eth_hello_parse(h, p, plen, SELF, SESSION, &m))
		return;
	if (!m.session || !h->src || h->src == SELF || (h->dst && h->dst != SELF) ||
	    m.max_frame > TBR_ETH_FRAME_MAX || m.period_ms < TBR_ETH_PERIOD_MIN ||
	    m.period_ms > TBR_ETH_PERIOD_MAX || m.unicast != (h->dst == SELF) ||
	    (m.hears_us && (!m.unicast || !(m.flags & TBR_ETH_HEARS_YOU) ||
			    m.peer_session != SESSION)))
		abort();
	if (m.auth != (h->len >= TBR_ETH_HELLO_AUTH_LEN && plen >= TBR_ETH_HELLO_AUTH_LEN))
		abort();
	tbr_eth_hello_build(buf, m.session, m.peer_session, m.max_frame, m.period_ms,
			    m.bundle_max, m.flags);
	if (m.auth) {
		tbr_eth_hello_auth_build(buf, m.nonce, m.peer_nonce, m.auth_flags);
		memcpy(buf + TBR_ETH_HELLO_MAC_OFF, m.mac, TBR_AUTH_MAC_LEN);
	}
	if (tbr_eth_hello_parse(h, buf, m.auth ? TBR_ETH_HELLO_AUTH_LEN : TBR_ETH_HELLO_LEN,
				SELF, SESSION, &m2) ||
	    memcmp(&m, &m2, sizeof(m)))
		abort();
	hello_auth_check(h, p, plen, &m, buf);
}

/* one peer's reassembly, as eth_rx_frag keeps it, and the shadow model */
static uint8_t rbuf[TBR_ETH_FRAME_MAX], shadow[TBR_ETH_FRAME_MAX];
static struct tbr_eth_reasm r;
static struct {
	int busy;
	uint32_t id, total, have, pdf;
} m;

static void frag_check(const struct tbr_eth_hdr *h, const uint8_t *p, uint32_t plen)
{
	uint8_t re[TBR_ETH_FRAG_HDR_LEN];
	struct tbr_eth_frag fr;
	uint32_t dropped = 0;
	int rc, cont;

	if (tbr_eth_frag_parse(h, p, plen, SELF, &fr))
		return;
	if (h->type != TBR_ETH_FRAG || h->dst != SELF || !fr.len || !fr.total ||
	    fr.total > TBR_ETH_FRAME_MAX || fr.offset + fr.len > fr.total ||
	    fr.len != (uint32_t)h->len - TBR_ETH_FRAG_HDR_LEN || fr.pdf != h->pdf)
		abort();
	tbr_eth_frag_build(re, &fr);
	if (memcmp(re, p, 6))
		abort();

	cont = m.busy && fr.offset && fr.id == m.id && fr.total == m.total &&
	       fr.pdf == m.pdf && fr.offset == m.have;
	rc = tbr_eth_reasm_add(&r, &fr, p + TBR_ETH_FRAG_HDR_LEN, &dropped);
	if (dropped > 2 || r.busy != (rc == TBR_ETH_REASM_MORE))
		abort();
	if (fr.offset && !cont) {		/* a stray piece: it and any partial go */
		if (rc != -EINVAL || dropped != (uint32_t)m.busy + 1)
			abort();
		m.busy = 0;
		return;
	}
	if (!fr.offset) {
		if (dropped != (uint32_t)m.busy)
			abort();
		m.busy = 1;
		m.id = fr.id;
		m.total = fr.total;
		m.pdf = fr.pdf;
		m.have = 0;
	} else if (dropped) {
		abort();
	}
	memcpy(shadow + m.have, p + TBR_ETH_FRAG_HDR_LEN, fr.len);
	m.have += fr.len;
	if (m.have < m.total) {
		if (rc != TBR_ETH_REASM_MORE)
			abort();
		return;
	}
	if (rc != TBR_ETH_REASM_DONE || r.total != m.total || r.pdf != m.pdf ||
	    memcmp(r.buf, shadow, m.total))
		abort();
	m.busy = 0;
}

/* the records bundled behind the FRAME (header @h) at the start of @data */
static void bundle_check(const uint8_t *data, uint32_t size, struct tbr_eth_hdr h)
{
	uint32_t off = TBR_ETH_HDR_LEN + h.len;
	int rc;

	for (;;) {
		rc = tbr_eth_next_frame(data + off, size - off, &h);
		if (rc == 1) {
			if (size - off >= TBR_ETH_HDR_LEN)
				abort();
			return;
		}
		if (rc)
			return;
		if (h.type != TBR_ETH_FRAME || h.version != TBR_ETH_VERSION ||
		    h.len > size - off - TBR_ETH_HDR_LEN)
			abort();
		off += TBR_ETH_HDR_LEN + h.len;
	}
}

static void one_frame(const uint8_t *data, uint32_t size)
{
	uint8_t re[TBR_ETH_HDR_LEN];
	struct tbr_eth_hdr h;

	if (tbr_eth_hdr_parse(data, size, &h))
		return;
	if (size < TBR_ETH_HDR_LEN || h.len > size - TBR_ETH_HDR_LEN ||
	    h.version != TBR_ETH_VERSION)
		abort();
	tbr_eth_hdr_build(re, &h);
	if (memcmp(re, data, 6) || memcmp(re + 8, data + 8, TBR_ETH_HDR_LEN - 8))
		abort();
	if (h.type == TBR_ETH_HELLO)
		hello_check(&h, data + TBR_ETH_HDR_LEN, size - TBR_ETH_HDR_LEN);
	if (!tbr_eth_frame_check(&h, SELF) &&
	    (h.type != TBR_ETH_FRAME || h.dst != SELF || !h.len || h.len > TBR_ETH_FRAME_MAX))
		abort();
	if (h.type == TBR_ETH_FRAME)
		bundle_check(data, size, h);
	/* eth_rx_frag pulls exactly the announced payload */
	if (h.type == TBR_ETH_FRAG)
		frag_check(&h, data + TBR_ETH_HDR_LEN, h.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint8_t lenb[2], *frame;
	unsigned int n;
	uint32_t len;

	memset(&r, 0, sizeof(r));
	memset(&m, 0, sizeof(m));
	r.buf = rbuf;
	for (n = 0; n < MAX_FRAMES && !take(&in, lenb, 2); n++) {
		len = (uint32_t)lenb[0] << 8 | lenb[1];
		if (len > in.n || len > TBR_ETH_HDR_LEN + TBR_ETH_FRAME_MAX + 64)
			break;
		/* a copy of its own: ASan sees every read past the frame */
		frame = malloc(len ? len : 1);
		if (!frame)
			abort();
		take(&in, frame, len);
		one_frame(frame, len);
		free(frame);
	}
	return 0;
}
