#!/usr/bin/env python3
"""tests/tools/fnlen.py -- lists the C functions longer than a bound.

A function is a top-level `{ ... }` block whose opening line is a function
header (a name followed by a parameter list, not a struct, enum, union or
an initializer after `=`).  Its length is the number of lines from the
header's first line to the closing brace.  Comments, strings and character
literals are skipped when braces are counted.

  python3 tests/tools/fnlen.py [--max N] [--fail N] FILE...

prints `file:line: name: L lines` for each function over --max (default 80)
and, as its last line, `N passed, M failed` where a failure is a function
over --fail (default 90); exits 1 when there is one.  `make test` runs it over
compiler/*.c (the "fnlen" suite).
"""
import argparse
import re
import sys


def strip(text):
    """The text with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


HEADER = re.compile(r'([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(__attribute__\s*\(\(.*?\)\)\s*)?$', re.S)


def functions(path):
    """(name, first line, line count) of each function in the file."""
    text = strip(open(path, encoding='utf-8').read())
    res = []
    depth, start, i = 0, 0, 0
    stmt_start = 0          # offset where the current top-level declaration began
    for m in re.finditer(r'[{};]|\n#[^\n]*', text):
        tok = m.group(0)
        if tok.startswith('\n#'):
            if depth == 0:
                stmt_start = m.end()
            continue
        if tok == '{':
            if depth == 0:
                start = m.start()
                head = text[stmt_start:start].strip()
            depth += 1
        elif tok == '}':
            depth -= 1
            if depth == 0:
                h = HEADER.search(head)
                kw = re.match(r'(typedef\s+)?(struct|union|enum)\b', head)
                if h and '=' not in head and not kw:
                    first = text.count('\n', 0, stmt_start + len(text[stmt_start:start]) - len(text[stmt_start:start].lstrip())) + 1
                    last = text.count('\n', 0, m.start()) + 1
                    res.append((h.group(1), first, last - first + 1))
                stmt_start = m.end()
        elif depth == 0:
            stmt_start = m.end()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--max', type=int, default=80, help='list functions longer than this (default 80)')
    ap.add_argument('--fail', type=int, default=90, help='fail on functions longer than this (default 90)')
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    passed = failed = 0
    for f in a.files:
        for name, line, n in functions(f):
            if n > a.fail:
                failed += 1
                print(f'{f}:{line}: {name}: {n} lines (over {a.fail}: split it)')
            else:
                passed += 1
                if n > a.max:
                    print(f'{f}:{line}: {name}: {n} lines')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
