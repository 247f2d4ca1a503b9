#!/usr/bin/env python3
"""tests/tools/layers.py -- the call graph between the library's files, from
their object files: which file calls a function another file defines.

  python3 tests/tools/layers.py [--dot] [--allow FROM.c:TO.c]... [OBJ_DIR]

OBJ_DIR is the build's object folder (default build/obj); run it from the
repository's root (an object whose source is gone is skipped).  The symbols come
from `nm` (defined: T/D/B/R; called or used: U), so static functions and
header inlines do not count.  Checks, each a failure:
  - a cycle between files (two files of one folder calling each other,
    directly or around a longer circle), and
  - a call up the layers: lang/ and runtime/ (with the generated lexer,
    parser and embedded kernels) below compiler/, below api/.
--allow drops one known edge from the checks (it is still printed, as
"known"); an allowed edge that no longer exists is a failure, so the
exception goes when the call does.  Prints each file's callees (--dot: a
graphviz graph instead), then `N passed, M failed` (a pass per file); exit 1
on any failure.  `make test` runs it (the "layers" suite).
"""
import glob
import os
import subprocess
import sys

LAYER = {'lang': 0, 'gen': 0, 'runtime': 0, 'compiler': 1, 'api': 2}


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            used.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRVW':
            defined.add(f[2])
    return defined, used


def main():
    argv, args, allow = sys.argv[1:], [], set()
    while argv:
        a = argv.pop(0)
        if a == '--allow' and argv:
            allow.add(tuple(argv.pop(0).split(':', 1)))
        elif not a.startswith('--'):
            args.append(a)
    dot = '--dot' in sys.argv
    root = args[0] if args else 'build/obj'
    objs = sorted(glob.glob(os.path.join(root, '*', '*.o')))
    objs = [o for o in objs if os.path.basename(os.path.dirname(o)) in LAYER]
    # an object left behind by a source file that is gone does not count
    objs = [o for o in objs if o.split(os.sep)[-2] == 'gen' or
            os.path.exists(os.path.relpath(o, root)[:-2] + '.c')]
    if not objs:
        print(f'layers: no object files under {root} (build first)')
        print('0 passed, 1 failed')
        return 1
    name = {o: os.path.relpath(o, root)[:-2] + '.c' for o in objs}
    owner, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        for sym in d:
            owner[sym] = name[o]
        uses[name[o]] = u
    edges = {f: sorted({owner[s] for s in u if s in owner and owner[s] != f}) for f, u in uses.items()}
    bad = set()
    msgs = []
    for f, g in sorted(allow):
        if g in edges.get(f, []):
            edges[f].remove(g)
            syms = sorted(s for s in uses[f] if owner.get(s) == g)
            msgs.append(f'known: {f} calls {g}: {", ".join(syms)} (--allow)')
        else:
            bad.add(f)
            msgs.append(f'FAIL --allow {f}:{g}: no such call any more; drop the exception')
    for f, callees in edges.items():
        for g in callees:
            lf, lg = LAYER[f.split('/')[0]], LAYER[g.split('/')[0]]
            if lg > lf:
                bad.add(f)
                syms = sorted(s for s in uses[f] if owner.get(s) == g)
                msgs.append(f'FAIL {f} calls up into {g}: {", ".join(syms)}')
    # cycles: Tarjan's strongly connected components
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in comps:
        bad.update(comp)
        msgs.append('FAIL cycle between ' + ', '.join(comp))
    if dot:
        print('digraph gk {')
        for f, callees in sorted(edges.items()):
            for g in callees:
                print(f'  "{f}" -> "{g}";')
        print('}')
    else:
        for f, callees in sorted(edges.items()):
            print(f'{f}: {" ".join(callees) if callees else "-"}')
    for m in msgs:
        print(m)
    print(f'{len(edges) - len(bad)} passed, {len(bad)} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
