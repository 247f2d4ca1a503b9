"""gk -- the gk array language from Python.

    import numpy as np, gk
    with gk.Context() as g:                 # cuda when usable, else cpu ($GK_BACKEND)
        g["m"] = np.random.rand(3, 4)       # any __dlpack__ object: numpy, torch, cupy, jax
        g.eval("e = softmax(rows(m))")
        e = np.from_dlpack(g["e"])          # or torch.from_dlpack(g["e"]), g["e"].numpy()

A thin ctypes layer over libgk.so (gk.h); docs/python.md is the guide.
Arrays move both ways through DLPack without a copy where the device and
dtype allow it; `Context.last_set_copied` says whether the last assignment
copied.  gk's values are immutable: do not write into an exported array,
and do not modify an array while it is lent to gk.
"""
import builtins
import ctypes
import sys
import threading
import weakref

import numpy as np

from . import _lib
from ._lib import lib, py

__version__ = lib.gk_version().decode()
__all__ = ["Context", "Array", "Statement", "Error", "backend_available"]

# ------------------------------------------------------------------ errors


class Error(Exception):
    """A gk failure: .status is the GK_E* code, .message the library's text
    exactly (located errors: "FILE:LINE:COL: error: ...", the source line and
    a caret); str() is the message without its final newline."""

    def __init__(self, status, message):
        super().__init__(message.rstrip("\n"))
        self.status = status
        self.message = message


class SyntaxError(Error):          # noqa: A001 -- gk.SyntaxError, as socket.timeout
    """GK_ESYNTAX: the source text does not parse."""


class TypeError(Error, builtins.TypeError):      # noqa: A001
    """GK_ETYPE: unknown name, wrong arity, dtype or shape mismatch."""


class MemoryError(Error, builtins.MemoryError):  # noqa: A001
    """GK_ENOMEM: host or device memory exhausted."""


class DeviceError(Error):
    """GK_EDEVICE: the CUDA driver reported an error, or no usable device."""


class JITError(Error):
    """GK_EJIT: NVRTC failed to compile a generated kernel."""


class IOError(Error, builtins.OSError):          # noqa: A001
    """GK_EIO: a file could not be read or written, or is malformed."""


class MisuseError(Error):
    """GK_EMISUSE: bad arguments (unknown variable, unsupported array, closed context)."""


class ValueError(Error, builtins.ValueError):    # noqa: A001
    """GK_EVALUE: a run-time value error (empty array, index out of range)."""


class InterruptError(Error):
    """GK_EINTERRUPT: Context.interrupt() stopped the statement."""


class LimitError(Error):
    """GK_ELIMIT: a named limit was exceeded (nesting, source size, rank, bytes)."""


_BY_STATUS = {_lib.ESYNTAX: SyntaxError, _lib.ETYPE: TypeError, _lib.ENOMEM: MemoryError,
              _lib.EDEVICE: DeviceError, _lib.EJIT: JITError, _lib.EIO: IOError,
              _lib.EMISUSE: MisuseError, _lib.EVALUE: ValueError,
              _lib.EINTERRUPT: InterruptError, _lib.ELIMIT: LimitError}


def _error(status, message):
    return _BY_STATUS.get(status, Error)(status, message)


# ------------------------------------------------------------------ dtypes

_NAMES = ("bool", "i32", "i64", "f32", "f64")
_NP = (np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32),
       np.dtype(np.float64))
_DL = ((_lib.kDLBool, 8), (_lib.kDLInt, 32), (_lib.kDLInt, 64), (_lib.kDLFloat, 32),
       (_lib.kDLFloat, 64))
_FROM_DL = {dl: t for t, dl in enumerate(_DL)}


def _gk_of_numpy(dt):
    """(gk dtype, exact) for a numpy dtype: exact when the bytes can be used
    as they are; otherwise the dtype a copy converts to (a widening that
    loses nothing); None when gk has nothing that holds it."""
    if dt.isnative or dt.itemsize == 1:
        for t, n in enumerate(_NP):
            if dt == n:
                return t, True
    k, s = dt.kind, dt.itemsize
    if k == "b":
        return _lib.BOOL, False
    if k == "i":
        return (_lib.I32 if s <= 4 else _lib.I64), False
    if k == "u" and s <= 4:
        return (_lib.I32 if s <= 2 else _lib.I64), False
    if k == "f" and s <= 8:
        return (_lib.F32 if s <= 4 else _lib.F64), False
    return None


# ------------------------------------------------- DLPack: who holds what
#
# Every DLManagedTensor the package hands out -- to gk (Context.set) or to a
# consumer (Array.__dlpack__) -- is one of ours: a ctypes struct whose
# manager_ctx is one counted reference to a tuple of what it keeps alive, and
# whose deleter is gkpy_deleter (C, gkpy.c), which drops that reference with
# the GIL, from any thread, even while an exception is propagating.
#   - lent to gk: the tuple holds the producer's capsule, unconsumed (its own
#     destructor then calls the producer's deleter) and the Python object
#     itself, until gk calls the deleter;
#   - exported: the tuple holds the Array, whose one gk export (gk_to_dlpack)
#     pins the value, until the consumer calls the deleter -- also after the
#     context is closed.


def _new_tensor(data, device, dev_id, t, shape, keep):
    """A DLManagedTensor of gk dtype t, compact C order, keeping `keep` alive
    until its deleter runs.  Returns its address."""
    m = _lib.DLManagedTensor()
    shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    d = m.dl_tensor
    d.data = data
    d.device.device_type = device
    d.device.device_id = dev_id
    d.ndim = len(shape)
    d.dtype.code, d.dtype.bits = _DL[t]
    d.dtype.lanes = 1
    d.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    d.strides = None
    d.byte_offset = 0
    held = (m, shp, keep)
    py.Py_IncRef(ctypes.py_object(held))       # dropped by gkpy_deleter
    m.manager_ctx = id(held)
    m.deleter = _lib.DELETER
    return ctypes.addressof(m)


class _Capsule:
    """Hands one capsule to np.from_dlpack (which consumes it)."""

    def __init__(self, cap, device):
        self.cap, self.device = cap, device

    def __dlpack__(self, *args, **kwargs):
        cap, self.cap = self.cap, None
        return cap

    def __dlpack_device__(self):
        return self.device


def _tensor_of(cap):
    """The DLManagedTensor inside an unconsumed "dltensor" capsule."""
    if not py.PyCapsule_IsValid(id(cap), _lib.CAPSULE_NAME):
        raise MisuseError(_lib.EMISUSE, "gk: __dlpack__ did not return a capsule named 'dltensor'")
    return _lib.DLManagedTensor.from_address(py.PyCapsule_GetPointer(id(cap), _lib.CAPSULE_NAME))


def _layout_problem(d, t_size):
    """Why gk cannot take DLTensor d without a copy, or None."""
    shape = [d.shape[i] for i in range(d.ndim)]
    if d.strides:
        want = 1
        for i in range(d.ndim - 1, -1, -1):
            if shape[i] != 1 and d.strides[i] != want and 0 not in shape:
                return "it is not contiguous (dimension %d has stride %d, C order needs %d)" % (
                    i, d.strides[i], want)
            want *= shape[i]
    if ((d.data or 0) + d.byte_offset) % t_size:
        return "its data is not aligned to its %d-byte elements" % t_size
    return None


# ------------------------------------------------------------------ arrays


class _Export:
    """One gk_to_dlpack export, deleted (once) when the Array goes."""

    __slots__ = ("ptr", "t")

    def __init__(self, ptr):
        self.ptr = ptr
        self.t = _lib.DLManagedTensor.from_address(ptr)

    def __del__(self):
        try:
            _lib.DLDeleterHeld(self.t.deleter)(self.ptr)
        except Exception:   # interpreter shutdown
            pass


class Array:
    """A computed gk value (immutable).  Supports DLPack (`np.from_dlpack(a)`,
    `torch.from_dlpack(a)`, `cupy.from_dlpack(a)`) without a copy; it stays
    valid after its context is closed."""

    __slots__ = ("_x", "shape", "dtype", "gk_dtype", "_dl_device", "__weakref__")

    def __init__(self, export):
        self._x = export
        d = export.t.dl_tensor
        self.shape = tuple(d.shape[i] for i in range(d.ndim))
        t = _FROM_DL[(d.dtype.code, d.dtype.bits)]
        self.gk_dtype = _NAMES[t]
        self.dtype = _NP[t]
        self._dl_device = (int(d.device.device_type), int(d.device.device_id))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    @property
    def device(self):
        """'cpu' or 'cuda:N'."""
        kind, n = self._dl_device
        return "cpu" if kind == _lib.kDLCPU else "cuda:%d" % n

    def __dlpack_device__(self):
        return self._dl_device

    def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
        """A "dltensor" capsule (DLPack v0.8 ABI; a legacy capsule is what a
        producer without versioned support returns for any max_version).  The
        data are complete when this returns: gk_to_dlpack waited for gk's
        work when the Array was made, and the value never changes, so any
        consumer `stream` may read it at once (none needs an event)."""
        if stream is not None and not isinstance(stream, int):
            raise builtins.TypeError("stream must be an int or None")
        if dl_device is not None and tuple(dl_device) != self._dl_device:
            if tuple(dl_device)[0] == _lib.kDLCPU and copy is not False:
                return self._host_copy().__dlpack__()
            raise BufferError("gk: this array is on %s; it cannot be exported to device %r%s" % (
                self.device, tuple(dl_device), " without a copy" if copy is False else ""))
        if copy:
            if self._dl_device[0] == _lib.kDLCPU:
                return self.numpy().copy().__dlpack__()
            raise BufferError("gk: copy=True is not supported for a device array; "
                              "copy it on the consumer's side")
        d = self._x.t.dl_tensor
        addr = _new_tensor(d.data, d.device.device_type, d.device.device_id, _NAMES.index(self.gk_dtype),
                           self.shape, self)
        return py.PyCapsule_New(addr, _lib.CAPSULE_NAME, _lib.CAPSULE_DESTRUCTOR)

    def _host_copy(self):
        from . import _cuda
        out = np.empty(self.shape, self.dtype)
        _cuda.copy_to_host(out.ctypes.data, self._x.t.dl_tensor.data or 0, out.nbytes, self._dl_device[1])
        return out

    def numpy(self):
        """The values as a numpy array: on the cpu backend a read-only view of
        gk's buffer (no copy), on the cuda backend a host copy."""
        if self._dl_device[0] != _lib.kDLCPU:
            return self._host_copy()
        a = np.from_dlpack(self)
        a.flags.writeable = False
        return a

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        return self.numpy().item()

    def __len__(self):
        if not self.shape:
            raise builtins.TypeError("len() of a 0-d gk.Array")
        return self.shape[0]

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="gk.Array(")
        return "gk.Array(%s, dtype=%s%s)" % (body, self.gk_dtype,
                                            "" if self.device == "cpu" else ", device=%s" % self.device)


# ------------------------------------------------------------------ contexts


def backend_available(name):
    """True when a context on backend `name` ("cpu", "cuda") can be opened."""
    try:
        Context(name).close()
        return True
    except Error:
        return False


class Context:
    """A gk context: variables, a backend, caches.

    backend: None (= $GK_BACKEND, else cuda when usable, else cpu), "cpu" or
    "cuda".  output: a callable taking a str for what `print`, bare
    expressions and plans write (default: sys.stdout.write at the time).
    A context is for one thread at a time; calls from several threads are
    serialised by a lock.  Different contexts run on different threads at
    once (libgk releases the GIL)."""

    def __init__(self, backend=None, output=None):
        if backend not in (None, "", "cpu", "cuda"):
            raise MisuseError(_lib.EMISUSE, "unknown backend %r (expected None, 'cpu' or 'cuda')" % (backend,))
        self._h = None
        self._output = output
        self._sink = None                       # a list while plan() captures
        self._lock = threading.Lock()
        self._owner = None
        self._stmts = weakref.WeakSet()
        self.last_set_copied = None
        self.last_set_reason = None
        me = weakref.ref(self)

        def on_output(ud, text, n):
            c = me()
            s = ctypes.string_at(text, n).decode("utf-8", "replace")
            if c is not None and c._sink is not None:
                c._sink.append(s)
            elif c is not None and c._output is not None:
                c._output(s)
            else:
                sys.stdout.write(s)
        self._on_output = _lib.OutputFn(on_output)
        cfg = _lib.Config()
        cfg.output = self._on_output
        cfg.backend = backend.encode() if backend else None
        why = ctypes.c_char_p()
        h = lib.gk_open_ex(ctypes.byref(cfg), ctypes.byref(why))
        if not h:
            msg = (why.value or b"gk_open_ex failed").decode()
            raise (MemoryError(_lib.ENOMEM, msg) if "out of memory" in msg else DeviceError(_lib.EDEVICE, msg))
        self._h = h

    # --- plumbing ---
    def _enter(self):
        me = threading.get_ident()
        if self._owner == me:
            raise MisuseError(_lib.EMISUSE, "gk: the context was called from inside its own callback")
        self._lock.acquire()
        if self._h is None:
            self._lock.release()
            raise MisuseError(_lib.EMISUSE, "gk: the context is closed")
        self._owner = me
        return self._h

    def _leave(self):
        self._owner = None
        self._lock.release()

    def _check(self, rc):
        if rc:
            raise _error(rc, lib.gk_errmsg(self._h).decode("utf-8", "replace"))

    def _call(self, fn, *args):
        h = self._enter()
        try:
            self._check(fn(h, *args))
        finally:
            self._leave()

    # --- life ---
    def close(self):
        """Frees the context: variables, caches, prepared statements.  Arrays
        and tensors exported from it stay valid; arrays lent to it are let go."""
        if self._h is None:
            return
        self._enter()
        try:
            for s in list(self._stmts):
                s._hs = []
            lib.gk_close(self._h)
            self._h = None
        finally:
            self._leave()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def closed(self):
        return self._h is None

    @property
    def backend(self):
        """'cpu' or 'cuda'."""
        h = self._enter()
        try:
            return lib.gk_backend(h).decode()
        finally:
            self._leave()

    # --- running ---
    def eval(self, src, name=None):
        """Parses, checks and runs src (statements separated by newlines or
        ';').  Values are computed lazily, when read.  `name` labels errors
        (default "<expr>")."""
        self._call(lib.gk_eval_named, src.encode(), name.encode() if name else None)

    def sync(self):
        """Computes every pending value and waits for the device."""
        self._call(lib.gk_sync)

    def flush(self):
        """Computes every pending value without waiting for the device (the
        kernels queued; a later read or sync waits)."""
        self._call(lib.gk_flush)

    def interrupt(self):
        """Stops the running statement (safe from another thread)."""
        h = self._h
        if h is not None:
            lib.gk_interrupt(h)

    def option(self, name, value):
        """Sets an option: "plan", "cuda", "fusion", "tf32" (0/1)."""
        self._call(lib.gk_option, name.encode(), int(value))

    def prepare(self, src):
        """Parses src once; Statement.step() runs it against the variables'
        current values."""
        return Statement(self, src)

    def plan(self, src):
        """Runs src with the plan option on and returns what `gk --plan -e src`
        prints -- each launched kernel's fused group, the output of src's
        print statements and bare expressions -- including the kernels that
        compute what src assigned (they are computed here, after the values
        pending before the call, whose kernels are not shown), and a final
        'kernels: N' line."""
        h = self._enter()
        out = []
        try:
            self._check(lib.gk_sync(h))   # what was pending before src is not src's plan
            self._sink = out
            self._check(lib.gk_option(h, b"plan", 1))
            try:
                self._check(lib.gk_eval_named(h, src.encode(), None))
                n = int(out.pop().split()[1]) if out and out[-1].startswith("kernels: ") else 0
                mark = len(out)
                self._check(lib.gk_sync(h))
                n += sum(s.count("\nkernel ") + s.startswith("kernel ") for s in out[mark:])
            finally:
                lib.gk_option(h, b"plan", 0)
        finally:
            self._sink = None
            self._leave()
        text = "".join(out)
        if text.endswith("kernels: 0\n"):
            text = text[: -len("kernels: 0\n")]
        return text + "kernels: %d\n" % n

    # --- variables ---
    def _info(self, h, bname):
        t, nd, shp = ctypes.c_int(), ctypes.c_int(), (ctypes.c_int64 * _lib.MAX_DIMS)()
        if lib.gk_shape(h, bname, ctypes.byref(t), ctypes.byref(nd), shp):
            return None
        return _NAMES[t.value], tuple(shp[i] for i in range(nd.value))

    def info(self, name):
        """(dtype name, shape) of variable `name`, without computing it."""
        h = self._enter()
        try:
            r = self._info(h, name.encode())
        finally:
            self._leave()
        if r is None:
            raise KeyError(name)
        return r

    def __contains__(self, name):
        h = self._enter()
        try:
            return self._info(h, name.encode()) is not None
        finally:
            self._leave()

    def vars(self):
        """{name: (dtype name, shape, where)} for every variable; where is
        'cpu', 'cuda' or 'pending'."""
        out = {}

        def each(ud, v):
            v = v.contents
            out[v.name.decode()] = (_NAMES[v.dtype], tuple(v.shape[i] for i in range(v.ndim)),
                                    v.where.decode())
        fn = _lib.VarsFn(each)
        self._call(lib.gk_vars, fn, None)
        return out

    def keys(self):
        return list(self.vars())

    def __iter__(self):
        return iter(self.keys())

    def __getitem__(self, name):
        """The value of `name`, computed, as a gk.Array (no copy)."""
        h = self._enter()
        try:
            bname = name.encode()
            if self._info(h, bname) is None:
                raise KeyError(name)
            p = ctypes.c_void_p()
            self._check(lib.gk_to_dlpack(h, bname, ctypes.byref(p)))
            return Array(_Export(p.value))
        finally:
            self._leave()

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def __delitem__(self, name):
        h = self._enter()
        try:
            if self._info(h, name.encode()) is None:
                raise KeyError(name)
            self._check(lib.gk_unset(h, name.encode()))
        finally:
            self._leave()

    def __setitem__(self, name, value):
        self.set(name, value)

    def set(self, name, value, copy=None):
        """Binds `name` to value: any object with __dlpack__ (numpy, torch,
        cupy, jax, a gk.Array), else whatever numpy.asarray takes.

        copy=None: no copy when the device and dtype allow it (the object is
        then lent to gk: it is kept alive until gk lets it go, and must not be
        modified meanwhile), else a copy.  copy=True: always a copy.
        copy=False: a copy would be needed -> MisuseError.
        Returns whether it copied (also in .last_set_copied, and the reason in
        .last_set_reason)."""
        h = self._enter()
        try:
            bname = name.encode()
            reason = self._put(h, bname, value, copy)
            self.last_set_copied = reason is not None
            self.last_set_reason = reason
            return reason is not None
        finally:
            self._leave()

    # The ways in, each returning why it copied (None: it did not).
    def _put(self, h, bname, value, copy):
        oncuda = lib.gk_backend(h) == b"cuda"
        if isinstance(value, np.ndarray):
            return self._put_numpy(h, bname, value, copy, oncuda, None)
        if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__") and not isinstance(value, type):
            kind, dev = value.__dlpack_device__()
            if kind in (_lib.kDLCPU, _lib.kDLCUDAHost):
                return self._put_host_dlpack(h, bname, value, copy, oncuda, (kind, dev))
            if kind in (_lib.kDLCUDA, _lib.kDLCUDAManaged):
                return self._put_device_dlpack(h, bname, value, copy, oncuda, (kind, dev))
            raise MisuseError(_lib.EMISUSE, "gk: arrays on DLPack device type %d are not supported "
                                            "(cpu = 1, cuda = 2)" % kind)
        try:
            a = np.asarray(value)
        except Exception as e:
            raise MisuseError(_lib.EMISUSE, "gk: cannot make an array of %s: %s" % (type(value).__name__, e))
        return self._put_numpy(h, bname, a, copy, oncuda, "converted with numpy.asarray")

    def _put_numpy(self, h, bname, a, copy, oncuda, why):
        g = _gk_of_numpy(a.dtype)
        if g is None:
            raise MisuseError(_lib.EMISUSE, "gk: dtype %s has no gk equivalent "
                                            "(gk takes bool, int32, int64, float32, float64)" % a.dtype)
        t, exact = g
        if not exact:
            why = why or "dtype %s converted to %s" % (a.dtype, _NAMES[t])
        elif not a.flags.c_contiguous:
            why = why or "not contiguous"
        elif a.ctypes.data % a.dtype.itemsize:
            why = why or "not aligned"
        elif oncuda:
            why = why or "host memory copied to the device"
        elif copy:
            why = why or "copy=True"
        if why and copy is False:
            raise MisuseError(_lib.EMISUSE, "gk: copy=False, but this array needs a copy (%s)" % why)
        if oncuda:
            a = np.asarray(a, dtype=_NP[t], order="C")   # (ascontiguousarray would make 0-d 1-d)
            shp = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            self._check(lib.gk_set(h, bname, t, a.ndim, shp, a.ctypes.data))
            return why
        if why:
            a = np.array(a, dtype=_NP[t], order="C", copy=True)
        self._lend(h, bname, a.ctypes.data, _lib.kDLCPU, 0, t, a.shape, a)
        return why

    def _lend(self, h, bname, data, kind, dev, t, shape, keep):
        addr = _new_tensor(data, kind, dev, t, shape, keep)
        self._check(lib.gk_from_dlpack(h, bname, addr))   # gk calls the deleter, also on failure

    def _put_host_dlpack(self, h, bname, value, copy, oncuda, device):
        try:
            cap = value.__dlpack__()
        except BufferError:
            return self._put_numpy(h, bname, np.asarray(value), copy, oncuda, "__dlpack__ refused; numpy.asarray")
        d = _tensor_of(cap).dl_tensor
        t = _FROM_DL.get((d.dtype.code, d.dtype.bits)) if d.dtype.lanes == 1 else None
        problem = _layout_problem(d, _NP[t].itemsize) if t is not None else "dtype"
        if problem is None and not oncuda and not copy:
            shape = tuple(d.shape[i] for i in range(d.ndim))
            self._lend(h, bname, (d.data or 0) + d.byte_offset, _lib.kDLCPU, 0, t, shape, (cap, value))
            return None
        # a copy: numpy reads the capsule (any strides, more dtypes) and copies
        try:
            a = np.from_dlpack(_Capsule(cap, device))
        except Exception as e:
            raise MisuseError(_lib.EMISUSE, "gk: cannot use this %s (%s): %s" % (
                type(value).__name__, problem or "", e))
        return self._put_numpy(h, bname, a, copy, oncuda,
                               None if problem in (None, "dtype") else problem)

    def _put_device_dlpack(self, h, bname, value, copy, oncuda, device):
        from . import _cuda
        if not oncuda:   # the producer copies to the host, then as numpy
            try:
                cap = value.__dlpack__(dl_device=(_lib.kDLCPU, 0), copy=True)
                a = np.from_dlpack(_Capsule(cap, (_lib.kDLCPU, 0)))
            except (builtins.TypeError, BufferError, NotImplementedError, builtins.ValueError, RuntimeError):
                if hasattr(value, "cpu"):                    # torch
                    a = np.from_dlpack(value.cpu())
                elif hasattr(value, "get"):                  # cupy
                    a = value.get()
                else:
                    raise MisuseError(_lib.EMISUSE, "gk: the cpu backend cannot read this CUDA array "
                                                    "and its producer would not copy it to the host")
            self._put_numpy(h, bname, a, copy, False, "device memory copied to the host")
            return "device memory copied to the host"
        if copy:
            value = _device_copy(value, None, True)
            if value is None:
                raise MisuseError(_lib.EMISUSE, "gk: copy=True: gk cannot copy this device array itself")
        try:
            cap = value.__dlpack__(stream=1)   # "order your work before the legacy default stream"
        except (builtins.TypeError, builtins.ValueError):
            cap = value.__dlpack__()
        _cuda.synchronize(device[1])           # ...and everything else on that device: see _cuda
        d = _tensor_of(cap).dl_tensor
        t = _FROM_DL.get((d.dtype.code, d.dtype.bits)) if d.dtype.lanes == 1 else None
        problem = _layout_problem(d, _NP[t].itemsize) if t is not None else \
            "dtype (code %d, %d bits) is not one of gk's" % (d.dtype.code, d.dtype.bits)
        if problem is not None:
            if copy is False:
                raise MisuseError(_lib.EMISUSE, "gk: copy=False, but this array needs a copy (%s)" % problem)
            want = None if t is not None else _widen_name(d.dtype)
            del d, cap                         # the producer's tensor goes (its capsule's destructor)
            fixed = _device_copy(value, want, False)
            if fixed is None:
                raise MisuseError(_lib.EMISUSE, "gk: cannot use this %s: %s; make a contiguous copy "
                                                "in a gk dtype first" % (type(value).__name__, problem))
            self._put_device_dlpack(h, bname, fixed, None, oncuda, device)
            return problem
        shape = tuple(d.shape[i] for i in range(d.ndim))
        self._lend(h, bname, (d.data or 0) + d.byte_offset, int(d.device.device_type), int(d.device.device_id),
                   t, shape, (cap, value))
        return "copy=True" if copy else None


def _widen_name(dt):
    """The gk dtype (numpy name) a device array of DLPack dtype dt converts to."""
    k, b = dt.code, dt.bits
    if k == _lib.kDLInt or (k == _lib.kDLUInt and b <= 16):
        return "int32" if b <= 32 else "int64"
    if k == _lib.kDLUInt and b == 32:
        return "int64"
    if k in (_lib.kDLFloat, _lib.kDLBfloat) and b <= 32:
        return "float32"
    return None


def _device_copy(value, dtype, force):
    """A contiguous device copy (in dtype when given) made by the producer's
    own library (torch, cupy), or None when it is neither."""
    mod = type(value).__module__.split(".")[0]
    if mod == "torch":
        import torch
        if dtype is not None:
            value = value.to(getattr(torch, dtype))
        return value.clone(memory_format=torch.contiguous_format) if force else value.contiguous()
    if mod == "cupy":
        import cupy
        out = cupy.asarray(value, dtype=dtype, order="C")   # (ascontiguousarray would make 0-d 1-d)
        return out.copy() if force and out is value else out
    return None


class Statement:
    """A prepared statement (gk_prepare): parsed once, run by step() against
    the variables' current values.  src may hold several statements; step()
    runs them in order."""

    def __init__(self, ctx, src):
        self._ctx = ctx
        self._hs = []
        buf = ctypes.create_string_buffer(src.encode())
        end = ctypes.addressof(buf) + len(buf.value)
        h = ctx._enter()
        try:
            p = ctypes.addressof(buf)
            while p < end:
                st = ctypes.c_void_p()
                rc = _prepare(h, p, st)
                if rc:
                    msg = lib.gk_errmsg(h).decode("utf-8", "replace")
                    for s in self._hs:
                        lib.gk_finalize(s)
                    self._hs = []
                    raise _error(rc, msg)
                if not st.value:
                    break
                self._hs.append(st.value)
                p = _prepare.tail
            ctx._stmts.add(self)
        finally:
            ctx._leave()

    def step(self):
        """Runs the statement(s); rebind inputs with ctx[name] = ... between steps."""
        h = self._ctx._enter()
        try:
            if self._finalized:
                raise MisuseError(_lib.EMISUSE, "gk: the statement is finalized")
            for s in self._hs:
                self._ctx._check(lib.gk_step(s))
        finally:
            self._ctx._leave()

    _finalized = False

    def finalize(self):
        """Frees the statement (the context's close does it too)."""
        if self._finalized:
            return
        self._finalized = True
        if self._ctx._h is None:   # closed: gk_close freed the handles
            self._hs = []
            return
        self._ctx._enter()
        try:
            for s in self._hs:
                lib.gk_finalize(s)
            self._hs = []
        finally:
            self._ctx._leave()

    close = finalize

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()

    def __del__(self):
        try:
            self.finalize()
        except Exception:
            pass


def _prepare(h, p, st):
    """gk_prepare on the text at address p; the tail address in _prepare.tail."""
    tail = ctypes.c_void_p()
    rc = _gk_prepare(h, p, ctypes.byref(st), ctypes.byref(tail))
    _prepare.tail = tail.value
    return rc


_gk_prepare = lib.gk_prepare
_gk_prepare.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                        ctypes.POINTER(ctypes.c_void_p)]
