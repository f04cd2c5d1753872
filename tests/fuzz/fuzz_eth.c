// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_eth.c - libFuzzer target: what an eth rail binding does with a frame
 * from the segment (kernel/core/tbr_eth_wire.c, as kernel/eth.c calls it):
 * the input is everything after the Ethernet header. Checks, besides the
 * sanitizers: a parsed header announces no more payload than there is and
 * re-encodes to the same bytes (the reserved field aside); an accepted
 * HELLO is for this device from another one, with a session, its values in
 * range, "hears us" only unicast with our session, and it re-encodes and
 * parses to the same hello; an accepted FRAME is for us with 1..4096 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_eth_wire.h"

#define SELF		0x0123456789abcdefULL	/* this binding's device GUID */
#define SESSION		0x5eed1234U		/* and its session */

static void hello_check(const struct tbr_eth_hdr *h, const uint8_t *p, uint32_t plen)
{
	struct tbr_eth_hello m, m2;
	uint8_t buf[TBR_ETH_HELLO_LEN];

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
	tbr_eth_hello_build(buf, m.session, m.peer_session, m.max_frame, m.period_ms,
			    m.flags);
	if (tbr_eth_hello_parse(h, buf, sizeof(buf), SELF, SESSION, &m2) ||
	    memcmp(&m, &m2, sizeof(m)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t re[TBR_ETH_HDR_LEN];
	struct tbr_eth_hdr h;

	if (size > TBR_ETH_HDR_LEN + TBR_ETH_FRAME_MAX + 64)
		return 0;
	if (tbr_eth_hdr_parse(data, (uint32_t)size, &h))
		return 0;
	if (size < TBR_ETH_HDR_LEN || h.len > size - TBR_ETH_HDR_LEN ||
	    h.version != TBR_ETH_VERSION)
		abort();
	tbr_eth_hdr_build(re, &h);
	if (memcmp(re, data, 6) || memcmp(re + 8, data + 8, TBR_ETH_HDR_LEN - 8))
		abort();
	if (h.type == TBR_ETH_HELLO)
		hello_check(&h, data + TBR_ETH_HDR_LEN, (uint32_t)(size - TBR_ETH_HDR_LEN));
	if (!tbr_eth_frame_check(&h, SELF) &&
	    (h.type != TBR_ETH_FRAME || h.dst != SELF || !h.len || h.len > TBR_ETH_FRAME_MAX))
		abort();
	return 0;
}
