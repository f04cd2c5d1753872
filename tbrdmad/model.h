/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The daemon's in-memory picture of the kernel: devices, links, rails with counters, as the last
 * genl dump saw them (docs/netlink.md). Plain data: built by genl.c, read by json.c/request.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tbrdma-netlink.h"

#define MODEL_NAME_MAX 32
#define MODEL_STATS (TBRDMA_STAT_MAX + 1)

typedef struct Counters {
	uint32_t present;		/* bit i: stats[i] was reported */
	uint64_t v[MODEL_STATS];
} Counters;

typedef struct Device {
	char name[MODEL_NAME_MAX];
	char netdev[MODEL_NAME_MAX];
	uint32_t index, ifindex;
	uint64_t guid;
	bool host;
	uint32_t links, rails_up;
	bool auth;		/* a fabric key is set: links authenticate (docs/protocol.md) */
	uint64_t auth_refused;	/* peers refused: no proof of the fabric key */
} Device;

typedef struct Link {
	char device[MODEL_NAME_MAX];
	uint32_t id;
	uint64_t peer_guid;
	bool up;
	uint8_t trust;		/* TBRDMA_TRUST_*: 0 used, 1 held, 2 rejected (docs/sweep.md) */
	uint32_t rails_up, rails_total;
	bool has_tx_credits, has_max_frame;
	uint32_t tx_credits, max_frame;
	Counters counters;
} Link;

typedef struct Rail {
	char device[MODEL_NAME_MAX];
	uint32_t link, id;
	uint64_t peer_guid;
	char backend[16];
	bool up;
	uint32_t tx_depth, rx_depth, tx_credits;
	bool has_max_frame;
	uint32_t max_frame;
	bool has_knobs;			/* emu fault knobs */
	uint32_t drop_ppm, dup_ppm, reorder, delay_us, rx_hold_us;
	uint64_t rate_bps;
	bool cut;
	char eth_ifname[MODEL_NAME_MAX];	/* eth backend, else "" */
	uint32_t eth_ifindex;
	bool has_peer_mac;
	uint8_t eth_peer_mac[6];
	uint64_t eth_rx_foreign;		/* its binding's (EthBinding), shared by its rails */
	uint32_t lane_mbps, lanes;		/* what its medium trained at; lanes 0 unknown */
	bool slow;				/* a tb cable below what both ends showed (model_flag_slow) */
	uint32_t expect_mbps;			/* that bound, per lane: tb rails only, else 0 */
	bool has_ring;				/* ring occupancy since the rail came up */
	uint32_t ring_ms;			/* the time it covers */
	uint32_t tx_full_ppm, tx_empty_ppm, tx_mean_ppm;	/* shares of it, mean level */
	uint32_t rx_full_ppm, rx_empty_ppm, rx_mean_ppm;
	Counters counters;
} Rail;

/* an Ethernet NIC carrying eth rails of a device (ETH_GET) */
typedef struct EthBinding {
	char device[MODEL_NAME_MAX];
	char ifname[MODEL_NAME_MAX];
	uint32_t ifindex;
	bool up;
	uint32_t max_frame, peers;
	uint64_t hello_tx, hello_rx;
	uint64_t rx_foreign;			/* frames dropped: source MAC not a peer's */
} EthBinding;

typedef struct Model {
	Device *devices;
	size_t n_devices;
	Link *links;
	size_t n_links;
	Rail *rails;
	size_t n_rails;
	EthBinding *eth;
	size_t n_eth;
} Model;

void model_clear(Model *m);
/* moves @from into @to (old contents of @to freed), leaves @from empty */
void model_replace(Model *to, Model *from);
Device *model_add_device(Model *m);	/* zeroed slot, NULL on ENOMEM */
Link *model_add_link(Model *m);
Rail *model_add_rail(Model *m);
EthBinding *model_add_eth(Model *m);
const Device *model_find_device(const Model *m, const char *name);
const Link *model_find_link(const Model *m, const char *device, uint32_t id);
const Rail *model_find_rail(const Model *m, const char *device, uint32_t link, uint32_t id);
const EthBinding *model_find_eth(const Model *m, const char *device, const char *ifname);
/*
 * Flags (Rail.slow) the Thunderbolt rails whose cable trained below what both hosts show they
 * support: on one lane (every Thunderbolt 3 / USB4 port bonds two), or at fewer Mb/s per lane
 * than the best of the device's tb rails here AND the best the peer at the other end advertised
 * for its own (@peer_lane_mbps(@ctx, rail): its RAILS messages, 0 unknown). Without the peer's
 * figure (an older daemon, no advert yet, no lookup), this host's best alone.
 */
void model_flag_slow(Model *m, uint32_t (*peer_lane_mbps)(void *ctx, const Rail *r), void *ctx);
/* the best per-lane Mb/s of @device's Thunderbolt rails (what its ports trained at), 0 none */
uint32_t model_best_lane_mbps(const Model *m, const char *device);

