/*
** cli/repl.c -- the interactive session: line editing, history, multi-line
** input and the ':' commands.
**
** The loop reads a line with libedit (histedit.h, the native API: it lets us
** choose the prompt per line, see Ctrl-C at the prompt as an interrupted read
** and add a completion key).  Lines accumulate in a pending buffer while
** gk_is_complete() says the text ends inside a construct; the prompt is then
** "... ".  A complete entry is evaluated as "<stdin>"; an error is printed
** and the session goes on, the library keeping every variable as it was.
**
** Signals: at the prompt SIGINT only sets a flag (no SA_RESTART, so the read
** fails with EINTR and el_gets returns); the line and any pending
** continuation are dropped, as in Python.  While an entry runs, cli_eval
** swaps in a handler that calls gk_interrupt.
**
** History: each entry is one history item -- a multi-line entry (an open
** bracket continued on "... " lines) comes back whole with Up, and runs
** again as it was -- kept in $GK_HISTORY or ~/.gk_history, one entry a
** line, appended as it is entered: a newline inside an entry is written
** "\\n" and a backslash "\\\\" (other backslashes are read as they are,
** so older files load unchanged).  The file is cut to its last
** CLI_HISTORY_MAX entries when the session starts.  A file that cannot be
** read or written means no history, silently.
**
** Print options: `:digits N` (and GK_DIGITS, read by main) set the
** library's "digits" option; before each entry the line width is set from
** the terminal's columns (TIOCGWINSZ, less one); `_` is the last value
** printed (the library's "last" option, on in the REPL only).
*/
#include "cli/cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <histedit.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_HISTORY_MAX 1000   /* entries kept in memory and in the file */
#define CLI_LIST_MAX    200    /* completion candidates listed at most */

/* The session. */
typedef struct repl {
  cli_state *st;        /* context and flags */
  EditLine *el;         /* libedit handle */
  History *hist;        /* in-memory history */
  FILE *histf;          /* history file open for append, or NULL */
  char last[1024];      /* last line appended to the file, to skip repeats */
  char *pending;        /* text of the entry being typed (continuation lines) */
  size_t plen, pcap;    /* its length and capacity */
} repl;

static volatile sig_atomic_t prompt_sigint; /* Ctrl-C seen while reading */

static void on_sigint_prompt(int signo) {
  (void)signo;
  prompt_sigint = 1;
}

/* ---------------------------------------------------------------- prompt */

static const char *prompt_fn(EditLine *el) {
  repl *r = NULL;
  el_get(el, EL_CLIENTDATA, &r);
  return r && r->plen > 0 ? "... " : "gk> ";
}

/* --------------------------------------------------------------- history */

/* Path of the history file: $GK_HISTORY, else ~/.gk_history; NULL = none
** (GK_HISTORY set to "" turns history off).  Returns a malloc'd string. */
static char *history_path(void) {
  const char *env = getenv("GK_HISTORY"), *home;
  char *p;
  size_t n;

  if (env) return *env ? strdup(env) : NULL;
  home = getenv("HOME");
  if (!home || !*home) return NULL;
  n = strlen(home) + sizeof "/.gk_history";
  p = malloc(n);
  if (p) snprintf(p, n, "%s/.gk_history", home);
  return p;
}

/* True when PATH is a regular file or does not exist yet: history is
** never read from or appended to a FIFO, a device or a folder. */
static int history_regular(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

/* Undoes history_encode in place: "\\n" is a newline, "\\\\" a backslash;
** any other backslash stays. */
static void history_decode(char *s) {
  char *w = s;
  for (; *s; s++) {
    if (s[0] == '\\' && (s[1] == 'n' || s[1] == '\\')) { *w++ = s[1] == 'n' ? '\n' : '\\'; s++; }
    else *w++ = *s;
  }
  *w = '\0';
}

/* Writes entry e to f as one line (see history_decode). */
static void history_encode(FILE *f, const char *e) {
  for (; *e; e++) {
    if (*e == '\n') fputs("\\n", f);
    else if (*e == '\\') fputs("\\\\", f);
    else fputc(*e, f);
  }
  fputc('\n', f);
}

/* Loads the file into r->hist, rewrites it if it holds more than
** CLI_HISTORY_MAX entries, and opens it for appending. */
static void history_open(repl *r) {
  char *path = history_path(), *line = NULL;
  char **keep = NULL;
  size_t cap = 0, n = 0, i, start;
  HistEvent ev;
  FILE *f;

  if (!path) return;
  if (!history_regular(path)) {   /* a FIFO or device would block or be harmed */
    free(path);
    return;
  }
  f = fopen(path, "r");
  if (f) {
    ssize_t got;
    keep = calloc(CLI_HISTORY_MAX, sizeof *keep);   /* a ring of the last entries */
    while (keep && (got = getline(&line, &cap, f)) >= 0) {
      while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r')) line[--got] = '\0';
      if (got == 0) continue;
      history_decode(line);
      free(keep[n % CLI_HISTORY_MAX]);
      keep[n % CLI_HISTORY_MAX] = strdup(line);
      n++;
    }
    fclose(f);
    free(line);
    start = n > CLI_HISTORY_MAX ? n - CLI_HISTORY_MAX : 0;
    for (i = start; keep && i < n; i++) {
      const char *e = keep[i % CLI_HISTORY_MAX];
      if (e) history(r->hist, &ev, H_ENTER, e);
    }
    if (keep && n > CLI_HISTORY_MAX) {              /* cut the file: temp + rename */
      size_t tn = strlen(path) + 8;
      char *tmp = malloc(tn);
      FILE *t = tmp ? (snprintf(tmp, tn, "%s.tmp", path), fopen(tmp, "w")) : NULL;
      if (t) {
        for (i = start; i < n; i++)
          if (keep[i % CLI_HISTORY_MAX]) history_encode(t, keep[i % CLI_HISTORY_MAX]);
        if (fclose(t) != 0 || rename(tmp, path) != 0) remove(tmp);
      }
      free(tmp);
    }
    if (keep && n > 0) snprintf(r->last, sizeof r->last, "%s", keep[(n - 1) % CLI_HISTORY_MAX]);
    for (i = 0; keep && i < CLI_HISTORY_MAX; i++) free(keep[i]);
    free(keep);
  }
  r->histf = fopen(path, "a");
  free(path);
}

/* Records one entry (one line, or the lines of a multi-line entry joined by
** newlines) in memory and in the file. */
static void history_add(repl *r, const char *line) {
  HistEvent ev;
  const char *p = line;

  while (isspace((unsigned char)*p)) p++;
  if (!*p) return;
  history(r->hist, &ev, H_ENTER, line);
  if (r->histf && strcmp(r->last, line) != 0) {
    history_encode(r->histf, line);
    fflush(r->histf);
    snprintf(r->last, sizeof r->last, "%s", line);
  }
}

/* ------------------------------------------------------------ completion */

/* Names the completion key offers besides variables: the library's builtins
** (gk_builtin_names) and these keywords. */
static const char *const keyword_names[] = { "fn", "true", "false", "and", "or", "not", NULL };

static const char *const command_names[] = {
  ":help", ":vars", ":time", ":plan", ":cuda", ":profile", ":digits", ":backend", ":quit", NULL
};

/* Candidates matching a prefix. */
typedef struct cands {
  const char *prefix;   /* what the word starts with */
  size_t plen;          /* its length */
  char **v;             /* matches, malloc'd */
  size_t n, cap;
} cands;

static void cand_add(cands *c, const char *name) {
  size_t i;
  if (strncmp(name, c->prefix, c->plen) != 0) return;
  for (i = 0; i < c->n; i++) if (strcmp(c->v[i], name) == 0) return;
  if (c->n == c->cap) {
    size_t ncap = c->cap ? c->cap * 2 : 32;
    char **nv = realloc(c->v, ncap * sizeof *nv);
    if (!nv) return;
    c->v = nv;
    c->cap = ncap;
  }
  if ((c->v[c->n] = strdup(name)) != NULL) c->n++;
}

static void cand_var(void *ud, const gk_varinfo *v) { cand_add(ud, v->name); }

static int cand_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Inside an open string (load("da<Tab>): the files of the typed path's
** folder whose names start with its last part, as the typed path plus the
** name ("/" after a folder); hidden files only when the part starts with
** ".".  Returns the offset in a candidate where its name starts, for the
** list. */
static size_t cand_files(cands *c) {
  const char *slash = strrchr(c->prefix, '/');
  size_t dlen = slash ? (size_t)(slash - c->prefix) + 1 : 0;
  char dir[4096], path[4096 + 256 + 2];
  struct dirent *d;
  if (dlen >= sizeof dir) return dlen;
  memcpy(dir, c->prefix, dlen);
  dir[dlen] = '\0';
  DIR *dp = opendir(dlen ? dir : ".");
  if (!dp) return dlen;
  const char *base = c->prefix + dlen;
  while ((d = readdir(dp)) != NULL) {
    struct stat st;
    if (d->d_name[0] == '.' && base[0] != '.') continue;
    if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) continue;
    if (strncmp(d->d_name, base, strlen(base)) != 0) continue;
    snprintf(path, sizeof path, "%s%s", dir, d->d_name);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) strncat(path, "/", sizeof path - strlen(path) - 1);
    cand_add(c, path);
  }
  closedir(dp);
  return dlen;
}

/* Where the string the cursor is in starts (after its '"'), or NULL when
** the cursor is not in one. */
static const char *open_string(const LineInfo *li) {
  const char *start = NULL;
  for (const char *p = li->buffer; p < li->cursor; p++) {
    if (*p == '#' && !start) return NULL;           /* a comment */
    if (*p == '\\' && start && p + 1 < li->cursor) { p++; continue; }
    if (*p == '"') start = start ? NULL : p + 1;
  }
  return start;
}

/* The Tab key: completes a variable, builtin or ':' command name, or in an
** open string a file name; with several matches, extends to their common
** prefix or lists them. */
static unsigned char complete_fn(EditLine *el, int ch) {
  const LineInfo *li = el_line(el);
  repl *r = NULL;
  const char *w = li->cursor;
  cands c;
  unsigned char ret = CC_REFRESH;
  char word[256];
  size_t i, common;

  size_t shown = 0;   /* where a listed candidate's name starts */
  const char *str = open_string(li);

  (void)ch;
  el_get(el, EL_CLIENTDATA, &r);
  if (str) w = str;
  else {
    while (w > li->buffer && (isalnum((unsigned char)w[-1]) || w[-1] == '_')) w--;
    if (w > li->buffer && w[-1] == ':' && w - 1 == li->buffer) w--;
  }
  if ((size_t)(li->cursor - w) >= sizeof word) return CC_ERROR;
  memcpy(word, w, (size_t)(li->cursor - w));
  word[li->cursor - w] = '\0';

  memset(&c, 0, sizeof c);
  c.prefix = word;
  c.plen = strlen(word);
  if (str) {
    shown = cand_files(&c);
  } else if (word[0] == ':') {
    for (i = 0; command_names[i]; i++) cand_add(&c, command_names[i]);
  } else {
    if (c.plen == 0 || isdigit((unsigned char)word[0])) return CC_ERROR;
    if (r) gk_vars(r->st->g, cand_var, &c);
    const char *const *bn = gk_builtin_names();
    for (i = 0; bn[i]; i++) cand_add(&c, bn[i]);
    for (i = 0; keyword_names[i]; i++) cand_add(&c, keyword_names[i]);
  }
  if (c.n == 0) { free(c.v); return CC_ERROR; }
  qsort(c.v, c.n, sizeof *c.v, cand_cmp);

  common = strlen(c.v[0]);                  /* longest common prefix */
  for (i = 1; i < c.n; i++) {
    size_t k = 0;
    while (k < common && c.v[i][k] == c.v[0][k]) k++;
    common = k;
  }
  if (common > c.plen) {
    char ext[256];
    size_t n = common - c.plen < sizeof ext - 2 ? common - c.plen : sizeof ext - 2;
    memcpy(ext, c.v[0] + c.plen, n);
    ext[n] = '\0';
    if (c.n == 1 && word[0] == ':') strcat(ext, " ");
    el_insertstr(el, ext);
  } else if (c.n > 1) {
    fputc('\n', stdout);
    for (i = 0; i < c.n && i < CLI_LIST_MAX; i++) printf("%s%s", i ? "  " : "", c.v[i] + shown);
    if (c.n > CLI_LIST_MAX) printf("  ... (%zu more)", c.n - CLI_LIST_MAX);
    fputc('\n', stdout);
    fflush(stdout);
    ret = CC_REDISPLAY;
  }
  for (i = 0; i < c.n; i++) free(c.v[i]);
  free(c.v);
  return ret;
}

/* ---------------------------------------------------------------- :vars */

/* One row of the :vars table. */
typedef struct var_row {
  char *name;
  const char *dtype;    /* static, from gk_dtype_name */
  char shape[160];
  char bytes[32];
  char where[16];
} var_row;

typedef struct var_table {
  var_row *v;
  size_t n, cap;
} var_table;

/* "1.5 KiB" style size. */
static void human_bytes(char *out, size_t n, size_t bytes) {
  static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
  double v = (double)bytes;
  int u = -1;
  if (bytes < 1024) { snprintf(out, n, "%zu B", bytes); return; }
  while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
  snprintf(out, n, v < 10.0 ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void var_collect(void *ud, const gk_varinfo *v) {
  var_table *t = ud;
  var_row *row;
  size_t off = 0;
  int d;

  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 16;
    var_row *nv = realloc(t->v, ncap * sizeof *nv);
    if (!nv) return;
    t->v = nv;
    t->cap = ncap;
  }
  row = &t->v[t->n];
  row->name = strdup(v->name ? v->name : "?");
  if (!row->name) return;
  row->dtype = gk_dtype_name(v->dtype);
  off += (size_t)snprintf(row->shape, sizeof row->shape, "[");
  for (d = 0; d < v->ndim && off < sizeof row->shape; d++)
    off += (size_t)snprintf(row->shape + off, sizeof row->shape - off, "%s%lld",
                            d ? ", " : "", (long long)v->shape[d]);
  if (off < sizeof row->shape) snprintf(row->shape + off, sizeof row->shape - off, "]");
  human_bytes(row->bytes, sizeof row->bytes, v->bytes);
  snprintf(row->where, sizeof row->where, "%s", v->where ? v->where : "?");
  t->n++;
}

static void cmd_vars(repl *r) {
  var_table t;
  size_t i, wn = 4, wd = 5, ws = 5, wb = 5;

  memset(&t, 0, sizeof t);
  if (gk_vars(r->st->g, var_collect, &t) != GK_OK) {
    cli_print_error(gk_errmsg(r->st->g));
  } else if (t.n == 0) {
    printf("no variables\n");
  } else {
    for (i = 0; i < t.n; i++) {
      size_t k;
      if ((k = strlen(t.v[i].name)) > wn) wn = k;
      if ((k = strlen(t.v[i].dtype)) > wd) wd = k;
      if ((k = strlen(t.v[i].shape)) > ws) ws = k;
      if ((k = strlen(t.v[i].bytes)) > wb) wb = k;
    }
    printf("%-*s  %-*s  %-*s  %*s  %s\n", (int)wn, "name", (int)wd, "dtype",
           (int)ws, "shape", (int)wb, "bytes", "where");
    for (i = 0; i < t.n; i++)
      printf("%-*s  %-*s  %-*s  %*s  %s\n", (int)wn, t.v[i].name, (int)wd, t.v[i].dtype,
             (int)ws, t.v[i].shape, (int)wb, t.v[i].bytes, t.v[i].where);
  }
  for (i = 0; i < t.n; i++) free(t.v[i].name);
  free(t.v);
}

/* ------------------------------------------------------------- commands */

static void run_entry(repl *r, const char *src, int timed);

/* Runs EXPR with option `name` switched on, then puts it back as it was;
** with no EXPR toggles the option.  *flag is st->plan or st->cuda. */
static void cmd_option(repl *r, const char *name, int *flag, const char *expr) {
  int was = *flag;

  *flag = *expr ? 1 : !was;
  if (cli_apply_options(r->st) != GK_OK) {
    *flag = was;
    cli_apply_options(r->st);
    return;
  }
  if (!*expr) {
    printf("%s: %s\n", name, *flag ? "on" : "off");
    return;
  }
  run_entry(r, expr, 0);                 /* no sync: show this entry's kernels only */
  *flag = was;
  cli_apply_options(r->st);
}

/* Sets the library's line width from the terminal's columns (less one, so
** that a full line never wraps); numpy's 75 when that is unknown. */
static void set_width(repl *r) {
  struct winsize ws;
  int w = 0;
  if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) w = ws.ws_col - 1;
  if (w < 10) w = 0;
  if (w > 4096) w = 4096;
  gk_option(r->st->g, "linewidth", w);
}

/* :digits [N]: shows or sets the significant digits of printed floats. */
static void cmd_digits(repl *r, const char *arg) {
  char *end;
  long v;
  if (!*arg) {
    printf("digits: %d\n", r->st->digits ? r->st->digits : 6);
    return;
  }
  v = strtol(arg, &end, 10);
  while (isspace((unsigned char)*end)) end++;
  if (*end || v < 1 || v > 17) {
    fflush(stdout);
    fprintf(stderr, "gk: :digits takes a number of significant digits from 1 to 17, got '%s'\n", arg);
    return;
  }
  if (gk_option(r->st->g, "digits", (int)v) != GK_OK) { cli_print_error(gk_errmsg(r->st->g)); return; }
  r->st->digits = (int)v;
  printf("digits: %d\n", r->st->digits);
}

/* Runs one entry, timing it when :time is on. */
static void run_entry(repl *r, const char *src, int timed) {
  gk_progress p0;
  double t0;
  int rc;
  if (r->st->profile) cli_profile_begin(r->st, &p0);
  t0 = cli_now();
  rc = cli_eval(r->st, src, "<stdin>", timed);
  if (r->st->profile) cli_profile_end(r->st, &p0, cli_now() - t0);
  if (rc == GK_OK && timed) {
    fflush(stdout);
    cli_print_time("", cli_now() - t0);
  }
}

/* Runs a ':' command line.  Returns 1 when the session should end. */
static int command(repl *r, const char *line) {
  const char *p = line + 1, *arg;
  char name[32];
  size_t n = 0;

  while (*p && !isspace((unsigned char)*p) && n + 1 < sizeof name) name[n++] = *p++;
  name[n] = '\0';
  arg = p;
  while (isspace((unsigned char)*arg)) arg++;

  if (!strcmp(name, "quit") || !strcmp(name, "q")) return 1;
  if (!strcmp(name, "help") || !strcmp(name, "h") || !strcmp(name, "?")) cli_help(r->st, arg);
  else if (!strcmp(name, "vars")) cmd_vars(r);
  else if (!strcmp(name, "digits")) cmd_digits(r, arg);
  else if (!strcmp(name, "backend")) printf("%s\n", gk_backend(r->st->g));
  else if (!strcmp(name, "plan")) cmd_option(r, "plan", &r->st->plan, arg);
  else if (!strcmp(name, "cuda")) cmd_option(r, "cuda", &r->st->cuda, arg);
  else if (!strcmp(name, "profile")) cmd_option(r, "profile", &r->st->profile, arg);
  else if (!strcmp(name, "time")) {
    if (*arg) run_entry(r, arg, 1);
    else {
      r->st->timing = !r->st->timing;
      printf("time: %s\n", r->st->timing ? "on" : "off");
    }
  } else {
    fflush(stdout);
    fprintf(stderr, "unknown command ':%s' (type :help)\n", name);
  }
  return 0;
}

/* ------------------------------------------------------------------ loop */

/* Appends a line (and a newline before it when text is pending). */
static int pending_add(repl *r, const char *line, size_t len) {
  size_t need = r->plen + len + 2;
  if (need > r->pcap) {
    size_t ncap = r->pcap ? r->pcap : 256;
    char *np;
    while (ncap < need) ncap *= 2;
    np = realloc(r->pending, ncap);
    if (!np) return -1;
    r->pending = np;
    r->pcap = ncap;
  }
  if (r->plen > 0) r->pending[r->plen++] = '\n';
  memcpy(r->pending + r->plen, line, len);
  r->plen += len;
  r->pending[r->plen] = '\0';
  return 0;
}

int cli_repl(cli_state *st) {
  repl r;
  struct sigaction sa, old;
  HistEvent ev;
  int status = CLI_EXIT_OK;

  memset(&r, 0, sizeof r);
  r.st = st;
  st->repl = 1;
  setlocale(LC_CTYPE, "");               /* libedit edits UTF-8 only under a UTF-8 LC_CTYPE */
  r.el = el_init("gk", stdin, stdout, stderr);
  r.hist = history_init();
  if (!r.el || !r.hist) {
    fprintf(stderr, "gk: error: cannot start line editing\n");
    if (r.el) el_end(r.el);
    if (r.hist) history_end(r.hist);
    return CLI_EXIT_ERROR;
  }
  history(r.hist, &ev, H_SETSIZE, CLI_HISTORY_MAX);
  history(r.hist, &ev, H_SETUNIQUE, 1);
  el_set(r.el, EL_CLIENTDATA, &r);
  el_set(r.el, EL_EDITOR, "emacs");
  el_set(r.el, EL_SIGNAL, 1);            /* libedit restores the tty around signals */
  el_set(r.el, EL_PROMPT, prompt_fn);
  el_set(r.el, EL_HIST, history, r.hist);
  /* The wide call: the narrow EL_ADDFN copies its strings and never frees them. */
  el_wset(r.el, EL_ADDFN, L"gk-complete", L"complete a name", complete_fn);
  el_set(r.el, EL_BIND, "^I", "gk-complete", NULL);
  el_source(r.el, NULL);                 /* ~/.editrc, if any */
  history_open(&r);
  gk_option(st->g, "last", 1);           /* `_` is the last value printed */

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint_prompt;      /* no SA_RESTART: the read must fail */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);

  printf("gk %s \xe2\x80\x94 backend: %s\n", gk_version(), gk_backend(st->g));
  printf("type :help for help, :quit to leave\n");
  fflush(stdout);

  for (;;) {
    const char *line;
    int count = 0;
    size_t len;

    if (!st->out_nl) { fputc('\n', stdout); st->out_nl = 1; }
    fflush(stdout);
    prompt_sigint = 0;
    line = el_gets(r.el, &count);
    if (prompt_sigint || (!line && count < 0 && errno == EINTR)) {
      fputs("^C\n", stdout);             /* drop the line and any continuation */
      r.plen = 0;
      continue;
    }
    if (!line || count <= 0) {           /* Ctrl-D, or the terminal went away */
      fputc('\n', stdout);
      break;
    }
    len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    {
      char *copy = strndup(line, len);   /* el_gets' buffer is reused */
      const char *s;
      if (!copy) { fprintf(stderr, "gk: error: out of memory\n"); status = CLI_EXIT_ERROR; break; }
      for (s = copy; isspace((unsigned char)*s); s++) {}
      if (r.plen == 0 && (*s == '?' || *s == ':')) history_add(&r, copy);
      if (r.plen == 0 && *s == '?') {    /* ?NAME: help, as in Julia and IPython */
        cli_help(st, s + 1);
        free(copy);
        continue;
      }
      if (r.plen == 0 && *s == ':') {
        int quit = command(&r, s);
        free(copy);
        if (quit) break;
        continue;
      }
      if (r.plen == 0 && *s == '\0') { free(copy); continue; }
      if (pending_add(&r, copy, len) != 0) {
        fprintf(stderr, "gk: error: out of memory\n");
        r.plen = 0;
      }
      free(copy);
    }
    if (r.plen > 0 && gk_is_complete(r.pending)) {
      r.plen = 0;                        /* prompt_fn reads plen */
      history_add(&r, r.pending);        /* the whole entry: Up brings all its lines back */
      set_width(&r);
      run_entry(&r, r.pending, st->timing);
    }
  }

  sigaction(SIGINT, &old, NULL);
  if (r.histf) fclose(r.histf);
  history_end(r.hist);
  el_end(r.el);
  free(r.pending);
  st->repl = 0;
  return status;
}
