// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the Thunderbolt backend's negotiation events (tb.c runs the
 * negotiation itself, tb_msg.c encodes and answers its messages): the list
 * of conns and their workqueue, the protocol handler that takes the peer's HELLO, READY and BYE from the
 * XDomain control channel and answers them at once, the work that turns
 * them into negotiation steps, and a fabric key set after rails came up,
 * which sends an unproven peer's rails down and starts the HELLOs over.
 * Locks as in tb.c: tbt_lock, inside it conn->lock, inside that
 * tbr_ctl_mutex.
 */
#include <linux/thunderbolt.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "backends/tb_priv.h"

LIST_HEAD(tbt_conns);
DEFINE_MUTEX(tbt_lock);
/*
 * Ordered: event_work, up_work, down_work, rekey_work and remove_work of
 * every conn, one at a time, so the rail works never overlap while one has
 * conn->lock dropped around a path call, and a remove_work runs after them;
 * made by tb.c's start, drained at module unload, after the last remove
 * queued its remove_work.
 */
struct workqueue_struct *tbt_wq;
/*
 * negotiation packets from peers (tb_state): malformed ones, well-formed ones
 * refused, and HELLOs that came before our service for their XDomain probed
 */
atomic_t tbt_nego_bad = ATOMIC_INIT(0);
atomic_t tbt_nego_refused = ATOMIC_INIT(0);
atomic_t tbt_nego_early = ATOMIC_INIT(0);

/* tbt_lock held */
static struct tbt_conn *tbt_find(u64 route, const struct tbr_nego_msg *m)
{
	struct tbt_conn *c;

	list_for_each_entry(c, &tbt_conns, node) {
		if (c->xd->route != route)
			continue;
		if (m && (memcmp(m->initiator, c->xd->remote_uuid, 16) ||
			  memcmp(m->target, c->xd->local_uuid, 16)))
			continue;
		return c;
	}
	return NULL;
}

/* tbt_lock held */
static bool tbt_route_known(u64 route)
{
	struct tbt_conn *c;

	list_for_each_entry(c, &tbt_conns, node)
		if (c->xd->route == route)
			return true;
	return false;
}

/* conn->lock held: whether the peer's READY or BYE @m belongs to our session */
static bool tbt_session_ok(struct tbt_conn *conn, const struct tbr_nego_msg *m)
{
	int err;

	if (!tbr_link_auth_keyed(conn->tdev))
		return true;	/* the trusted-cable mode */
	err = conn->peer_proven ? tbr_nego_session_check(m, conn->hello_nonce,
							conn->remote.nonce) : 0;
	if (!err)
		return true;
	atomic_inc(&tbt_nego_refused);
	dev_warn_ratelimited(&conn->svc->dev,
			     "tbrdma: refused a %s from %016llx: %s\n",
			     tbr_nego_type_name(m->type), m->guid,
			     err == -ENOKEY ? "not signed" : "of another session");
	return false;
}

/*
 * The peer's requests, recorded by tbt_handle() (already answered): the
 * negotiation state changes they cause. Process context.
 */
void tbt_event_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, event_work);
	bool hello, ready, bye;
	struct tbr_nego_msg m, rm, bm;
	u64 rguid, bguid;
	u8 rrails;
	u32 bseq;

	spin_lock_bh(&conn->ev_lock);
	hello = conn->ev_hello;
	ready = conn->ev_ready;
	bye = conn->ev_bye;
	m = conn->ev_msg;
	rguid = conn->ev_ready_guid;
	rrails = conn->ev_ready_rails;
	bguid = conn->ev_bye_guid;
	bseq = conn->ev_bye_seq;
	rm = conn->ev_ready_msg;
	bm = conn->ev_bye_msg;
	conn->ev_hello = conn->ev_ready = conn->ev_bye = false;
	spin_unlock_bh(&conn->ev_lock);

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended)
		goto out;
	if (hello && conn->connected && m.guid != conn->remote.guid) {
		/*
		 * Connected, and a HELLO claims another GUID on the same
		 * XDomain: a peer that really changed its device would have
		 * removed its service first (a new conn). Refused.
		 */
		atomic_inc(&tbt_nego_refused);
		dev_warn_ratelimited(&conn->svc->dev,
				     "tbrdma: refused a HELLO from %016llx: connected to %016llx\n",
				     m.guid, conn->remote.guid);
		hello = false;
	} else if (hello && conn->connected && m.seq > conn->peer_hello_seq &&
		   m.instance == conn->remote.instance) {
		/*
		 * A later HELLO of the same peer instance (its counter goes on):
		 * a retry whose first try we took but whose answer it missed. It
		 * is answered; tearing down here would make the peer's
		 * reconnect look like a restart to us, and so on forever.
		 */
		conn->peer_hello_seq = m.seq;
		/* its retry's answer proved it: the session's nonce is this one's */
		conn->remote.nonce = m.nonce;
		hello = false;
	} else if (hello && conn->connected && m.instance &&
		   m.instance == conn->remote.instance) {
		/* an old HELLO of the instance we are connected to: a replay */
		atomic_inc(&tbt_nego_refused);
		dev_warn_ratelimited(&conn->svc->dev,
				     "tbrdma: refused a replayed HELLO (sequence %u, at %u)\n",
				     m.seq, conn->peer_hello_seq);
		hello = false;
	}
	if (hello) {
		/* a restarted peer counts from 1 again (reload: new conn; resume) */
		if (conn->connected || (conn->hello_rcvd && conn->remote.guid != m.guid)) {
			/* the peer started over (reload, resume): so do we */
			conn->pending = m;
			conn->have_pending = true;
			queue_work(tbt_wq, &conn->down_work);
			goto out;
		}
		if (conn->hello_sent && conn->remote.guid != m.guid)
			conn->hello_sent = false;	/* answered by someone else */
		conn->remote = m;
		conn->peer_hello_seq = m.seq;
		conn->hello_rcvd = true;
		if (conn->hello_sent)
			queue_work(tbt_wq, &conn->up_work);
		else
			mod_delayed_work(system_long_wq, &conn->hello_work, 0);
	}
	/* a keyed session's READY and BYE must be of this session (signed: the handler) */
	if (ready && rguid == conn->remote.guid && !tbt_session_ok(conn, &rm))
		ready = false;
	if (bye && bguid == conn->remote.guid && !tbt_session_ok(conn, &bm))
		bye = false;
	if (ready && rguid == conn->remote.guid && conn->hello_rcvd) {
		conn->peer_ready = true;
		conn->peer_rails = rrails;	/* 1..TBR_NEGO_MAX_RAILS (decoded) */
		queue_work(tbt_wq, &conn->up_work);
	}
	if (bye && bguid == conn->remote.guid && conn->hello_rcvd &&
	    bseq <= conn->peer_hello_seq) {
		/* the peer's BYE follows its HELLO in its sequence: an old one */
		atomic_inc(&tbt_nego_refused);
		dev_warn_ratelimited(&conn->svc->dev,
				     "tbrdma: refused a replayed BYE (sequence %u, at %u)\n",
				     bseq, conn->peer_hello_seq);
	} else if (bye && bguid == conn->remote.guid) {
		queue_work(tbt_wq, &conn->down_work);
	}
out:
	mutex_unlock(&conn->lock);
}

/*
 * XDomain packets with our protocol UUID, on the control channel's RX path
 * (process context; the thunderbolt core delivers every control packet,
 * including the host router's answers to path setup, through it, so this
 * must not wait for conn->lock). Requests (HELLO, READY, BYE) are answered
 * here from data fixed at probe and recorded for tbt_event_work; answers
 * (HELLO_REPLY, STATUS) are left to the XDomain core (return 0), which
 * hands them to the tb_xdomain_request() waiting for them. tbt_lock keeps
 * the conn from being freed meanwhile.
 */
static int tbt_handle(const void *buf, size_t size, void *data)
{
	const struct tbt_pkt *p = buf;
	struct tbr_nego_msg m;
	struct tbt_conn *conn;
	unsigned int nw;
	bool keyed;
	u64 route;
	u8 sn;
	int err;

	if (size < offsetof(struct tbt_pkt, body) + 4 * sizeof(u32)) {
		atomic_inc(&tbt_nego_bad);
		return 0;
	}
	nw = min_t(size_t, (size - offsetof(struct tbt_pkt, body)) / 4,
		   TBR_NEGO_MAX_WORDS);
	route = ((u64)p->route_hi << 32 | p->route_lo) & ~BIT_ULL(63);
	sn = (p->length_sn & TBT_SN_MASK) >> TBT_SN_SHIFT;
	err = tbr_nego_decode(p->body, nw, &m);
	if (!err && (m.type == TBR_NEGO_HELLO_REPLY || m.type == TBR_NEGO_STATUS))
		return 0;

	mutex_lock(&tbt_lock);
	conn = tbt_find(route, err ? NULL : &m);
	if (!conn) {
		/*
		 * Malformed; or a HELLO on a route no conn of ours has yet: the
		 * peer's service probed before ours for that XDomain (a normal
		 * race on every plug; the peer retries every second), not a
		 * refusal; or on a conn's route but not from the XDomain
		 * (UUIDs) it names: refused.
		 */
		if (err)
			atomic_inc(&tbt_nego_bad);
		else if (m.type == TBR_NEGO_HELLO && !tbt_route_known(route))
			atomic_inc(&tbt_nego_early);
		else
			atomic_inc(&tbt_nego_refused);
		mutex_unlock(&tbt_lock);
		return 0;
	}
	if (err) {
		atomic_inc(&tbt_nego_bad);
		/* answer only what is clearly a request of another version */
		if (err == -EPROTONOSUPPORT && m.type == TBR_NEGO_HELLO) {
			tbt_respond_status(conn, m.seq, TBR_NEGO_ST_VERSION, sn, nw);
			dev_warn(&conn->svc->dev,
				 "tbrdma: peer negotiation version %u.%u, we speak %u.%u\n",
				 m.ver_major, m.ver_minor, TBR_NEGO_VER_MAJOR,
				 TBR_NEGO_VER_MINOR);
		} else {
			dev_dbg(&conn->svc->dev, "tbrdma: bad negotiation packet: %d\n", err);
		}
		goto out;
	}
	if (READ_ONCE(conn->stopping) || READ_ONCE(conn->suspended)) {
		tbt_respond_status(conn, m.seq, TBR_NEGO_ST_BUSY, sn, nw);
		goto out;
	}
	if (m.guid == tbr_dev_guid(conn->tdev)) {
		/* our own GUID from the other end: a loop or a liar */
		atomic_inc(&tbt_nego_refused);
		dev_warn_ratelimited(&conn->svc->dev,
				     "tbrdma: refused a %s claiming our own GUID %016llx\n",
				     tbr_nego_type_name(m.type), m.guid);
		tbt_respond_status(conn, m.seq, TBR_NEGO_ST_REFUSED, sn, nw);
		goto out;
	}
	keyed = tbr_link_auth_keyed(conn->tdev);
	if (m.type == TBR_NEGO_HELLO && keyed && !m.auth) {
		/* a keyless (or older) peer: it cannot prove the key */
		tbt_auth_refused(conn, m.guid, -EACCES);
		tbt_respond_hello(conn, &m, TBR_NEGO_ST_AUTH, sn, nw);
		goto out;
	}
	if ((m.type == TBR_NEGO_READY || m.type == TBR_NEGO_BYE) && keyed) {
		struct tbr_auth a;

		/* signed by a key holder; whose session: tbt_event_work */
		tbr_link_auth_get(conn->tdev, &a);
		if (tbr_nego_verify(&a, p->body, nw, &m, m.peer_nonce)) {
			atomic_inc(&tbt_nego_refused);
			tbt_auth_refused(conn, m.guid, -EBADMSG);
			tbt_respond_status(conn, m.seq, TBR_NEGO_ST_AUTH, sn, nw);
			goto out;
		}
	}
	spin_lock_bh(&conn->ev_lock);
	switch (m.type) {
	case TBR_NEGO_HELLO:
		conn->ev_msg = m;
		conn->ev_hello = true;
		break;
	case TBR_NEGO_READY:
		conn->ev_ready_guid = m.guid;
		conn->ev_ready_rails = m.ready_rails;
		conn->ev_ready_msg = m;
		conn->ev_ready = true;
		break;
	case TBR_NEGO_BYE:
		conn->ev_bye_guid = m.guid;
		conn->ev_bye_seq = m.seq;
		conn->ev_bye_msg = m;
		conn->ev_bye = true;
		break;
	}
	spin_unlock_bh(&conn->ev_lock);
	if (m.type == TBR_NEGO_HELLO)
		tbt_respond_hello(conn, &m, TBR_NEGO_ST_OK, sn, nw);
	else
		tbt_respond_status(conn, m.seq, TBR_NEGO_ST_OK, sn, nw);
	queue_work(tbt_wq, &conn->event_work);
out:
	mutex_unlock(&tbt_lock);
	return 1;
}

struct tb_protocol_handler tbt_handler = {
	.uuid = &tbt_proto_uuid,
	.callback = tbt_handle,
};

/*
 * The fabric key was set after the rails came up (tbt_key_set): a peer that
 * never proved it is told BYE, its rails go, and the HELLOs start over,
 * now keyed (refused and counted if it still cannot prove the key). On
 * tbt_wq, so no rail work runs meanwhile.
 */
void tbt_rekey_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, rekey_work);
	struct tbr_nego_msg req, ans;

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended || !conn->connected ||
	    conn->peer_proven || !tbr_link_auth_keyed(conn->tdev)) {
		mutex_unlock(&conn->lock);
		return;
	}
	dev_warn(&conn->svc->dev,
		 "tbrdma: fabric key set: peer %016llx has not proven it, its rails go and the HELLOs start over\n",
		 conn->remote.guid);
	tbr_tb_conn_quiesce(conn);
	tbt_msg_init(conn, &req, TBR_NEGO_BYE);
	req.seq = ++conn->seq;
	mutex_unlock(&conn->lock);
	if (!READ_ONCE(conn->xd->is_unplugged))
		tbt_request(conn, &req, &ans);	/* best effort */
	mutex_lock(&conn->lock);
	if (!conn->stopping && !conn->suspended) {
		tbr_tb_conn_teardown(conn);
		queue_delayed_work(system_long_wq, &conn->hello_work,
				   msecs_to_jiffies(100));
	}
	mutex_unlock(&conn->lock);
}

/* tbt_key_set(): every conn of a keyed device checks its peer's proof. */
static void tbt_key_work(struct work_struct *work)
{
	struct tbt_conn *conn;

	mutex_lock(&tbt_lock);
	list_for_each_entry(conn, &tbt_conns, node)
		if (tbr_link_auth_keyed(conn->tdev))
			queue_work(tbt_wq, &conn->rekey_work);
	mutex_unlock(&tbt_lock);
}

static DECLARE_WORK(tbt_key_work_item, tbt_key_work);
static bool tbt_key_watching;	/* tbr_ctl_mutex: started, not yet stopping */

void tbt_key_watch(bool on)
{
	mutex_lock(&tbr_ctl_mutex);
	tbt_key_watching = on;
	mutex_unlock(&tbr_ctl_mutex);
	if (!on)
		cancel_work_sync(&tbt_key_work_item);
}

/*
 * tbr_backend key_set: tbr_ctl_mutex held, which nests inside tbt_lock and
 * conn->lock, so the conns are walked from a work.
 */
void tbt_key_set(struct tbr_dev *tdev)
{
	lockdep_assert_held(&tbr_ctl_mutex);
	if (tbt_key_watching && tbr_link_auth_keyed(tdev))
		queue_work(system_long_wq, &tbt_key_work_item);
}
