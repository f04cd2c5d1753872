// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tb rail backend, rails over Thunderbolt/USB4 host-to-host
 * DMA rings (NHI rings in frame mode) on stock kernels (6.1 .. 6.12).
 * The sequence, version differences and hardware test plan are in
 * docs/thunderbolt.md.
 *
 * Discovery: we publish an XDomain property directory "tbrdma" (protocol
 * id/version/revision, capabilities in prtcstns). When a peer host publishes
 * it too, the thunderbolt core creates a tb_service under that peer's
 * XDomain and binds our service driver (module alias tbsvc:ktbrdma..., so
 * udev loads tbrdma when such a peer appears).
 *
 * Negotiation (one "conn" per service, i.e. per XDomain, i.e. per cable):
 * both kernels send HELLO (kernel/core/tbr_nego.h: device GUID, rails
 * wanted, transmit HopIDs, ring and frame sizes, E2E, link speed/lanes) as
 * XDomain requests and answer the peer's HELLO with HELLO_REPLY (the
 * peer's requests come in through tb_events.c's protocol handler, which
 * answers them and queues the conn's event_work). With both
 * HELLOs answered, each side allocates, per agreed rail, a TX and an RX
 * ring, the input HopID the peer transmits on, joins the link of the peer's
 * GUID (so every cable to the same peer joins one link), starts the rings,
 * posts RX buffers and only then enables the DMA paths. It then sends
 * READY; rails go up (tbr_rail_up) when the peer's READY has arrived too,
 * so nothing is sent into a ring that is not there yet.
 *
 * Data path: the rail ops below translate the rail layer's tbr_frame into a
 * ring_frame (one per rail frame, DMA-mapped once). TX completions come from
 * the NHI's ring work (process context) and are handed on with BH
 * disabled. RX runs in poll mode: the ring interrupt schedules a tasklet
 * that takes at most TBT_POLL_BUDGET frames per run (tb_ring_poll) and
 * re-arms the interrupt (tb_ring_poll_complete) when the ring is empty.
 *
 * Down: service removal, unplug, suspend, shutdown, the peer's BYE or a new
 * HELLO from a connected peer: every rail quiesced (tbr_rail_down(), the
 * path emu's cut takes; the ops refuse new frames; the TX frames already
 * posted complete, bounded), BYE (removal), then per rail paths disabled,
 * the poll tasklet killed, rings stopped (the NHI completes every posted
 * frame as canceled), tbr_rail_remove(), DMA unmapped, rings freed, HopIDs
 * released. Then HELLO starts over unless the service is going away.
 *
 * Locks: tbt_lock (mutex) guards the conn list and is held by the protocol
 * handler around its whole work, so a conn is never freed under it; inside
 * it conn->lock (mutex) guards the conn's negotiation state; inside that
 * tbr_ctl_mutex for rail add/up/down/remove. XDomain requests (which wait
 * for the peer's answer) are sent with none of these held: the answer
 * arrives on the same control-channel path that runs the handler.
 *
 * Unplug: the software connection manager removes an XDomain, and so calls
 * tbt_remove(), with tb->lock held (drivers/thunderbolt/tb.c
 * tb_handle_hotplug() -> tb_xdomain_remove()), and takes tb->lock in
 * tb_xdomain_enable_paths() (tb_approve_xdomain_paths()) and in
 * tb_xdomain_disable_paths() unless the XDomain is unplugged. So paths are
 * enabled and disabled with none of our locks held (tb_ring.c
 * tbt_rail_paths()), and tbt_remove() waits for nothing that can wait for
 * tb->lock: it marks the conn stopping, takes references on the service and
 * the XDomain, and queues remove_work on the ordered tbt_wq. That work runs
 * after any rail work in flight (which, back from its path call, sees
 * stopping and does nothing more), stops the conn and frees it. A new
 * conn says HELLO only after every queued remove_work (tbt_removing).
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/thunderbolt.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "tbr_trace.h"
#include "ctl/ctl.h"
#include "compat.h"
#include "backends/backends.h"
#include "backends/tb_priv.h"

#define TBT_KEY			"tbrdma"
#define TBT_PRTCID		1
#define TBT_PRTCVERS		1
#define TBT_PRTCREVS		1
#define TBT_HELLO_DELAY_MS	1000
#define TBT_HELLO_RETRIES	60
#define TBT_READY_RETRIES	10	/* at once; then with a backoff, see tbt_ready_work */
#define TBT_READY_DELAY_MIN_MS	100
#define TBT_READY_DELAY_MAX_MS	2000
#define TBT_TUNNEL_POLL_MS	1000	/* firmware CM: is the XDomain's tunnel free again? */

/* Property directory UUID: 9c1a2263-eec2-4cb9-a105-52c860011887 */
static const uuid_t tbt_dir_uuid =
	UUID_INIT(0x9c1a2263, 0xeec2, 0x4cb9,
		  0xa1, 0x05, 0x52, 0xc8, 0x60, 0x01, 0x18, 0x87);
static unsigned int tb_max_rails = 2;
module_param(tb_max_rails, uint, 0644);
MODULE_PARM_DESC(tb_max_rails, "Thunderbolt rails per cable at most (1..16; firmware CM: always 1)");
static bool tb_e2e = true;
module_param(tb_e2e, bool, 0644);
MODULE_PARM_DESC(tb_e2e, "Thunderbolt E2E flow control when the peer has it too");
static unsigned int tb_ring_size = 256;
module_param(tb_ring_size, uint, 0644);
MODULE_PARM_DESC(tb_ring_size, "Thunderbolt ring descriptors (power of two, 16..4096)");

/*
 * Removed conns whose remove_work has not finished: a new conn's HELLO
 * waits for them (tbt_hello_work), so a service bound again after an unbind
 * says HELLO only once the old conn's BYE went out and its paths are gone.
 * The probe itself never waits: it runs under xd->lock
 * (tb_xdomain_get_properties()), which a CM holding tb->lock may wait for,
 * and a remove_work may need tb->lock.
 */
static atomic_t tbt_removing = ATOMIC_INIT(0);
static struct tb_property_dir *tbt_dir;
static bool tbt_dir_registered, tbt_handler_registered, tbt_driver_registered;

/* ---- negotiation -------------------------------------------------------- */

/* The peer's GUID must not contradict another cable to the same host. */
static bool tbt_guid_consistent(struct tbt_conn *conn, u64 guid)
{
	struct tbt_conn *c;
	bool ok = true;

	mutex_lock(&tbt_lock);
	list_for_each_entry(c, &tbt_conns, node)
		if (c != conn && uuid_equal(c->xd->remote_uuid, conn->xd->remote_uuid) &&
		    READ_ONCE(c->peer_guid) && READ_ONCE(c->peer_guid) != guid)
			ok = false;
	mutex_unlock(&tbt_lock);
	return ok;
}

/* A negotiation step ended (tbr_trace.h); any context but hard IRQ. */
static void tbt_trace_nego(struct tbt_conn *conn, u64 peer, const char *step,
			   int result, u32 rails)
{
	trace_tbr_nego(tbr_dev_name(conn->tdev), dev_name(&conn->svc->dev), peer,
		       step, result, rails);
}

static void tbt_hello_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, hello_work.work);
	struct tbr_nego_msg req, ans;
	bool keyed;
	int ret;

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended || conn->connected || conn->hello_sent) {
		mutex_unlock(&conn->lock);
		return;
	}
	if (atomic_read(&tbt_removing)) {
		/* an old conn's BYE and teardown first (tbt_removing) */
		queue_delayed_work(system_long_wq, &conn->hello_work, msecs_to_jiffies(100));
		mutex_unlock(&conn->lock);
		return;
	}
	req = conn->local;
	req.seq = ++conn->seq;
	mutex_unlock(&conn->lock);
	keyed = tbr_link_auth_keyed(conn->tdev);
	if (keyed) {
		/* a fresh challenge: the reply must prove the key over it */
		req.auth = true;
		req.auth_flags = TBR_NEGO_AUTH_MAC;
		req.nonce = get_random_u64();
	}

	ret = tbt_request(conn, &req, &ans);
	tbt_trace_nego(conn, ret ? 0 : ans.guid, "hello", ret ? ret :
		       ans.type != TBR_NEGO_HELLO_REPLY ? -EPROTO : ans.status, 0);

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended || conn->connected) {
		mutex_unlock(&conn->lock);
		return;
	}
	if (ret == -ENOKEY || ret == -ESTALE || ret == -EKEYREJECTED) {
		/* a reply that does not prove the key: as if none came */
		tbt_auth_refused(conn, ans.guid, ret);
	} else if (!ret && ans.type == TBR_NEGO_HELLO_REPLY && ans.status == TBR_NEGO_ST_OK) {
		conn->hello_sent = true;
		conn->peer_proven = keyed;
		conn->hello_nonce = req.nonce;
		if (!conn->hello_rcvd) {
			/* the peer's own HELLO will follow; keep its values */
			conn->remote = ans;
		} else if (ans.guid == conn->remote.guid) {
			queue_work(tbt_wq, &conn->up_work);
		} else {
			conn->hello_sent = false;	/* contradicts its HELLO */
		}
	} else if (!ret && ans.status == TBR_NEGO_ST_AUTH) {
		dev_warn(&conn->svc->dev, "tbrdma: peer requires a fabric key, we have none\n");
		conn->retries = TBT_HELLO_RETRIES;
	} else if (!ret && (ans.status == TBR_NEGO_ST_VERSION ||
			    ans.status == TBR_NEGO_ST_REFUSED)) {
		dev_warn(&conn->svc->dev, "tbrdma: peer refused our HELLO (status %u)\n",
			 ans.status);
		conn->retries = TBT_HELLO_RETRIES;
	} else if (ret == -EPROTONOSUPPORT) {
		dev_warn(&conn->svc->dev, "tbrdma: peer speaks another negotiation version\n");
		conn->retries = TBT_HELLO_RETRIES;
	}
	if (!conn->hello_sent && conn->retries++ < TBT_HELLO_RETRIES)
		queue_delayed_work(system_long_wq, &conn->hello_work,
				   msecs_to_jiffies(TBT_HELLO_DELAY_MS));
	mutex_unlock(&conn->lock);
}

/* conn->lock held: both HELLOs done, set up the agreed rails. */
static void tbt_connect(struct tbt_conn *conn)
{
	unsigned int i;
	int ret = 0;

	if (conn->remote.guid == tbr_dev_guid(conn->tdev) ||
	    !tbt_guid_consistent(conn, conn->remote.guid)) {
		/* our own GUID, or another than this host's other cables name */
		atomic_inc(&tbt_nego_refused);
		dev_warn(&conn->svc->dev,
			 "tbrdma: refused peer GUID %016llx: ours, or not the one another cable to this host negotiated\n",
			 conn->remote.guid);
		tbt_trace_nego(conn, conn->remote.guid, "agree", -EPERM, 0);
		return;
	}
	if (tbr_link_auth_keyed(conn->tdev) && !conn->peer_proven) {
		/* the key came after our HELLO was answered: say it again */
		tbt_auth_refused(conn, conn->remote.guid, -EACCES);
		tbt_trace_nego(conn, conn->remote.guid, "agree", -EACCES, 0);
		conn->hello_sent = false;
		mod_delayed_work(system_long_wq, &conn->hello_work, 0);
		return;
	}
	if (tbr_nego_agree(&conn->local, &conn->remote, TBT_FRAME_MAX,
			   &conn->res)) {
		dev_warn(&conn->svc->dev, "tbrdma: no agreement with peer %016llx\n",
			 conn->remote.guid);
		tbt_trace_nego(conn, conn->remote.guid, "agree", -EPROTO, 0);
		return;
	}
	conn->res.rails = min_t(u8, conn->res.rails, conn->nout);
	WRITE_ONCE(conn->peer_guid, conn->remote.guid);
	mutex_lock(&tbr_ctl_mutex);
	for (i = 0; i < conn->res.rails; i++) {
		ret = tbr_tb_rail_setup(conn, i, &tbr_tb_backend);
		if (ret)
			break;
	}
	conn->nrails = i;
	mutex_unlock(&tbr_ctl_mutex);
	conn->tunnel_refused = ret == -EOPNOTSUPP && !conn->nrails;
	if (conn->tunnel_refused)
		mod_delayed_work(system_long_wq, &conn->ready_work,
				 msecs_to_jiffies(TBT_TUNNEL_POLL_MS));
	tbt_trace_nego(conn, conn->remote.guid, "agree", conn->nrails ? 0 : ret,
		       conn->nrails);
	if (ret == -EOPNOTSUPP)
		tbr_tb_tunnel_refused(conn, i);
	else if (!conn->nrails)
		dev_warn(&conn->svc->dev, "tbrdma: rail setup failed: %d\n", ret);
	if (!conn->nrails)
		return;
	conn->connected = true;
	conn->need_ready = true;
	dev_info(&conn->svc->dev,
		 "tbrdma: %u rail(s) to %016llx: rings %u/%u, e2e %s, frames %u%s, ACK rides %s, paths on\n",
		 conn->nrails, conn->peer_guid, conn->res.tx_ring,
		 conn->res.rx_ring, conn->res.e2e ? "on" : "off",
		 conn->rails[0].frame_max, conn->res.split ? " (split)" : "",
		 conn->res.ack_ride ? "on" : "off");
}

/*
 * Send READY until the peer answers it OK: a lost READY (or its lost answer)
 * would leave the peer waiting for it with its rails down while ours are up.
 * The first TBT_READY_RETRIES tries go at once, then with a backoff up to
 * TBT_READY_DELAY_MAX_MS, for as long as the conn stays connected (unplug,
 * BYE, a restart or remove end it).
 * Before READY, while the firmware CM's one tunnel is another service's
 * (tunnel_refused), it waits for xd->ntunnels to drop to 0 (that driver
 * unloaded or its peer gone) and then has tbt_up_work set the rails up:
 * every TBT_TUNNEL_POLL_MS, reading a counter, with no request.
 */
static void tbt_ready_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, ready_work.work);
	struct tbr_nego_msg req, ans;
	unsigned int delay;
	int ret;

	mutex_lock(&conn->lock);
	if (!conn->stopping && !conn->suspended && !conn->connected && conn->tunnel_refused) {
		if (!tbr_tb_tunnel_free(conn))
			queue_delayed_work(system_long_wq, &conn->ready_work,
					   msecs_to_jiffies(TBT_TUNNEL_POLL_MS));
		else
			queue_work(tbt_wq, &conn->up_work);
		mutex_unlock(&conn->lock);
		return;
	}
	if (conn->stopping || conn->suspended || !conn->connected || !conn->need_ready) {
		mutex_unlock(&conn->lock);
		return;
	}
	tbt_msg_init(conn, &req, TBR_NEGO_READY);
	req.ready_rails = (u8)conn->nrails;
	req.seq = conn->ready_tries;
	tbt_msg_session(conn, &req);
	mutex_unlock(&conn->lock);

	ret = tbt_request(conn, &req, &ans);
	if (!ret && (ans.type != TBR_NEGO_STATUS || ans.status != TBR_NEGO_ST_OK))
		ret = -EAGAIN;
	tbt_trace_nego(conn, READ_ONCE(conn->peer_guid), "ready", ret, req.ready_rails);

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended || !conn->connected || !conn->need_ready) {
		mutex_unlock(&conn->lock);
		return;
	}
	if (!ret) {
		conn->need_ready = false;
		if (conn->ready_tries >= TBT_READY_RETRIES)
			dev_info(&conn->svc->dev, "tbrdma: READY answered after %u tries\n",
				 conn->ready_tries + 1);
	} else {
		if (++conn->ready_tries == TBT_READY_RETRIES)
			dev_warn(&conn->svc->dev,
				 "tbrdma: READY not answered after %u tries (%d), still trying\n",
				 conn->ready_tries, ret);
		delay = 0;
		if (conn->ready_tries >= TBT_READY_RETRIES)
			delay = min(TBT_READY_DELAY_MIN_MS <<
				    min(conn->ready_tries - TBT_READY_RETRIES, 8U),
				    TBT_READY_DELAY_MAX_MS);
		queue_delayed_work(system_long_wq, &conn->ready_work, msecs_to_jiffies(delay));
	}
	mutex_unlock(&conn->lock);
}

static void tbt_up_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, up_work);
	unsigned int i, n;

	mutex_lock(&conn->lock);
	if (conn->stopping || conn->suspended) {
		mutex_unlock(&conn->lock);
		return;
	}
	/*
	 * Firmware CM and another service holds the XDomain's one tunnel:
	 * try again (tbt_ready_work's poll, the peer's next READY or HELLO)
	 * only once xd->ntunnels says it is free, not into the core's warning
	 * each time.
	 */
	if (!conn->connected && conn->hello_sent && conn->hello_rcvd &&
	    (!conn->tunnel_refused || tbr_tb_tunnel_free(conn))) {
		tbt_connect(conn);
		if (conn->connected && conn->need_ready) {
			conn->ready_tries = 0;
			mod_delayed_work(system_long_wq, &conn->ready_work, 0);
		}
	}
	/* both ends go on with the rails both have (READY's ready_rails) */
	n = tbr_nego_ready_rails(conn->nrails, conn->peer_rails);
	if (conn->connected && conn->peer_ready && n < conn->nrails &&
	    !conn->stopping && !conn->suspended) {
		if (!conn->trim_logged)
			dev_info(&conn->svc->dev,
				 "tbrdma: peer %016llx has %u rail(s) up, we have %u: going on with %u\n",
				 conn->peer_guid, conn->peer_rails, conn->nrails, n);
		conn->trim_logged = true;
		/* drops the locks while paths are disabled: the checks below again */
		mutex_lock(&tbr_ctl_mutex);
		tbr_tb_rails_trim(conn, n);
		mutex_unlock(&tbr_ctl_mutex);
	}
	if (conn->connected && conn->peer_ready && !conn->rails_up &&
	    !conn->stopping && !conn->suspended) {
		mutex_lock(&tbr_ctl_mutex);
		for (i = 0; i < conn->nrails; i++) {
			/* its GUID is the key holder's: never held (link.c) */
			conn->rails[i].rail->auth = conn->peer_proven;
			tbr_rail_up(conn->rails[i].rail);
		}
		mutex_unlock(&tbr_ctl_mutex);
		conn->rails_up = true;
	}
	mutex_unlock(&conn->lock);
}

static void tbt_down_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, down_work);

	mutex_lock(&conn->lock);
	if (conn->stopping) {
		/* remove_work or tbt_conn_stop() tears down */
		mutex_unlock(&conn->lock);
		return;
	}
	tbr_tb_conn_teardown(conn);
	if (conn->have_pending) {
		/* it will not say HELLO again: its HELLO was answered */
		conn->remote = conn->pending;
		conn->peer_hello_seq = conn->pending.seq;
		conn->hello_rcvd = true;
		conn->have_pending = false;
	}
	if (!conn->stopping && !conn->suspended)
		queue_delayed_work(system_long_wq, &conn->hello_work,
				   msecs_to_jiffies(100));
	mutex_unlock(&conn->lock);
}

/* ---- service driver --------------------------------------------------------- */

/* A negotiation instance: random, never 0 (0 is "not sent") */
static u16 tbt_new_instance(void)
{
	return (u16)(get_random_u32() % 0xffff) + 1;
}

static u32 tbt_caps(void)
{
	return TBR_NEGO_CAP_POLL | TBR_NEGO_CAP_MULTI | TBR_NEGO_CAP_SPLIT |
	       TBR_NEGO_CAP_ACK_RIDE | TBR_NEGO_CAP_NET_FRAG |
	       (tb_e2e ? TBR_NEGO_CAP_E2E : 0);
}

static struct tbr_dev *tbt_host_dev(void)
{
	struct tbr_dev *tdev, *found = NULL;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(tdev, &tbr_devices, rails.node)
		if (tdev->rails.host && !tdev->rails.dying)
			found = tdev;
	mutex_unlock(&tbr_ctl_mutex);
	return found;
}

static void tbt_remove_work(struct work_struct *work);

static int tbt_probe(struct tb_service *svc, const struct tb_service_id *id)
{
	struct tb_xdomain *xd = tb_service_parent(svc);
	unsigned int lanes, want, i, ring;
	struct tbt_conn *conn;
	bool fw_cm;
	int hop;

	if (!xd || !xd->remote_uuid || !xd->local_uuid)
		return -ENODEV;
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return -ENOMEM;
	conn->svc = svc;
	conn->xd = xd;
	conn->tdev = tbt_host_dev();
	if (!conn->tdev) {
		kfree(conn);
		return -ENODEV;
	}
	mutex_init(&conn->lock);
	spin_lock_init(&conn->ev_lock);
	INIT_WORK(&conn->event_work, tbt_event_work);
	INIT_DELAYED_WORK(&conn->hello_work, tbt_hello_work);
	INIT_WORK(&conn->up_work, tbt_up_work);
	INIT_DELAYED_WORK(&conn->ready_work, tbt_ready_work);
	INIT_WORK(&conn->down_work, tbt_down_work);
	INIT_WORK(&conn->remove_work, tbt_remove_work);
	INIT_WORK(&conn->rekey_work, tbt_rekey_work);

	/* firmware CM (ICM): one DMA tunnel per XDomain, so one rail */
	fw_cm = tbr_tb_fw_cm(xd);
	conn->fw_cm = fw_cm;
	lanes = tbr_tb_lanes(xd->link_width);
	want = tbr_nego_rails_for_link(lanes, fw_cm, tb_max_rails);
	for (i = 0; i < want; i++) {
		hop = tb_xdomain_alloc_out_hopid(xd, -1);
		if (hop < 0)
			break;
		conn->out_hop[i] = hop;
	}
	conn->nout = i;
	if (!conn->nout) {
		kfree(conn);
		return -EBUSY;
	}
	ring = clamp_val(roundup_pow_of_two(max(tb_ring_size, 1U)),
			 TBR_NEGO_RING_MIN, TBR_NEGO_RING_MAX);

	tbt_msg_init(conn, &conn->local, TBR_NEGO_HELLO);
	conn->local.caps = tbt_caps();
	if (!(svc->prtcstns & TBR_NEGO_CAP_E2E))
		conn->local.caps &= ~TBR_NEGO_CAP_E2E;
	if (fw_cm)
		conn->local.caps &= ~TBR_NEGO_CAP_MULTI;
	conn->local.rails = (u8)conn->nout;
	conn->local.nhops = (u8)conn->nout;
	for (i = 0; i < conn->nout; i++)
		conn->local.hopid[i] = (u16)conn->out_hop[i];
	conn->local.link_gbps = (u16)min_t(unsigned int, xd->link_speed,
					   TBR_NEGO_SPEED_MAX);
	conn->local.lanes = (u8)lanes;
	conn->local.tx_ring = (u16)ring;
	conn->local.rx_ring = (u16)ring;
	conn->local.frame_size = TBT_FRAME_MAX;
	conn->local.instance = tbt_new_instance();

	tb_service_set_drvdata(svc, conn);
	mutex_lock(&tbt_lock);
	list_add_tail(&conn->node, &tbt_conns);
	mutex_unlock(&tbt_lock);
	dev_info(&svc->dev,
		 "tbrdma: peer %pUb, %u Gb/s x%u lanes, %s CM: asking for %u rail(s)\n",
		 xd->remote_uuid, xd->link_speed, lanes, fw_cm ? "firmware" : "software",
		 conn->nout);
	queue_delayed_work(system_long_wq, &conn->hello_work, msecs_to_jiffies(100));
	return 0;
}

/*
 * Stop negotiating and take every rail down; @bye: tell the peer first, once
 * our TX is drained. @self: the conn's work this runs in (not waited for),
 * or NULL. Process context, no lock held; stopping or suspended set.
 */
static void tbt_conn_stop(struct tbt_conn *conn, bool bye, struct work_struct *self)
{
	struct tbr_nego_msg req, ans;
	bool connected;

	cancel_delayed_work_sync(&conn->hello_work);
	cancel_work_sync(&conn->event_work);
	if (self != &conn->up_work)
		cancel_work_sync(&conn->up_work);
	if (self != &conn->down_work)
		cancel_work_sync(&conn->down_work);
	if (self != &conn->rekey_work)
		cancel_work_sync(&conn->rekey_work);
	cancel_delayed_work_sync(&conn->hello_work);
	cancel_delayed_work_sync(&conn->ready_work);
	mutex_lock(&conn->lock);
	tbr_tb_conn_quiesce(conn);
	connected = conn->connected;
	tbt_msg_init(conn, &req, TBR_NEGO_BYE);
	req.seq = ++conn->seq;
	tbt_msg_session(conn, &req);
	mutex_unlock(&conn->lock);
	if (bye && connected && !READ_ONCE(conn->xd->is_unplugged))
		tbt_request(conn, &req, &ans);	/* best effort */
	mutex_lock(&conn->lock);
	tbr_tb_conn_teardown(conn);
	mutex_unlock(&conn->lock);
}

/*
 * The conn removed (tbt_remove()): stopped, its output HopIDs, the
 * references tbt_remove() took and its memory go. On tbt_wq, after any rail
 * work queued before; no lock held.
 */
static void tbt_remove_work(struct work_struct *work)
{
	struct tbt_conn *conn = container_of(work, struct tbt_conn, remove_work);
	unsigned int i;

	tbt_conn_stop(conn, true, work);
	for (i = 0; i < conn->nout; i++)
		tb_xdomain_release_out_hopid(conn->xd, conn->out_hop[i]);
	dev_dbg(&conn->svc->dev, "tbrdma: rails of a removed service gone\n");
	put_device(&conn->svc->dev);
	tb_xdomain_put(conn->xd);
	mutex_destroy(&conn->lock);
	kfree(conn);
	atomic_dec(&tbt_removing);
}

/*
 * Service removal: unbind, module unload, or the XDomain removed (unplug:
 * the software CM holds tb->lock here, see the top of this file). Waits for
 * none of the conn's works: remove_work stops and frees the conn.
 */
static void tbt_remove(struct tb_service *svc)
{
	struct tbt_conn *conn = tb_service_get_drvdata(svc);

	mutex_lock(&tbt_lock);
	list_del(&conn->node);
	mutex_unlock(&tbt_lock);
	mutex_lock(&conn->lock);
	conn->stopping = true;
	mutex_unlock(&conn->lock);
	get_device(&svc->dev);
	tb_xdomain_get(conn->xd);
	atomic_inc(&tbt_removing);
	queue_work(tbt_wq, &conn->remove_work);
}

static void tbt_shutdown(struct tb_service *svc)
{
	struct tbt_conn *conn = tb_service_get_drvdata(svc);

	mutex_lock(&conn->lock);
	conn->stopping = true;
	mutex_unlock(&conn->lock);
	tbt_conn_stop(conn, false, NULL);
}

static int __maybe_unused tbt_suspend(struct device *dev)
{
	struct tbt_conn *conn = tb_service_get_drvdata(tb_to_service(dev));

	mutex_lock(&conn->lock);
	conn->suspended = true;
	mutex_unlock(&conn->lock);
	tbt_conn_stop(conn, false, NULL);
	return 0;
}

static int __maybe_unused tbt_resume(struct device *dev)
{
	struct tbt_conn *conn = tb_service_get_drvdata(tb_to_service(dev));

	mutex_lock(&conn->lock);
	conn->retries = 0;
	conn->seq = 0;
	/*
	 * The peer sees a restart, not a retry or a replay. Set while the
	 * handler still answers BUSY (it copies conn->local without the lock).
	 */
	WRITE_ONCE(conn->local.instance, tbt_new_instance());
	WRITE_ONCE(conn->suspended, false);
	if (!conn->stopping)
		queue_delayed_work(system_long_wq, &conn->hello_work,
				   msecs_to_jiffies(100));
	mutex_unlock(&conn->lock);
	return 0;
}

static DEFINE_SIMPLE_DEV_PM_OPS(tbt_pm_ops, tbt_suspend, tbt_resume);

static const struct tb_service_id tbt_ids[] = {
	{ TB_SERVICE(TBT_KEY, TBT_PRTCID) },
	{ },
};
MODULE_DEVICE_TABLE(tbsvc, tbt_ids);

static struct tb_service_driver tbt_driver = {
	.driver = {
		.owner = THIS_MODULE,
		.name = "tbrdma",
		.pm = pm_sleep_ptr(&tbt_pm_ops),
	},
	.probe = tbt_probe,
	.remove = tbt_remove,
	.shutdown = tbt_shutdown,
	.id_table = tbt_ids,
};

/* ---- module ------------------------------------------------------------- */

/* /sys/module/tbrdma/parameters/tb_state: what a VM (no controller) can see */
static int tbt_state_get(char *buf, const struct kernel_param *kp)
{
	struct tbt_conn *c;
	unsigned int n = 0, rails = 0;

	mutex_lock(&tbt_lock);
	list_for_each_entry(c, &tbt_conns, node) {
		n++;
		rails += READ_ONCE(c->nrails);
	}
	mutex_unlock(&tbt_lock);
	return scnprintf(buf, PAGE_SIZE, "driver=%s dir=%s key=%s protocol=%u.%u.%u caps=%#x nego=%u.%u services=%u rails=%u nego_bad=%u nego_refused=%u nego_early=%u\n",
			  tbt_driver_registered ? "registered" : "none",
			  tbt_dir_registered ? "registered" : "none", TBT_KEY,
			  TBT_PRTCID, TBT_PRTCVERS, TBT_PRTCREVS, tbt_caps(),
			  TBR_NEGO_VER_MAJOR, TBR_NEGO_VER_MINOR, n, rails,
			  atomic_read(&tbt_nego_bad), atomic_read(&tbt_nego_refused),
			  atomic_read(&tbt_nego_early));
}

static const struct kernel_param_ops tbt_state_ops = {
	.get = tbt_state_get,
};
module_param_cb(tb_state, &tbt_state_ops, NULL, 0444);
MODULE_PARM_DESC(tb_state, "Thunderbolt backend state (read only)");

/* Module load, once tbrdma0 and the genl family exist (tbr_backend start). */
static int tbt_start(void)
{
	int ret;

	tbt_wq = alloc_ordered_workqueue("tbrdma_tb", 0);
	if (!tbt_wq)
		return -ENOMEM;
	tbt_dir = tb_property_create_dir(&tbt_dir_uuid);
	if (!tbt_dir) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = tb_property_add_immediate(tbt_dir, "prtcid", TBT_PRTCID);
	if (!ret)
		ret = tb_property_add_immediate(tbt_dir, "prtcvers", TBT_PRTCVERS);
	if (!ret)
		ret = tb_property_add_immediate(tbt_dir, "prtcrevs", TBT_PRTCREVS);
	if (!ret)
		ret = tb_property_add_immediate(tbt_dir, "prtcstns", tbt_caps());
	if (ret)
		goto err_dir;
	ret = tb_register_protocol_handler(&tbt_handler);
	if (ret)
		goto err_dir;
	tbt_handler_registered = true;
	ret = tb_register_service_driver(&tbt_driver);
	if (ret)
		goto err_handler;
	tbt_driver_registered = true;
	/* last: peers see the service only once we can serve it */
	ret = tb_register_property_dir(TBT_KEY, tbt_dir);
	if (ret)
		goto err_driver;
	tbt_dir_registered = true;
	tbt_key_watch(true);
	pr_info("tbrdma: tb: service driver registered, XDomain property directory \"%s\" (protocol %u, caps %#x)\n",
		TBT_KEY, TBT_PRTCID, tbt_caps());
	return 0;

err_driver:
	tb_unregister_service_driver(&tbt_driver);
	tbt_driver_registered = false;
err_handler:
	tb_unregister_protocol_handler(&tbt_handler);
	tbt_handler_registered = false;
err_dir:
	tb_property_free_dir(tbt_dir);
	tbt_dir = NULL;
err_wq:
	destroy_workqueue(tbt_wq);
	tbt_wq = NULL;
	pr_warn("tbrdma: tb: Thunderbolt backend not available: %d\n", ret);
	return ret;
}

/* Module unload, before any device goes: every Thunderbolt rail down. */
static void tbt_stop(void)
{
	if (tbt_dir_registered)
		tb_unregister_property_dir(TBT_KEY, tbt_dir);
	tbt_dir_registered = false;
	tbt_key_watch(false);	/* before any conn goes */
	if (tbt_driver_registered)
		tb_unregister_service_driver(&tbt_driver);	/* removes every conn */
	tbt_driver_registered = false;
	if (tbt_wq)
		destroy_workqueue(tbt_wq);	/* every remove_work */
	tbt_wq = NULL;
	if (tbt_handler_registered)
		tb_unregister_protocol_handler(&tbt_handler);
	tbt_handler_registered = false;
	if (tbt_dir)
		tb_property_free_dir(tbt_dir);
	tbt_dir = NULL;
}

const struct tbr_backend tbr_tb_backend = {
	.kind = "tb",
	.rail_ops = &tbt_rail_ops,
	.start = tbt_start,
	.stop = tbt_stop,
	.key_set = tbt_key_set,
	.busy_poll = tbr_tb_busy_poll,
	.busy_poll_auto_us = TBT_NHI_THROTTLE_US,
};
