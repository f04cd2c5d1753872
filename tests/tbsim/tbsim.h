/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tbsim: a test-only stand-in for thunderbolt.ko (docs/thunderbolt.md, "The
 * stand-in"). It implements the part of <linux/thunderbolt.h> that tbrdma and
 * thunderbolt-net use, over a "cable" that is a dedicated network interface
 * (a QEMU virtio-net NIC) instead of a USB4 link, and a real PCI device (QEMU's
 * "edu") that plays the NHI so ring buffers are DMA-mapped against it.
 *
 * Files: bus.c (bus, domain, host router, services, module), property.c
 * (property directories and their block encoding), xdomain.c (XDomains,
 * discovery, HopIDs, paths), ctl.c (the control channel: requests,
 * responses, protocol handlers), ring.c and ring_rx.c (NHI rings), cable.c (the NIC),
 * abi_nhi.c and abi_xdomain.c (the exports, with the real module's symbol
 * versions: see abi_nhi.c).
 *
 * Locking: tbsim.lock (mutex) guards the cable list, the property directory
 * list and each XDomain's discovery state; ctl.req_lock (mutex) the pending
 * requests; each XDomain's path table has a spinlock (read in softirq); each
 * ring its tb_ring.lock (irqsave: taken in softirq and hard IRQ context).
 */
#ifndef TBSIM_H
#define TBSIM_H

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/thunderbolt.h>
#include <linux/uuid.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/* the thunderbolt bus and device types are const in 6.12's header */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define TBSIM_TYPE_CONST const
#else
#define TBSIM_TYPE_CONST
#endif

#define TBSIM_ETH_P		0x88b5	/* IEEE local experimental ethertype */
#define TBSIM_HOP_COUNT		12	/* NHI rings (0: control) */
#define TBSIM_MAX_HOPID		15	/* lane adapter max_in_hop_id (as XDOMAIN_DEFAULT_MAX_HOPID) */
#define TBSIM_MIN_HOPID		8	/* TB_PATH_MIN_HOPID */
#define TBSIM_MAX_PATHS		16
#define TBSIM_CTL_MAX		256	/* control frame (TB_FRAME_SIZE) */
#define TBSIM_FRAME_MAX		4096	/* ring frame payload */
#define TBSIM_CFG_TIMEOUT_MS	5000	/* TB_CFG_DEFAULT_TIMEOUT */
#define TBSIM_E2E_BACKLOG	512	/* frames an E2E ring holds for its buffers */
#define TBSIM_E2E_WINDOW	12	/* most credits one E2E HopID has on the cable */
#define TBSIM_E2E_WINDOW_MAX	255	/* e2e_window's bound: an RX ring's buffers at most */
#define TBSIM_E2E_QUIET		HZ	/* RX silence before a resync (ring_rx.c) ... */
#define TBSIM_E2E_QUIET_KICKS	3	/* ... and link-period grants in a row */
#define TBSIM_CABLE_MTU		32768	/* the cable NIC's MTU (9000 if refused) */
#define TBSIM_BUNDLE_MAX	(28 * 1024)	/* bytes of records in one cable packet at most */
#define TBSIM_BUNDLE_FRAMES	16	/* ring frames in one cable packet at most */
#define TBSIM_PACKET_MAX	256	/* payload of one USB4 transport packet */

/* Wire header after the Ethernet header, little endian */
enum { TBSIM_WIRE_CTL = 1, TBSIM_WIRE_FRAME = 2, TBSIM_WIRE_LINK = 3, TBSIM_WIRE_CREDIT = 4 };
struct tbsim_wire {
	u8 kind;
	u8 sof;		/* frame: PDF of the first; control: 0 */
	u8 eof;		/* frame: PDF of the last; control: the packet type */
	u8 flags;	/* TBSIM_WIRE_* */
	__le16 hopid;	/* frame: the path's HopID on the cable */
	__le16 len;	/* payload bytes */
	__le32 crc;	/* crc32_le of the payload */
	__le32 seq;	/* frame: the TX ring's count; credit: the next frame expected */
} __packed;

#define TBSIM_WIRE_CRC	0x1	/* the frame arrives with a CRC error (fault knob) */
#define TBSIM_WIRE_GAP	0x2	/* receiver only: frames before it were lost */

/* E2E credit grant for one HopID (payload of TBSIM_WIRE_CREDIT) */
struct tbsim_credit {
	__le32 room;	/* frames from seq on that have a buffer */
	__le32 synced;	/* seq is valid (a frame of this sender was seen) */
} __packed;

/* XDomain discovery protocol (the real UUID's packet types) */
enum tbsim_xdp_type {
	XDP_UUID_REQUEST = 12,
	XDP_UUID_RESPONSE = 2,
	XDP_PROPERTIES_REQUEST = 3,
	XDP_PROPERTIES_RESPONSE = 4,
	XDP_PROPERTIES_CHANGED_REQUEST = 5,
	XDP_PROPERTIES_CHANGED_RESPONSE = 6,
	XDP_ERROR_RESPONSE = 7,
};

struct tbsim_xdp_hdr {
	u32 route_hi, route_lo, length_sn;
	uuid_t uuid;
	u32 type;
};

#define TBSIM_LENGTH_MASK	GENMASK(5, 0)
#define TBSIM_SN_MASK		GENMASK(28, 27)
#define TBSIM_SN_SHIFT		27
#define TBSIM_PROP_CHUNK	46	/* property dwords per response: 256-byte packets */

/*
 * The connection manager the stand-in plays (fw_cm=): Linux's software CM
 * (drivers/thunderbolt/tb.c) or the firmware one (icm.c), whose older
 * controllers (icm_fr_*: Falcon Ridge, Alpine Ridge) give the XDomain a link
 * and depth while Titan Ridge and later (icm_tr_*) add it with link 0.
 */
enum tbsim_cm {
	TBSIM_CM_SW = 0,
	TBSIM_CM_ICM_FR = 1,
	TBSIM_CM_ICM_TR = 2,
};

struct tbsim_path {
	int tx_hopid, tx_ring, rx_hopid, rx_ring;
};

struct tbsim_cable;

struct tbsim_xd {
	struct tb_xdomain xd;
	struct tbsim_cable *cable;	/* NULL once unplugged */
	uuid_t ruuid;
	unsigned int lanes;		/* its link trained at (slow_port) */
	spinlock_t paths_lock;		/* paths[], npaths */
	struct tbsim_path paths[TBSIM_MAX_PATHS];
	unsigned int npaths;
	bool gone;			/* removed: no discovery, no paths */
	/* discovery, tbsim.lock */
	bool have_uuid, added;
	u32 remote_gen;
	struct delayed_work disc_work;
	int disc_retries;
	struct delayed_work changed_work;	/* PROPERTIES_CHANGED to the peer */
	int changed_retries;
	u8 sn;
};

struct tbsim_cable {
	struct list_head node;		/* tbsim.cables (RCU, writers tbsim.lock) */
	struct net_device __rcu *ndev;
	struct net_device *held;	/* our reference, until unplug */
	u8 port;			/* lane adapter: route of the XDomain */
	struct tbsim_xd *sxd;		/* while the link is up (RCU readers) */
	struct work_struct open_work;
	struct work_struct gone_work;
	struct delayed_work link_work;	/* keepalives, link up/down */
	unsigned long last_rx;		/* jiffies of the last keepalive */
	bool heard;
	bool gone;
	bool replaced;			/* firmware CM: its XDomain removed for another
					 * with the same remote UUID, until the link drops */
	unsigned int lanes;		/* its link's width, from its XDomain (ring.c) */
	spinlock_t lane_lock;		/* lane_busy */
	u64 lane_busy[2];		/* ns: the lane's wire is busy until (lane_mbps) */
	struct rcu_head rcu;
};

struct tbsim_ring {
	struct tb_ring ring;
	struct list_head done;		/* RX: completed, not yet polled */
	struct list_head cancel;	/* stop: frames to complete as canceled */
	bool irq_on;			/* poll mode: interrupt armed */
	struct irq_work irq;		/* poll mode: start_poll in hard IRQ */
	struct hrtimer irq_timer;	/* the throttled interrupt, when due */
	struct hrtimer pace;		/* TX: its lane is free again (lane_mbps) */
	bool paced;			/* TX, ring.lock: waiting for pace */
	ktime_t irq_next;		/* no interrupt before (throttle) */
	struct sk_buff_head backlog;	/* E2E: frames waiting for buffers */
	/*
	 * RX, ring.lock, strict framing: the buffer (head of in_flight) a
	 * frame is being assembled in from transport packets, its bytes so
	 * far and its descriptor flags
	 */
	bool rx_open;
	u32 open_len, open_flags;
	/* TX, ring.lock: frames sent, credit limit (valid once credited) */
	u32 tx_seq, tx_limit;
	unsigned int tx_posted;		/* TX, ring.lock: enqueued, not completed */
	bool credited;
	unsigned int tx_resynced;	/* TX, ring.lock: limits a resync grant raised */
	/* RX, ring.lock: next frame expected from the peer, limit granted */
	u32 rx_next, granted;
	/*
	 * RX, ring.lock (the rings parameter): frames taken, frames whose
	 * count was behind the one expected, the last such step back
	 */
	u32 rx_taken, rx_backs, back_from, back_to;
	bool rx_synced;
	bool rx_gap;			/* a frame was lost: mark the next one bad */
	unsigned int rx_quiet;		/* periodic grants since the last frame */
	unsigned long rx_last;		/* jiffies of the last frame (or start) */
	struct work_struct credit_work;	/* RX E2E: grant credits to the peer */
};

struct tbsim {
	struct mutex lock;
	struct tb *tb;			/* NULL until the NHI probes */
	struct tb_nhi nhi;
	struct device host;		/* host router "0-0" */
	bool host_added;
	uuid_t uuid;
	struct list_head cables;
	struct list_head dirs;		/* registered property directories */
	u32 gen;			/* local property block generation */
	u32 *block;			/* local property block */
	size_t block_len;		/* words */
	struct workqueue_struct *wq;	/* ordered: control RX (the "ctl ring work") */
	struct workqueue_struct *ring_wq;
};

extern struct tbsim tbsim;
extern unsigned int tbsim_lanes, tbsim_speed, tbsim_e2e_window;
extern unsigned int tbsim_slow_port, tbsim_slow_speed, tbsim_slow_lanes;
extern unsigned int tbsim_fw_cm;	/* enum tbsim_cm */
extern bool tbsim_fw_cm_needs_uuid;
extern unsigned int tbsim_fault_drop, tbsim_fault_crc, tbsim_fault_overrun;

/* property.c */
int tbsim_property_format(struct tb_property_dir *dir, u32 *block, size_t max);
struct tb_property_dir *tbsim_property_parse(const u32 *block, size_t len);
int tbsim_local_block_update(void);	/* tbsim.lock held */

/* bus.c */
int tbsim_domain_add(struct pci_dev *pdev);
void tbsim_domain_remove(void);

/* ctl.c */
void tbsim_ctl_rx(struct tbsim_cable *c, const void *buf, size_t size, u8 type);
int tbsim_ctl_send(struct tbsim_cable *c, const void *buf, size_t size, u8 type);
int tbsim_ctl_roundtrip(void);
void tbsim_ctl_flush(void);
int tbsim_ctl_init(void);
void tbsim_ctl_exit(void);

/* ctl_fault.c */
bool tbsim_fault_xd_tx(const void *request, size_t size);
bool tbsim_fault_xd_guid(u32 *w, size_t size, bool tx);

/* cm.c: the software CM's unplug and path locking, its fault hook and counters */
enum tbsim_step {
	TBSIM_STEP_NONE,
	TBSIM_STEP_RING_ALLOC,
	TBSIM_STEP_RING_START,
	TBSIM_STEP_ENABLE_PATHS,
	TBSIM_STEP_PATHS_ON,
	TBSIM_STEP_REQUEST,
	TBSIM_STEP_DISABLE_PATHS,
	TBSIM_STEP_RING_STOP,
	TBSIM_STEP_RING_FREE,
	TBSIM_STEP_MAX,
};
extern atomic_t tbsim_cm_rings, tbsim_cm_in_hopids, tbsim_cm_out_hopids, tbsim_cm_paths;
extern atomic_t tbsim_cm_late_paths, tbsim_cm_tx_busy, tbsim_cm_late_poll;
void tbsim_fault_step(enum tbsim_step step, const void *request, size_t size);
void tbsim_cm_removing(void);
bool tbsim_cable_muted(void);
void tbsim_cm_init(void);
void tbsim_cm_exit(void);

/* xdomain.c */
struct tbsim_xd *tbsim_xd_create(struct tbsim_cable *c);
void tbsim_xd_unplug(struct tbsim_xd *sxd);
void tbsim_xdp_request(const void *buf, size_t size);
const uuid_t *tbsim_xdp_proto(void);
void tbsim_xd_properties_changed(void);
bool tbsim_xd_path_rx(struct tbsim_xd *sxd, int hopid, int *ring);
bool tbsim_xd_path_of(int ring, bool tx, struct tbsim_cable **cable, int *hopid);
bool tbsim_xd_path_credit(struct tbsim_xd *sxd, int hopid, int *ring);
bool tbsim_ring_tx_busy(int ring);

/* One record of a cable packet: its header (len and crc filled in by cable.c), its payload */
struct tbsim_rec {
	struct tbsim_wire w;
	const void *data;
	size_t len;
};

/* ring.c, ring_rx.c */
void tbsim_ring_rx(struct tbsim_xd *sxd, int ring, const void *data, size_t len,
		   const struct tbsim_wire *w);
void tbsim_ring_credit(struct tbsim_xd *sxd, const struct tbsim_wire *w,
		       const struct tbsim_credit *cr);
void tbsim_ring_credit_kick(int ring, bool periodic);

/* cable.c */
int tbsim_cable_xmit(struct tbsim_cable *c, const struct tbsim_wire *w,
		     const void *payload, size_t len);
int tbsim_cable_xmitv(struct tbsim_cable *c, const struct tbsim_rec *recs, unsigned int n);
size_t tbsim_cable_room(struct tbsim_cable *c);
int tbsim_cable_init(void);
void tbsim_cable_exit(void);

#endif /* TBSIM_H */
