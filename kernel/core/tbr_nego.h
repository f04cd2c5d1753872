/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_nego.h - rail negotiation messages of the Thunderbolt backend
 * (docs/thunderbolt.md), exchanged between the two kernels over XDomain
 * (tb_xdomain_request / tb_xdomain_response) before any DMA path exists.
 *
 * OS-independent: the same code builds into tbrdma.ko, the host unit tests
 * (tests/unit/test_nego.c) and a libFuzzer target (tests/fuzz/fuzz_nego.c).
 *
 * A message body is an array of 32-bit words in host order: the XDomain
 * control channel carries packets as big-endian dwords and converts each
 * dword, so both kernels see the same words. The body follows the XDomain
 * header (route, length/sequence) and our protocol UUID, which tb.c adds.
 *
 *  word  0  magic "TBRN" (0x5442524e)
 *  word  1  version major [31:24], minor [23:16], type [15:8], body words [7:0]
 *  word  2  sequence number (replies echo the request's)
 *  word  3  status (replies: 0 ok, else TBR_NEGO_ST_*)
 *  words 4-5   sender's device GUID (tbrdma0 node GUID), high word first
 *  words 6-9   initiator (sender) host UUID, 16 bytes big-endian packed
 *  words 10-13 target (receiver) host UUID
 *  --- HELLO / HELLO_REPLY only
 *  word 14  capabilities (TBR_NEGO_CAP_*), unknown bits ignored
 *  word 15  rails wanted [31:24], HopID count [23:16], link speed Gb/s [15:0]
 *  word 16  lanes [31:24], reserved [23:16] (sent 0, ignored), sender instance [15:0]
 *           (random, new at every start of the sender's negotiation, e.g. resume;
 *           0: not sent): tells a restarted peer from a replayed HELLO
 *  word 17  TX ring size [31:16], RX ring size [15:0]
 *  word 18  frame size in bytes
 *  words 19-26 transmit HopIDs, two per word (rail 2i [31:16], 2i+1 [15:0])
 *  --- HELLO / HELLO_REPLY, minor version 1, with a fabric key (TBR_NEGO_AUTH_WORDS)
 *  word 27  auth flags: TBR_NEGO_AUTH_MAC, the sender holds a fabric key
 *           (a HELLO: prove you hold it too; a reply: words 32-39 are its MAC)
 *  words 28-29 sender's nonce, random, new in every message
 *  words 30-31 the nonce answered (a HELLO_REPLY: its HELLO's; a HELLO: 0)
 *  words 32-39 HMAC-SHA256 under the fabric key of TBR_NEGO_MAC_LABEL and
 *           words 0-31 as big-endian bytes (GUIDs, host UUIDs, parameters,
 *           instance, both nonces), 32 bytes packed big endian
 *  --- READY only
 *  word 14  rails whose paths are enabled on the sender
 *  --- READY and BYE, minor version 2, in a session whose HELLOs proved the
 *  fabric key (words 15-26 zero): the auth words 27-39 as above, with
 *  word 28-29 the sender's HELLO nonce and 30-31 the receiver's HELLO nonce
 *  the sender answered (the session's two challenges), the MAC over words
 *  0-31 likewise (type, sequence, GUID, UUIDs, ready rails, both nonces)
 *
 * Authentication (docs/protocol.md "Authenticated links"): both ends say
 * HELLO, so each HELLO is a challenge (its nonce) that the other end's
 * HELLO_REPLY answers with a MAC over that nonce, its own, its GUID and its
 * parameters: a reply proves the replier holds the key now, a recorded one
 * answers an old nonce. A sender with a key sends HELLO and HELLO_REPLY at
 * TBR_NEGO_AUTH_WORDS (and takes answers only that long); a replier answers
 * a HELLO at the HELLO's size, so a keyless new peer says "no key" (flags 0)
 * instead of timing out; one with a key answers a short HELLO (a keyless
 * peer) with TBR_NEGO_ST_AUTH. READY and BYE of a keyed session are signed
 * too (minor version 2) and bound to it by the two HELLO nonces
 * (tbr_nego_session_check): a READY or BYE without a MAC, under another
 * key, or of another session (recorded, injected) is refused, so nobody on
 * the cable but the proven peer can end its rails or say they are up.
 *
 * Every message is sent at its full fixed size (TBR_NEGO_WORDS): the XDomain
 * core matches a response only when it is at least as long as the buffer the
 * requester gave, so a fixed size keeps old and new peers matching. A peer
 * with a higher minor version may send more words; they are ignored. A
 * different major version is refused (-EPROTONOSUPPORT) and answered with a
 * STATUS message carrying TBR_NEGO_ST_VERSION and our version.
 */
#ifndef TBR_NEGO_H
#define TBR_NEGO_H

#include "tbr_os.h"
#include "tbr_auth.h"

#define TBR_NEGO_MAGIC		0x5442524eu	/* "TBRN" */
#define TBR_NEGO_VER_MAJOR	2	/* 2: ring frames with SOF PDF != EOF PDF */
#define TBR_NEGO_VER_MINOR	2	/* 1: the auth words; 2: READY and BYE signed */

#define TBR_NEGO_HDR_WORDS	14
#define TBR_NEGO_MAX_RAILS	16		/* = TBR_LINK_MAX_RAILS */
#define TBR_NEGO_WORDS		(TBR_NEGO_HDR_WORDS + 5 + TBR_NEGO_MAX_RAILS / 2)
#define TBR_NEGO_AUTH_OFF	TBR_NEGO_WORDS		/* the auth words' first */
#define TBR_NEGO_MAC_OFF	(TBR_NEGO_AUTH_OFF + 5)	/* the MAC's first word */
#define TBR_NEGO_AUTH_WORDS	(TBR_NEGO_MAC_OFF + TBR_AUTH_MAC_LEN / 4)
#define TBR_NEGO_MAC_LABEL	"tbrdma nego mac1"	/* 16 bytes */
#define TBR_NEGO_AUTH_MAC	0x1	/* auth flags: the sender holds a key */
#define TBR_NEGO_MAX_WORDS	59	/* 6-bit XDomain length minus our UUID */

enum tbr_nego_type {
	TBR_NEGO_HELLO = 1,		/* my parameters; answer HELLO_REPLY */
	TBR_NEGO_HELLO_REPLY = 2,	/* the replier's parameters + status */
	TBR_NEGO_READY = 3,		/* my DMA paths are on; answer STATUS */
	TBR_NEGO_BYE = 4,		/* my rails go down; answer STATUS */
	TBR_NEGO_STATUS = 5,		/* status only */
	TBR_NEGO_TYPE_MAX = TBR_NEGO_STATUS,
};

enum tbr_nego_status {
	TBR_NEGO_ST_OK = 0,
	TBR_NEGO_ST_VERSION = 1,	/* major version not supported */
	TBR_NEGO_ST_INVALID = 2,	/* malformed or out-of-range values */
	TBR_NEGO_ST_BUSY = 3,		/* not ready (e.g. module going away) */
	TBR_NEGO_ST_REFUSED = 4,	/* parameters cannot be agreed on */
	TBR_NEGO_ST_AUTH = 5,		/* a fabric key is required (minor 1) */
};

/* capabilities word (also the prtcstns of our XDomain service) */
#define TBR_NEGO_CAP_E2E	0x1	/* end-to-end flow control on RX rings */
#define TBR_NEGO_CAP_POLL	0x2	/* receiver polls its RX rings */
#define TBR_NEGO_CAP_MULTI	0x4	/* more than one DMA path per XDomain */
#define TBR_NEGO_CAP_SPLIT	0x8	/* frames above the ring frame as head + tail */
#define TBR_NEGO_CAP_ACK_RIDE	0x10	/* transport takes ACKs riding on data
					 * frames (TBR_F_ACK)
					 */
#define TBR_NEGO_CAP_NET_FRAG	0x20	/* tbrN takes fragment frames (IP
					 * packets striped, TBR_PEER_NET_FRAG)
					 */

/* Limits a decoder enforces (hostile peer). */
#define TBR_NEGO_HOPID_MIN	8	/* first HopID usable for DMA paths */
#define TBR_NEGO_HOPID_MAX	2047	/* 11-bit HopID field */
#define TBR_NEGO_RING_MIN	16
#define TBR_NEGO_RING_MAX	4096
#define TBR_NEGO_FRAME_MIN	256	/* TB_FRAME_SIZE */
#define TBR_NEGO_FRAME_MAX	4096
#define TBR_NEGO_SPEED_MAX	1000	/* Gb/s per lane, generous */
#define TBR_NEGO_LANES_MAX	4

struct tbr_nego_msg {
	u8 ver_major, ver_minor;
	u8 type;			/* enum tbr_nego_type */
	u32 seq;
	u32 status;			/* enum tbr_nego_status */
	u64 guid;
	u8 initiator[16];
	u8 target[16];
	/* HELLO / HELLO_REPLY */
	u32 caps;
	u8 rails;			/* rails wanted, 1..TBR_NEGO_MAX_RAILS */
	u8 nhops;			/* == rails */
	u16 link_gbps;			/* 0: unknown */
	u8 lanes;			/* 0: unknown */
	u16 instance;			/* 0: not sent (see word 16) */
	u16 tx_ring, rx_ring;		/* descriptors, power of two */
	u32 frame_size;			/* power of two */
	u16 hopid[TBR_NEGO_MAX_RAILS];	/* sender's transmit (out) HopIDs */
	/* READY */
	u8 ready_rails;
	/* HELLO / HELLO_REPLY, READY / BYE of a keyed session: the auth words (27-39) */
	bool auth;			/* sent / present */
	u32 auth_flags;			/* TBR_NEGO_AUTH_MAC */
	u64 nonce;			/* the sender's */
	u64 peer_nonce;			/* the one answered */
	u8 mac[TBR_AUTH_MAC_LEN];
};

/* Fills version and magic-independent defaults for @type. */
void tbr_nego_init(struct tbr_nego_msg *m, u8 type);

/*
 * Encode @m into @w (at least TBR_NEGO_WORDS words, TBR_NEGO_AUTH_WORDS with
 * @m->auth). Returns the number of words (TBR_NEGO_WORDS, or
 * TBR_NEGO_AUTH_WORDS for a HELLO or HELLO_REPLY with @m->auth) or -EINVAL
 * when @m itself is out of range (the same checks the decoder applies).
 */
int tbr_nego_encode(const struct tbr_nego_msg *m, u32 *w, unsigned int nw);

/*
 * Decode @nw words. Returns 0, -EBADMSG (bad magic, length, type, or a
 * message too short for its type), -EPROTONOSUPPORT (other major version;
 * m->ver_major/ver_minor/type/seq are filled so the caller can answer), or
 * -ERANGE (a value out of range: rails, HopIDs, ring or frame size, speed).
 */
int tbr_nego_decode(const u32 *w, unsigned int nw, struct tbr_nego_msg *m);

/*
 * Sign the encoded HELLO, HELLO_REPLY, READY or BYE at @w (@nw words) with
 * the auth words and TBR_NEGO_AUTH_MAC: its MAC goes into words 32-39. 0,
 * -EINVAL (no auth words or flag), -ENOKEY (no key).
 */
int tbr_nego_sign(const struct tbr_auth *a, u32 *w, unsigned int nw);

/*
 * Check the HELLO_REPLY at @w (@nw words, decoded into @m) to our HELLO
 * whose nonce was @nonce: 0 if it is signed with our current or previous
 * key and answers @nonce; -ENOKEY: it carries no MAC (the peer holds no key,
 * or is older); -ESTALE: it answers another nonce (a recorded reply);
 * -EKEYREJECTED: a wrong MAC (another key).
 */
int tbr_nego_verify(const struct tbr_auth *a, const u32 *w, unsigned int nw,
		    const struct tbr_nego_msg *m, u64 nonce);

/*
 * Whether the READY or BYE @m (its MAC checked by tbr_nego_verify with
 * @m->peer_nonce) belongs to the session whose HELLO nonces were @ours (our
 * HELLO, answered by the peer's proof) and @theirs (the peer's HELLO): 0;
 * -ENOKEY: unsigned; -ESTALE: another session's (recorded or made up).
 */
int tbr_nego_session_check(const struct tbr_nego_msg *m, u64 ours, u64 theirs);

/* What both ends agreed on. */
struct tbr_nego_result {
	u8 rails;
	bool e2e;
	bool split;		/* both split frames (TBR_NEGO_CAP_SPLIT), and E2E */
	bool ack_ride;		/* the peer takes TBR_F_ACK (TBR_NEGO_CAP_ACK_RIDE) */
	bool net_frag;		/* both take tbrN fragments (TBR_NEGO_CAP_NET_FRAG) */
	u16 tx_ring;		/* our TX ring = min(our TX, their RX) */
	u16 rx_ring;		/* our RX ring = min(our RX, their TX) */
	u32 frame_size;
};

/*
 * Agree on the parameters from our HELLO @local and the peer's @remote.
 * Returns 0, or -ERANGE when the result is unusable: frame size below
 * @min_frame (the rail layer needs full frames) or no rail.
 */
int tbr_nego_agree(const struct tbr_nego_msg *local,
		   const struct tbr_nego_msg *remote, u32 min_frame,
		   struct tbr_nego_result *res);

/*
 * Rails to ask for on one XDomain: one per lane (at least one), at most
 * @max; exactly one when the firmware connection manager owns the paths
 * (it allows one DMA tunnel per XDomain).
 */
unsigned int tbr_nego_rails_for_link(unsigned int lanes, bool fw_cm,
				     unsigned int max);

/*
 * Rails a conn keeps once the peer's READY said how many it has up:
 * @ours set up here, @peer_ready from the READY (1..TBR_NEGO_MAX_RAILS;
 * 0: no READY yet, keep @ours). The minimum: a rail only one end has paths
 * for carries nothing (e.g. the firmware CM refused one end's second
 * tunnel), so both ends go on with the rails both have. Rails are set up
 * in order 0, 1, ..., so "the first n" is the same rails on both ends.
 */
unsigned int tbr_nego_ready_rails(unsigned int ours, unsigned int peer_ready);

const char *tbr_nego_type_name(u8 type);

#endif /* TBR_NEGO_H */
