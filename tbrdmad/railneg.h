/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Rail negotiation with the peer's daemon over the management channel (railneg.c); the codec
 * and the agreement rule are in negotiate.c. Driven by the sweep. */
#pragma once

#include <stdint.h>

#include <json-c/json.h>

#include "model.h"

typedef struct Manager Manager;
typedef struct RailNeg RailNeg;

RailNeg *railneg_new(Manager *m);
RailNeg *railneg_free(RailNeg *n);
/* every sweep run: follow @d's links in the model, re-agree, advertise on each up link */
void railneg_run(RailNeg *n, const Device *d);
/* a RAILS message from @peer on our link @link; 0 or -errno (dropped, logged at debug) */
int railneg_recv(RailNeg *n, uint32_t link, uint64_t peer, const uint8_t *data, size_t len);
/* the best Mb/s per lane the peer at the end of @r's link advertised for its Thunderbolt rails,
 * 0 unknown: model_flag_slow's lookup, @ctx the RailNeg */
uint32_t railneg_peer_lane_mbps(void *ctx, const Rail *r);
/* adds "negotiation" to the links JSON object of @l (nothing if the link is not negotiated) */
void railneg_link_json(RailNeg *n, const Link *l, json_object *o);
