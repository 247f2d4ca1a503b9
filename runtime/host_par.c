/*
** runtime/host_par.c -- the CPU backend's thread pool.
**
** One process-wide pool of par_threads() - 1 worker threads, started lazily
** (pthread_once) by the first par_for that is big enough to split; the
** calling thread is the last member of the team.  A par_for publishes a job
** (fn, ctx, chunk size, chunk count) under the pool mutex, bumps a
** generation counter and wakes the workers; every member claims chunks from
** an atomic counter until none are left; the caller returns once every
** chunk has been run -- not waiting for workers that have not woken yet
** (on a loaded machine that wait is a scheduler time slice).  A claim is a
** compare-and-swap on (job generation, next chunk), so a worker that wakes
** late, or holds an old job's fields, finds the generation changed and
** claims nothing: no worker runs a stale job.
**
** Chunk boundaries depend only on (n, grain): chunk i is
** [i*cs, min(n, (i+1)*cs)) with cs = par_chunk_size(n, grain).  Which thread
** runs a chunk varies; what each chunk covers never does, so per-chunk
** partial results combined in chunk order are bit-identical run to run.
**
** Only one par_for uses the pool at a time (a trylock on `busy`): a second
** caller -- another context's thread, or fn itself calling par_for -- runs
** its loop inline instead of waiting, so there is no deadlock and no
** unbounded queue.  If a worker thread cannot be created the pool simply has
** fewer workers (possibly none: then everything runs inline).
*/
#include "runtime/host.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct par_pool {
  pthread_mutex_t mu;       /* guards gen and the job fields */
  pthread_cond_t work;      /* signalled when gen changes */
  pthread_cond_t done;      /* signalled when the last chunk of the job has run */
  pthread_mutex_t busy;     /* held by the one par_for using the pool */
  int nworkers;             /* threads actually started */
  int nthreads;             /* par_threads(): workers + caller */
  uint64_t gen;             /* job generation, bumped per par_for */
  par_fn fn;                /* current job */
  void *ctx;
  int64_t n, cs, nchunks;
  _Atomic uint64_t claim;   /* (gen mod 2^32) << 32 | next unclaimed chunk of the current job */
  atomic_llong finished;    /* chunks of the current job run (or skipped under an interrupt) */
  _Atomic int *stop;        /* the caller's interrupt flag (host_interrupt) */
} par_pool;

static par_pool pool = {
  .mu = PTHREAD_MUTEX_INITIALIZER,
  .work = PTHREAD_COND_INITIALIZER,
  .done = PTHREAD_COND_INITIALIZER,
  .busy = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

/* Reads GK_THREADS (1..PAR_MAX_THREADS), else the number of online CPUs. */
static void threads_init(void) {
  long t = 0;
  const char *e = getenv("GK_THREADS");
  if (e && *e) {
    char *end;
    t = strtol(e, &end, 10);
    if (*end) t = 0;
  }
  if (t <= 0) t = sysconf(_SC_NPROCESSORS_ONLN);
  if (t <= 0) t = 1;
  if (t > PAR_MAX_THREADS) t = PAR_MAX_THREADS;
  pool.nthreads = (int)t;
}

int par_threads(void) {
  pthread_once(&threads_once, threads_init);
  return pool.nthreads;
}

int64_t par_chunk_size(int64_t n, int64_t grain) {
  if (grain < 1) grain = 1;
  int64_t cs = (n + PAR_MAX_CHUNKS - 1) / PAR_MAX_CHUNKS;
  return cs > grain ? cs : grain;
}

int64_t par_nchunks(int64_t n, int64_t grain) {
  if (n <= 0) return 0;
  int64_t cs = par_chunk_size(n, grain);
  return (n + cs - 1) / cs;
}

static _Thread_local _Atomic int *my_stop;
void host_interrupt(_Atomic int *flag) { my_stop = flag; }
static int is_set(_Atomic int *f) { return f && atomic_load_explicit(f, memory_order_relaxed); }
int host_stopped(void) { return is_set(my_stop); }

/* Claims and runs chunks of job generation g until none are left (a chunk
** claimed while the job's interrupt flag is set is skipped, still counted);
** whoever finishes the last chunk wakes the caller. */
static void run_chunks(uint32_t g, par_fn fn, void *ctx, int64_t n, int64_t cs, int64_t nchunks, _Atomic int *stop) {
  uint64_t v = atomic_load(&pool.claim);
  for (;;) {
    if ((uint32_t)(v >> 32) != g || (int64_t)(v & 0xffffffffu) >= nchunks) break;
    if (!atomic_compare_exchange_weak(&pool.claim, &v, v + 1)) continue;   /* v reloaded */
    int64_t i = (int64_t)(v & 0xffffffffu), b = i * cs, e = b + cs < n ? b + cs : n;
    if (!is_set(stop)) fn(ctx, b, e);
    if (atomic_fetch_add(&pool.finished, 1) + 1 == nchunks) {
      pthread_mutex_lock(&pool.mu);
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.mu);
    }
    v = atomic_load(&pool.claim);
  }
}

static void *worker(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    while (pool.gen == seen) pthread_cond_wait(&pool.work, &pool.mu);
    seen = pool.gen;
    par_fn fn = pool.fn;
    void *ctx = pool.ctx;
    int64_t n = pool.n, cs = pool.cs, nc = pool.nchunks;
    _Atomic int *stop = pool.stop;
    pthread_mutex_unlock(&pool.mu);
    run_chunks((uint32_t)seen, fn, ctx, n, cs, nc, stop);
    pthread_mutex_lock(&pool.mu);
  }
  return NULL; /* not reached: workers live as long as the process */
}

/* Starts the workers once.  Failures leave fewer workers; never an error. */
static void pool_init(void) {
  int want = par_threads() - 1;
  sigset_t block, old;   /* workers never take SIGINT: it is the host's (cu_nvrtc.c says why) */
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  for (int i = 0; i < want; i++) {
    pthread_t th;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) break;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &at, worker, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) break;
    pool.nworkers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Runs fn over [0,n) in chunks, inline. */
static int run_inline(par_fn fn, void *ctx, int64_t n, int64_t cs) {
  for (int64_t b = 0; b < n; b += cs) {
    if (host_stopped()) return GK_EINTERRUPT;
    fn(ctx, b, b + cs < n ? b + cs : n);
  }
  return GK_OK;
}

int par_for(int64_t n, int64_t grain, par_fn fn, void *ctx) {
  if (n <= 0) return GK_OK;
  int64_t cs = par_chunk_size(n, grain);
  int64_t nc = (n + cs - 1) / cs;
  if (nc < 2 || par_threads() < 2) return run_inline(fn, ctx, n, cs);
  pthread_once(&pool_once, pool_init);
  if (pool.nworkers == 0 || pthread_mutex_trylock(&pool.busy) != 0) return run_inline(fn, ctx, n, cs);
  pthread_mutex_lock(&pool.mu);
  pool.fn = fn;
  pool.ctx = ctx;
  pool.n = n;
  pool.cs = cs;
  pool.nchunks = nc;
  pool.stop = my_stop;
  pool.gen++;
  uint32_t g = (uint32_t)pool.gen;
  atomic_store(&pool.finished, 0);
  atomic_store(&pool.claim, (uint64_t)g << 32);
  pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.mu);

  run_chunks(g, fn, ctx, n, cs, nc, my_stop);

  pthread_mutex_lock(&pool.mu);
  while (atomic_load(&pool.finished) < nc) pthread_cond_wait(&pool.done, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
  pthread_mutex_unlock(&pool.busy);
  return host_stopped() ? GK_EINTERRUPT : GK_OK;
}
