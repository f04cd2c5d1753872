/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the tb backend's private state, shared by tb.c (negotiation,
 * service driver) and tb_ring.c (the rings that carry a rail's frames).
 * Locking is described at the top of tb.c.
 */
#ifndef TBRDMA_TB_PRIV_H
#define TBRDMA_TB_PRIV_H

#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/thunderbolt.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "link/rail.h"
#include "core/tbr_nego.h"
#include "core/tbr_split.h"

#define TBT_POLL_BUDGET		64	/* RX frames per tasklet run */
/* nhi.c nhi_enable_int_throttling: one interrupt per vector per 128 us */
#define TBT_NHI_THROTTLE_US	128

/*
 * PDFs on the wire (docs/thunderbolt.md, "Frames and PDFs"). The sending
 * NHI cuts a ring frame into transport packets of at most 256 bytes and
 * tags the last with the descriptor's EOF PDF, every other one with its SOF
 * PDF; the receiving NHI closes a frame at the first packet whose PDF is in
 * the RX ring's eof_mask and reports that PDF (SOF reads 0). So every frame
 * goes with SOF PDF TBT_PDF_SOF, in no receiver's eof_mask, and its code
 * (link.h TBR_PDF_*, TBR_PDF_HEAD | code, TBR_PDF_TAIL) as the EOF PDF; the
 * RX ring takes sof_mask BIT(TBT_PDF_SOF) and eof_mask TBR_PDF_RX_MASK.
 */
#define TBT_PDF_SOF		0xe
static_assert(!(TBR_PDF_RX_MASK & BIT(TBT_PDF_SOF)));

/*
 * The NHI's largest ring frame (TB_FRAME_SIZE), below the transport's
 * TBR_FRAME_SIZE_MAX: tb rails carry frames of at most this size, which the
 * peers negotiate down from (tbr_nego_agree()).
 */
#define TBT_FRAME_MAX		4096
static_assert(TBT_FRAME_MAX <= TBR_NEGO_FRAME_MAX && TBT_FRAME_MAX <= TBR_FRAME_SIZE_MAX);

/* The NHI descriptor's frame size field is 12 bits: 0 encodes 4096. */
static inline u32 tbr_frame_size_encode(u32 size) { return size & 0xfff; }
static inline u32 tbr_frame_size_decode(u32 field) { return field ? field : 4096; }

struct tbt_conn;

/*
 * A frame longer than the ring frame both ends agreed on (a data frame of a
 * page of payload, up to TBR_FRAME_SIZE_MAX) crosses as two ring frames
 * back to back on one ring, when both ends have TBR_NEGO_CAP_SPLIT and E2E
 * (a ring that loses no frame): a head (code TBR_PDF_HEAD | the frame's
 * code, its first size - ring frame bytes, at most TBT_RX_HEADROOM) and then
 * the rest, one whole ring frame (code TBR_PDF_TAIL). The receiver DMAs
 * every frame TBT_RX_HEADROOM bytes into its buffer and copies a head in
 * front of the tail that follows it at once (core/tbr_split.c pairs them);
 * a tail without its head, a head without its tail and a pair around a bad
 * frame are dropped (docs/protocol.md section 1.4).
 */
#define TBT_RX_HEADROOM		TBR_SPLIT_HEADROOM
static_assert(TBR_FRAME_SIZE_MAX - TBT_FRAME_MAX <= TBT_RX_HEADROOM);

struct tbt_frame {
	struct ring_frame rf;		/* the frame, or its tail */
	struct ring_frame rf_head;	/* TX: a split frame's head */
	struct tbr_frame *f;
	struct tbt_rail *tr;
	dma_addr_t dma;			/* of f->buf, map_len bytes */
	u32 map_len;
	bool mapped, is_tx;
	/* TX zero-copy (tbt_tx_attach): the tail from a user's page */
	bool zc_mapped;			/* zc_dma maps it, for this send */
	struct page *zc_page;		/* a reference while set */
	u32 zc_off, zc_page_off, zc_len;
	dma_addr_t zc_dma;
};

struct tbt_rail {
	struct tbt_conn *conn;
	struct tbr_rail *rail;
	struct tb_ring *tx, *rx;
	struct device *dma_dev;
	int out_hop, in_hop;
	bool started, paths_on, in_hop_held;
	bool running;			/* ops accept frames (READ_ONCE) */
	bool tx_on;			/* tx accepts frames (READ_ONCE): off to drain */
	bool polling;			/* the tasklet may re-arm the IRQ */
	struct tasklet_struct poll;
	spinlock_t rx_lock;		/* RX frames taken: the tasklet, a busy poller */
	u32 poll_id;			/* tbt_poll_ids (0: none) */
	atomic_t tx_posted;		/* TX frames given to the ring, not completed */
	wait_queue_head_t tx_idle;	/* woken when tx_posted drops to 0 */
	struct tbt_frame *fr;		/* tx_depth + rx_depth, as rail->frames */
	unsigned int nfr;
	u32 ring_frame;			/* the agreed ring frame size */
	u32 frame_max;			/* largest frame: ring_frame, or split */
	struct tbr_split_rx split;	/* RX: a head waiting for its tail (poll) */
};

struct tbt_conn {
	struct list_head node;		/* tbt_conns, tbt_lock */
	struct tb_service *svc;
	struct tb_xdomain *xd;
	struct tbr_dev *tdev;
	struct mutex lock;		/* everything below */
	struct tbr_nego_msg local;	/* our HELLO */
	struct tbr_nego_msg remote;	/* the peer's HELLO (or reply) */
	struct tbr_nego_result res;
	bool hello_sent;		/* our HELLO was answered OK */
	bool peer_proven;		/* ... by a reply proving the fabric key */
	u64 hello_nonce;		/* ... to our HELLO of this nonce (the session's) */
	bool hello_rcvd;		/* the peer's HELLO arrived */
	bool peer_ready;		/* the peer's READY arrived */
	bool connected;			/* rails set up, paths on */
	bool rails_up;
	bool need_ready;		/* READY still to be sent */
	bool stopping;			/* remove: nothing restarts */
	bool fw_cm;			/* firmware CM (compat.h tbr_tb_fw_cm()), at probe */
	bool tunnel_refused;		/* the last rail 0 got -EOPNOTSUPP (ICM) */
	bool tunnel_logged;		/* the -EOPNOTSUPP lines were logged */
	bool trim_logged;		/* "peer has fewer rails" was logged */
	u8 peer_rails;			/* ready_rails of the peer's last READY */
	bool suspended;
	bool have_pending;		/* a connected peer said HELLO again */
	struct tbr_nego_msg pending;
	int retries;
	unsigned int ready_tries;	/* READY sent, not answered yet */
	u32 seq;			/* our requests' sequence, 0 again on resume */
	u32 peer_hello_seq;		/* sequence of the peer's HELLO we use */
	u8 sn;				/* XDomain 2-bit sequence */
	u64 peer_guid;
	int out_hop[TBR_NEGO_MAX_RAILS];
	unsigned int nout;
	struct tbt_rail rails[TBR_NEGO_MAX_RAILS];
	unsigned int nrails;
	/*
	 * Requests from the protocol handler, handled by event_work: the
	 * handler runs on the control channel's RX path and must not wait
	 * for conn->lock (its holder may wait for that same path, e.g. in
	 * tb_xdomain_enable_paths()).
	 */
	spinlock_t ev_lock;
	bool ev_hello, ev_ready, ev_bye;
	struct tbr_nego_msg ev_msg;	/* the last HELLO */
	u64 ev_ready_guid, ev_bye_guid;
	u8 ev_ready_rails;
	u32 ev_bye_seq;
	/* their auth words (MAC checked by the handler), for the session check */
	struct tbr_nego_msg ev_ready_msg, ev_bye_msg;
	struct work_struct event_work;
	struct delayed_work hello_work;
	struct work_struct up_work;
	struct work_struct down_work;
	struct work_struct remove_work;	/* tbt_remove(): stop and free */
	struct delayed_work ready_work;	/* READY until answered */
	struct work_struct rekey_work;	/* a key came: an unproven peer goes */
};

/*
 * Rail i of a negotiated conn: rings, input HopID, rail, DMA mappings, rings
 * started, RX posted, then the DMA paths enabled. 0 or -errno with nothing
 * left behind (-ESHUTDOWN: the conn is stopping). Context: process,
 * conn->lock and tbr_ctl_mutex held, both dropped while the paths are
 * enabled.
 */
int tbr_tb_rail_setup(struct tbt_conn *conn, unsigned int i,
		      const struct tbr_backend *backend);
/* XDomain packet: header (route, length/sequence), protocol UUID, body */
#define TBT_LENGTH_MASK		GENMASK(5, 0)
#define TBT_SN_MASK		GENMASK(28, 27)
#define TBT_SN_SHIFT		27

struct tbt_pkt {
	u32 route_hi;
	u32 route_lo;
	u32 length_sn;
	uuid_t uuid;
	u32 body[TBR_NEGO_AUTH_WORDS];	/* TBR_NEGO_WORDS sent without a key */
};
/* words in CPU order: the Thunderbolt control channel swaps them to the wire's big endian */
static_assert(sizeof(struct tbt_pkt) == (3 + 4 + TBR_NEGO_AUTH_WORDS) * sizeof(u32));

/*
 * tb_events.c: the conns (tbt_lock), the ordered workqueue of their event,
 * up, down, rekey and remove works, and the negotiation counters of tb_state
 */
extern struct list_head tbt_conns;
extern struct mutex tbt_lock;
extern struct workqueue_struct *tbt_wq;
extern atomic_t tbt_nego_bad, tbt_nego_refused, tbt_nego_early;

/* tb_events.c: the protocol handler (registered by tb.c) and its event_work */
extern struct tb_protocol_handler tbt_handler;
void tbt_event_work(struct work_struct *work);
/* tb_events.c: conn->rekey_work (tbt_wq, no lock held) */
void tbt_rekey_work(struct work_struct *work);
/* tbr_backend key_set (tbr_ctl_mutex held): every keyed conn's rekey_work */
void tbt_key_set(struct tbr_dev *tdev);
/* key_set acts from tb.c's start to its stop; off: no key work left. Process, no lock held */
void tbt_key_watch(bool on);

/* tb_msg.c: negotiation messages on the XDomain control channel */
extern const uuid_t tbt_proto_uuid;
/* fills version, our GUID and both host UUIDs */
void tbt_msg_init(struct tbt_conn *conn, struct tbr_nego_msg *m, u8 type);
/* conn->lock held: a READY or BYE @m of a keyed session gets its auth words */
void tbt_msg_session(struct tbt_conn *conn, struct tbr_nego_msg *m);
/*
 * answer a request of @nw words from the protocol handler, at least as long
 * (the requester takes no shorter answer); a HELLO_REPLY with auth words and
 * TBR_NEGO_AUTH_MAC is signed with the fabric key; tbt_lock held
 */
void tbt_respond(struct tbt_conn *conn, const struct tbr_nego_msg *m, u8 sn,
		 unsigned int nw);
void tbt_respond_status(struct tbt_conn *conn, u32 seq, u32 status, u8 sn,
			unsigned int nw);
/*
 * answer the peer's HELLO @m with our parameters and @status; a HELLO with
 * auth words gets them back: its nonce answered, signed with the fabric key
 * if we hold one (else "no key"); tbt_lock held
 */
void tbt_respond_hello(struct tbt_conn *conn, const struct tbr_nego_msg *m,
		       u32 status, u8 sn, unsigned int nw);
/*
 * a peer that could not prove the fabric key (@err: tbr_nego_verify()'s, or
 * -EACCES: it sent no challenge, or our key came later) is refused: logged,
 * counted (the device's auth_refused); any context but hard IRQ
 */
void tbt_auth_refused(struct tbt_conn *conn, u64 guid, int err);
/* send @req, decode the answer into @ans; no lock held, process context */
int tbt_request(struct tbt_conn *conn, const struct tbr_nego_msg *req,
		struct tbr_nego_msg *ans);

/* The poll mode's busy_poll of the tb backend (tb_ring.c). */
void tbr_tb_busy_poll(u32 cookie, bool (*end)(void *arg), void *arg);
/* tb_ring.c: the rail ops of every Thunderbolt rail */
extern const struct tbr_rail_ops tbt_rail_ops;

/* tb_fwcm.c: the firmware CM's one tunnel is free (xd->ntunnels <= 0). Any context. */
bool tbr_tb_tunnel_free(struct tbt_conn *conn);
/* tb_fwcm.c: rail @i's paths got -EOPNOTSUPP; said once per conn. conn->lock held. */
void tbr_tb_tunnel_refused(struct tbt_conn *conn, unsigned int i);

/*
 * Rails @n and above of @conn down and gone (the peer has fewer up).
 * conn->lock and tbr_ctl_mutex held.
 */
void tbr_tb_rails_trim(struct tbt_conn *conn, unsigned int n);

/*
 * Every rail of @conn down for the scheduler, its ops refusing frames, the
 * TX frames already posted completed (bounded by tb_tx_drain_ms; not
 * waited for on an unplugged XDomain): what must hold before BYE and
 * before any path is disabled. conn->lock held.
 */
void tbr_tb_conn_quiesce(struct tbt_conn *conn);
/*
 * Every rail of @conn quiesced, its paths disabled, gone; negotiation state
 * reset. conn->lock held, dropped while paths are disabled.
 */
void tbr_tb_conn_teardown(struct tbt_conn *conn);

#endif /* TBRDMA_TB_PRIV_H */
