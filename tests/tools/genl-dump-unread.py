#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""genl-dump-unread.py [CMD]: send one dump request to the "tbrdma" generic netlink family
(CMD: the command number, default 1 = DEV_GET), print "sent", then sleep without reading the reply
until killed. A VM test runs rmmod meanwhile: a dump the kernel has not finished holds a module
reference (kernel/ctl/netlink.c, "Dumps")."""
import os
import signal
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def request(sock, family, flags, cmd, payload, seq):
    body = struct.pack("=BBH", cmd, 1, 0) + payload
    sock.send(struct.pack("=IHHII", 16 + len(body), family, flags, seq, 0) + body)


def family_id(sock, name):
    request(sock, GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY,
            attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"), 1)
    buf = sock.recv(65536)
    length, kind = struct.unpack_from("=IH", buf)
    if kind != GENL_ID_CTRL:
        sys.exit(f"family {name} not found")
    off = 20
    while off < length:
        n, a = struct.unpack_from("=HH", buf, off)
        if a == CTRL_ATTR_FAMILY_ID:
            return struct.unpack_from("=H", buf, off + 4)[0]
        off += (n + 3) & ~3
    sys.exit("no family id in the reply")


def main():
    cmd = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    sock.bind((0, 0))
    fam = family_id(sock, "tbrdma")
    request(sock, fam, NLM_F_REQUEST | NLM_F_DUMP, cmd, b"", 2)
    print("sent", flush=True)
    signal.pause()
    os._exit(0)


if __name__ == "__main__":
    main()
