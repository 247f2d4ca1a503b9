"""gk._lib -- the ctypes declarations of libgk (gk.h) and of the DLPack v0.8 ABI.

libgk is loaded as a ctypes.CDLL, so every call releases the GIL: two
contexts really run at once on two threads, and a callback gk makes into
Python (the output hook; the deleters, in libgkpy) takes the GIL back
itself.  Where the libraries are found: $GK_LIBRARY (libgkpy.so next to it)
if set, else the copies bundled next to this file (the wheel's), else the
repository's build/ when the package is imported from a source checkout.
"""
import ctypes
import os

# --- DLPack v0.8 (api/dlpack.h; DLPack's own numbers) ----------------------
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLDeleterHeld = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)      # a deleter, called from Python with the GIL
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.c_void_p)]

# --- gk.h ------------------------------------------------------------------
MAX_DIMS = 8
OK, ESYNTAX, ETYPE, ENOMEM, EDEVICE, EJIT, EIO, EMISUSE, EVALUE, EINTERRUPT, ELIMIT = range(11)
BOOL, I32, I64, F32, F64 = range(5)

OutputFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
ErrorFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
AllocFn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class Config(ctypes.Structure):
    _fields_ = [("alloc", ctypes.c_void_p), ("alloc_ud", ctypes.c_void_p),
                ("output", OutputFn), ("output_ud", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("error_ud", ctypes.c_void_p),
                ("backend", ctypes.c_char_p),
                ("compile", ctypes.c_void_p), ("compile_ud", ctypes.c_void_p)]
    # ORDER: gk.h's gk_config, field for field; checked against
    # gk_config_size() when the library is loaded (a shorter struct here made
    # gk read garbage hook pointers past its end).


class VarInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("bytes", ctypes.c_size_t),
                ("where", ctypes.c_char_p)]


VarsFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(VarInfo))


def _candidates():
    env = os.environ.get("GK_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, "libgk.so"),
            os.path.join(here, os.pardir, os.pardir, "build", "libgk.so")]


def _load():
    tried = []
    for path in _candidates():
        helper = os.path.join(os.path.dirname(path), "libgkpy.so")
        if os.path.exists(path) and os.path.exists(helper):
            return ctypes.CDLL(os.path.abspath(path)), ctypes.CDLL(os.path.abspath(helper)), os.path.abspath(path)
        tried.append(path)
    raise ImportError("gk: libgk.so and libgkpy.so not found (tried %s); reinstall the package "
                      "(pip install ./python builds them) or set GK_LIBRARY" % ", ".join(tried))


lib, helper, path = _load()

_P, _I, _S, _C = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p
_I64P = ctypes.POINTER(ctypes.c_int64)
for name, res, args in [
    ("gk_version", _C, []),
    ("gk_errstr", _C, [_I]),
    ("gk_dtype_size", _S, [_I]),
    ("gk_dtype_name", _C, [_I]),
    ("gk_open_ex", _P, [ctypes.POINTER(Config), ctypes.POINTER(_C)]),
    ("gk_close", None, [_P]),
    ("gk_backend", _C, [_P]),
    ("gk_eval_named", _I, [_P, _C, _C]),
    ("gk_errmsg", _C, [_P]),
    ("gk_errcode", _I, [_P]),
    ("gk_set", _I, [_P, _C, _I, _I, _I64P, _P]),
    ("gk_shape", _I, [_P, _C, ctypes.POINTER(_I), ctypes.POINTER(_I), _I64P]),
    ("gk_unset", _I, [_P, _C]),
    ("gk_sync", _I, [_P]),
    ("gk_flush", _I, [_P]),
    ("gk_interrupt", None, [_P]),
    ("gk_prepare", _I, [_P, _C, ctypes.POINTER(_P), ctypes.POINTER(_P)]),
    ("gk_step", _I, [_P]),
    ("gk_finalize", None, [_P]),
    ("gk_to_dlpack", _I, [_P, _C, ctypes.POINTER(_P)]),
    ("gk_from_dlpack", _I, [_P, _C, _P]),
    ("gk_is_complete", _I, [_C]),
    ("gk_vars", _I, [_P, VarsFn, _P]),
    ("gk_option", _I, [_P, _C, _I]),
    ("gk_config_size", _S, []),
]:
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = args

if lib.gk_config_size() != ctypes.sizeof(Config):
    raise ImportError("gk: %s has gk_config of %d bytes, this package declares %d (mismatched versions)"
                      % (path, lib.gk_config_size(), ctypes.sizeof(Config)))

# --- the CPython C API pieces a capsule needs (the GIL is held: PyDLL) ------
py = ctypes.pythonapi
py.PyCapsule_New.restype = ctypes.py_object
py.PyCapsule_New.argtypes = [_P, _P, _P]
py.PyCapsule_IsValid.restype = _I
py.PyCapsule_IsValid.argtypes = [_P, _P]          # a PyObject* as a plain address
py.PyCapsule_GetPointer.restype = _P
py.PyCapsule_GetPointer.argtypes = [_P, _P]
py.PyCapsule_SetName.restype = _I
py.PyCapsule_SetName.argtypes = [ctypes.py_object, _C]
py.PyCapsule_GetName.restype = _C
py.PyCapsule_GetName.argtypes = [ctypes.py_object]
py.Py_IncRef.restype = None
py.Py_IncRef.argtypes = [ctypes.py_object]

# --- libgkpy (gkpy.c): the tensor deleter and capsule destructor, in C -----
helper.gkpy_init.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
helper.gkpy_init.restype = None
helper.gkpy_capsule_name.restype = ctypes.c_void_p
_fns = (ctypes.c_void_p * 8)(*[ctypes.cast(getattr(py, n), ctypes.c_void_p).value for n in (
    "PyGILState_Ensure", "PyGILState_Release", "PyErr_Fetch", "PyErr_Restore", "Py_DecRef",
    "Py_IsInitialized", "PyCapsule_IsValid", "PyCapsule_GetPointer")])
helper.gkpy_init(_fns)
DELETER = ctypes.cast(helper.gkpy_deleter, ctypes.c_void_p).value
CAPSULE_DESTRUCTOR = ctypes.cast(helper.gkpy_capsule_destructor, ctypes.c_void_p).value
CAPSULE_NAME = helper.gkpy_capsule_name()
