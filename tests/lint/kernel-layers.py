#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/lint/kernel-layers.py: check the kernel module's layering (issue 14) on its built objects.

Usage: kernel-layers.py [--graph] [OBJDIR]
  OBJDIR   a module build directory, build/kmod/KVER/tbrdma (default: the 6.1 one); its
           tbrdma.mod names the objects, `nm` tells what each defines and what it needs.
  --graph  also print the directory-level call graph (who calls whom, with a sample symbol).

A file depends on another when it uses a global symbol (function or variable) defined there:
an undefined symbol (nm "U") of one object that another object defines (nm T/D/B/R/...).
Static functions and calls through ops tables are not dependencies, which is the point.

Rules, one "PASS name" or "FAIL name: why" line each, exit 1 on any FAIL:
  layers/no-circle   no strongly connected component of more than one file outside
                     kernel/core (core's own files may call each other both ways)
  layers/link-clean  link/*.o use no symbol defined in backends/, ctl/ or verbs/netdev.c,
                     nor the kernel's netlink, sysfs/kobject or netdev API; link/*.c name no
                     backend, netlink, sysfs or netdev identifier (types and macros included,
                     which nm does not see)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))

# what the link layer must not reach: our own files ...
LINK_FORBIDDEN_FILES = re.compile(r"^(backends/|ctl/|verbs/netdev\.o$)")
# ... and the kernel's netlink, sysfs and netdev interfaces (by symbol name)
LINK_FORBIDDEN_KSYMS = re.compile(
    r"^(genl|genlmsg_|nla_|__nla_|nlmsg_|netlink_|sysfs_|kobject_|kset_|device_(add|del|register|"
    r"unregister|create|rename)|netif_|__netif_|dev_queue_xmit|__dev_queue_xmit|alloc_netdev|"
    r"free_netdev|register_netdev|unregister_netdev|dev_get_by|netdev_)")
# ... and, in the sources, identifiers of backends, genl, sysfs and tbrN
LINK_FORBIDDEN_IDENTS = re.compile(
    r"\b(tbr_(emu|eth|tb|nl|genl|sysfs|netdev|ctl_dev)_\w+|genl_\w+|nla_\w+|sysfs_\w+|"
    r"kobject_\w+|netif_\w+|net_device)\b")


def objects(objdir):
    with open(os.path.join(objdir, "tbrdma.mod")) as f:
        objs = [l.strip() for l in f if l.strip()]
    return {os.path.relpath(o, objdir): o for o in objs}


def nm(path):
    """(defined globals, undefined) symbol sets of one object file"""
    out = subprocess.run(["nm", path], check=True, capture_output=True, text=True).stdout
    defs, undefs = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefs.add(parts[1])
        elif len(parts) == 3 and parts[1].isupper() and parts[1] != "U":
            defs.add(parts[2])
    return defs, undefs


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively"""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def layer(f):
    return f.split("/")[0] if "/" in f else f


def main(argv):
    graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    if args:
        objdir = args[0]
    else:
        kver = subprocess.run([os.path.join(TOP, "tests/vm/kernel-abi"), "6.1"], check=True,
                              capture_output=True, text=True).stdout.strip()
        objdir = os.path.join(TOP, "build/kmod", kver, "tbrdma")
    objs = objects(objdir)
    defs, undefs, owner = {}, {}, {}
    for rel, path in objs.items():
        defs[rel], undefs[rel] = nm(path)
        for s in defs[rel]:
            owner[s] = rel
    edges, why = {}, {}
    for a in objs:
        for s in sorted(undefs[a]):
            b = owner.get(s)
            if b and b != a:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), s)
    fails = 0

    bad = [c for c in sccs(objs, edges)
           if len(c) > 1 and not all(f.startswith("core/") for f in c)]
    if bad:
        fails += 1
        print("FAIL layers/no-circle: %d call circle(s) among kernel files" % len(bad))
        for c in bad:
            print("  | " + " ".join(f[:-2] + ".c" for f in c))
            for a in c:
                for b in sorted(edges.get(a, ())):
                    if b in c:
                        print("  |   %s -> %s (%s)" % (a, b, why[(a, b)]))
    else:
        print("PASS layers/no-circle (%d objects, %d file edges, no circle outside core/)" %
              (len(objs), sum(len(v) for v in edges.values())))

    problems = []
    for a in sorted(o for o in objs if o.startswith("link/")):
        for s in sorted(undefs[a]):
            b = owner.get(s)
            if b and LINK_FORBIDDEN_FILES.match(b):
                problems.append("%s uses %s of %s" % (a, s, b))
            elif not b and LINK_FORBIDDEN_KSYMS.match(s):
                problems.append("%s uses the kernel's %s" % (a, s))
        src = os.path.join(TOP, "kernel", a[:-2] + ".c")
        with open(src) as f:
            for n, line in enumerate(f, 1):
                code = re.sub(r"/\*.*?(\*/|$)|//.*$|\"[^\"]*\"", "", line)
                for m in LINK_FORBIDDEN_IDENTS.finditer(code):
                    problems.append("kernel/%s:%d names %s" % (a[:-2] + ".c", n, m.group(0)))
    for h in ("link/link.h", "link/rail.h", "link/route.h"):
        with open(os.path.join(TOP, "kernel", h)) as f:
            for n, line in enumerate(f, 1):
                code = re.sub(r"/\*.*?(\*/|$)|^\s*\*.*$|//.*$|\"[^\"]*\"", "", line)
                for m in LINK_FORBIDDEN_IDENTS.finditer(code):
                    problems.append("kernel/%s:%d names %s" % (h, n, m.group(0)))
    if problems:
        fails += 1
        print("FAIL layers/link-clean: the link layer reaches a backend, netlink, sysfs or netdev")
        for p in problems:
            print("  | " + p)
    else:
        print("PASS layers/link-clean (%s: no backend, ctl, netdev, genl or sysfs symbol)" %
              " ".join(o for o in sorted(objs) if o.startswith("link/")))

    if graph:
        dirs = {}
        for (a, b), s in sorted(why.items()):
            la, lb = layer(a), layer(b)
            if la != lb:
                dirs.setdefault((la, lb), []).append("%s->%s" % (s, b))
        for (la, lb), ss in sorted(dirs.items()):
            print("  %-9s -> %-9s %3d  e.g. %s" % (la, lb, len(ss), ss[0]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
