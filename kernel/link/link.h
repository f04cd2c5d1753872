/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: links, what the transport and the observers of the link layer see.
 *
 * A *link* is this device's connection to one peer, identified by the peer's
 * GUID; it holds the rails that reach that peer (up to TBR_LINK_MAX_RAILS, of
 * any number of cables; a rail is one pair of DMA rings, link/rail.h). The
 * transport transmits to a link; the link layer picks the rail. Frames with
 * the DATA code go to the transport's receive hook, every other code to the
 * observers (management datagrams to generic netlink, IP to tbrN).
 *
 * Contexts and locks, for every function and callback below and in rail.h:
 *  - "process": may sleep; called with no tbrdma spinlock held.
 *  - "any": may be called from process, softirq or with interrupts off;
 *    never sleeps.
 *  - "bh": called with bottom halves disabled (softirq, or process context
 *    inside local_bh_disable()), never from hard interrupt context, with no
 *    tbrdma lock held: the callee may post frames again.
 */
#ifndef TBRDMA_LINK_H
#define TBRDMA_LINK_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/jump_label.h>
#include <linux/types.h>

#include "tbr_limits.h"
#include "core/tbr_split.h"

struct tbr_dev;
struct tbr_link;
struct tbr_rail;

/*
 * Frame codes (4 bits): one frame = one message of that kind. On a
 * Thunderbolt ring the code is the EOF PDF, the PDF of the frame's last
 * transport packet, which is all the receiving NHI reports; every other
 * packet carries the SOF PDF TBT_PDF_SOF, which is no code (tb_priv.h,
 * docs/thunderbolt.md). Receivers accept only codes in TBR_PDF_RX_MASK (the
 * tb RX ring's eof_mask).
 */
enum tbr_pdf {
	TBR_PDF_DATA = 1,	/* transport frame (kernel/core, docs/protocol.md) */
	TBR_PDF_MGMT = 2,	/* management datagram, daemon to daemon */
	TBR_PDF_NET = 3,	/* Ethernet frame of the netdev tbrN (IP) */
	TBR_PDF_ROUTED = 4,	/* one of the above for another host (route.c) */
	TBR_PDF_TAIL = TBR_SPLIT_PDF_TAIL, /* tb: the rest of a split frame */
	/*
	 * a fragment of an IP packet of tbrN with its header (verbs/netdev.h,
	 * docs/protocol.md "IP over the rails"), only to a peer with
	 * TBR_PEER_NET_FRAG, never routed
	 */
	TBR_PDF_NETX = 6,
};
/* tb: TBR_PDF_HEAD | code: the head of a split frame of that code */
#define TBR_PDF_HEAD		TBR_SPLIT_PDF_HEAD
#define TBR_PDF_RX_MASK		(BIT(TBR_PDF_DATA) | BIT(TBR_PDF_MGMT) | \
				 BIT(TBR_PDF_NET) | BIT(TBR_PDF_ROUTED) | \
				 BIT(TBR_PDF_TAIL) | BIT(TBR_PDF_NETX) | \
				 BIT(TBR_PDF_HEAD | TBR_PDF_DATA) | \
				 BIT(TBR_PDF_HEAD | TBR_PDF_MGMT) | \
				 BIT(TBR_PDF_HEAD | TBR_PDF_NET) | \
				 BIT(TBR_PDF_HEAD | TBR_PDF_ROUTED))

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
	TBR_CNT_FWD,		/* routed frames forwarded out of this link */
	TBR_CNT_ROUTED_RX,	/* routed frames for us that came in on it */
	TBR_CNT_FWD_DROP_HOPS,	/* came in: hop limit spent (route.c) */
	TBR_CNT_FWD_DROP_NOROUTE, /* came in: no route, next hop down */
	TBR_CNT_FWD_DROP_LOOP,	/* came in: our own source, back where it came from */
	TBR_CNT_FWD_DROP_FULL,	/* came in: next hop's TX rings full */
	TBR_CNT_BUNDLED,	/* eth: frames sent behind another in one packet */
	TBR_CNT_TX_ZEROCOPY,	/* tb: frames whose payload went from the user's page */
	TBR_CNT_HELD,		/* the link came up held (enum tbr_link_trust) */
	TBR_CNT_HELD_DROPS,	/* came in on a held or rejected link: dropped */
	TBR_CNT_FWD_DROP_RPF,	/* came in: not the link the table reaches its source by */
	TBR_CNT_PKEY_VIOLATIONS, /* came in: a QP refused it for its P_Key */
	TBR_CNT_RATE_WAITS,	/* TX waited for a faster rail's descriptor (stripe.c) */
	TBR_CNT_MAX
};

/*
 * What the transport on the other end of a link takes beyond the base
 * protocol (docs/protocol.md), as its rails' backends learned it (eth
 * hellos, tb negotiation; emu and the loopback link: this very module).
 *  TBR_PEER_ACK_RIDE  ACKs riding on data frames (TBR_F_ACK)
 *  TBR_PEER_NET_FRAG  tbrN's fragment frames (TBR_PDF_NETX): IP packets
 *                     up to 64 KiB striped over the rails, offloads carried
 */
#define TBR_PEER_ACK_RIDE	0x1
#define TBR_PEER_NET_FRAG	0x2
#define TBR_PEER_FEAT_ALL	(TBR_PEER_ACK_RIDE | TBR_PEER_NET_FRAG)

/*
 * A link whose frames do not go over its own rails (the loopback link,
 * loop.c; a routed link to a host that is not a neighbour, route.c) hands
 * the transmit API to these; context "any", as the functions they stand
 * for. max_frame, peer_feat and xmit are optional (4096; 0; -ENETUNREACH).
 */
struct tbr_link_ops {
	void *(*tx_alloc)(struct tbr_link *link, u32 len);
	void (*tx_send)(struct tbr_link *link, void *buf, u32 len);
	void (*tx_abort)(struct tbr_link *link, void *buf);
	unsigned int (*tx_credits)(struct tbr_link *link);
	u32 (*max_frame)(struct tbr_link *link);
	u32 (*peer_feat)(struct tbr_link *link);
	int (*xmit)(struct tbr_link *link, u8 pdf, const void *data, u32 len);
};

/*
 * Whether a rail link's frames are used (docs/sweep.md "Trust"). A link is
 * judged once, when its first rail comes up for the first time: if the
 * forwarding table then reaches its peer's GUID through another neighbour
 * (a routed link exists, hops > 1), a neighbour claims the identity of a
 * host the fabric already knows elsewhere, and the link is HELD: nothing is
 * sent on it (tbr_link_get_route() keeps the route, tx_alloc and xmit fail
 * with -ENETDOWN) and every frame received on it is dropped (counted
 * TBR_CNT_HELD_DROPS) until tbrdmad (genl LINK_TRUST, admin) confirms it
 * (USED) or rejects it (REJECTED: as held, shown as refused). No timer
 * releases it. With no route to the GUID (a fresh fabric, no table) the link
 * is USED at once: trust on first use.
 */
enum tbr_link_trust {
	TBR_TRUST_USED = 0,
	TBR_TRUST_HELD,
	TBR_TRUST_REJECTED,
};

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
	bool wake_obs_first;	/* the next wake: observers before the transport */
	/*
	 * tbrN's fragment frames (TBR_PDF_NETX) posted and not completed; when
	 * tbrN holds back because there are too many, it sets net_wait and
	 * net_wake_at, and the completion that brings net_inflight down to
	 * net_wake_at calls the observers' tx_ready (its bound keeps IP from
	 * filling the rings, so RDMA frames do not queue behind it)
	 */
	atomic_t net_inflight;
	int net_wake_at;
	bool net_wait;
	bool net_starving;	/* tbrN found the rings full (lock) */
	/* enum tbr_link_trust: written under lock and tbr_ctl_mutex */
	u8 trust;
	bool judged;		/* trust set at the first rail up (lock) */
	atomic64_t cnt[TBR_CNT_MAX];
	void *upper_priv;	/* for the transport, untouched here */
	u32 cwnd_hint;		/* for the transport: the congestion window its
				 * last RC QP over this link ended with (PSNs),
				 * 0 none; READ_ONCE/WRITE_ONCE, untouched here
				 */
	u64 srtt_hint;		/* the same for the smoothed RTT (ns) */
	void *obs_priv;		/* for the observers (sysfs), untouched here */
	const struct tbr_link_ops *ops;	/* NULL: frames go over the rails */
	void *ops_priv;
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
/*
 * The link that reaches @guid: the direct link to that neighbour if it has
 * a rail up and is used (not held: enum tbr_link_trust), else the routed
 * link the forwarding table made for it (route.c), else the direct link
 * (down, never a held one) or NULL. A reference is taken. Context "any".
 */
struct tbr_link *tbr_link_get_route(struct tbr_dev *tdev, u64 guid);
struct tbr_link *tbr_link_get_by_id(struct tbr_dev *tdev, u32 id);
void tbr_link_hold(struct tbr_link *link);
/*
 * Busy-poll the receive paths of @link's rails that can be (a backend's
 * busy_poll, a rail's poll_cookie) for @us microseconds (< 0: the largest
 * busy_poll_auto_us of those rails' backends), from which *@until is set
 * (ktime_get_ns() deadline) before the first pass, until @end(@arg) returns
 * true; @end must keep to *@until. Returns false at once when no rail of
 * @link can be polled or the bound is 0. Context "process", no lock held,
 * BH on.
 */
bool tbr_link_busy_poll(struct tbr_link *link, int us, u64 *until,
			bool (*end)(void *arg), void *arg);
void tbr_link_put(struct tbr_link *link);	/* context "any" */

/* A rail link that carries frames now: a rail up and used. Context "any". */
static inline bool tbr_link_in_use(const struct tbr_link *link)
{
	return READ_ONCE(link->rails_up) &&
	       READ_ONCE(link->trust) == TBR_TRUST_USED;
}

/*
 * tbrdmad's (or an admin's) decision on a rail link (enum tbr_link_trust):
 * USED releases a held link, REJECTED refuses it, HELD holds it again.
 * Observers hear a link event (TBR_OBS_UP if it has a rail up) so the
 * daemon sees the change. Context "process", tbr_ctl_mutex held.
 */
void tbr_link_set_trust(struct tbr_link *link, enum tbr_link_trust trust);

/*
 * Transmit, context "any" (the caller may hold its own spinlocks, IRQs may
 * be off). The scheduler picks, round robin, an up rail with the most free
 * TX descriptors (so slower or busier rails get proportionally fewer frames).
 *  tbr_link_tx_alloc() reserves one descriptor and returns its buffer of
 *     TBR_FRAME_SIZE_MAX bytes, or ERR_PTR(-ENOBUFS) (rails up but all
 *     rings full: tx_ready follows), or ERR_PTR(-ENETDOWN) (no rail up).
 *  tbr_link_tx_attach() asks the rail to send bytes @at .. @at + @len of
 *     that buffer from @page instead (TX zero-copy; the rail keeps a page
 *     reference until the frame is done): 0, or -EOPNOTSUPP when it cannot
 *     (the caller writes the bytes into the buffer).
 *  tbr_link_tx_send() sends the first @len (1..TBR_FRAME_SIZE_MAX) bytes of
 *     that buffer as a DATA frame; the buffer is the link layer's again
 *     afterwards. If the rail went down meanwhile the frame is counted
 *     lost (retransmit).
 *  tbr_link_tx_abort() gives the buffer back unsent.
 *  tbr_link_xmit() copies @data into a frame with code @pdf and sends it
 *     (rail links only: management and IP never loop back); -ENOBUFS when
 *     the rings are full. Management datagrams (TBR_PDF_MGMT) may take the
 *     descriptors every rail keeps for them (TBR_LINK_MGMT_TX_RESERVE),
 *     which data, routed and IP frames never get: they find the rings full
 *     earlier.
 *  tbr_link_tx_credits() free TX descriptors over all up rails.
 */
void *tbr_link_tx_alloc(struct tbr_link *link, u32 len);
/*
 * tbr_link_tx_alloc() for tbrN's fragment frames (rail links only): when it
 * finds the rings full, the other frames leave it the next
 * TBR_LINK_NET_SHARE descriptors that come free (fair sharing with RDMA).
 */
#define TBR_LINK_NET_SHARE	16
void *tbr_link_tx_alloc_net(struct tbr_link *link, u32 len);
void tbr_link_tx_send(struct tbr_link *link, void *buf, u32 len);
int tbr_link_tx_attach(struct tbr_link *link, void *buf, void *at,
		       struct page *page, u32 page_off, u32 len);
void tbr_link_tx_abort(struct tbr_link *link, void *buf);
/*
 * Send @len bytes from @buf, the start of a frame tbr_link_tx_alloc()
 * reserved on a rail link, with frame code @pdf. Context "any".
 */
void tbr_link_tx_send_pdf(void *buf, u8 pdf, u32 len);
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
 * TBR_PEER_* the peer takes over every rail of @link (0 without a rail): a
 * transport samples it when a connection starts. Context "any".
 */
u32 tbr_link_peer_feat(struct tbr_link *link);

/*
 * Count @n on @link and on its device's totals (struct tbr_rails.cnt).
 * Context "any".
 */
void tbr_link_count(struct tbr_link *link, enum tbr_cnt c, u64 n);

/*
 * loop.c: the loopback link, frames a device sends to its own GUID. The link
 * API above works on it (through its struct tbr_link_ops); create/destroy
 * context "process" (tbr_dev_create/destroy).
 */
struct tbr_link *tbr_loop_get(struct tbr_dev *tdev);	/* a reference */
int tbr_loop_create(struct tbr_dev *tdev);
void tbr_loop_destroy(struct tbr_dev *tdev);

/* ---- device level -------------------------------------------------------- */

struct tbr_fwd_table;
struct tbr_link_router;

/*
 * Per-device link state, embedded in struct tbr_dev (zeroed by
 * ib_alloc_device, so tbr_rails_set_upper() works before the registry lists
 * the device).
 */
struct tbr_rails {
	const struct tbr_link_upper_ops __rcu *upper;
	void *upper_ctx;
	struct list_head links;		/* tbr_ctl_mutex */
	struct list_head node;		/* tbr_devices; tbr_ctl_mutex */
	u32 next_link_id;
	unsigned int rails_up;		/* over all links; tbr_ctl_mutex */
	struct tbr_link *loop;		/* to ourselves, in no list (loop.c) */
	/* routed links, one per host the table reaches over >1 hop (route.c) */
	struct list_head routed;	/* tbr_ctl_mutex; readers RCU */
	struct tbr_fwd_table __rcu *fwd;	/* replaced whole (route.c) */
	const struct tbr_link_router *router;	/* route.c's hooks (route.h) */
	struct tbr_link_tap __rcu *tap;	/* a capture (tbr_link_tap_set) */
	/*
	 * The sum of every link's counters, the loopback link's included,
	 * since the device was made (links come and go with their rails):
	 * the port counters (verbs/counters.c). Added by tbr_link_count.
	 */
	atomic64_t cnt[TBR_CNT_MAX];
	bool host;			/* the module's own device (tbrdma0) */
	/* fabric keys (link/auth.c): replaced whole under tbr_ctl_mutex */
	struct tbr_auth_keys __rcu *auth;
	atomic64_t auth_refused;	/* peers refused: no proof of the key */
	unsigned int slot;		/* GUID derivation: 0 host, lowest free */
	bool dying;
};

/* Serializes every control-plane change (devices, cables, rail state). */
extern struct mutex tbr_ctl_mutex;

/* ---- observers ------------------------------------------------------------ */

/*
 * Who hears about the link layer's objects without being called by name:
 * generic netlink (events, management datagrams), sysfs (devices and
 * uevents), tbrN (carrier, IP frames). Every member is optional.
 *  dev_event   "process", tbr_ctl_mutex held: a device was listed
 *              (TBR_OBS_NEW) or is about to go (TBR_OBS_DEL).
 *  link_event  "process", tbr_ctl_mutex held: a link appeared, went up
 *              (its first rail up), down (its last) or is going.
 *  rail_event  "process", tbr_ctl_mutex held: the same for a rail.
 *  carrier     "process", tbr_ctl_mutex held: the device's first rail came
 *              up (@on) or its last went down.
 *  rx          "bh": a frame with a code other than DATA (@pdf) arrived on
 *              @rail from host @src (the rail's peer; a routed frame's
 *              source, which route.c checked came from a host the forwarding
 *              table knows); the buffer is valid only during the call.
 *  tx_ready    "bh": TX descriptors came free on rail link @link after a
 *              reservation found its rings full (as the transport's).
 * NEW, UP and DOWN go to the observers in registration order, DEL in the
 * reverse order, so whoever sets an object up first takes it down last.
 */
enum tbr_obs_event {		/* the genl event codes (ctl/netlink.c) */
	TBR_OBS_NEW = 1,
	TBR_OBS_DEL,
	TBR_OBS_UP,
	TBR_OBS_DOWN,
};

struct tbr_link_observer {
	struct list_head node;
	void (*dev_event)(struct tbr_dev *tdev, enum tbr_obs_event ev);
	void (*link_event)(struct tbr_link *link, enum tbr_obs_event ev);
	void (*rail_event)(struct tbr_rail *rail, enum tbr_obs_event ev);
	void (*carrier)(struct tbr_dev *tdev, bool on);
	void (*rx)(struct tbr_rail *rail, u64 src, u8 pdf, const void *data, u32 len);
	void (*tx_ready)(struct tbr_link *link);
};

/*
 * Context "process". Register before the objects it observes exist (or
 * accept to hear only of later ones); unregistering waits until no rx call
 * runs any more.
 */
void tbr_link_observer_add(struct tbr_link_observer *obs);
void tbr_link_observer_del(struct tbr_link_observer *obs);
/* For the device registry: tells every observer. tbr_ctl_mutex held. */
void tbr_link_notify_dev(struct tbr_dev *tdev, enum tbr_obs_event ev);

/* ---- capture tap (obs/capture.c, docs/capture.md) ------------------------- */

/*
 * Whoever captures a device's frames (its monitor netdev) sees every frame
 * one of its rails sends or receives, each once, in the order of its rail:
 *  tx   "any", link->lock held (IRQs off): @buf, @len bytes with code @pdf,
 *       is about to be posted on @rail; the callee copies it and returns a
 *       cookie, or NULL.
 *  tx_done  "any", link->lock held, right after the post: @cookie's frame
 *       went out (@sent) or was refused.
 *  rx   "bh", as a frame's callback: @buf arrived on @rail (before it is
 *       handed up, which may write it).
 * The loopback link's frames (no rail) are not seen. Calls happen only
 * while tbr_link_tap_key is on: a tap holds it on (static_branch_inc) while
 * it is set, so a device nobody captures pays one patched-out jump per
 * frame.
 */
struct tbr_link_tap {
	void *(*tx)(struct tbr_link_tap *tap, struct tbr_rail *rail, u8 pdf,
		    const void *buf, u32 len);
	void (*tx_done)(struct tbr_link_tap *tap, void *cookie, bool sent);
	void (*rx)(struct tbr_link_tap *tap, struct tbr_rail *rail, u8 pdf,
		   const void *buf, u32 len);
};

DECLARE_STATIC_KEY_FALSE(tbr_link_tap_key);

/*
 * Set (@tap) or clear (NULL) @tdev's tap. Callers serialize (the monitor's
 * open and stop, under RTNL); clearing waits until no tap call runs.
 * Context "process".
 */
void tbr_link_tap_set(struct tbr_dev *tdev, struct tbr_link_tap *tap);

/* ---- forwarding (route.c, docs/protocol.md 7) ------------------------------ */

struct tbr_route_entry;

/*
 * Context "process", tbr_ctl_mutex held. Replace @tdev's forwarding table by
 * @n entries (tbr_route_table_check: sorted by destination), version
 * @version (nonzero): readers see the old table or the new one, never a
 * mix. Routed links are made for the new destinations more than one hop
 * away and taken away (gone) for the ones no longer in it. 0, -EINVAL,
 * -ENOMEM (the old table stays).
 */
int tbr_route_set(struct tbr_dev *tdev, const struct tbr_route_entry *e,
		  u32 n, u32 version);
/*
 * Context "process", tbr_ctl_mutex held: call @fn for every entry of the
 * table (stopping at its first nonzero return, which is returned), after
 * telling the version and the number of entries with @fn's entry NULL.
 */
int tbr_route_walk(struct tbr_dev *tdev,
		   int (*fn)(void *arg, u32 version, u32 n,
			     const struct tbr_route_entry *e), void *arg);
/* Registry: before the device is listed / once its rails are gone. */
void tbr_route_init(struct tbr_dev *tdev);
void tbr_route_flush(struct tbr_dev *tdev);

#endif /* TBRDMA_LINK_H */
