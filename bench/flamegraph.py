#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bench/flamegraph.py: a flame graph (SVG) of `perf script` output.

    perf script -i perf.data | bench/flamegraph.py --title T [--root FUNC] > out.svg

Each sample's stack (outermost frame at the bottom) becomes one column of boxes; a box's width
is the share of samples whose stack passes through it. --root FUNC keeps only samples whose
stack contains FUNC and draws them from its outermost occurrence up, so the graph shows what one
path spends; --comm NAME keeps only the samples of one command.
--folded writes the folded stacks ("a;b;c N" lines) instead, for other tools; --from-folded reads
them back. Plain SVG, no script: hover a box for its name, samples and share (its <title>).
"""
import argparse
import html
import re
import sys
import zlib

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.+?)\s+\((.*)\)\s*$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def stacks(lines, comm=None):
    """Yield each sample's frames, outermost first, from perf script text (only @comm's)."""
    frames = []
    in_sample = False
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames[::-1]
            frames = []
            in_sample = False
            continue
        if not line.startswith((" ", "\t")):
            # the sample's header line: comm pid time event
            in_sample = comm is None or line.split(None, 1)[0] == comm
            continue
        m = FRAME.match(line)
        if in_sample and m:
            name = OFFSET.sub("", m.group(1))
            if name == "[unknown]":
                name = "[" + m.group(2).rsplit("/", 1)[-1] + "]"
            frames.append(name)
    if frames:
        yield frames[::-1]


def fold(lines, root, comm):
    counts = {}
    for frames in stacks(lines, comm):
        if root:
            if root not in frames:
                continue
            frames = frames[frames.index(root):]
        key = ";".join(frames)
        counts[key] = counts.get(key, 0) + 1
    return counts


def read_folded(lines):
    counts = {}
    for line in lines:
        key, _, n = line.rstrip("\n").rpartition(" ")
        if key and n.isdigit():
            counts[key] = counts.get(key, 0) + int(n)
    return counts


def tree(counts):
    top = {"n": 0, "kids": {}}
    for key, n in counts.items():
        node = top
        node["n"] += n
        for name in key.split(";"):
            node = node["kids"].setdefault(name, {"n": 0, "kids": {}})
            node["n"] += n
    return top


def colour(name):
    h = zlib.crc32(name.encode())
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 50)


def svg(top, title, width=1200, row=17):
    depth = 0

    def walk(node, d):
        nonlocal depth
        depth = max(depth, d)
        for kid in node["kids"].values():
            walk(kid, d + 1)

    walk(top, 0)
    total = top["n"] or 1
    height = (depth + 1) * row + 40
    out = ['<?xml version="1.0" standalone="no"?>',
           '<svg version="1.1" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg" '
           'font-family="monospace" font-size="11">' % (width, height),
           '<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f8"/>' % (width, height),
           '<text x="%d" y="18" text-anchor="middle" font-size="14">%s (%d samples)</text>'
           % (width // 2, html.escape(title), top["n"])]
    scale = (width - 20) / total

    def draw(node, name, x, d):
        w = node["n"] * scale
        if w < 0.3:
            return
        y = height - (d + 1) * row
        share = 100.0 * node["n"] / total
        label = "%s (%d samples, %.1f%%)" % (name, node["n"], share)
        out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" '
                   'fill="%s" rx="2"/>' % (html.escape(label), x, y, w, row - 1, colour(name)))
        chars = int(w / 7)
        if chars >= 3:
            text = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append('<text x="%.1f" y="%d">%s</text>' % (x + 3, y + row - 5,
                                                               html.escape(text)))
        out.append("</g>")
        for kname, kid in sorted(node["kids"].items()):
            draw(kid, kname, x, d + 1)
            x += kid["n"] * scale

    x = 10.0
    for name, kid in sorted(top["kids"].items()):
        draw(kid, name, x, 0)
        x += kid["n"] * scale
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--title", default="flame graph")
    ap.add_argument("--root", help="keep only stacks through this function, drawn from it up")
    ap.add_argument("--comm", help="keep only the samples of this command")
    ap.add_argument("--folded", action="store_true", help="write folded stacks, not SVG")
    ap.add_argument("--from-folded", action="store_true",
                    help="read folded stacks (--folded's output), not perf script")
    args = ap.parse_args()
    if args.from_folded:
        counts = read_folded(sys.stdin)
    else:
        counts = fold(sys.stdin, args.root, args.comm)
    if not counts:
        sys.exit("flamegraph.py: no samples%s" % (" through " + args.root if args.root else ""))
    if args.folded:
        for key, n in sorted(counts.items()):
            print(key, n)
        return
    sys.stdout.write(svg(tree(counts), args.title))


if __name__ == "__main__":
    main()
