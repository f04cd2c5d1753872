/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: rails, what a backend sees of the link layer.
 *
 * A *rail* is one pair of DMA rings (one TX ring, one RX ring, each of a
 * fixed number of descriptors) that carries frames of at most
 * TBR_FRAME_SIZE_MAX bytes between this device and one peer. It is shaped
 * on the Thunderbolt NHI ring API (tb_ring_alloc_tx/rx, struct ring_frame):
 * frames are posted with a buffer, a size and two 4-bit protocol defined
 * frame codes (SOF/EOF PDF, link.h), and every posted frame comes back
 * exactly once through its callback, either completed or canceled.
 *
 * A *backend* (backends/: emu, eth, tb) makes rails: struct tbr_backend is
 * what the module and the device registry know of it, struct tbr_rail_ops
 * what the link layer calls on each rail. Contexts as in link.h.
 */
#ifndef TBRDMA_RAIL_H
#define TBRDMA_RAIL_H

#include <linux/completion.h>

#include "link/link.h"
#include "core/tbr_ring_acct.h"
#include "core/tbr_stripe.h"
#include "core/tbr_auth.h"

struct tbr_backend_ctl;

/* ---- frames (the NHI ring_frame, without DMA addresses) ---------------- */

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
	u8 eof;			/* the frame code (link.h TBR_PDF_*): TX to send, RX received */
	u8 flags;		/* TBR_FRAME_* on completion */
	tbr_frame_cb callback;
	struct list_head list;	/* owned by the backend while posted */
	u64 bk_time;		/* backend scratch while posted */
	u64 lk_time;		/* link layer: TX posted at (ns) */
	u32 lk_len;		/* link layer: TX bytes counted in the rail's stripe.out */
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
	u32 rx_hold_us;		/* a slow receiver: buffers given back this late */
};

struct tbr_rail_ops {
	/*
	 * Post a TX frame / an RX buffer. Context "any". Returns 0 (the frame's
	 * callback will run exactly once, later, never from inside this call),
	 * -ENOBUFS when the ring has no free descriptor, -ESHUTDOWN when the
	 * rail is not running (frame not taken).
	 */
	int (*tx)(struct tbr_rail *rail, struct tbr_frame *frame);
	int (*rx)(struct tbr_rail *rail, struct tbr_frame *frame);
	/* Optional knobs; context "process". */
	/*
	 * The fault knobs of both ends of the rail, or with @one_way of this
	 * end only (the frames it sends; for rx_hold_us, the buffers it
	 * receives into): the other end keeps its own.
	 */
	int (*set_fault)(struct tbr_rail *rail, const struct tbr_rail_fault *f,
			 bool one_way);
	void (*get_fault)(struct tbr_rail *rail, struct tbr_rail_fault *f);
	int (*set_cut)(struct tbr_rail *rail, bool cut);
	/*
	 * Optional, for the poll mode: a nonzero cookie when the rail's
	 * receive path can be busy-polled (eth: the NAPI its frames came in
	 * on last; tb: its RX ring), for its backend's busy_poll. Context "any", link->lock
	 * held.
	 */
	u32 (*poll_cookie)(struct tbr_rail *rail);
	/*
	 * Optional, TX zero-copy: send bytes [@off, @off + @len) of the
	 * reserved, unsent TX frame @frame from @page at @page_off instead of
	 * frame->buf. Return 0 with a reference on @page held until
	 * tx_release(), or -EOPNOTSUPP (nothing held; the caller copies).
	 * tx_release() (required with tx_attach) drops what a TX frame holds
	 * whenever it goes back to the pool: done, refused or aborted.
	 * Context "any"; tx_release with link->lock held.
	 */
	int (*tx_attach)(struct tbr_rail *rail, struct tbr_frame *frame, u32 off,
			 struct page *page, u32 page_off, u32 len);
	void (*tx_release)(struct tbr_rail *rail, struct tbr_frame *frame);
};

/*
 * One per backend, listed in main.c's table; the module and the device
 * registry (ctl/registry.c) call them, nobody calls a backend by name.
 * Every member but kind and rail_ops is optional.
 *  init      module load, before any device exists ("process").
 *  start     once the host device and the control plane exist (tb: offer
 *            the XDomain service); a failure is logged, the module goes on
 *            without the backend ("process", tbr_ctl_mutex not held).
 *  stop      module unload, before any device goes: every rail down.
 *  dev_gone  @tdev is being deleted: remove its rails ("process",
 *            tbr_ctl_mutex held).
 *  key_set   @tdev's fabric key was set, rotated or cleared (link/auth.c):
 *            with a key, a backend whose rails are checked only when they
 *            come up takes down those of a peer that has not proven the
 *            key and negotiates again ("process", tbr_ctl_mutex held, so
 *            the work is queued).
 *  exit      module unload, after every device went.
 *  ctl       what the control plane asks of the backend (ctl/ctl.h: its
 *            own genl commands, its attributes in rail dumps); the link
 *            layer never looks at it.
 *  busy_poll run the receive path a rail's poll_cookie names (frames go
 *            to the link layer as always) until @end(@arg) returns true
 *            ("process", no lock held, BH on; @end is called between
 *            passes and must bound the time).
 */
struct tbr_backend {
	const char *kind;	/* "emu", "eth", "tb": dumps, sysfs */
	const struct tbr_rail_ops *rail_ops;
	int (*init)(void);
	int (*start)(void);
	void (*stop)(void);
	void (*dev_gone)(struct tbr_dev *tdev);
	void (*key_set)(struct tbr_dev *tdev);
	void (*exit)(void);
	const struct tbr_backend_ctl *ctl;
	void (*busy_poll)(u32 cookie, bool (*end)(void *arg), void *arg);
	/*
	 * The poll mode's bound when busy_poll_us is left at -1 (auto), for a
	 * doorbell that starts a round trip; 0: not polled then. tb: the NHI's
	 * interrupt throttle (a poll longer than that saves nothing).
	 */
	unsigned int busy_poll_auto_us;
};

/*
 * Backend side, all context "process" with tbr_ctl_mutex held:
 *  tbr_rail_add()     creates a rail of @tdev towards @peer_guid (joining or
 *                     creating that link) run by @backend's rail_ops,
 *                     allocates its frame pools; the rail starts down. Returns the rail or an ERR_PTR.
 *  tbr_rail_post_rx() the rings run: post the rail layer's RX buffers
 *                     (optional: emu does it on both ends before either
 *                     end goes up, so no first frame meets an empty ring).
 *  tbr_rail_up()      the rings run: posts RX buffers if not yet done,
 *                     then the scheduler may use the rail. Events sent.
 *  tbr_rail_down()    the scheduler stops using the rail, upper layer told;
 *                     frames still posted on it come back later (canceled
 *                     or not: tb drains TX before it stops the rings).
 *  tbr_rail_remove()  leaves the link (taking the rail down first) and
 *                     frees it once every TX frame a transport reserved
 *                     came back; if one never does (rail_remove_ms), the
 *                     rail is unlisted anyway, never calls the backend
 *                     again and is leaked, so the backend may free
 *                     rail->priv as soon as this returns.
 * The backend's own rail state lives in rail->priv.
 */
struct tbr_rail *tbr_rail_add(struct tbr_dev *tdev, u64 peer_guid,
			      const struct tbr_backend *backend, void *priv,
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
/*
 * TBR_PEER_* (link.h) the peer's transport takes, as the backend learned it
 * (0 until set: the base protocol only). Set before tbr_rail_up(); a change
 * reaches connections started afterwards. Context "process", tbr_ctl_mutex
 * held.
 */
void tbr_rail_set_peer_feat(struct tbr_rail *rail, u32 feat);

/*
 * A backend that received a frame into memory of its own (eth: the skb)
 * hands it up from there instead of copying it into the RX buffer @f it
 * took from the posted ones; @f stands for the frame (rx_depth still bounds
 * what a rail takes in) and is posted again. @data is read, and may be
 * written, until this returns. Context "bh", as a frame's callback.
 */
void tbr_rail_rx_data(struct tbr_rail *rail, struct tbr_frame *f, void *data,
		      u32 size, u8 eof);
/* An RX frame the backend read itself (tb: a split frame's head): posted again. */
void tbr_rail_rx_recycle(struct tbr_rail *rail, struct tbr_frame *f);

/*
 * A frame's buffer: a compound page of TBR_FRAME_ORDER (TBR_FRAME_SIZE_MAX
 * is a page of payload and its header, more than PAGE_SIZE), its first byte
 * at the page's start. tbr_frame_page_alloc() takes @gfp's context.
 */
#define TBR_FRAME_ORDER		get_order(TBR_FRAME_SIZE_MAX)
struct page *tbr_frame_page_alloc(gfp_t gfp);
/* The link layer's pools (link.c, loop.c): a buffer or NULL; and back. */
void *tbr_frame_buf_alloc(void);
void tbr_frame_buf_free(void *buf);

/*
 * A backend that hands a posted TX frame's page to the medium instead of
 * copying it (eth: as an skb fragment) puts @page, a fresh page from
 * tbr_frame_page_alloc(), in its place before the frame's callback; the
 * old page is then the medium's to free (put_page()). Not for a backend
 * that DMA-maps the pool's buffers once (tb). Context "any", while the
 * backend holds @f.
 */
void tbr_rail_frame_give_page(struct tbr_frame *f, struct page *page);

/* Context "any". */
void tbr_rail_count(struct tbr_rail *rail, enum tbr_cnt c, u64 n);

struct tbr_rail {
	struct tbr_link *link;
	u32 id;			/* index within the link */
	const struct tbr_backend *backend;
	const struct tbr_rail_ops *ops;	/* backend->rail_ops, or refusing all */
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
	void *obs_priv;		/* for the observers (sysfs), untouched here */
	u32 max_frame;		/* largest native frame, see tbr_rail_set_max_frame() */
	u32 tx_max;		/* largest frame it takes, >= max_frame (link->lock) */
	u32 peer_feat;		/* TBR_PEER_*, tbr_rail_set_peer_feat() (link->lock) */
	bool removing;		/* tbr_rail_remove() waits for tx_idle (lock) */
	struct completion tx_idle;	/* every TX frame back in tx_pool */
	/* what its medium trained at, tbr_rail_set_speed() (tbr_ctl_mutex) */
	const void *medium;	/* rails on one medium share its speed */
	u32 lane_mbps;		/* per lane, Mb/s; 0 unknown */
	u32 lanes;
	/*
	 * Ring occupancy since the rail last came up (link->lock; in
	 * frames.c): TX frames reserved or posted (full: credit-stalled), RX
	 * buffers not posted to the backend (full: nothing to receive into;
	 * empty: every buffer posted, nothing waiting to be handed up).
	 */
	struct tbr_ring_acct tx_acct, rx_acct;
	/* its TX bytes out and measured drain rate, for striping (stripe.c; link->lock) */
	struct tbr_stripe stripe;
	u32 rx_posted;		/* RX buffers the backend holds (link->lock) */
	/*
	 * Its peer proved the fabric key for the GUID it claims (link/auth.c):
	 * set by the backend before tbr_rail_up(); a link judged at an
	 * authenticated rail is used at once, never held.
	 */
	bool auth;
};

/*
 * Authenticated links (link/auth.c, docs/protocol.md "Authenticated
 * links"): the device's fabric keys, which tbrdmad hands in over genl
 * (never read back), and what the backends' HELLOs sign and check with.
 *  tbr_link_auth_set()      "process", tbr_ctl_mutex held: @key (@len
 *                           bytes, TBR_AUTH_KEY_MIN..MAX) becomes the
 *                           current key, the current one the previous,
 *                           accepted @grace_ms more; @len 0: no key
 *                           (trusted-cable mode). 0, -EINVAL, -ENOMEM, or
 *                           the crypto API's error (no hmac(sha256)).
 *  tbr_link_auth_release()  "process", tbr_ctl_mutex held: the device goes.
 *  tbr_link_auth_keyed()    "any": whether a key is configured.
 *  tbr_link_auth_get()      "any": the key holder for the codecs
 *                           (tbr_auth.h); its MACs take RCU inside.
 *  tbr_link_auth_refused()  "any": a peer that could not prove the key was
 *                           refused; counted, the device's auth_refused.
 */
int tbr_link_auth_set(struct tbr_dev *tdev, const u8 *key, u32 len,
		      u32 grace_ms);
void tbr_link_auth_release(struct tbr_dev *tdev);
bool tbr_link_auth_keyed(struct tbr_dev *tdev);
void tbr_link_auth_get(struct tbr_dev *tdev, struct tbr_auth *a);
void tbr_link_auth_refused(struct tbr_dev *tdev);
u64 tbr_link_auth_refused_count(struct tbr_dev *tdev);

/*
 * The rail's TX and RX ring figures since it last came up, or false (and
 * none) while it is down. Context "any"; takes link->lock.
 */
bool tbr_rail_ring_occ(struct tbr_rail *rail, struct tbr_ring_occ *tx,
		       struct tbr_ring_occ *rx);

/* The link layer's own (link.c, tx.c, frames.c): a rail's frames, and its ring figures. */
int tbr_rail_alloc_frames(struct tbr_rail *rail);
void tbr_rail_free_frames(struct tbr_rail *rail);
void tbr_rail_ring_acct_start_locked(struct tbr_rail *rail);
/*
 * stripe.c, link->lock held: the rail a frame of @len goes on (@mgmt: a
 * management datagram, which may take the reserved descriptors and never
 * waits for a faster rail), or NULL with *@err -EMSGSIZE (no up rail
 * carries it), -ENOBUFS (no descriptor) or -EAGAIN (one, but a faster
 * rail's frees first);
 * a TX frame of @rail completed at @now, for its drain rate; the rail's
 * drain rate in bytes per ms, 0 not measured ("any", takes link->lock).
 */
struct tbr_rail *tbr_link_pick_locked(struct tbr_link *link, u32 len, bool mgmt,
				      u64 now, int *err);
void tbr_rail_tx_done_locked(struct tbr_rail *rail, struct tbr_frame *f, u64 now);
u32 tbr_rail_drain_rate(struct tbr_rail *rail);

/* link.c, for tx.c: TX descriptors came free, tell the observers ("bh"). */
void tbr_notify_tx_ready(struct tbr_link *link);

/*
 * tap.c, for tx.c and link.c while tbr_link_tap_key is on: post @f (code
 * @pdf, @len bytes) on @rail with the tap's copy taken first (link->lock
 * held), and a received frame to the tap ("bh").
 */
int tbr_tap_post(struct tbr_rail *rail, struct tbr_frame *f, u8 pdf, u32 len);
void tbr_tap_rx(struct tbr_rail *rail, u8 pdf, const void *buf, u32 len);

/* link->lock held: the ring's level changed at @now (ktime_get_ns()). */
static inline void tbr_rail_tx_acct_locked(struct tbr_rail *rail, u64 now)
{
	tbr_ring_acct_set(&rail->tx_acct, rail->tx_depth - rail->tx_free, now);
}

static inline void tbr_rail_rx_acct_locked(struct tbr_rail *rail, u64 now)
{
	tbr_ring_acct_set(&rail->rx_acct, rail->rx_depth - rail->rx_posted, now);
}

/*
 * The speed the rail's medium (a Thunderbolt XDomain, a netdev) trained at:
 * @lanes of @lane_mbps each, 0 unknown (emu). Rails of one @medium share it,
 * so the device's port rate counts each medium once. Set before
 * tbr_rail_up(), or later with the rail down; context "process",
 * tbr_ctl_mutex held. Observers read it in their rail events.
 */
static inline void tbr_rail_set_speed(struct tbr_rail *rail, const void *medium,
				      u32 lane_mbps, u32 lanes)
{
	rail->medium = medium;
	WRITE_ONCE(rail->lane_mbps, lane_mbps);
	WRITE_ONCE(rail->lanes, lanes);
}

/*
 * Whether @tdev's link to @peer_guid has a rail of another backend than
 * @backend (eth refuses to join a link reached over Thunderbolt). Context
 * "process", tbr_ctl_mutex held.
 */
bool tbr_link_has_other_backend(struct tbr_dev *tdev, u64 peer_guid,
				const struct tbr_backend *backend);

#endif /* TBRDMA_RAIL_H */
