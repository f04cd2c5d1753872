#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""eth-peer.py: a raw-socket (AF_PACKET) stand-in for tbrdma peers on an eth rail segment, speaking
the wire format of docs/eth.md (ethertype 0x88B5, 24-byte header, HELLO / FRAME). It learns the
target binding (GUID, MAC, session) from its broadcast hellos, then:

  churn IFNAME N       N peers one after another, each with a new GUID (a peer that reloads its
                       module): hello until the target answers it with a unicast hello, then
                       silence; prints "accepted GUID" or "ignored GUID" (no answer in --wait s)
  flood IFNAME N       N peers at once for --time s; prints "accepted GUID" / "ignored GUID"
  spoof IFNAME GUID    claim GUID (a real peer's): hellos (broadcast, and unicast HEARS_YOU with
                       the target's session) and DATA/MGMT/NET frames to the target, for --time s;
                       prints "spoof sent=N hellos=N frames_for_me=N hears_me=N for_me=N": for_me
                       counts tbrdma frames addressed to this interface's MAC (a link that moved
                       here would send some), frames_for_me those of them that are not hellos,
                       hears_me the unicast hellos saying HEARS_YOU to the claimed GUID (a binding
                       that took it as a peer)

Options: --period MS (hello period, default 100), --wait S, --time S, --target GUID (default:
the first GUID heard)."""
import argparse
import os
import random
import select
import socket
import struct
import sys
import time

ETH_P = 0x88B5
HELLO, FRAME = 1, 2
HEARS_YOU = 1
PDF_DATA, PDF_MGMT, PDF_NET = 1, 2, 3
BCAST = b"\xff" * 6


class Seg:
    def __init__(self, ifname, target):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P))
        self.s.bind((ifname, ETH_P))
        self.mac = self.s.getsockname()[4]
        self.want = target
        self.tguid = self.tmac = None
        self.tsession = 0
        self.answered = set()   # our GUIDs the target sent a unicast hello to
        self.for_me = 0
        self.frames_for_me = 0  # of for_me: not hellos
        self.hears_me = 0       # unicast hellos to us with HEARS_YOU

    def send(self, dst_mac, typ, src, dst, payload, pdf=0):
        hdr = struct.pack("!BBBBHHQQ", 1, typ, pdf, 0, len(payload), 0, src, dst)
        self.s.send(dst_mac + self.mac + struct.pack("!H", ETH_P) + hdr + payload)

    def hello(self, src, session, period, dst_mac=BCAST, dst=0, peer_session=0, flags=0):
        self.send(dst_mac, HELLO, src, dst,
                  struct.pack("!IIHHB3x", session, peer_session, 4096, period, flags))

    def poll(self, timeout):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return
            buf = self.s.recv(65536)
            if len(buf) < 14 + 24:
                continue
            dmac, smac = buf[0:6], buf[6:12]
            ver, typ, _, _, ln, _, src, dst = struct.unpack_from("!BBBBHHQQ", buf, 14)
            if smac == self.mac or ver != 1:
                continue
            if dmac == self.mac:
                self.for_me += 1
                self.frames_for_me += typ != HELLO
            if typ != HELLO or len(buf) < 14 + 24 + 16:
                continue
            if dmac == self.mac and dst and buf[14 + 24 + 12] & HEARS_YOU:
                self.hears_me += 1
            if self.want and src != self.want:
                continue
            session = struct.unpack_from("!I", buf, 38)[0]
            if self.tguid is None:
                self.tguid = src
            if src == self.tguid:
                self.tmac, self.tsession = smac, session
                if dst:
                    self.answered.add(dst)


def learn(seg, period, wait):
    end = time.monotonic() + wait
    while seg.tguid is None:
        if time.monotonic() > end:
            sys.exit("no hello from the target")
        seg.poll(period / 1000)


def talk(seg, guids, sessions, period):
    """one period: hellos for every GUID in guids"""
    for g in guids:
        seg.hello(g, sessions[g], period)
        if seg.tmac:
            seg.hello(g, sessions[g], period, seg.tmac, seg.tguid, seg.tsession, HEARS_YOU)
    seg.poll(period / 1000)


def new_guid():
    return (0x02 << 56) | random.getrandbits(56)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["churn", "flood", "spoof"])
    ap.add_argument("ifname")
    ap.add_argument("arg")
    ap.add_argument("--period", type=int, default=100)
    ap.add_argument("--wait", type=float, default=10)
    ap.add_argument("--time", type=float, default=5)
    ap.add_argument("--target", type=lambda x: int(x, 16))
    a = ap.parse_args()
    seg = Seg(a.ifname, a.target)
    learn(seg, a.period, a.wait)
    sessions = {}
    rc = 0
    if a.mode in ("churn", "flood"):
        guids = [new_guid() for _ in range(int(a.arg))]
        for g in guids:
            sessions[g] = random.getrandbits(31) + 1
        batches = [[g] for g in guids] if a.mode == "churn" else [guids]
        for batch in batches:
            end = time.monotonic() + (a.wait if a.mode == "churn" else a.time)
            while time.monotonic() < end and not (a.mode == "churn" and batch[0] in seg.answered):
                talk(seg, batch, sessions, a.period)
            for g in batch:
                ok = g in seg.answered
                rc |= not ok
                print(f"{'accepted' if ok else 'ignored'} {g:016x}", flush=True)
    else:
        victim = int(a.arg, 16)
        sessions[victim] = random.getrandbits(31) + 1
        sent = hellos = 0
        end = time.monotonic() + a.time
        while time.monotonic() < end:
            talk(seg, [victim], sessions, a.period)
            hellos += 2
            for pdf in (PDF_DATA, PDF_MGMT, PDF_NET):
                seg.send(seg.tmac, FRAME, victim, seg.tguid, os.urandom(64), pdf << 4 | pdf)
                sent += 1
        seg.poll(a.period / 1000)
        print(f"spoof sent={sent} hellos={hellos} frames_for_me={seg.frames_for_me} "
              f"hears_me={seg.hears_me} for_me={seg.for_me}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
