/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tbrdma generic netlink family "tbrdma": devices, emulated cables, links,
 * rails, fault knobs, counters, the management datagram channel and events.
 * See docs/netlink.md. Every integer attribute has a fixed width, host byte
 * order; u64 attributes are padded with TBRDMA_ATTR_PAD (TBRDMA_STAT_PAD in
 * the stats nest).
 */
#ifndef _UAPI_TBRDMA_NETLINK_H
#define _UAPI_TBRDMA_NETLINK_H

#define TBRDMA_GENL_NAME	"tbrdma"
#define TBRDMA_GENL_VERSION	1
#define TBRDMA_MCGRP_EVENTS	"events"	/* DEV/LINK/RAIL_EVENT */
#define TBRDMA_MCGRP_MGMT	"mgmt"		/* MGMT_RECV */

/* Largest management datagram (one frame). */
#define TBRDMA_MGMT_MAX		4096
/* Most rails on one emulated cable and on one link. */
#define TBRDMA_RAILS_MAX	16
/* Forwarding table: most entries, longest route (docs/protocol.md 7). */
#define TBRDMA_ROUTES_MAX	1024
#define TBRDMA_ROUTE_HOPS_MAX	16
/* Slots of a port's P_Key table. */
#define TBRDMA_PKEYS_MAX	16

enum tbrdma_cmd {
	TBRDMA_CMD_UNSPEC,
	TBRDMA_CMD_DEV_GET,		/* dump, or one by DEV_NAME */
	TBRDMA_CMD_DEV_NEW,		/* admin; reply: like DEV_GET */
	TBRDMA_CMD_DEV_DEL,		/* admin: DEV_NAME */
	TBRDMA_CMD_EMU_CABLE_NEW,	/* admin: DEV_NAME, PEER_DEV_NAME, RAIL_COUNT
					 * [, DEPTH] [, PEER_GUID: the GUID the
					 * second device claims, test only];
					 * reply: CABLE_ID
					 */
	TBRDMA_CMD_EMU_CABLE_DEL,	/* admin: CABLE_ID */
	TBRDMA_CMD_LINK_GET,		/* dump */
	TBRDMA_CMD_RAIL_GET,		/* dump */
	TBRDMA_CMD_RAIL_SET,		/* admin: DEV_NAME, LINK_ID, RAIL_ID, knobs */
	TBRDMA_CMD_MGMT_SEND,		/* admin: DEV_NAME, LINK_ID|PEER_GUID, MGMT_DATA
					 * [, PDF]
					 */
	TBRDMA_CMD_MGMT_RECV,		/* event, group "mgmt" */
	TBRDMA_CMD_DEV_EVENT,		/* event, group "events" */
	TBRDMA_CMD_LINK_EVENT,		/* event, group "events" */
	TBRDMA_CMD_RAIL_EVENT,		/* event, group "events" */
	TBRDMA_CMD_EMU_CABLE_GET,	/* dump */
	TBRDMA_CMD_ETH_BIND,		/* admin: DEV_NAME, ETH_IFNAME */
	TBRDMA_CMD_ETH_UNBIND,		/* admin: DEV_NAME, ETH_IFNAME */
	TBRDMA_CMD_ETH_GET,		/* dump: eth bindings */
	TBRDMA_CMD_ROUTE_SET,		/* admin: DEV_NAME, ROUTE_VERSION [, ROUTES]:
					 * the forwarding table, replaced whole
					 */
	TBRDMA_CMD_ROUTE_GET,		/* DEV_NAME; reply: ROUTE_VERSION, ROUTES */
	TBRDMA_CMD_LINK_TRUST,		/* admin: DEV_NAME, LINK_ID|PEER_GUID, TRUST:
					 * the sweep's decision on a held link
					 */
	TBRDMA_CMD_PKEY_SET,		/* admin: DEV_NAME [, PKEYS]: the port's
					 * partitions (P_Keys), placed in the
					 * table by the kernel (docs/netlink.md)
					 */
	TBRDMA_CMD_PKEY_GET,		/* DEV_NAME; reply: PKEYS, one per slot */
	TBRDMA_CMD_CAPTURE_NEW,		/* admin: DEV_NAME [, SNAPLEN]: the device's
					 * capture monitor tbrmonN (made down, or the
					 * one it has); reply: NETDEV_NAME,
					 * NETDEV_IFINDEX (docs/capture.md)
					 */
	TBRDMA_CMD_CAPTURE_DEL,		/* admin: DEV_NAME: remove it */
	TBRDMA_CMD_AUTH_KEY_SET,	/* admin: DEV_NAME [, AUTH_KEY, AUTH_GRACE_MS]:
					 * the fabric key links authenticate with
					 * (absent: none); never read back
					 */
	__TBRDMA_CMD_MAX,
};
#define TBRDMA_CMD_MAX (__TBRDMA_CMD_MAX - 1)

enum tbrdma_attr {
	TBRDMA_ATTR_UNSPEC,
	TBRDMA_ATTR_PAD,
	TBRDMA_ATTR_DEV_NAME,		/* string: "tbrdma1" */
	TBRDMA_ATTR_DEV_INDEX,		/* u32: RDMA device index */
	TBRDMA_ATTR_NETDEV_NAME,	/* string: "tbr1" */
	TBRDMA_ATTR_NETDEV_IFINDEX,	/* u32 */
	TBRDMA_ATTR_DEV_GUID,		/* u64: node GUID */
	TBRDMA_ATTR_HOST,		/* flag: the module's own device (tbrdma0) */
	TBRDMA_ATTR_PEER_DEV_NAME,	/* string: a cable's second device */
	TBRDMA_ATTR_CABLE_ID,		/* u32 */
	TBRDMA_ATTR_RAIL_COUNT,		/* u32: 1..TBRDMA_RAILS_MAX */
	TBRDMA_ATTR_DEPTH,		/* u32: descriptors per ring, 8..4096 */
	TBRDMA_ATTR_LINK_ID,		/* u32: per device, from 1 */
	TBRDMA_ATTR_PEER_GUID,		/* u64 */
	TBRDMA_ATTR_RAIL_ID,		/* u32: slot within the link, 0.. */
	TBRDMA_ATTR_BACKEND,		/* string: "emu", "eth", "tb" */
	TBRDMA_ATTR_STATE,		/* u8: enum tbrdma_state */
	TBRDMA_ATTR_RAILS_UP,		/* u32 */
	TBRDMA_ATTR_RAILS_TOTAL,	/* u32 */
	TBRDMA_ATTR_LINKS,		/* u32: number of links */
	TBRDMA_ATTR_TX_DEPTH,		/* u32 */
	TBRDMA_ATTR_RX_DEPTH,		/* u32 */
	TBRDMA_ATTR_TX_CREDITS,		/* u32: free TX descriptors */
	TBRDMA_ATTR_DROP_PPM,		/* u32: 0..1000000 */
	TBRDMA_ATTR_DUP_PPM,		/* u32: 0..1000000 */
	TBRDMA_ATTR_REORDER,		/* u32: window, 0..1024 (0, 1: in order) */
	TBRDMA_ATTR_DELAY_US,		/* u32: 0..1000000 */
	TBRDMA_ATTR_RATE_BPS,		/* u64: bit/s, 0 = unlimited */
	TBRDMA_ATTR_CUT,		/* u8: 1 cut, 0 restore */
	TBRDMA_ATTR_STATS,		/* nest: TBRDMA_STAT_* */
	TBRDMA_ATTR_EVENT,		/* u8: enum tbrdma_event */
	TBRDMA_ATTR_MGMT_DATA,		/* binary: 1..TBRDMA_MGMT_MAX bytes */
	TBRDMA_ATTR_CUT_STATE,		/* u8: 1 while cut (emu) */
	TBRDMA_ATTR_ETH_IFNAME,		/* string: netdev carrying eth rails */
	TBRDMA_ATTR_ETH_IFINDEX,	/* u32 */
	TBRDMA_ATTR_ETH_PEER_MAC,	/* binary, 6 bytes: the peer's MAC on it */
	TBRDMA_ATTR_MAX_FRAME,		/* u32: largest frame (rail, link, binding) */
	TBRDMA_ATTR_ETH_PEERS,		/* u32: peers heard on a binding */
	TBRDMA_ATTR_ETH_HELLO_TX,	/* u64: hellos sent on a binding */
	TBRDMA_ATTR_ETH_HELLO_RX,	/* u64: hellos received */
	TBRDMA_ATTR_ETH_RX_FOREIGN,	/* u64: frames dropped, source MAC not the peer's */
	TBRDMA_ATTR_LOOP_STATS,		/* nest: TBRDMA_STAT_* of the loopback link */
	TBRDMA_ATTR_ROUTE_VERSION,	/* u32: forwarding table version, != 0 (0: none) */
	TBRDMA_ATTR_ROUTES,		/* nest of ROUTE, sorted by ROUTE_DST */
	TBRDMA_ATTR_ROUTE,		/* nest: ROUTE_DST, ROUTE_NEXT_HOP, ROUTE_HOPS */
	TBRDMA_ATTR_ROUTE_DST,		/* u64: destination device GUID */
	TBRDMA_ATTR_ROUTE_NEXT_HOP,	/* u64: the neighbour's GUID frames leave to */
	TBRDMA_ATTR_ROUTE_HOPS,		/* u32: 1..TBRDMA_ROUTE_HOPS_MAX */
	TBRDMA_ATTR_PDF,		/* u8: MGMT_SEND's frame code, 2 (MGMT, default) or
					 * 4 (a routed frame, whole: tests of forwarding)
					 */
	TBRDMA_ATTR_TRUST,		/* u8: enum tbrdma_trust (link; LINK_TRUST) */
	TBRDMA_ATTR_LINKS_HELD,		/* u32: links held or rejected (device) */
	TBRDMA_ATTR_LANE_MBPS,		/* u32: rail: its medium's speed per lane, Mb/s */
	TBRDMA_ATTR_LANES,		/* u32: rail: its medium's lanes (absent: unknown) */
	TBRDMA_ATTR_PKEYS,		/* nest of PKEY (PKEY_SET: a set; PKEY_GET:
					 * the table, slot by slot, 0 = empty)
					 */
	TBRDMA_ATTR_PKEY,		/* u16: a P_Key, bit 15 full membership */
	TBRDMA_ATTR_RING_MS,		/* u32: rail: ms its ring figures cover (since up) */
	TBRDMA_ATTR_TX_FULL_PPM,	/* u32: share of that time its TX ring was full */
	TBRDMA_ATTR_TX_EMPTY_PPM,	/* u32: ... its TX ring was empty */
	TBRDMA_ATTR_TX_MEAN_PPM,	/* u32: TX frames in use on average, of tx_depth */
	TBRDMA_ATTR_RX_FULL_PPM,	/* u32: share of time no RX buffer was posted */
	TBRDMA_ATTR_RX_EMPTY_PPM,	/* u32: ... every RX buffer was posted */
	TBRDMA_ATTR_RX_MEAN_PPM,	/* u32: RX buffers not posted on average, of rx_depth */
	TBRDMA_ATTR_RX_HOLD_US,		/* u32: emu: the receiver gives buffers back late */
	TBRDMA_ATTR_SNAPLEN,		/* u32: capture: bytes kept per frame, 0 all */
	TBRDMA_ATTR_AUTH_KEY,		/* binary, 16..256 bytes: AUTH_KEY_SET's key */
	TBRDMA_ATTR_AUTH_GRACE_MS,	/* u32: the previous key is accepted this long
					 * more (AUTH_KEY_SET; default 60000)
					 */
	TBRDMA_ATTR_AUTH_KEYED,		/* u8: device: 1 a fabric key is set */
	TBRDMA_ATTR_AUTH_REFUSED,	/* u64: device: peers refused, no proof of the key */
	TBRDMA_ATTR_DRAIN_RATE,		/* u32: rail: its TX ring's measured drain rate, kB/s (absent: not yet) */
	TBRDMA_ATTR_ONE_WAY,		/* flag: RAIL_SET: the knobs of this end only */
	__TBRDMA_ATTR_MAX,
};
#define TBRDMA_ATTR_MAX (__TBRDMA_ATTR_MAX - 1)

/* Counters in TBRDMA_ATTR_STATS, u64 each (rails and links). */
enum tbrdma_stat {
	TBRDMA_STAT_UNSPEC,
	TBRDMA_STAT_PAD,
	TBRDMA_STAT_TX_FRAMES,
	TBRDMA_STAT_TX_BYTES,
	TBRDMA_STAT_RX_FRAMES,
	TBRDMA_STAT_RX_BYTES,
	TBRDMA_STAT_TX_LOST,
	TBRDMA_STAT_RX_NOBUF,
	TBRDMA_STAT_DROPS,
	TBRDMA_STAT_DUPS,
	TBRDMA_STAT_CREDIT_STALLS,
	TBRDMA_STAT_RX_ERRORS,
	TBRDMA_STAT_MGMT_TX,
	TBRDMA_STAT_MGMT_RX,
	TBRDMA_STAT_FRAG_TX,
	TBRDMA_STAT_FRAG_RX,
	TBRDMA_STAT_FRAG_DROPS,
	TBRDMA_STAT_FWD,		/* routed frames forwarded out of this link */
	TBRDMA_STAT_ROUTED_RX,		/* routed frames for us that came in on it */
	TBRDMA_STAT_FWD_DROP_HOPS,	/* came in, dropped: hop limit spent */
	TBRDMA_STAT_FWD_DROP_NOROUTE,	/* came in, dropped: no route / next hop down */
	TBRDMA_STAT_FWD_DROP_LOOP,	/* came in, dropped: own source, bounced */
	TBRDMA_STAT_FWD_DROP_FULL,	/* came in, dropped: next hop's rings full */
	TBRDMA_STAT_BUNDLED,		/* eth: frames sent behind another in one packet */
	TBRDMA_STAT_TX_ZEROCOPY,	/* tb: frames whose payload was DMA'd from the user's page */
	TBRDMA_STAT_HELD,		/* the link came up held (TBRDMA_TRUST_HELD) */
	TBRDMA_STAT_HELD_DROPS,		/* came in on a held or rejected link, dropped */
	TBRDMA_STAT_FWD_DROP_RPF,	/* came in, dropped: source not reached over this link */
	TBRDMA_STAT_PKEY_VIOLATIONS,	/* came in, dropped: P_Key not the QP's partition */
	TBRDMA_STAT_RATE_WAITS,		/* a TX frame waited for a faster rail's descriptor */
	__TBRDMA_STAT_MAX,
};
#define TBRDMA_STAT_MAX (__TBRDMA_STAT_MAX - 1)

enum tbrdma_state {
	TBRDMA_STATE_DOWN = 0,
	TBRDMA_STATE_UP = 1,
};

/*
 * Whether a link's frames are used (docs/sweep.md "Trust"): a link that came
 * up claiming a GUID the forwarding table reaches through another neighbour
 * is HELD (sends and takes nothing) until LINK_TRUST sets USED or REJECTED.
 */
enum tbrdma_trust {
	TBRDMA_TRUST_USED = 0,
	TBRDMA_TRUST_HELD = 1,
	TBRDMA_TRUST_REJECTED = 2,
};

enum tbrdma_event {
	TBRDMA_EVENT_NEW = 1,		/* object created */
	TBRDMA_EVENT_DEL = 2,		/* object removed */
	TBRDMA_EVENT_UP = 3,		/* rail up / link's first rail up */
	TBRDMA_EVENT_DOWN = 4,		/* rail down / link's last rail down */
};

#endif /* _UAPI_TBRDMA_NETLINK_H */
