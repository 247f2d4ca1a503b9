"""The array libraries the benchmark drives (tests/bench/peers.py).

TorchPeer: the device run -- torch makes every input on the GPU; its eager
ops and torch.compile (Inductor) versions are the peers; CUDA events time
them.  NumpyPeer: a structural run with no GPU (gk's cpu backend, numpy
arrays shared through DLPack, numpy as the peer, host clock), so that the
driver can be tested where there is no device.

Both have the same op names (the `peer` field of each benchmark case); an op
takes the case's inputs and returns one array.
"""
import math, time

class TorchPeer:
    name = "torch"
    device_kind = 2   # kDLCUDA

    def __init__(self):
        import torch
        import torch.nn.functional as F
        import torch.utils.dlpack
        self.torch, self.F = torch, F
        self.version = torch.__version__
        self.gpu = torch.cuda.get_device_name(0)
        self.dt = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32}
        cfg = torch._dynamo.config
        for k in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
            if hasattr(cfg, k): setattr(cfg, k, 4096)
        if hasattr(cfg, "automatic_dynamic_shapes"): cfg.automatic_dynamic_shapes = False
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(1234)

    # --- arrays
    def make(self, kind, shape, dt):
        t = self.torch
        if dt == "i32":
            return t.randint(-1000, 1000, shape, dtype=t.int32, device="cuda", generator=self.gen)
        if kind == "randn":
            return t.randn(shape, dtype=self.dt[dt], device="cuda", generator=self.gen)
        return t.rand(shape, dtype=self.dt[dt], device="cuda", generator=self.gen)

    def capsule(self, a):
        return self.torch.utils.dlpack.to_dlpack(a)

    def from_capsule(self, cap):
        return self.torch.utils.dlpack.from_dlpack(cap)

    def ptr(self, a):
        return a.data_ptr()

    def sync(self):
        self.torch.cuda.synchronize()

    def warm_clocks(self, seconds):
        """Keeps every SM busy (f32 matmuls of 4096^2) for `seconds`: an idle card starts at its
        lowest SM clock (345 MHz on the session-27 H100) and the first latency-bound cases of a run
        timed 1-3 us slower than the same kernels later (session 27, NOTES.md)."""
        t = self.torch
        a = t.ones(4096, 4096, device="cuda")
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(8): a = (a @ a) * (1.0 / 4096)
            self.sync()
        del a

    def empty(self, n, dt):
        d = {"f32": self.torch.float32, "f64": self.torch.float64, "i32": self.torch.int32,
             "i64": self.torch.int64}[dt]
        return self.torch.empty(n, dtype=d, device="cuda")

    def poison(self, a):
        if a.is_floating_point(): a.fill_(float("nan"))
        else: a.fill_(-123456789)

    def up(self, a):
        """The reference's input: f64 for floats, as is for ints."""
        return a.double() if a.is_floating_point() else a

    def compare(self, got, ref, tol):
        """(ok, error): exact (tol 0) or relative 2-norm error <= tol; shapes must match."""
        t = self.torch
        if tuple(got.shape) != tuple(ref.shape):
            return False, "shape %s, reference %s" % (tuple(got.shape), tuple(ref.shape))
        g, r = got.double(), ref.double()
        if t.isnan(g).any().item(): return False, "NaN in output"
        if tol == 0:
            bad = (g != r).sum().item()
            return bad == 0, "%d elements differ" % bad
        if tol < 0:   # counts: total |difference| <= -tol * total
            d = (g - r).abs().sum().item()
            return d <= -tol * max(1.0, r.abs().sum().item()), "count difference %d" % d
        den = t.linalg.vector_norm(r).item()
        err = t.linalg.vector_norm(g - r).item() / (den if den else 1.0)
        return err <= tol, "rel err %.2e" % err

    def argmax_ref(self, x):
        m = x.max()
        return (x == m).nonzero()[0, 0]

    # --- timing
    def time_events(self, fn, argsets, warm, reps):
        t = self.torch
        for i in range(warm): fn(*argsets[i % len(argsets)])
        t.cuda.synchronize()
        ev = [(t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for i in range(reps):
            a, b = ev[i]
            args = argsets[i % len(argsets)]
            a.record(); fn(*args); b.record()
        t.cuda.synchronize()
        return [a.elapsed_time(b) * 1000.0 for a, b in ev]

    def time_wall(self, fn, argsets, warm, reps):
        t = self.torch
        for i in range(warm): fn(*argsets[i % len(argsets)])
        t.cuda.synchronize()
        ts = []
        for i in range(reps):
            args = argsets[i % len(argsets)]
            t0 = time.perf_counter(); fn(*args); t.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e6)
        return ts

    def compiled(self, fn):
        return self.torch.compile(fn, dynamic=False, fullgraph=True)

    # --- the ops (each returns one tensor)
    def map2x1(self, x): return x * 2 + 1
    def sum(self, x): return x.sum()
    def max(self, x): return x.max()
    def min(self, x): return x.min()
    def argmax(self, x): return x.argmax()
    def norm(self, x): return self.torch.linalg.vector_norm(x)
    def dot(self, x, y): return self.torch.dot(x, y)
    def mean(self, x): return x.mean()
    def var(self, x): return x.var(correction=0)
    def sum_xy1(self, x, y): return (x * y + 1).sum()
    def sumexp(self, x): return self.torch.exp(x - x.max()).sum()
    def logsumexp(self, x): return self.torch.logsumexp(x, 0)
    def scan(self, x): return self.torch.cumsum(x, 0)
    def filter(self, x): return x[x > 0.5]
    def hist(self, x): return self.torch.histc(x, 256, 0, 1)
    def softmax_rows(self, m): return self.torch.softmax(m, 1)
    def logsoftmax_rows(self, m): return self.torch.log_softmax(m, 1)
    def layernorm_rows(self, m): return self.F.layer_norm(m, (m.shape[1],), eps=1e-5)
    def rmsnorm_rows(self, m): return self.F.rms_norm(m, (m.shape[1],), eps=1e-5)
    def sum_rows(self, m): return m.sum(1)
    def max_rows(self, m): return m.amax(1)
    def min_rows(self, m): return m.amin(1)
    def argmax_rows(self, m): return m.argmax(1)
    def mean_rows(self, m): return m.mean(1)
    def var_rows(self, m): return m.var(1, correction=0)
    def sum_cols(self, m): return m.sum(0)
    def max_cols(self, m): return m.amax(0)
    def sum_axis1(self, t): return t.sum(1)
    def max_axis1(self, t): return t.amax(1)
    def scan_rows(self, m): return self.torch.cumsum(m, 1)
    def scan_cols(self, m): return self.torch.cumsum(m, 0)
    def transpose(self, m): return m.t().contiguous()
    def nchw_nhwc(self, t): return t.permute(0, 2, 3, 1).contiguous()
    def nhwc_nchw(self, t): return t.permute(0, 3, 1, 2).contiguous()
    def perm201(self, t): return t.permute(2, 0, 1).contiguous()
    def sort(self, x): return self.torch.sort(x, stable=True).values
    def argsort(self, x): return self.torch.sort(x, stable=True).indices
    def sort_rows(self, m): return self.torch.sort(m, dim=1, stable=True).values
    def topk1_rows(self, m): return self.torch.topk(m, 1, 1).values
    def topk8_rows(self, m): return self.torch.topk(m, 8, 1).values
    def topk64_rows(self, m): return self.torch.topk(m, 64, 1).values

    def hist_ref(self, x):
        t = self.torch
        b = (x.double() * 256).floor().clamp(0, 255).long()
        return t.bincount(b, minlength=256)


class NumpyPeer:
    """No GPU: numpy arrays on the host, gk's cpu backend."""
    name = "numpy"
    device_kind = 1   # kDLCPU

    def __init__(self):
        import numpy as np
        self.np = np
        self.version = np.__version__
        self.gpu = "none (cpu backend)"
        self.rng = np.random.default_rng(1234)
        self.dt = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}

    def make(self, kind, shape, dt):
        if dt == "i32": return self.rng.integers(-1000, 1000, shape, dtype=self.np.int32)
        if kind == "randn": return self.rng.standard_normal(shape).astype(self.dt[dt])
        return self.rng.random(shape, dtype=self.np.float64).astype(self.dt[dt])

    def capsule(self, a):
        return a.__dlpack__()

    def from_capsule(self, cap):
        class C:
            def __dlpack__(s, **kw): return cap
            def __dlpack_device__(s): return (1, 0)
        return self.np.from_dlpack(C())

    def ptr(self, a): return a.ctypes.data
    def sync(self): pass
    def empty(self, n, dt): return self.np.empty(n, dtype=self.dt[dt])

    def poison(self, a):
        # gk's exported arrays arrive read-only: all bytes 0xff (NaN for floats, -1 for ints)
        import ctypes
        ctypes.memset(a.ctypes.data, 0xFF, a.nbytes)

    def up(self, a):
        return a.astype(self.np.float64) if a.dtype.kind == "f" else a

    def compare(self, got, ref, tol):
        np = self.np
        got, ref = np.asarray(got), np.asarray(ref)
        if got.shape != ref.shape: return False, "shape %s, reference %s" % (got.shape, ref.shape)
        g, r = got.astype(np.float64), ref.astype(np.float64)
        if np.isnan(g).any(): return False, "NaN in output"
        if tol == 0:
            bad = int((g != r).sum())
            return bad == 0, "%d elements differ" % bad
        if tol < 0:
            d = float(np.abs(g - r).sum())
            return d <= -tol * max(1.0, float(np.abs(r).sum())), "count difference %d" % d
        den = float(np.linalg.norm(r.ravel()))
        err = float(np.linalg.norm((g - r).ravel())) / (den if den else 1.0)
        return err <= tol, "rel err %.2e" % err

    def argmax_ref(self, x): return self.np.argmax(x)

    def time_events(self, fn, argsets, warm, reps):
        return self.time_wall(fn, argsets, warm, reps)

    def time_wall(self, fn, argsets, warm, reps):
        for i in range(warm): fn(*argsets[i % len(argsets)])
        ts = []
        for i in range(reps):
            args = argsets[i % len(argsets)]
            t0 = time.perf_counter(); fn(*args); ts.append((time.perf_counter() - t0) * 1e6)
        return ts

    compiled = None

    def _softmax(self, m):
        e = self.np.exp(m - m.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def map2x1(self, x): return x * x.dtype.type(2) + x.dtype.type(1)
    def sum(self, x): return self.np.sum(x, dtype=self.np.int64 if x.dtype.kind == "i" else x.dtype)
    def max(self, x): return self.np.max(x)
    def min(self, x): return self.np.min(x)
    def argmax(self, x): return self.np.argmax(x)
    def norm(self, x): return self.np.linalg.norm(x)
    def dot(self, x, y): return self.np.dot(x, y)
    def mean(self, x): return self.np.mean(x)
    def var(self, x): return self.np.var(x)
    def sum_xy1(self, x, y): return (x * y + 1).sum()
    def sumexp(self, x): return self.np.exp(x - x.max()).sum()
    def logsumexp(self, x): m = x.max(); return m + self.np.log(self.np.exp(x - m).sum())
    def scan(self, x): return self.np.cumsum(x, dtype=self.np.int64 if x.dtype.kind == "i" else x.dtype)
    def filter(self, x): return x[x > 0.5]
    def hist(self, x): return self.np.histogram(x, 256, (0, 1))[0]
    def softmax_rows(self, m): return self._softmax(m)
    def logsoftmax_rows(self, m): return self.np.log(self._softmax(m))
    def layernorm_rows(self, m):
        mu = m.mean(1, keepdims=True)
        return (m - mu) / self.np.sqrt(((m - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    def rmsnorm_rows(self, m): return m / self.np.sqrt((m * m).mean(1, keepdims=True) + 1e-5)
    def sum_rows(self, m): return m.sum(1)
    def max_rows(self, m): return m.max(1)
    def min_rows(self, m): return m.min(1)
    def argmax_rows(self, m): return self.np.argmax(m, 1)
    def mean_rows(self, m): return m.mean(1)
    def var_rows(self, m): return m.var(1)
    def sum_cols(self, m): return m.sum(0)
    def max_cols(self, m): return m.max(0)
    def sum_axis1(self, t): return t.sum(1)
    def max_axis1(self, t): return t.max(1)
    def scan_rows(self, m): return self.np.cumsum(m, 1)
    def scan_cols(self, m): return self.np.cumsum(m, 0)
    def transpose(self, m): return self.np.ascontiguousarray(m.T)
    def nchw_nhwc(self, t): return self.np.ascontiguousarray(t.transpose(0, 2, 3, 1))
    def nhwc_nchw(self, t): return self.np.ascontiguousarray(t.transpose(0, 3, 1, 2))
    def perm201(self, t): return self.np.ascontiguousarray(t.transpose(2, 0, 1))
    def sort(self, x): return self.np.sort(x, kind="stable")
    def argsort(self, x): return self.np.argsort(x, kind="stable")
    def sort_rows(self, m): return self.np.sort(m, 1, kind="stable")
    def _topk(self, m, k): return -self.np.sort(-m, 1, kind="stable")[:, :k]
    def topk1_rows(self, m): return self._topk(m, 1)
    def topk8_rows(self, m): return self._topk(m, 8)
    def topk64_rows(self, m): return self._topk(m, 64)

    def hist_ref(self, x):
        b = self.np.clip(self.np.floor(x.astype(self.np.float64) * 256), 0, 255).astype(self.np.int64)
        return self.np.bincount(b, minlength=256)
