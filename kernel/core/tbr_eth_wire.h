/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_eth_wire.h - the eth rail backend's wire format (docs/eth.md), OS
 * independent: every check a frame from the segment meets before eth.c
 * touches a peer, so the same code runs in tbrdma.ko and in the fuzzer
 * (tests/fuzz/fuzz_eth.c).
 *
 * After the Ethernet header: a 24-byte header (big endian), then the
 * payload: a HELLO (16 bytes), one rail frame (1..TBR_ETH_FRAME_MAX bytes), or a FRAG:
 * an 8-byte fragment header and one piece of a rail frame too large for
 * the link's MTU (the receiver reassembles it: tbr_eth_reasm_add()). A
 * packet to a peer that takes bundles (its hellos' bundle_max) may carry
 * more FRAMEs after the first, each with its header (tbr_eth_next_frame()).
 */
#ifndef TBR_ETH_WIRE_H
#define TBR_ETH_WIRE_H

#include "tbr_os.h"
#include "tbr_auth.h"

/*
 * The frames' ethertype: IEEE 802 "local experimental ethertype 1", for
 * private protocols on links under one administration.
 */
#define TBR_ETH_P		0x88B5
#define TBR_ETH_VERSION		1
#define TBR_ETH_HELLO		1
#define TBR_ETH_FRAME		2
#define TBR_ETH_FRAG		3
#define TBR_ETH_HDR_LEN		24
#define TBR_ETH_HELLO_LEN	16
#define TBR_ETH_HELLO_AUTH_LEN	72	/* with the auth part (fabric key) */
#define TBR_ETH_HELLO_MAC_OFF	40	/* the MAC in a HELLO with it */
#define TBR_ETH_AUTH_MAC	0x1	/* auth flags: the sender holds a key */
#define TBR_ETH_MAC_LABEL	"tbrdma eth mac1"	/* 16 bytes with its NUL */
#define TBR_ETH_FRAG_HDR_LEN	8
#define TBR_ETH_HEARS_YOU	0x01	/* hello flag (unicast only) */
#define TBR_ETH_REASSEMBLES	0x02	/* hello flag: send me FRAGs */
#define TBR_ETH_ACK_RIDE	0x04	/* hello flag: my transport takes ACKs
					 * riding on data frames (TBR_F_ACK)
					 */
#define TBR_ETH_NET_FRAG	0x08	/* hello flag: my tbrN takes fragment
					 * frames (TBR_PEER_NET_FRAG)
					 */
#define TBR_ETH_PERIOD_MIN	50	/* ms; a peer's period is clamped into this */
#define TBR_ETH_PERIOD_MAX	10000
#define TBR_ETH_FRAME_MAX	4144	/* TBR_FRAME_SIZE_MAX */

struct tbr_eth_hdr {
	u8 version;		/* TBR_ETH_VERSION */
	u8 type;		/* TBR_ETH_HELLO, TBR_ETH_FRAME */
	u8 pdf;			/* FRAME: SOF code << 4 | EOF code */
	u8 flags;		/* 0 */
	u16 len;		/* payload bytes after the header */
	u64 src;		/* sender's device GUID */
	u64 dst;		/* receiver's GUID; 0: broadcast hello */
};

struct tbr_eth_hello {
	u32 session;		/* sender's binding session, != 0 */
	u32 peer_session;	/* unicast: the receiver's session heard */
	u32 max_frame;		/* largest frame the sender receives, <= 4144 */
	u32 period_ms;		/* sender's period, clamped to 50..10000 */
	u32 bundle_max;		/* largest bundle it takes (bytes after the
				 * Ethernet header); 0: one frame per packet
				 */
	u8 flags;		/* TBR_ETH_HEARS_YOU, TBR_ETH_REASSEMBLES,
				 * TBR_ETH_ACK_RIDE, TBR_ETH_NET_FRAG;
				 * others ignored
				 */
	bool unicast;		/* dst was our GUID */
	bool hears_us;		/* unicast, HEARS_YOU, for our current session */
	/* the auth part (HELLO of TBR_ETH_HELLO_AUTH_LEN bytes or more) */
	bool auth;		/* present */
	u32 auth_flags;		/* TBR_ETH_AUTH_MAC */
	u64 nonce;		/* the sender's current one */
	u64 peer_nonce;		/* unicast: the receiver's nonce it answers */
	u8 mac[TBR_AUTH_MAC_LEN];
};

/*
 * Parse the header at @buf, @len bytes available from it (header and
 * payload). 0: @h filled, version known, the payload it announces is all
 * there; -EINVAL otherwise (dropped).
 */
int tbr_eth_hdr_parse(const u8 *buf, u32 len, struct tbr_eth_hdr *h);
void tbr_eth_hdr_build(u8 *buf, const struct tbr_eth_hdr *h);

/*
 * A HELLO with header @h and payload @p (@plen bytes) as received by a
 * binding of device @self whose session is @session: 0 and @out filled if
 * it is for us (broadcast, or unicast to @self) from another device with a
 * valid session; -EINVAL otherwise. Values out of range are clamped.
 */
int tbr_eth_hello_parse(const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
			u64 self, u32 session, struct tbr_eth_hello *out);
void tbr_eth_hello_build(u8 *buf, u32 session, u32 peer_session,
			 u32 max_frame, u32 period_ms, u32 bundle_max, u8 flags);

/*
 * The auth part of a HELLO (docs/eth.md "Authenticated links"), after the
 * 16 bytes above; a receiver without it ignores it (the header's len):
 *   16  8  the sender's nonce (random, renewed every TBR_ETH_NONCE_MS)
 *   24  8  unicast: the receiver's nonce it answers (the latest heard); 0
 *   32  4  auth flags: TBR_ETH_AUTH_MAC, the sender holds a fabric key and
 *          bytes 40-71 are the MAC
 *   36  4  reserved, sent 0 (covered by the MAC)
 *   40 32  HMAC-SHA256 under the fabric key of TBR_ETH_MAC_LABEL, the
 *          sender's Ethernet address (6 bytes, 2 zero), the header's src
 *          and dst GUIDs (8 each) and bytes 0-39 of the HELLO (sessions,
 *          parameters, flags, both nonces)
 * A unicast HELLO with a MAC over one of the receiver's last two nonces
 * proves the sender holds the key now: with a key configured, only such a
 * HELLO makes a peer one that hears us (and gets HEARS_YOU back).
 */
#define TBR_ETH_NONCE_MS	20000	/* twice TBR_ETH_PERIOD_MAX */

/* Adds the auth part to the HELLO at @buf (TBR_ETH_HELLO_AUTH_LEN bytes). */
void tbr_eth_hello_auth_build(u8 *buf, u64 nonce, u64 peer_nonce, u32 flags);

/*
 * Sign the HELLO at @p (TBR_ETH_HELLO_AUTH_LEN bytes, auth part with
 * TBR_ETH_AUTH_MAC) that station @smac sends with header GUIDs @src, @dst:
 * the MAC goes into bytes 40-71. 0 or -ENOKEY.
 */
int tbr_eth_hello_sign(const struct tbr_auth *a, const u8 *smac, u64 src,
		       u64 dst, u8 *p);

/*
 * Check a unicast HELLO (@h, payload @p of @plen bytes, parsed into
 * @hello) that came from station @smac, against our nonces @cur and @prev
 * (0: none): 0 if its MAC under our current or previous key covers one of
 * them; -ENOKEY: no MAC (the sender holds no key, or is older); -ESTALE:
 * it answers another nonce (recorded earlier); -EKEYREJECTED: a wrong MAC;
 * -EINVAL: not a unicast HELLO.
 */
int tbr_eth_hello_verify(const struct tbr_auth *a, const u8 *smac,
			 const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
			 const struct tbr_eth_hello *hello, u64 cur, u64 prev);

/*
 * A FRAME with header @h received by device @self: 0 if it is addressed to
 * @self and carries 1..TBR_ETH_FRAME_MAX bytes; -EINVAL otherwise.
 */
int tbr_eth_frame_check(const struct tbr_eth_hdr *h, u64 self);

/*
 * A bundle: the record after one that ended @left bytes before the end of
 * its packet. @buf holds the first min(@left, TBR_ETH_HDR_LEN) of them.
 * 1: fewer than a header's bytes are left, the packet ends (the rest is
 * Ethernet padding); 0: another FRAME starts at @buf, @h filled, its
 * payload all there (tbr_eth_frame_check() still to come); -EINVAL: not a
 * FRAME, or cut short: the rest of the packet is dropped.
 */
int tbr_eth_next_frame(const u8 *buf, u32 left, struct tbr_eth_hdr *h);

/* One piece of a fragmented rail frame: the FRAG header and where its data is. */
struct tbr_eth_frag {
	u16 id;			/* the sender's frame number (per peer) */
	u16 offset;		/* of this piece in the frame */
	u16 total;		/* the frame's length, 1..TBR_ETH_FRAME_MAX */
	u8 pdf;			/* the frame's code (eth header) */
	u32 len;		/* data bytes in this piece, >= 1 */
};

/*
 * A FRAG with header @h and payload @p (@plen bytes, the fragment header and
 * the data) received by device @self: 0 and @out filled if it is addressed
 * to @self and its piece lies inside a frame of 1..TBR_ETH_FRAME_MAX bytes;
 * -EINVAL otherwise. The data starts at @p + TBR_ETH_FRAG_HDR_LEN.
 */
int tbr_eth_frag_parse(const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
		       u64 self, struct tbr_eth_frag *out);
/* The fragment header for @fr at @buf (TBR_ETH_FRAG_HDR_LEN bytes). */
void tbr_eth_frag_build(u8 *buf, const struct tbr_eth_frag *fr);

/*
 * In-order reassembly of one peer's fragments. The sender sends the pieces
 * of a frame back to back, in order, one frame at a time, so the receiver
 * keeps one frame: a piece at offset 0 starts it (dropping an unfinished
 * one), the next must continue it exactly (same id, length and code, at the
 * offset reached). Anything else drops the unfinished frame and the piece:
 * the transport resends what was lost. Caller's lock; @buf is the caller's,
 * TBR_ETH_FRAME_MAX bytes.
 */
struct tbr_eth_reasm {
	u8 *buf;
	u16 id, total, have;	/* the frame being reassembled */
	u8 pdf;
	bool busy;		/* a frame is under way */
};

#define TBR_ETH_REASM_MORE	0
#define TBR_ETH_REASM_DONE	1
/*
 * Add piece @fr (data at @data) to @r. TBR_ETH_REASM_DONE: the frame is
 * complete, @r->total bytes in @r->buf with code @r->pdf (@r is idle again);
 * TBR_ETH_REASM_MORE: kept, more to come; -EINVAL: @fr dropped. *@dropped
 * grows by the unfinished frames and stray pieces thrown away (0..2).
 */
int tbr_eth_reasm_add(struct tbr_eth_reasm *r, const struct tbr_eth_frag *fr,
		      const u8 *data, u32 *dropped);
/* Forget an unfinished frame (rail stopped): 1 if there was one, else 0. */
u32 tbr_eth_reasm_reset(struct tbr_eth_reasm *r);

#endif /* TBR_ETH_WIRE_H */
