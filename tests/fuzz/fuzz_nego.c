// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_nego.c - libFuzzer target: tbr_nego_decode() on arbitrary words (a
 * hostile peer's XDomain negotiation packet), and the properties that a
 * decoded message re-encodes and decodes to the same message, and that
 * agreeing with it never yields more rails, larger rings or frames than
 * either side offered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_nego.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u32 w[TBR_NEGO_MAX_WORDS + 4], e[TBR_NEGO_WORDS];
	struct tbr_nego_msg m, m2, local;
	struct tbr_nego_result r;
	unsigned int nw = (unsigned int)(size / 4), i;

	if (nw > TBR_NEGO_MAX_WORDS + 4)
		return 0;
	memcpy(w, data, nw * 4);
	if (tbr_nego_decode(w, nw, &m))
		return 0;
	if (tbr_nego_encode(&m, e, TBR_NEGO_WORDS) != TBR_NEGO_WORDS)
		abort();
	if (tbr_nego_decode(e, TBR_NEGO_WORDS, &m2))
		abort();
	if (memcmp(&m, &m2, sizeof(m)))
		abort();
	if (m.type != TBR_NEGO_HELLO && m.type != TBR_NEGO_HELLO_REPLY)
		return 0;
	tbr_nego_init(&local, TBR_NEGO_HELLO);
	local.guid = 1;
	local.caps = TBR_NEGO_CAP_E2E;
	local.rails = local.nhops = 2;
	local.hopid[0] = 8;
	local.hopid[1] = 9;
	local.tx_ring = local.rx_ring = 256;
	local.frame_size = 4096;
	if (tbr_nego_agree(&local, &m, 4096, &r))
		return 0;
	if (!r.rails || r.rails > local.rails || r.rails > m.rails ||
	    r.tx_ring > local.tx_ring || r.tx_ring > m.rx_ring ||
	    r.rx_ring > local.rx_ring || r.rx_ring > m.tx_ring ||
	    r.frame_size != 4096)
		abort();
	for (i = 0; i < r.rails; i++)
		if (m.hopid[i] < TBR_NEGO_HOPID_MIN || m.hopid[i] > TBR_NEGO_HOPID_MAX)
			abort();
	return 0;
}
