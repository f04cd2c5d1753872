#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the seed corpora of tests/fuzz (deterministic; run by the Makefile).

fuzz_wire: one valid frame per opcode (see docs/protocol.md for layouts).
fuzz_rx:   scripts in fuzz_rx.c's record format exercising each path.
"""
import os
import struct
import sys

EXT = {1: 20, 2: 20, 3: 20, 4: 24, 5: 32, 6: 28, 7: 8, 8: 32, 9: 32,
       10: 12, 11: 12, 12: 12, 13: 12}


def frame(op, payload=b"", psn=0xfffff0, qpn=0x22, ext=None):
    base = struct.pack(">BBBBHHII", 1, op, 0, 0, 7, len(payload), qpn, psn)
    ext = ext if ext is not None else bytes(EXT[op])
    return base + ext + payload


def hdr_rec(dst, fields, paylen=0):
    f = bytearray(44)
    for k, v in fields.items():
        f[k] = v
    return bytes([1, dst]) + bytes(f) + struct.pack("<H", paylen)


def main(outdir):
    wire = os.path.join(outdir, "fuzz_wire")
    rx = os.path.join(outdir, "fuzz_rx")
    os.makedirs(wire, exist_ok=True)
    os.makedirs(rx, exist_ok=True)
    for op in EXT:
        pay = b"" if op in (6, 8, 9, 10, 11) else bytes(range(32))
        with open(os.path.join(wire, "op%02d" % op), "wb") as fh:
            fh.write(frame(op, pay))
    seeds = {}
    # requester work out, then time passes (retransmissions, RNR...)
    seeds["post_all"] = bytes([0x80]) + b"".join(
        bytes([4, op]) + struct.pack("<HH", 3000, 64 * op) for op in range(8)
    ) + bytes([2]) + struct.pack("<I", 500000)
    # header-assisted request frames of each opcode at the expected PSN
    for op in range(1, 14):
        seeds["hdr_op%02d" % op] = bytes([0x00]) + hdr_rec(
            1, {0: op - 1, 13: 0, 17: 0, 19: 4, 21: 16}, 1024
        ) + bytes([2]) + struct.pack("<I", 300000)
    # UC and UD flavours
    seeds["uc_send"] = bytes([0x81]) + hdr_rec(1, {0: 0, 19: 4}, 1024)
    seeds["ud_send"] = bytes([0x02]) + hdr_rec(1, {0: 11, 43: 1}, 100)
    # raw frame record
    raw = frame(1, bytes(10), ext=struct.pack(">IIIII", 0, 0, 10, 0, 0))
    seeds["raw_send"] = bytes([0x00, 0, 1]) + struct.pack("<H", len(raw)) + raw
    for name, data in seeds.items():
        with open(os.path.join(rx, name), "wb") as fh:
            fh.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus"))
