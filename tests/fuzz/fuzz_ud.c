// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_ud.c - libFuzzer target: the UD receive path of the kernel's QPs
 * (what xport.c's receive glue feeds the core): frames for a UD QP created
 * with cfg.ud_addr (address block -> GRH, Q_Key against the QP's current
 * one, tbr_tqp_set_qkey) and tbr_ud_grh() on its own.
 *
 * Checks besides the sanitizers, after every frame:
 * - a receive completes only for a UD datagram to the QP whose Q_Key is
 *   the current one and whose payload holds the whole address block;
 *   its byte_len is TBR_GRH_LEN + the data after the block;
 * - a successful one carries the GRH tbr_ud_grh() builds from that frame's
 *   own block (never an earlier datagram's) and the data behind it;
 * - an IPv4 GRH has a valid header checksum and the lengths of its data;
 *   an IPv6 one version 6 and the same UDP length.
 *
 * Input: records, kind = byte % 4:
 *   0: raw      len:u16 bytes[len]            (any bytes as a frame)
 *   1: datagram op:u8 qsel:u8 [qkey:u32] paylen:u16 bytes
 *               (a valid UD header: qsel 0 the current Q_Key, 1 from the
 *               input; payload from the input, zero-padded)
 *   2: qkey     qkey:u32                      (modify_qp: tbr_tqp_set_qkey)
 *   3: recv     len:u16                       (post a receive buffer)
 * At most MAX_STEPS records per input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_input.h"
#include "sim.h"

#define MAX_STEPS	64
#define NBUF		16
#define BUF		(TBR_GRH_LEN + 2048)

static uint8_t rbuf[NBUF][BUF];
static uint8_t fbuf[TBR_FRAME_MAX];

static uint32_t get16(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | get16(p + 2) << 16;
}

/* the GRH of @len data bytes must be what tbr_ud_grh says, and sane */
static void check_grh(const uint8_t *uda, uint32_t len, bool imm,
		      const uint8_t *grh, uint32_t net_type)
{
	uint32_t udp = 8 + 12 + 8 + (imm ? 4 : 0) + len + 4, sum = 0, i;
	uint8_t want[TBR_GRH_LEN];

	if (tbr_ud_grh(uda, len, imm, want) != net_type ||
	    memcmp(want, grh, TBR_GRH_LEN))
		abort();
	if (net_type == TBR_NET_IPV4) {
		for (i = 20; i < 40; i += 2)
			sum += (uint32_t)grh[i] << 8 | grh[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		if (sum != 0xffff || grh[20] != 0x45 ||
		    ((uint32_t)grh[22] << 8 | grh[23]) != 20 + udp)
			abort();
	} else if (net_type != TBR_NET_IPV6 || grh[0] >> 4 != 6 ||
		   ((uint32_t)grh[4] << 8 | grh[5]) != udp) {
		abort();
	}
}

/* feed @len bytes of fbuf to the UD QP and check what completed */
static void inject(struct sim *s, uint32_t len, uint32_t qkey)
{
	struct sim_ep *b = &s->ep[1];
	const struct tbr_cqe *c;
	uint32_t ncq = b->ncq, data;
	struct tbr_hdr h;
	const uint8_t *r;

	sim_inject(s, 1, fbuf, len);
	if (b->ncq == ncq)
		return;
	if (b->ncq != ncq + 1)
		abort();
	c = &b->cq[ncq];
	/* only a whole datagram to this QP with the current Q_Key */
	if (tbr_frame_parse(fbuf, len, &h) || h.dqpn != 0x22 ||
	    (h.opcode != TBR_OP_UD_SEND && h.opcode != TBR_OP_UD_SEND_IMM) ||
	    h.qkey != qkey || h.paylen < TBR_UD_ADDR_LEN || !c->recv)
		abort();
	data = h.paylen - TBR_UD_ADDR_LEN;
	if (c->byte_len != TBR_GRH_LEN + data || c->qkey != qkey ||
	    c->wr_id >= NBUF)
		abort();
	if (c->status != TBR_WC_SUCCESS)
		return;
	r = rbuf[c->wr_id];
	check_grh(h.payload, data, h.opcode == TBR_OP_UD_SEND_IMM, r,
		  c->net_type);
	if (memcmp(r + TBR_GRH_LEN, h.payload + TBR_UD_ADDR_LEN, data))
		abort();
}

static struct sim *sim;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct tbr_tqp_conn conn;
	uint32_t qkey = 0x1234, nbuf = 0;
	int steps = 0;
	uint8_t kind, b[6];

	tbr_tqp_conn_defaults(&conn);
	if (!sim) {
		struct tbr_tqp_cfg cfg;

		sim_default_cfg(&cfg, TBR_QPT_UD);
		cfg.sq_depth = 16;
		cfg.ud_addr = true;
		sim = sim_new(TBR_QPT_UD, &cfg, &conn, 1);
		if (!sim)
			abort();
	}
	if (sim_reset(sim, &conn, 1))
		abort();
	tbr_tqp_set_qkey(sim->ep[1].qp, qkey);
	while (steps++ < MAX_STEPS && !take(&in, &kind, 1)) {
		struct tbr_hdr h;
		uint32_t len, hl;

		switch (kind % 4) {
		case 0:
			if (take(&in, b, 2))
				return 0;
			len = get16(b) % (TBR_FRAME_MAX + 1);
			if (in.n < len)
				len = in.n;
			memcpy(fbuf, in.p, len);
			in.p += len;
			in.n -= len;
			inject(sim, len, qkey);
			break;
		case 1:
			if (take(&in, b, 2))
				return 0;
			memset(&h, 0, sizeof(h));
			h.version = TBR_WIRE_VERSION;
			h.opcode = b[0] & 1 ? TBR_OP_UD_SEND_IMM : TBR_OP_UD_SEND;
			h.dqpn = 0x22;
			h.conn_id = b[0] >> 1;
			h.imm = b[0];
			h.src_qpn = 0x11;
			h.qkey = qkey;
			if (b[1] & 1) {
				if (take(&in, b + 2, 4))
					return 0;
				h.qkey = get32(b + 2);
			}
			if (take(&in, b, 2))
				return 0;
			len = get16(b) % (TBR_MTU_MAX + 1);
			h.paylen = len;
			hl = tbr_hdr_build(fbuf, &h);
			memset(fbuf + hl, 0, len);
			memcpy(fbuf + hl, in.p, in.n < len ? in.n : len);
			in.p += in.n < len ? in.n : len;
			in.n -= in.n < len ? in.n : len;
			inject(sim, hl + len, qkey);
			break;
		case 2:
			if (take(&in, b, 4))
				return 0;
			qkey = get32(b);
			tbr_tqp_set_qkey(sim->ep[1].qp, qkey);
			break;
		case 3:
			if (take(&in, b, 2))
				return 0;
			len = get16(b) % (BUF + 1);
			if (sim->ep[1].rq_tail - sim->ep[1].rq_head >= SIM_RQ)
				break;	/* the sim's RQ ring is full */
			sim_post_recv(&sim->ep[1], nbuf % NBUF, rbuf[nbuf % NBUF],
				      len);
			nbuf++;
			break;
		}
	}
	return 0;
}
