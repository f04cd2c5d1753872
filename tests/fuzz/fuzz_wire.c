// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_wire.c - libFuzzer target: tbr_frame_parse() on arbitrary bytes, and
 * the property that a parsed frame re-encodes to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_core.h"

static uint8_t out[TBR_FRAME_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tbr_hdr h, h2;
	uint16_t conn;
	uint32_t qpn, hl;

	tbr_frame_peek(data, (uint32_t)size, &conn, &qpn);
	if (size > TBR_FRAME_MAX + 8)
		return 0;
	if (tbr_frame_parse(data, (uint32_t)size, &h))
		return 0;
	if (h.hdr_len + h.paylen != size || h.payload != data + h.hdr_len)
		abort();
	hl = tbr_hdr_build(out, &h);
	if (hl != h.hdr_len)
		abort();
	memcpy(out + hl, h.payload, h.paylen);
	if (memcmp(out, data, size))
		abort();
	if (tbr_frame_parse(out, (uint32_t)size, &h2) ||
	    memcmp(&h.msn, &h2.msn, offsetof(struct tbr_hdr, hdr_len) -
		   offsetof(struct tbr_hdr, msn)))
		abort();
	return 0;
}
