/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: rails, links and the management channel.
 *
 * A *rail* is one pair of DMA rings (one TX ring, one RX ring, each of a
 * fixed number of descriptors) that carries frames of at most 4 KiB between
 * this device and one peer. It is shaped on the Thunderbolt NHI ring API
 * (tb_ring_alloc_tx/rx, struct ring_frame): frames are posted with a buffer,
 * a size and two 4-bit protocol defined frame codes (SOF/EOF PDF), and every
 * posted frame comes back exactly once through its callback, either
 * completed or canceled. Backends: emu (emu.c, an in-kernel cable between
 * two local devices), later eth (frames over a netdev) and tb (NHI rings).
 *
 * A *link* is this device's connection to one peer, identified by the peer's
 * GUID; it holds the rails that reach that peer (up to TBR_LINK_MAX_RAILS, of
 * any number of cables). The transport transmits to a link; the link layer
 * picks the rail. Frames with the DATA code go to the transport's receive
 * hook, frames with the MGMT code are management datagrams for the daemon
 * (generic netlink event MGMT_RECV), before any address exists.
 *
 * Contexts and locks, for every function and callback below:
 *  - "process": may sleep; called with no tbrdma spinlock held.
 *  - "any": may be called from process, softirq or with interrupts off;
 *    never sleeps.
 *  - "bh": called with bottom halves disabled (softirq, or process context
 *    inside local_bh_disable()), never from hard interrupt context, with no
 *    tbrdma lock held: the callee may post frames again.
 */
#ifndef TBRDMA_RAIL_H
#define TBRDMA_RAIL_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct tbr_dev;
struct tbr_rail;
struct tbr_link;
struct sk_buff;

/* ---- frames (the NHI ring_frame, without DMA addresses) ---------------- */

/* Largest frame. The descriptor's size field is 12 bits: 0 encodes 4096. */
#define TBR_FRAME_SIZE_MAX	4096
#define TBR_FRAME_SIZE_BITS	12
static inline u32 tbr_frame_size_encode(u32 size) { return size & 0xfff; }
static inline u32 tbr_frame_size_decode(u32 field) { return field ? field : 4096; }

/*
 * Protocol defined frame codes (4 bits, carried in SOF and EOF of every
 * frame, as thunderbolt-net does). One frame = one message here: sof == eof.
 * Receivers accept only codes in TBR_PDF_RX_MASK (tb_ring_alloc_rx masks).
 */
enum tbr_pdf {
	TBR_PDF_DATA = 1,	/* transport frame (kernel/core, docs/protocol.md) */
	TBR_PDF_MGMT = 2,	/* management datagram, daemon to daemon */
	TBR_PDF_NET = 3,	/* Ethernet frame of the netdev tbrN (IP) */
};
#define TBR_PDF_RX_MASK		(BIT(TBR_PDF_DATA) | BIT(TBR_PDF_MGMT) | \
				 BIT(TBR_PDF_NET))

/* tbr_frame.flags on completion */
#define TBR_FRAME_CANCELED	0x1	/* ring stopped / rail down: no data moved */
#define TBR_FRAME_CRC_ERROR	0x2	/* RX: bad frame (hardware CRC), dropped */

struct tbr_frame;
/* Completion callback: context "bh". @canceled as in frame->flags. */
typedef void (*tbr_frame_cb)(struct tbr_rail *rail, struct tbr_frame *frame,
			     bool canceled);

struct tbr_frame {
	void *buf;		/* TBR_FRAME_SIZE_MAX bytes (RX), or size (TX) */
	u32 size;		/* TX: bytes to send 1..4096; RX: bytes received */
	u8 sof, eof;		/* TX: codes to send; RX: codes received */
	u8 flags;		/* TBR_FRAME_* on completion */
	tbr_frame_cb callback;
	struct list_head list;	/* owned by the backend while posted */
	u64 bk_time;		/* backend scratch while posted */
	struct tbr_rail *rail;	/* rail layer: the pool this frame belongs to */
};

/* ---- backend interface ------------------------------------------------- */

/* Fault knobs, used by the emu backend (others answer -EOPNOTSUPP). */
struct tbr_rail_fault {
	u32 drop_ppm;		/* frames lost on the wire, parts per million */
	u32 dup_ppm;		/* frames delivered twice */
	u32 reorder;		/* pick the next frame among this many queued */
	u32 delay_us;		/* added one-way latency */
	u64 rate_bps;		/* wire rate cap in bit/s, 0 = unlimited */
};

struct tbr_rail_ops {
	const char *kind;	/* "emu", "eth", "tb" */
	/*
	 * Post a TX frame / an RX buffer. Context "any". Returns 0 (the frame's
	 * callback will run exactly once, later, never from inside this call),
	 * -ENOBUFS when the ring has no free descriptor, -ESHUTDOWN when the
	 * rail is not running (frame not taken).
	 */
	int (*tx)(struct tbr_rail *rail, struct tbr_frame *frame);
	int (*rx)(struct tbr_rail *rail, struct tbr_frame *frame);
	/* Optional knobs; context "process". */
	int (*set_fault)(struct tbr_rail *rail, const struct tbr_rail_fault *f);
	void (*get_fault)(struct tbr_rail *rail, struct tbr_rail_fault *f);
	int (*set_cut)(struct tbr_rail *rail, bool cut);
	/*
	 * Optional, context "process" with tbr_ctl_mutex held: add the
	 * backend's own attributes to a RAIL_GET reply (eth: the netdev).
	 */
	int (*fill_info)(struct tbr_rail *rail, struct sk_buff *msg);
};

/*
 * Backend side, all context "process" with tbr_ctl_mutex held:
 *  tbr_rail_add()     creates a rail of @tdev towards @peer_guid (joining or
 *                     creating that link), allocates its frame pools; the
 *                     rail starts down. Returns the rail or an ERR_PTR.
 *  tbr_rail_post_rx() the rings run: post the rail layer's RX buffers
 *                     (optional: emu does it on both ends before either
 *                     end goes up, so no first frame meets an empty ring).
 *  tbr_rail_up()      the rings run: posts RX buffers if not yet done,
 *                     then the scheduler may use the rail. Events sent.
 *  tbr_rail_down()    the backend has stopped the rings and every frame
 *                     posted on the rail has come back (canceled or not);
 *                     the scheduler stops using it, upper layer told.
 *  tbr_rail_remove()  leaves the link (taking the rail down first) and
 *                     frees it once every TX frame a transport reserved
 *                     came back; if one never does (rail_remove_ms), the
 *                     rail is unlisted anyway, never calls the backend
 *                     again and is leaked, so the backend may free
 *                     rail->priv as soon as this returns.
 * The backend's own rail state lives in rail->priv.
 */
struct tbr_rail *tbr_rail_add(struct tbr_dev *tdev, u64 peer_guid,
			      const struct tbr_rail_ops *ops, void *priv,
			      u32 tx_depth, u32 rx_depth);
void tbr_rail_post_rx(struct tbr_rail *rail);
void tbr_rail_up(struct tbr_rail *rail);
void tbr_rail_down(struct tbr_rail *rail);
void tbr_rail_remove(struct tbr_rail *rail);
/*
 * Frame sizes of the rail, 1..TBR_FRAME_SIZE_MAX (the default for both):
 * @max_frame the largest it carries natively (what tbr_link_max_frame()
 * offers new connections), @tx_max the largest the scheduler may put on it,
 * >= @max_frame when the backend fragments (eth after an MTU shrink keeps
 * carrying the frames of the connections made before). A backend whose
 * medium is smaller (eth over a 1500-byte MTU) sets them before
 * tbr_rail_up(), or while up to follow its medium. Context "process",
 * tbr_ctl_mutex held.
 */
void tbr_rail_set_max_frame(struct tbr_rail *rail, u32 max_frame, u32 tx_max);

/* Counters (per rail and per link), u64 each, see docs/netlink.md. */
enum tbr_cnt {
	TBR_CNT_TX_FRAMES,	/* frames the ring completed */
	TBR_CNT_TX_BYTES,
	TBR_CNT_RX_FRAMES,	/* frames received and handed up */
	TBR_CNT_RX_BYTES,
	TBR_CNT_TX_LOST,	/* TX frames canceled (rail went down) */
	TBR_CNT_RX_NOBUF,	/* arrived with no RX buffer posted: dropped */
	TBR_CNT_DROPS,		/* lost on the wire (emu: injected) */
	TBR_CNT_DUPS,		/* delivered twice (emu: injected) */
	TBR_CNT_CREDIT_STALLS,	/* TX wanted, no free descriptor */
	TBR_CNT_RX_ERRORS,	/* bad frame code/CRC, or no receiver */
	TBR_CNT_MGMT_TX,
	TBR_CNT_MGMT_RX,
	TBR_CNT_FRAG_TX,	/* eth: fragments sent (frames above the MTU) */
	TBR_CNT_FRAG_RX,	/* eth: frames reassembled from fragments */
	TBR_CNT_FRAG_DROPS,	/* eth: partial frames and stray fragments dropped */
	TBR_CNT_MAX
};
/* Context "any". */
void tbr_rail_count(struct tbr_rail *rail, enum tbr_cnt c, u64 n);

struct tbr_rail {
	struct tbr_link *link;
	u32 id;			/* index within the link */
	const struct tbr_rail_ops *ops;
	void *priv;		/* backend */
	u32 tx_depth, rx_depth;
	bool up;		/* scheduler may use it (link->lock) */
	bool up_rx;		/* RX buffers may be posted (link->lock) */
	unsigned int tx_free;	/* free TX frames = credits (lock) */
	spinlock_t lock;	/* the pools below */
	struct list_head tx_pool;	/* free TX frames */
	struct list_head rx_idle;	/* RX frames not posted */
	struct tbr_frame *frames;	/* tx_depth + rx_depth */
	atomic64_t cnt[TBR_CNT_MAX];
	struct device *sysdev;	/* /sys/bus/tbrdma/devices/... (may be NULL) */
	u32 max_frame;		/* largest native frame, see tbr_rail_set_max_frame() */
	u32 tx_max;		/* largest frame it takes, >= max_frame (link->lock) */
	bool removing;		/* tbr_rail_remove() waits for tx_idle (lock) */
	struct completion tx_idle;	/* every TX frame back in tx_pool */
};

/* ---- link API for the transport ---------------------------------------- */

#define TBR_LINK_MAX_RAILS	16

struct tbr_link {
	struct tbr_dev *tdev;
	u32 id;			/* per device, from 1, never reused */
	u64 peer_guid;
	struct kref ref;
	struct list_head node;	/* tdev's links; tbr_ctl_mutex */
	bool gone;		/* removed from the device (lock) */
	spinlock_t lock;	/* rails[], up state, rr */
	struct tbr_rail *rails[TBR_LINK_MAX_RAILS];
	unsigned int nrails, rails_up, rr;
	bool stalled;		/* an ENOBUFS happened: wake the upper layer */
	atomic64_t cnt[TBR_CNT_MAX];
	void *upper_priv;	/* for the transport, untouched here */
	struct device *sysdev;	/* may be NULL */
	struct tbr_loop *loop;	/* the device's loopback link (loop.c) */
	struct rcu_head rcu;
};

/*
 * The transport registers these per device. Context of each callback:
 *  rx          "bh": one DATA frame from @link. The buffer is valid only
 *              during the call (it is re-posted right after).
 *  tx_ready    "bh": TX descriptors came free on @link after a transmit
 *              failed with -ENOBUFS (call tbr_qp_progress and friends).
 *  link_change "process": a rail of @link went up or down; @rails_up is
 *              what is left (0: the link is down, no frame can be sent).
 *              On a down, every frame posted on the lost rail has already
 *              been completed (frames still unacknowledged by the peer are
 *              the transport's to resend on the other rails).
 */
struct tbr_link_upper_ops {
	void (*rx)(void *ctx, struct tbr_link *link, const void *frame, u32 len);
	void (*tx_ready)(void *ctx, struct tbr_link *link);
	void (*link_change)(void *ctx, struct tbr_link *link,
			    unsigned int rails_up);
};

/*
 * Context "process", tbr_ctl_mutex held (it is inside tbr_dev_create() and
 * tbr_dev_destroy(), which the control plane calls with it held). Set once
 * per device; clearing (ops NULL) waits until no callback runs any more.
 */
void tbr_rails_set_upper(struct tbr_dev *tdev,
			 const struct tbr_link_upper_ops *ops, void *ctx);

/* Find a link by peer GUID or id and take a reference. Context "any". */
struct tbr_link *tbr_link_get_by_guid(struct tbr_dev *tdev, u64 peer_guid);
struct tbr_link *tbr_link_get_by_id(struct tbr_dev *tdev, u32 id);
void tbr_link_hold(struct tbr_link *link);
void tbr_link_put(struct tbr_link *link);	/* context "any" */

/*
 * Transmit, context "any" (the caller may hold its own spinlocks, IRQs may
 * be off). The scheduler picks, round robin, an up rail with the most free
 * TX descriptors (so slower or busier rails get proportionally fewer frames).
 *  tbr_link_tx_alloc() reserves one descriptor and returns its 4 KiB buffer,
 *     or ERR_PTR(-ENOBUFS) (rails up but all rings full: tx_ready follows),
 *     or ERR_PTR(-ENETDOWN) (no rail up).
 *  tbr_link_tx_send() sends the first @len (1..4096) bytes of that buffer
 *     as a DATA frame; the buffer is the link layer's again afterwards. If
 *     the rail went down meanwhile the frame is counted lost (retransmit).
 *  tbr_link_tx_abort() gives the buffer back unsent.
 *  tbr_link_xmit() copies @data into a frame with code @pdf and sends it.
 *  tbr_link_tx_credits() free TX descriptors over all up rails.
 */
void *tbr_link_tx_alloc(struct tbr_link *link, u32 len);
void tbr_link_tx_send(struct tbr_link *link, void *buf, u32 len);
void tbr_link_tx_abort(struct tbr_link *link, void *buf);
int tbr_link_xmit(struct tbr_link *link, u8 pdf, const void *data, u32 len);
unsigned int tbr_link_tx_credits(struct tbr_link *link);
/*
 * Largest frame every rail of the link carries (up or down; 4096 without
 * rails): min over the rails' max_frame. Both ends of a link see the same
 * value when their backends negotiate symmetrically (eth does), so a
 * transport may derive its per-connection MTU from it at connect time.
 * The scheduler never puts a frame on a rail smaller than it: a frame no
 * up rail can carry fails with -EMSGSIZE (tx_alloc, xmit). Context "any".
 */
u32 tbr_link_max_frame(struct tbr_link *link);

/*
 * Whether @tdev's link to @peer_guid has a rail whose backend is not @ops
 * (eth refuses to join a link reached over Thunderbolt). Context "process",
 * tbr_ctl_mutex held.
 */
bool tbr_link_has_other_backend(struct tbr_dev *tdev, u64 peer_guid,
				const struct tbr_rail_ops *ops);

/* ---- device level (rail.c), control plane ------------------------------ */

/*
 * Per-device rail state, embedded in struct tbr_dev (zeroed by
 * ib_alloc_device, so tbr_rails_set_upper() works before tbr_rails_init()).
 */
struct tbr_rails {
	const struct tbr_link_upper_ops __rcu *upper;
	void *upper_ctx;
	struct list_head links;		/* tbr_ctl_mutex */
	struct list_head node;		/* tbr_devices; tbr_ctl_mutex */
	u32 next_link_id;
	unsigned int rails_up;		/* over all links; tbr_ctl_mutex */
	struct tbr_link *loop;		/* to ourselves, in no list (loop.c) */
	bool host;			/* the module's own device (tbrdma0) */
	unsigned int slot;		/* GUID derivation: 0 host, lowest free */
	bool dying;
};

/* Serializes every control-plane change (devices, cables, rail state). */
extern struct mutex tbr_ctl_mutex;
extern struct list_head tbr_devices;

/* Context "process", tbr_ctl_mutex held by the caller for the _locked ones. */
struct tbr_dev *tbr_ctl_dev_new(bool host);
int tbr_ctl_dev_del(struct tbr_dev *tdev);	/* cables first, then the device */
void tbr_ctl_del_all(void);			/* module exit */
struct tbr_dev *tbr_ctl_dev_find(const char *name);
int tbr_ctl_init(void);
void tbr_ctl_exit(void);
u64 tbr_dev_guid(struct tbr_dev *tdev);
const char *tbr_dev_name(struct tbr_dev *tdev);

/*
 * loop.c: the loopback link, frames a device sends to its own GUID. The link
 * API above works on it (rail.c hands its calls to these), context "any";
 * create/destroy context "process" (tbr_dev_create/destroy).
 */
struct tbr_link *tbr_loop_get(struct tbr_dev *tdev);	/* a reference */
void *tbr_loop_tx_alloc(struct tbr_link *link, u32 len);
void tbr_loop_tx_send(struct tbr_link *link, void *buf, u32 len);
void tbr_loop_tx_abort(struct tbr_link *link, void *buf);
unsigned int tbr_loop_tx_credits(struct tbr_link *link);
int tbr_loop_create(struct tbr_dev *tdev);
void tbr_loop_destroy(struct tbr_dev *tdev);

/* emu.c */
int tbr_emu_cable_new(struct tbr_dev *a, struct tbr_dev *b, u32 rails,
		      u32 depth, u32 *id);
int tbr_emu_cable_del(u32 id);
void tbr_emu_dev_gone(struct tbr_dev *tdev);	/* deletes its cables */
bool tbr_emu_rail_is_cut(struct tbr_rail *rail);
int tbr_emu_cable_info(unsigned long skip, u32 *id, struct tbr_dev **a,
		       struct tbr_dev **b, u32 *rails);
int tbr_emu_init(void);
void tbr_emu_exit(void);

/* eth.c: rails over netdevs (docs/eth.md); bind/unbind context "process",
 * tbr_ctl_mutex held */
struct netlink_ext_ack;
struct net;
int tbr_eth_bind(struct tbr_dev *tdev, struct net *net, const char *ifname,
		 struct netlink_ext_ack *extack);
int tbr_eth_unbind(struct tbr_dev *tdev, struct net *net, const char *ifname,
		   struct netlink_ext_ack *extack);
void tbr_eth_dev_gone(struct tbr_dev *tdev);	/* unbinds its netdevs */
/* For the ETH_GET dump: the @skip-th binding (-ENOENT past the end). */
struct tbr_eth_info {
	struct tbr_dev *tdev;
	char ifname[16];
	u32 ifindex;
	bool oper;		/* netdev running with carrier */
	u32 max_frame;		/* largest frame this netdev's MTU allows */
	u32 peers;		/* peers heard on it */
	u64 hello_tx, hello_rx;
	u64 rx_foreign;		/* dropped: source MAC not the peer's */
};
int tbr_eth_binding_info(unsigned long skip, struct tbr_eth_info *info);
int tbr_eth_init(void);
void tbr_eth_exit(void);

/* netlink.c: events (context: rail/link events "process", mgmt "bh") */
int tbr_nl_init(void);
void tbr_nl_exit(void);
void tbr_nl_dev_event(struct tbr_dev *tdev, u8 event);
void tbr_nl_link_event(struct tbr_link *link, u8 event);
void tbr_nl_rail_event(struct tbr_rail *rail, u8 event);
void tbr_nl_mgmt_recv(struct tbr_rail *rail, const void *data, u32 len);

/* netdev.c: carrier of tbrN and the port state event; process context */
void tbr_netdev_set_carrier(struct tbr_dev *tdev, bool on);

/* sysfs.c: a "tbrdma" bus with link and rail devices (uevents) */
int tbr_sysfs_init(void);
void tbr_sysfs_exit(void);
void tbr_sysfs_link_add(struct tbr_link *link);
void tbr_sysfs_link_del(struct tbr_link *link);
void tbr_sysfs_rail_add(struct tbr_rail *rail);
void tbr_sysfs_rail_del(struct tbr_rail *rail);
void tbr_sysfs_rail_change(struct tbr_rail *rail);

#endif /* TBRDMA_RAIL_H */
