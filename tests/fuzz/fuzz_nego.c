// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_nego.c - libFuzzer target: tbr_nego_decode() on arbitrary words (a
 * hostile peer's XDomain negotiation packet), and the properties that a
 * decoded message re-encodes and decodes to the same message, and that
 * agreeing with it never yields more rails, larger rings or frames than
 * either side offered. The auth words (minor version 1): the MAC check on
 * the input takes it only when it carries the flag and answers the nonce
 * asked; the re-encoded message signed with the (stand-in) key checks, and
 * any changed byte of what the MAC covers, or another nonce, fails. READY
 * and BYE (minor version 2) carry them too: the session check takes one only
 * when it is flagged signed and names both of the session's nonces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_nego.h"
#include "fuzz_mac.h"

static void auth_check(const u32 *w, unsigned int nw, const struct tbr_nego_msg *m,
		       u32 *e, int ne)
{
	struct tbr_nego_msg d;
	unsigned int i;
	u64 nonce;
	int rc;

	/* the input as a reply to a HELLO of nonce 42 and of its own nonce */
	for (i = 0; i < 2; i++) {
		nonce = i ? m->peer_nonce : 42;
		rc = tbr_nego_verify(&fuzz_auth, w, nw, m, nonce);
		if (!rc && (!m->auth || !(m->auth_flags & TBR_NEGO_AUTH_MAC) ||
			    m->peer_nonce != nonce))
			abort();
		if (rc && rc != -ENOKEY && rc != -ESTALE && rc != -EKEYREJECTED)
			abort();
	}
	rc = tbr_nego_session_check(m, m->peer_nonce, m->nonce);
	if (rc != (m->auth && (m->auth_flags & TBR_NEGO_AUTH_MAC) ? 0 : -ENOKEY))
		abort();
	if (!rc && (!tbr_nego_session_check(m, m->peer_nonce + 1, m->nonce) ||
		    !tbr_nego_session_check(m, m->peer_nonce, m->nonce + 1)))
		abort();
	if (m->auth && m->type != TBR_NEGO_HELLO && m->type != TBR_NEGO_HELLO_REPLY &&
	    m->type != TBR_NEGO_READY && m->type != TBR_NEGO_BYE)
		abort();	/* STATUS never carries the auth words */
	if (!m->auth)
		return;
	/* signed by us: checks; a byte it covers changed: fails */
	e[TBR_NEGO_AUTH_OFF] |= TBR_NEGO_AUTH_MAC;
	if (tbr_nego_sign(&fuzz_auth, e, ne) || tbr_nego_decode(e, ne, &d) ||
	    tbr_nego_verify(&fuzz_auth, e, ne, &d, m->peer_nonce))
		abort();
	if (!tbr_nego_verify(&fuzz_auth, e, ne, &d, m->peer_nonce + 1))
		abort();
	i = (m->seq + m->nonce) % TBR_NEGO_MAC_OFF;
	e[i] ^= 1u << (m->nonce & 31);
	if (!tbr_nego_decode(e, ne, &d) &&
	    !tbr_nego_verify(&fuzz_auth, e, ne, &d, d.peer_nonce))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u32 w[TBR_NEGO_MAX_WORDS + 4], e[TBR_NEGO_AUTH_WORDS];
	struct tbr_nego_msg m, m2, local;
	struct tbr_nego_result r;
	unsigned int nw = (unsigned int)(size / 4), i;
	int ne;

	if (nw > TBR_NEGO_MAX_WORDS + 4)
		return 0;
	memcpy(w, data, nw * 4);
	if (tbr_nego_decode(w, nw, &m))
		return 0;
	ne = tbr_nego_encode(&m, e, TBR_NEGO_AUTH_WORDS);
	if (ne != (m.auth ? TBR_NEGO_AUTH_WORDS : TBR_NEGO_WORDS))
		abort();
	if (tbr_nego_decode(e, ne, &m2))
		abort();
	if (memcmp(&m, &m2, sizeof(m)))
		abort();
	auth_check(w, nw, &m, e, ne);
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
