/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rail negotiation between the daemons at the two ends of a link (docs/sweep.md "Rail
 * negotiation"): each side sends, per link, a RAILS message (same 8-byte prefix as the sweep's
 * messages, type 2, its own version) advertising its rails; the agreement is the intersection of
 * the rail sets and the minimum of the limits. Pure: codec and rule, unit-tested and fuzzable.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SWEEP_TYPE_RAILS	2
#define RAILS_VERSION		1
#define RAILS_HDR_LEN		32
#define RAILS_ENTRY_LEN		8
#define RAILS_MAX		16		/* TBRDMA_RAILS_MAX */
#define RAILS_MSG_LEN_MAX	(RAILS_HDR_LEN + RAILS_MAX * RAILS_ENTRY_LEN)

#define RAIL_ADV_UP		0x01		/* the rail is up at the sender */
#define RAIL_ADV_CUT		0x02		/* disabled at the sender (admin or negotiation) */
#define RAIL_ADV_E2E		0x04		/* end-to-end flow control capable */

typedef struct RailAdv {
	uint8_t id;			/* rail id within the link, 0..15 */
	uint8_t flags;			/* RAIL_ADV_* (unknown bits ignored) */
	uint8_t lanes;			/* 0: unknown */
	uint32_t max_frame;		/* 0: unknown */
} RailAdv;

typedef struct RailsMsg {
	uint8_t version;
	uint64_t sender;		/* the sender's device GUID */
	uint32_t link;			/* the sender's link id (informational) */
	uint32_t max_frame;		/* the sender's link max frame, 0 unknown */
	uint32_t best_lane_mbps;	/* the best Mb/s per lane any Thunderbolt rail of the
					 * sender's device trained at (what its ports showed they
					 * do; model_flag_slow), 0 unknown or none */
	uint8_t n_rails;
	RailAdv rails[RAILS_MAX];
} RailsMsg;

typedef struct RailsAgreed {
	uint8_t n_rails;		/* rails present at both ends */
	uint16_t mask;			/* bit i: rail i agreed */
	uint8_t n_up;			/* agreed rails up at both ends (as last advertised) */
	uint32_t max_frame;		/* min of both ends' known limits, 0 unknown */
	bool e2e;			/* every agreed rail E2E capable at both ends */
	uint8_t lanes;			/* sum over agreed rails of min(lanes), unknown as the other */
} RailsAgreed;

/* encodes into @buf; returns the length, or -EMSGSIZE / -EINVAL (rail ids >= 16 or repeated) */
int rails_encode(const RailsMsg *m, uint8_t *buf, size_t len);
/* strict decode of untrusted bytes: 0, or -EBADMSG / -EPROTONOSUPPORT with @why */
int rails_decode(RailsMsg *m, const uint8_t *buf, size_t len, char *why, size_t whylen);
/* the agreement rule; symmetric: agree(a, b) == agree(b, a) */
void rails_agree(const RailsMsg *local, const RailsMsg *peer, RailsAgreed *out);
bool rails_agreed_equal(const RailsAgreed *a, const RailsAgreed *b);
