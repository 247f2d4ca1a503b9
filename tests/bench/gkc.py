"""gk through ctypes, for the benchmark (tests/bench/gkc.py).

Gk(lib, backend, profile) opens a context on libgk.so.  Arrays go in and out
through DLPack capsules, so gk reads the very bytes the peer reads:
  put(name, capsule)   gk_from_dlpack (gk takes ownership; no copy)
  take(name)           gk_to_dlpack -> a "dltensor" capsule (shares gk's buffer)
prepare/step/sync/get wrap the C calls; plan_of(fn) runs fn with the "plan"
option on and returns the plan text gk printed; close() returns the
GK_PROFILE lines the cuda backend writes to stderr when it closes.
"""
import ctypes, os, re, tempfile

c_p = ctypes.c_void_p

class GkError(RuntimeError):
    pass

class _Config(ctypes.Structure):
    _fields_ = [("alloc", c_p), ("alloc_ud", c_p), ("output", c_p), ("output_ud", c_p),
                ("error", c_p), ("error_ud", c_p), ("backend", ctypes.c_char_p),
                ("compile", c_p), ("compile_ud", c_p)]   # ORDER: gk.h's gk_config

class _VarInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("bytes", ctypes.c_size_t), ("where", ctypes.c_char_p)]

_OUTPUT = ctypes.CFUNCTYPE(None, c_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
_VARFN = ctypes.CFUNCTYPE(None, c_p, ctypes.POINTER(_VarInfo))

# PyCapsule names must outlive the capsules (PyCapsule_SetName keeps the pointer).
DLTENSOR = b"dltensor"
USED = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = c_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_p, ctypes.c_char_p, c_p]

DTYPES = {0: "bool", 1: "i32", 2: "i64", 3: "f32", 4: "f64"}

def load(path):
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    lib.gk_open_ex.restype = c_p
    lib.gk_open_ex.argtypes = [ctypes.POINTER(_Config), ctypes.POINTER(ctypes.c_char_p)]
    lib.gk_errmsg.restype = ctypes.c_char_p
    lib.gk_errmsg.argtypes = [c_p]
    lib.gk_backend.restype = ctypes.c_char_p
    lib.gk_backend.argtypes = [c_p]
    for f in ("gk_eval", "gk_sync", "gk_flush", "gk_close", "gk_option", "gk_from_dlpack", "gk_to_dlpack", "gk_unset",
              "gk_get", "gk_prepare", "gk_vars", "gk_shape"):
        getattr(lib, f).argtypes = None
    lib.gk_close.restype = None
    lib.gk_step.argtypes = [c_p]
    lib.gk_finalize.argtypes = [c_p]
    lib.gk_finalize.restype = None
    lib.gk_version.restype = ctypes.c_char_p
    lib.gk_config_size.restype = ctypes.c_size_t
    if lib.gk_config_size() != ctypes.sizeof(_Config):
        raise GkError("gk_config is %d bytes in %s, %d here" % (lib.gk_config_size(), path, ctypes.sizeof(_Config)))
    return lib

class Gk:
    def __init__(self, lib, backend, profile=False):
        self.lib = lib
        self.out = []
        self._cb = _OUTPUT(lambda ud, p, n: self.out.append(ctypes.string_at(p, n).decode(errors="replace")))
        cfg = _Config()
        cfg.output = ctypes.cast(self._cb, c_p)
        cfg.backend = backend.encode()
        old = os.environ.get("GK_PROFILE")
        os.environ["GK_PROFILE"] = str(int(profile))   # read by the cuda backend when it opens (2: every launch)
        why = ctypes.c_char_p()
        self.g = lib.gk_open_ex(ctypes.byref(cfg), ctypes.byref(why))
        if old is None: del os.environ["GK_PROFILE"]
        else: os.environ["GK_PROFILE"] = old
        if not self.g:
            raise GkError("gk_open_ex(%s): %s" % (backend, (why.value or b"").decode()))
        self.backend = lib.gk_backend(c_p(self.g)).decode()
        self.stmts = []

    def _ok(self, rc, what):
        if rc:
            raise GkError("%s: %s" % (what, self.lib.gk_errmsg(c_p(self.g)).decode().strip()))

    def eval(self, src):
        self._ok(self.lib.gk_eval(c_p(self.g), src.encode()), src)

    def put(self, name, capsule):
        ptr = _api.PyCapsule_GetPointer(capsule, DLTENSOR)
        _api.PyCapsule_SetName(capsule, USED)   # gk owns it now: the capsule must not call the deleter
        self._ok(self.lib.gk_from_dlpack(c_p(self.g), name.encode(), c_p(ptr)), "gk_from_dlpack " + name)

    def take(self, name):
        p = c_p()
        self._ok(self.lib.gk_to_dlpack(c_p(self.g), name.encode(), ctypes.byref(p)), "gk_to_dlpack " + name)
        return _api.PyCapsule_New(p, DLTENSOR, None)

    def unset(self, name):
        self._ok(self.lib.gk_unset(c_p(self.g), name.encode()), "gk_unset " + name)

    def prepare(self, src):
        st = c_p()
        self._ok(self.lib.gk_prepare(c_p(self.g), src.encode(), ctypes.byref(st), None), "gk_prepare " + src)
        self.stmts.append(st)
        return st

    def step(self, st):
        rc = self.lib.gk_step(st)
        if rc: self._ok(rc, "gk_step")

    def sync(self):
        self._ok(self.lib.gk_sync(c_p(self.g)), "gk_sync")

    def flush(self):
        self._ok(self.lib.gk_flush(c_p(self.g)), "gk_flush")

    def option(self, name, v):
        self._ok(self.lib.gk_option(c_p(self.g), name.encode(), ctypes.c_int(v)), "gk_option " + name)

    def vars(self):
        got = {}
        def fn(ud, v):
            v = v.contents
            got[v.name.decode()] = (DTYPES.get(v.dtype), tuple(v.shape[i] for i in range(v.ndim)), v.where.decode())
        cb = _VARFN(fn)
        self._ok(self.lib.gk_vars(c_p(self.g), cb, None), "gk_vars")
        return got

    def plan_of(self, fn):
        """Runs fn() with the plan option on; returns what gk printed."""
        self.out = []
        self.option("plan", 1)
        try:
            fn()
        finally:
            self.option("plan", 0)
        return "".join(self.out)

    def close(self):
        """Closes the context; returns the stderr it wrote (GK_PROFILE lines)."""
        if not self.g: return ""
        for st in self.stmts: self.lib.gk_finalize(st)
        self.stmts = []
        with tempfile.TemporaryFile() as tmp:
            saved = os.dup(2)
            os.dup2(tmp.fileno(), 2)
            try:
                self.lib.gk_close(c_p(self.g))
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            self.g = None
            tmp.seek(0)
            return tmp.read().decode(errors="replace")

PROFILE_RE = re.compile(r"gk-profile: (\S+) (\S+) launches=(\d+) median_us=([\d.]+) min_us=([\d.]+) bytes=(\d+)")

def parse_profile(text):
    """[(kname, kind, launches, median_us, min_us, bytes)] from GK_PROFILE lines."""
    return [(m.group(1), m.group(2), int(m.group(3)), float(m.group(4)), float(m.group(5)), int(m.group(6)))
            for m in PROFILE_RE.finditer(text)]

TIMES_RE = re.compile(r"gk-profile-times: (\S+)((?: [\d.]+)*)")

def parse_times(text):
    """{kname: [us of every launch, in launch order]} from GK_PROFILE=2's lines."""
    return {m.group(1): [float(t) for t in m.group(2).split()] for m in TIMES_RE.finditer(text)}

LAZY_SOURCES = ("rand", "randn", "iota")

def lazy_sources(plan):
    """The lazy-source nodes in a plan text: '%2 = rand : f32[..]' lines."""
    bad = []
    for line in plan.splitlines():
        m = re.match(r"\s*%\d+ = (\w+)\b", line)
        if m and m.group(1) in LAZY_SOURCES: bad.append(line.strip())
    return bad

def kernel_inputs(plan):
    """Per kernel of a plan text: its 'in:' entries (empty list for 'in: -')."""
    ins = []
    for line in plan.splitlines():
        s = line.strip()
        if s.startswith("in:"):
            rest = s[3:].strip()
            ins.append([] if rest in ("", "-") else re.findall(r"%\d+ \w+\[[\d,]*\]", rest))
    return ins
