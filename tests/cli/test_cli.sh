#!/bin/sh
# tests/cli/test_cli.sh -- tests of the gk command line (POSIX sh).
#
# Runs ${B:-build}/gk as a user would: usage errors, --help/--version, -e,
# script files, standard input as a script, missing files, a diagnostic with
# its source line and caret, an unavailable backend, and a REPL session
# driven through a pseudo-terminal (python3's pty module) in which a bad
# statement is followed by a use of an earlier variable.
#
# Prints one line per failure and, last, "N passed, M failed"; exits 1 on
# any failure.  Called by tests/run_all.sh with B set.

B=${B:-build}
GK=$B/gk
case $GK in /*) ;; *) GK=$(pwd)/$GK ;; esac
if [ ! -x "$GK" ]; then
  echo "test_cli: no gk binary at $GK (build it first)"
  echo "0 passed, 1 failed"
  exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/gkcli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
# Keep the user's history and cache out of it.
GK_HISTORY=$T/history
export GK_HISTORY
unset GK_BACKEND

pass=0
fail=0

# run CMD...: runs with stdin from /dev/null; sets rc, files $T/out, $T/err.
run() {
  "$@" >"$T/out" 2>"$T/err" </dev/null
  rc=$?
}

# has FILE TEXT: FILE ($T/out or $T/err) contains the fixed string TEXT.
has() { grep -F -q -- "$2" "$T/$1"; }

# line FILE N TEXT: line N of FILE is exactly TEXT.
line() { [ "$(sed -n "$2p" "$T/$1")" = "$3" ]; }

# t NAME CONDITION: one test; CONDITION is shell code run with eval.
t() {
  if eval "$2"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $1 (exit status $rc)"
    sed -n '1,8s/^/  stdout| /p' "$T/out"
    sed -n '1,8s/^/  stderr| /p' "$T/err"
  fi
}

# --- usage ----------------------------------------------------------------
run "$GK" --foo
t "unknown option exits 2 with a message" \
  '[ $rc -eq 2 ] && line err 1 "gk: unknown option '"'--foo'"'" && line err 2 "try '"'gk --help'"'" && [ ! -s "$T/out" ]'

run "$GK" -e
t "-e without its argument exits 2" '[ $rc -eq 2 ] && has err "gk: option '"'-e'"' needs an argument"'

run "$GK" --backend
t "--backend without its argument exits 2" '[ $rc -eq 2 ] && has err "needs an argument"'

run "$GK" --backend gpu -e 1
t "unknown backend name exits 2" '[ $rc -eq 2 ] && has err "gk: unknown backend '"'gpu'"'"'

run "$GK" a.gk b.gk
t "two scripts exit 2" '[ $rc -eq 2 ] && has err "try '"'gk --help'"'"'

run "$GK" --help
t "--help exits 0 with the usage" \
  '[ $rc -eq 0 ] && has out "usage: gk" && has out "--backend" && has out "GK_BACKEND" && has out "GK_THREADS" && has out ":vars" && [ ! -s "$T/err" ]'

run "$GK" -h
t "-h is --help" '[ $rc -eq 0 ] && has out "usage: gk"'

run "$GK" --version
t "--version exits 0" \
  '[ $rc -eq 0 ] && grep -E -q "^gk 0\.1\.0 \(backend cuda (available|unavailable)\)$" "$T/out"'
cuda_ok=0
has out "cuda available" && cuda_ok=1

# --- running text -----------------------------------------------------------
run "$GK" --backend cpu -e '40 + 2'
t "-e runs source text" '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 42 ]'

run "$GK" -b cpu -e 'x = 40' -e 'x + 2'
t "several -e run in order in one context" '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 42 ]'

run "$GK" --backend=cpu -e 'x + 1'
t "-e error names <expr> and exits 1" '[ $rc -eq 1 ] && grep -q "^<expr>:1:1: error: " "$T/err"'

printf 'a = 20\na + 1\n' >"$T/ok.gk"
run "$GK" --backend cpu "$T/ok.gk"
t "a script file runs" '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 21 ] && [ ! -s "$T/err" ]'

printf 'a = 30\na + 3\n' | "$GK" --backend cpu >"$T/out" 2>"$T/err"
rc=$?
t "a non-tty stdin is read as a script" '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 33 ]'

printf 'b = 1\nb + nope\n' | "$GK" --backend cpu - >"$T/out" 2>"$T/err"
rc=$?
t "gk - reads stdin, errors name <stdin>" '[ $rc -eq 1 ] && grep -q "^<stdin>:2:5: error: " "$T/err"'

run "$GK" "$T/nope.gk"
t "a missing file exits 1 with a message" \
  '[ $rc -eq 1 ] && line err 1 "gk: error: cannot open '"'$T/nope.gk'"': No such file or directory"'

# An error at line 3: lines 1-2 ran and printed, the diagnostic has the
# path as given, the source line and a caret under column 5, line 4 never ran.
printf 'x = 1 + 1\nx + 10\nx + undefined_name\n7 + 7\n' >"$T/bad.gk"
( cd "$T" && "$GK" --backend cpu bad.gk >out 2>err </dev/null ); rc=$?
t "a script stops at its first error with FILE:LINE:COL, source line, caret" \
  '[ $rc -eq 1 ] && [ "$(cat "$T/out")" = 12 ] && grep -q "^bad.gk:3:5: error: " "$T/err" &&
   line err 2 "x + undefined_name" && line err 3 "    ^"'

run "$GK" --backend cpu --time -e 'x = 2' -e 'x + 1'
t "--time prints each statement's wall time on stderr" \
  '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 3 ] && [ "$(grep -c "^<expr>:1: time: [0-9.]* m\{0,1\}s$" "$T/err")" -eq 2 ]'

run "$GK" --backend cpu --plan -e 'sum(iota(10))'
t "--plan ends with a kernels: N line" '[ $rc -eq 0 ] && tail -n 1 "$T/out" | grep -E -q "^kernels: [0-9]+$"'

# --- the cuda backend --------------------------------------------------------
if [ $cuda_ok -eq 1 ]; then
  run "$GK" --backend cuda -e '40 + 2'
  t "--backend cuda runs where cuda is available" '[ $rc -eq 0 ] && [ "$(cat "$T/out")" = 42 ]'
else
  run "$GK" --backend cuda -e '40 + 2'
  t "--backend cuda without a GPU exits 1 naming what is missing" \
    '[ $rc -eq 1 ] && [ ! -s "$T/out" ] && grep -q "^gk: " "$T/err" &&
     grep -i -q -E "cuda|driver|gpu|device|nvrtc" "$T/err"'
  GK_BACKEND=cuda "$GK" -e '1' >"$T/out" 2>"$T/err" </dev/null; rc=$?
  t "GK_BACKEND=cuda without a GPU exits 1" '[ $rc -eq 1 ] && grep -q "^gk: " "$T/err"'
fi

# --- the REPL through a pseudo-terminal ----------------------------------------
# --- save() and load() never harm or block on what is not a regular file
mkfifo "$T/fifo" 2>/dev/null
printf 'x\0y\n' > "$T/nul.gk"
run "$GK" "$T/nul.gk"
t "a script with a NUL byte is an error with the error word" \
  '[ $rc -eq 1 ] && line err 1 "gk: error: cannot read '"'$T/nul.gk'"': it contains a NUL byte (not a text file?)"'
run "$GK" -e 'save("/dev/null", iota(3))'
t "save to /dev/null is refused and /dev/null stays a device" \
  '[ $rc -eq 1 ] && has err "/dev/null: cannot save: not a regular file" && [ -c /dev/null ]'
if [ -p "$T/fifo" ]; then
  run timeout 10 "$GK" -e "save(\"$T/fifo\", iota(3))"
  t "save to a FIFO is refused" '[ $rc -eq 1 ] && has err "cannot save: not a regular file" && [ -p "$T/fifo" ]'
  run timeout 10 "$GK" -e "load(\"$T/fifo\")"
  t "load of a FIFO fails at once instead of blocking" '[ $rc -eq 1 ] && has err "not a regular file"'
fi
run "$GK" -e "save(\"$T/ro.npy\", iota(3))"
chmod 444 "$T/ro.npy"
run "$GK" -e "save(\"$T/ro.npy\", iota(5))"
t "save over a read-only file is refused and the file is kept" \
  '[ $rc -eq 1 ] && has err "cannot save: the file is read-only" && [ "$(stat -c %s "$T/ro.npy")" = 152 ]'
run "$GK" -e "save(\"$T/target.npy\", iota(2))"
chmod 640 "$T/target.npy"
ln -s target.npy "$T/link.npy"
run "$GK" -e "save(\"$T/link.npy\", iota(7)); print(load(\"$T/target.npy\"))"
t "save through a symbolic link replaces its target and keeps the link and the mode" \
  '[ $rc -eq 0 ] && line out 1 "[0 1 2 3 4 5 6]" && [ -L "$T/link.npy" ] && [ "$(stat -c %a "$T/target.npy")" = 640 ]'
ln -s nowhere "$T/dangling.npy"
run "$GK" -e "save(\"$T/dangling.npy\", iota(2))"
t "save through a dangling link is refused" '[ $rc -eq 1 ] && has err "cannot save through a dangling symbolic link" && [ ! -e "$T/nowhere" ]'
if [ -p "$T/fifo" ] && command -v script >/dev/null 2>&1; then
  printf ':quit\n' > "$T/q.in"
  GK_HISTORY="$T/fifo" timeout 10 script -qec "$GK" /dev/null < "$T/q.in" > "$T/out" 2>&1
  rc=$?
  t "a REPL whose GK_HISTORY is a FIFO starts without blocking" '[ $rc -eq 0 ]'
fi

if command -v python3 >/dev/null 2>&1; then
  i=1
  while [ $i -le 1005 ]; do echo "old $i"; i=$((i + 1)); done >"$T/history"
  GK="$GK" python3 - >"$T/out" 2>"$T/err" <<'EOF'
import os, pty, select, sys, time

gk = os.environ["GK"]
pid, fd = pty.fork()
if pid == 0:
    os.execv(gk, [gk, "--backend", "cpu"])

buf = b""
def read_until(token, timeout=20.0):
    """Reads until `token` is in the unread output; returns what was read."""
    global buf
    end = time.time() + timeout
    while token not in buf:
        left = end - time.time()
        if left <= 0:
            raise SystemExit("timed out waiting for %r; got %r" % (token, buf))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise SystemExit("gk ended; waiting for %r; got %r" % (token, buf))
            buf += chunk
    i = buf.index(token) + len(token)
    got, buf = buf[:i], buf[i:]
    return got.decode("utf-8", "replace")

def send(line):
    # Let libedit put the tty in raw mode after its prompt: bytes that
    # arrive before that are taken by the cooked line discipline.
    time.sleep(0.1)
    os.write(fd, line.encode() + b"\r")

log = read_until(b"gk> ")                  # banner + first prompt
for line in ["x = 40", "x + nope", "x + 2", "(x +", "", "1)", ":vars", ":foo"]:
    send(line)
    log += read_until(b"... " if line in ("(x +", "") else b"gk> ")
time.sleep(0.1)
os.write(fd, b"partial")                   # Ctrl-C drops a half-typed line
time.sleep(0.2)
os.write(fd, b"\x03")
log += read_until(b"gk> ")
send("x + 3")
log += read_until(b"gk> ")
time.sleep(0.1)
os.write(fd, b"\x10")                     # Ctrl-P: the previous line again
log += read_until(b"gk> x + 3")            # libedit redraws the line
send("")
log += read_until(b"\n")
log += read_until(b"gk> ")
send(":quit")
time.sleep(0.2)
_, status = os.waitpid(pid, 0)
sys.stdout.write(log.replace("\r\n", "\n"))
sys.stdout.write("\nEXIT %d\n" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1))
EOF
  rc=$?
  t "REPL: banner names version and backend" '[ $rc -eq 0 ] && has out "gk 0.1.0" && has out "backend: cpu" && has out "type :help"'
  t "REPL: an error prints and the session goes on with its variables" \
    '[ $rc -eq 0 ] && has out "<stdin>:1:5: error: " && grep -q "^42\$" "$T/out"'
  t "REPL: continuation lines join into one entry" '[ $rc -eq 0 ] && grep -q "^41\$" "$T/out"'
  t "REPL: :vars lists x" '[ $rc -eq 0 ] && grep -q "^name  *dtype  *shape  *bytes  *where" "$T/out" && grep -q "^x  " "$T/out"'
  t "REPL: unknown command" '[ $rc -eq 0 ] && has out "unknown command '"':foo'"' (type :help)"'
  t "REPL: Ctrl-C drops the line, the session goes on" '[ $rc -eq 0 ] && grep -q "^43\$" "$T/out"'
  t "REPL: Ctrl-P recalls the previous line" '[ $rc -eq 0 ] && [ "$(grep -c "^43\$" "$T/out")" -eq 2 ]'
  t "REPL: :quit exits 0" '[ $rc -eq 0 ] && has out "EXIT 0"'
  t "REPL: history file appended, cut to 1000 entries at start" \
    '[ "$(head -n 1 "$T/history")" = "old 6" ] && grep -q "^x = 40\$" "$T/history" && grep -q "^:quit\$" "$T/history"'
else
  echo "test_cli: python3 not found, REPL tests skipped"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
