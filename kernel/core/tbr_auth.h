/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_auth.h - authenticated links (docs/protocol.md "Authenticated
 * links"): with a fabric key configured, the eth HELLO (tbr_eth_wire.h) and
 * the Thunderbolt negotiation (tbr_nego.h) carry an HMAC-SHA256 over the
 * sender's GUID, both ends' nonces and the session or instance, so only a
 * holder of the key joins a link under a GUID. The codecs build what the
 * MAC covers; the MAC itself comes from the caller's key holder (@ops): the
 * kernel's crypto API in tbrdma.ko (link/auth.c), a host library in the
 * unit tests, a stand-in in the fuzzers.
 *
 * OS-independent; no locks of its own.
 */
#ifndef TBR_AUTH_H
#define TBR_AUTH_H

#include "tbr_os.h"

#define TBR_AUTH_MAC_LEN	32	/* HMAC-SHA256 */
#define TBR_AUTH_KEY_MIN	16	/* bytes, as tbrdmad's FabricKeyFile */
#define TBR_AUTH_KEY_MAX	256

/*
 * Key slots. A rotation keeps the previous key: it still signs for a grace
 * period G (so peers that do not have the new key yet take our HELLOs) and
 * is still accepted for 2G (so peers that took the new key up to G after us
 * and sign with their previous one, ours, are taken until they switch).
 * Every host of a fabric must take the new key within G of the first.
 */
enum {
	TBR_AUTH_CUR = 0,	/* the newest key: accepted */
	TBR_AUTH_PREV = 1,	/* the one before: accepted for 2G */
	TBR_AUTH_SLOTS,		/* (slots tbr_auth_verify() tries) */
	TBR_AUTH_SIGN = TBR_AUTH_SLOTS,	/* the key to sign with: PREV for G, then CUR */
};

struct tbr_auth_ops {
	/*
	 * HMAC-SHA256 of @len bytes at @data under key @slot (TBR_AUTH_CUR,
	 * TBR_AUTH_PREV, TBR_AUTH_SIGN) into @out (TBR_AUTH_MAC_LEN bytes):
	 * 0, or -ENOKEY when the slot holds no key (none configured, or the
	 * previous key's grace is over). Any context
	 * the caller of tbr_auth_sign()/tbr_auth_verify() is in.
	 */
	int (*mac)(void *ctx, unsigned int slot, const u8 *data, u32 len,
		   u8 *out);
};

struct tbr_auth {
	const struct tbr_auth_ops *ops;
	void *ctx;
};

/* MAC of @data under the signing key (TBR_AUTH_SIGN) into @mac: 0 or -ENOKEY. */
int tbr_auth_sign(const struct tbr_auth *a, const u8 *data, u32 len, u8 *mac);

/*
 * Whether @mac is the MAC of @data under the current or (in its grace
 * period) the previous key: 0, -ENOKEY (we hold no key), -EKEYREJECTED
 * (another key, or none). Compares in constant time.
 */
int tbr_auth_verify(const struct tbr_auth *a, const u8 *data, u32 len,
		    const u8 *mac);

#endif /* TBR_AUTH_H */
