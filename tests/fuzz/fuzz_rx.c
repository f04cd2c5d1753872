// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_rx.c - libFuzzer target: the receive paths of the transport core
 * (frame parser, RC/UC/UD responder, reassembly, ACK/SACK/NAK handling on
 * the requester, READ/ATOMIC responses, retransmission and RNR timers).
 *
 * Lean by design (thousands of execs/s under ASan+UBSan):
 * - one QP pair per configuration (type x window x mtu), created on first
 *   use and reset between inputs (sim_reset: flush + reconnect);
 * - every input's work is bounded: at most MAX_STEPS records, MAX_POSTS
 *   work requests of at most MAX_POST bytes, MAX_FRAMES frames sent by the
 *   two QPs, and MAX_VTIME of virtual time in all;
 * - only the memory the input can reach is cleared (MEM bytes per side).
 *
 * Input: byte 0 = mode
 *   bits 0-1 QP type (RC, UC, UD; 3 = RC), bit 2 window 64/256,
 *   bit 3 mtu 256/1024, bit 4 rnr_retry 7/1,
 *   bits 5-6 wire between the QPs: 0 loses everything (only injected frames
 *   arrive), 1 clean, 2 lossy (drop, duplicate, jitter: SACK and
 *   retransmission), 3 reordering only (jitter, two rails); bit 7 ACKs
 *   ride on data frames (conn.ack_piggyback: the QPs send TBR_F_ACK frames
 *   and hold ACKs in ping-pongs; frames carrying one are taken either way)
 * then records, kind = byte % 5:
 *   0: raw      dst:u8 len:u16 bytes[len]
 *   1: header   dst:u8 then FIELDS bytes of fields, paylen:u16 (a valid
 *               header built from fuzzed fields, near the expected PSNs,
 *               so sequence checks are passed often; payload from input)
 *   2: time     ns:u32        (run the wire and timers, < 1 ms)
 *   3: recv     dst:u8 len:u16
 *   4: post     op:u8 len:u16 off:u16 (requester side, QP 0)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_input.h"
#include "sim.h"

#define EPSN		0xfffff0u
#define FIELDS		44
#define MEM		16384u
#define MAX_STEPS	64
#define MAX_POSTS	6
#define MAX_POST	2048u
#define MAX_FRAMES	256u
#define MAX_VTIME	2000000ull	/* ns */
#define SLICE		50000ull	/* ns between frame budget checks */

static uint8_t mem[2][MEM];
static uint8_t rbuf[2][16][4096];
static uint8_t fbuf[TBR_FRAME_MAX + 16];

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static uint64_t frames(const struct sim *s)
{
	return s->ep[0].tx_frames + s->ep[1].tx_frames;
}

/* Run the wire and the timers until @t, in slices, within the budgets. */
static void run_until(struct sim *s, uint64_t t, uint64_t cap)
{
	if (t > cap)
		t = cap;
	while (s->now < t && frames(s) < MAX_FRAMES) {
		uint64_t next = s->now + SLICE;

		sim_run_until(s, next < t ? next : t);
	}
}

static void post(struct sim *s, uint8_t op, uint16_t len, uint16_t off)
{
	struct tbr_sge sge;
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = op % (TBR_WR_FETCH_ADD + 1);
	wr.flags = TBR_WR_SIGNALED | ((op >> 4) & (TBR_WR_SOLICITED |
						  TBR_WR_FENCE));
	len %= MAX_POST + 1;
	off %= MEM - MAX_POST;
	if (wr.opcode == TBR_WR_CMP_SWAP || wr.opcode == TBR_WR_FETCH_ADD) {
		len = 8;
		off &= ~7u;
	}
	sge.addr = (uint64_t)(uintptr_t)(mem[0] + off);
	sge.length = len;
	sge.lkey = SIM_LKEY;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_addr = (uint64_t)(uintptr_t)(mem[1] + off);
	wr.rkey = 0x66;
	wr.compare_add = 1;
	wr.remote_qpn = 0x22;
	wr.remote_qkey = 0x1234;
	sim_post(&s->ep[0], &wr);
}

/* A valid header from fuzzed fields; returns the frame length in fbuf. */
static uint32_t build(struct in *in, uint8_t dst, const uint8_t *f,
		      uint16_t len, uint32_t mtu)
{
	struct tbr_hdr h;
	uint32_t hl, i, n;

	memset(&h, 0, sizeof(h));
	h.opcode = (uint8_t)(1 + f[0] % TBR_OP_MAX);
	h.flags = f[1] & TBR_F_ALL;
	h.conn_id = f[2] & 0x80 ? f[3] : 7;
	h.dqpn = (dst & 1) ? 0x22 : 0x11;
	h.psn = (EPSN + (uint32_t)(int8_t)f[4] +
		 ((f[2] & 0x40) ? get32(f + 5) : 0)) & TBR_PSN_MASK;
	h.msn = f[9] & 0x80 ? get32(f + 9) : f[9];
	h.offset = f[13] & 0x80 ? get32(f + 13) : (uint32_t)f[13] * mtu;
	h.msg_len = get32(f + 17);
	if (!(f[2] & 0x20))
		h.msg_len %= MEM;
	h.req_len = f[21] & 0x80 ? get32(f + 21) : (uint32_t)f[21] * 64;
	h.rmsn = f[25];
	h.imm = get32(f + 26);
	h.rkey = f[30] & 1 ? 0x67 : 0x66;
	h.va = (uint64_t)(uintptr_t)mem[dst & 1] +
	       (f[30] & 2 ? get32(f + 31) : f[31] * 8u);
	h.swap_add = get64(f + 35);
	h.compare = f[43];
	h.qkey = f[43] & 1 ? 0x1234 : f[43];
	h.src_qpn = f[42];
	h.syndrome = f[42] % (TBR_SYN_MAX + 1);
	h.nwords = f[41] % 5;
	h.epsn = (EPSN + (uint32_t)(int8_t)f[40]) & TBR_PSN_MASK;
	h.aux = f[39];
	h.orig = f[38];
	if (h.opcode == TBR_OP_ACK)
		len = 8 * h.nwords;
	len %= TBR_FRAME_MAX - TBR_HDR_MAX + 1;
	h.paylen = len;
	hl = tbr_hdr_build(fbuf, &h);
	for (i = 0; i < len; i += n) {	/* the rest of the input, repeated */
		n = in->n ? (uint32_t)in->n : 1;
		if (n > len - i)
			n = len - i;
		memcpy(fbuf + hl + i, in->n ? in->p : (const uint8_t *)"", n);
	}
	return hl + len;
}

/* One reusable QP pair per (type, window, mtu). */
static struct sim *sims[3][2][2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct tbr_tqp_cfg cfg;
	struct tbr_tqp_conn conn;
	enum tbr_tqp_type type;
	struct sim **slot;
	struct sim *s;
	uint8_t mode;
	int i, steps = 0, posts = 0;

	if (take(&in, &mode, 1))
		return 0;
	type = (enum tbr_tqp_type)((mode & 3) % 3);
	sim_default_cfg(&cfg, type);
	cfg.win = (mode & 0x04) ? 64 : 256;
	cfg.mtu = (mode & 0x08) ? 256 : 1024;
	cfg.sq_depth = 16;
	tbr_tqp_conn_defaults(&conn);
	conn.timeout_ns = 100000;
	conn.retry_cnt = 2;
	conn.rnr_retry = mode & 0x10 ? 7 : 1;
	conn.uc_reorder_ns = 20000;
	conn.min_rnr_timer_ns = 100000;
	conn.sq_psn = EPSN;
	conn.rq_psn = EPSN;
	conn.ack_piggyback = !!(mode & 0x80);
	slot = &sims[type][!!(mode & 0x04)][!!(mode & 0x08)];
	if (!*slot) {
		*slot = sim_new(type, &cfg, &conn, mode);
		if (!*slot)
			abort();
	}
	s = *slot;
	if (sim_reset(s, &conn, mode))
		abort();
	switch ((mode >> 5) & 3) {
	case 0:
		s->f.drop_pct = 100;
		break;
	case 1:
		break;
	case 2:
		s->f.drop_pct = 10;
		s->f.dup_pct = 5;
		s->f.jitter_ns = 5000;
		break;
	case 3:
		s->f.jitter_ns = 8000;
		s->f.rails = 2;
		break;
	}
	memset(mem, 0, sizeof(mem));
	for (i = 0; i < 2; i++) {
		sim_add_mr(&s->ep[i], 0x66, mem[i], MEM,
			   SIM_ACC_WRITE | SIM_ACC_READ | SIM_ACC_ATOMIC);
		sim_add_mr(&s->ep[i], 0x67, mem[i], 4096, SIM_ACC_READ);
		sim_post_recv(&s->ep[i], 1, rbuf[i][0], 4096);
		sim_post_recv(&s->ep[i], 2, rbuf[i][1], 100);
	}

	while (in.n && steps++ < MAX_STEPS && frames(s) < MAX_FRAMES &&
	       s->now < MAX_VTIME) {
		uint8_t kind, dst, f[FIELDS];
		uint16_t len, off;
		uint32_t ns;

		if (take(&in, &kind, 1))
			break;
		switch (kind % 5) {
		case 0:
			if (take(&in, &dst, 1) || take(&in, &len, 2))
				goto out;
			len %= TBR_FRAME_MAX + 8;
			if (len > in.n)
				len = (uint16_t)in.n;
			memcpy(fbuf, in.p, len);
			in.p += len;
			in.n -= len;
			sim_inject(s, dst & 1, fbuf, len);
			break;
		case 1:
			if (take(&in, &dst, 1) || take(&in, f, sizeof(f)) ||
			    take(&in, &len, 2))
				goto out;
			sim_inject(s, dst & 1, fbuf,
				   build(&in, dst, f, len, cfg.mtu));
			break;
		case 2:
			if (take(&in, &ns, 4))
				goto out;
			run_until(s, s->now + ns % 1000000, MAX_VTIME);
			break;
		case 3:
			if (take(&in, &dst, 1) || take(&in, &len, 2))
				goto out;
			sim_post_recv(&s->ep[dst & 1], 3,
				      rbuf[dst & 1][2 + len % 14], len % 4096);
			break;
		case 4:
			if (take(&in, &dst, 1) || take(&in, &len, 2) ||
			    take(&in, &off, 2))
				goto out;
			if (posts++ < MAX_POSTS)
				post(s, dst, len, off);
			break;
		}
	}
out:
	/* long enough for RTO (100 us) x retry_cnt 2 to run out */
	run_until(s, s->now + 400000, MAX_VTIME + 400000);
	return 0;
}
