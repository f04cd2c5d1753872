// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_netx.c - libFuzzer target: tbrN's fragment frames, the receive side
 * (kernel/core/tbr_netx.c): tbr_netx_parse() on a hostile peer's frames and
 * the window's reassembly, ordering and give-up rule on what it accepts,
 * with rails coming, going, falling silent and the clock moving.
 *
 * Input: records, each a kind byte, a clock step byte (ms; x8 with the kind's top bit), then:
 *   kind % 6 == 0  raw frame: rail byte, 2-byte length, that many bytes (the
 *                  whole fragment frame, header included)
 *   kind % 6 == 1  built fragment: rail, seq step (signed byte), frag,
 *                  2-byte length, flags: a valid header around pattern bytes
 *   kind % 6 == 2  rail sample: 2-byte up mask, then a byte of new frames per
 *                  up rail (low 4 bits)
 *   kind % 6 == 3  rail up, kind % 6 == 4 rail down: rail byte
 *   kind % 6 == 5  tick
 * Properties: every packet handed up is whole (each byte written once, every
 * copy within it) and later than the one before (until a resync); every
 * packet is handed up, dropped or still in the window, never twice; the
 * give-ups' reasons add up to the packets given up; tick and when say
 * "nothing waits" exactly when nothing does, and never name the past.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tbr_netx.h"

#define FSZ	1024

struct pkt {
	u32 len;
	u32 written;
	u8 data[];
};

static u64 cnt[TBR_NETX_CNT_MAX];
static long live;
static bool have_last;
static u32 last;

static void *op_alloc(void *ctx, u32 len)
{
	struct pkt *p;

	if (len > TBR_NETX_PKT_MAX)
		abort();
	p = malloc(sizeof(*p) + len);
	if (!p)
		return NULL;
	p->len = len;
	p->written = 0;
	live++;
	return p;
}

static void op_copy(void *ctx, void *pkt, u32 off, const u8 *src, u32 n)
{
	struct pkt *p = pkt;

	if (off > p->len || n > p->len - off)
		abort();
	memcpy(p->data + off, src, n);
	p->written += n;
}

static int op_finish(void *ctx, void *pkt, const struct tbr_netx_frag *f)
{
	struct pkt *p = pkt;

	if (p->written != p->len || f->len != p->len)
		abort();
	return f->flags & 0x40 ? -EINVAL : 0;
}

static struct tbr_netx_win win;
static bool have_up;
static u32 last_up;
static u64 resync_up;

/* the core hands up the packet at its window's next, before moving on */
static void op_deliver(void *ctx, void *pkt)
{
	struct pkt *p = pkt;

	if (p->written != p->len)
		abort();
	if (cnt[TBR_NETX_RX_RESYNC] != resync_up) {
		resync_up = cnt[TBR_NETX_RX_RESYNC];
		have_up = false;
	}
	if (have_up && (s32)(win.next - last_up) <= 0)
		abort();	/* not later than the one before */
	have_up = true;
	last_up = win.next;
	live--;
	free(p);
}

static void op_drop(void *ctx, void *pkt)
{
	live--;
	free(pkt);
}

static void op_count(void *ctx, enum tbr_netx_cnt c, u32 n)
{
	if ((unsigned int)c >= TBR_NETX_CNT_MAX)
		abort();
	cnt[c] += n;
}

static const struct tbr_netx_ops ops = {
	.alloc = op_alloc, .copy = op_copy, .finish = op_finish,
	.deliver = op_deliver, .drop = op_drop, .count = op_count,
};

/* the packets handed up come in window order: the window's next moves past them */
static void check(u64 now, u64 resyncs_before)
{
	u64 given = cnt[TBR_NETX_RX_GIVEN_UP] + cnt[TBR_NETX_RX_MISSING];
	u64 why = cnt[TBR_NETX_RX_GIVEUP_RAILS] + cnt[TBR_NETX_RX_GIVEUP_HOLD] +
		  cnt[TBR_NETX_RX_GIVEUP_CUT] + cnt[TBR_NETX_RX_GIVEUP_WINDOW];
	u64 when = tbr_netx_win_when(&win, now);
	u32 s, held = 0;

	if (given != why)
		abort();
	if ((when == 0) != (win.next == win.hi) || (when && when <= now))
		abort();
	if ((s32)(win.hi - win.next) < 0 || (s32)(win.hi - win.next) > TBR_NETX_WIN)
		abort();
	if (cnt[TBR_NETX_RX_RESYNC] != resyncs_before)
		have_last = false;
	if (win.synced) {
		if (have_last && (s32)(win.next - last) < 0)
			abort();	/* the window went back */
		last = win.next;
		have_last = true;
	}
	for (s = win.next; s != win.hi; s++) {
		const struct tbr_netx_slot *sl = &win.slot[s % TBR_NETX_WIN];

		if (sl->nfrags && (sl->seq != s || sl->got > sl->nfrags))
			abort();
		if (sl->pkt)
			held++;
	}
	if (held != live)
		abort();	/* a packet outside the window not handed back */
}

static u64 frames[TBR_NETX_RAILS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 buf[TBR_NETX_HDR_SIZE + 4096];
	const uint8_t *p = data, *end = data + size;
	u64 now = 1000, r0, when;
	u32 seq = 0, i, n, len, nfr;
	struct tbr_netx_frag f;
	u8 kind, rail;

	memset(cnt, 0, sizeof(cnt));
	memset(frames, 0, sizeof(frames));
	live = 0;
	have_last = false;
	have_up = false;
	resync_up = 0;
	tbr_netx_win_init(&win);
	while (end - p >= 2) {
		kind = p[0] % 6;
		now += p[1] * (p[0] & 0x80 ? 8 : 1);
		p += 2;
		r0 = cnt[TBR_NETX_RX_RESYNC];
		switch (kind) {
		case 0:
			if (end - p < 3)
				goto out;
			rail = p[0];
			n = p[1] | (u32)p[2] << 8;
			p += 3;
			if (n > (u32)(end - p))
				n = end - p;
			if (n > sizeof(buf))
				n = sizeof(buf);
			memcpy(buf, p, n);
			p += n;
			if (!tbr_netx_parse(buf, n, &f)) {
				if (f.off + f.n > f.len || f.n + TBR_NETX_HDR_SIZE != n)
					abort();
				tbr_netx_win_rx(&win, &f, buf + TBR_NETX_HDR_SIZE, rail % 20, now,
						&ops, NULL);
				if (rail % 20 < TBR_NETX_RAILS)
					frames[rail % 20]++;
			}
			break;
		case 1:
			if (end - p < 6)
				goto out;
			rail = p[0];
			seq += (u32)(int32_t)(int8_t)p[1];
			len = (p[3] | (u32)p[4] << 8) % (TBR_NETX_FRAGS_MAX * FSZ);
			if (len < TBR_NETX_ETH_HLEN)
				len = TBR_NETX_ETH_HLEN;
			nfr = (len + FSZ - 1) / FSZ;
			memset(buf, 0, TBR_NETX_HDR_SIZE);
			buf[0] = TBR_NETX_VER;
			buf[1] = p[5];
			buf[2] = p[2] % nfr;
			buf[3] = nfr;
			tbr_put_be32(seq, buf + 4);
			tbr_put_be32(len, buf + 8);
			tbr_put_be16(FSZ, buf + 12);
			n = buf[2] + 1u < nfr ? FSZ : len - buf[2] * FSZ;
			for (i = 0; i < n; i++)
				buf[TBR_NETX_HDR_SIZE + i] = (u8)(seq + i);
			p += 6;
			if (tbr_netx_parse(buf, TBR_NETX_HDR_SIZE + n, &f))
				abort();	/* a header we built right */
			tbr_netx_win_rx(&win, &f, buf + TBR_NETX_HDR_SIZE, rail % 20, now, &ops,
					NULL);
			if (rail % 20 < TBR_NETX_RAILS)
				frames[rail % 20]++;
			break;
		case 2:
			if (end - p < 2)
				goto out;
			n = p[0] | (u32)p[1] << 8;
			p += 2;
			for (i = 0; i < TBR_NETX_RAILS && p < end; i++) {
				if (n & (1U << i))
					frames[i] += *p++ & 0xf;
			}
			tbr_netx_win_sample(&win, n, frames, now);
			break;
		case 3:
		case 4:
			if (end - p < 1)
				goto out;
			rail = *p++ % 20;
			if (kind == 3)
				tbr_netx_win_rail_up(&win, rail);
			else
				tbr_netx_win_rail_down(&win, rail, now);
			break;
		case 5:
			when = tbr_netx_win_tick(&win, now, &ops, NULL);
			if ((when == 0) != (win.next == win.hi) || (when && when <= now))
				abort();
			break;
		}
		check(now, r0);
	}
out:
	tbr_netx_win_reset(&win, &ops, NULL);
	if (live)
		abort();
	return 0;
}
