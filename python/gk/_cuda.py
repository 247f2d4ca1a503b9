"""gk._cuda -- the three CUDA driver calls the Python layer makes itself.

gk.h does not expose gk's CUDA stream (it is a non-blocking stream of the
device's primary context), so the Python layer orders work across libraries
with whole-context synchronisation of the primary context:
  - before lending a producer's device tensor to gk: cuCtxSynchronize, so
    that whatever stream the producer wrote it on is finished (the producer
    was asked, through __dlpack__(stream=1), to order its work before the
    legacy default stream, and some producers ignore `stream`);
  - copying an exported device array to the host (Array.numpy()): cuMemcpyDtoH.
Exports need nothing here: gk_to_dlpack returns only when gk's work is done.
Loaded lazily, only when a cuda tensor is seen.
"""
import ctypes

_drv = None


def _driver():
    global _drv
    if _drv is None:
        d = ctypes.CDLL("libcuda.so.1")
        for name, args in [("cuInit", [ctypes.c_uint]),
                           ("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
                           ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]),
                           ("cuDevicePrimaryCtxRelease_v2", [ctypes.c_int]),
                           ("cuCtxPushCurrent_v2", [ctypes.c_void_p]),
                           ("cuCtxPopCurrent_v2", [ctypes.POINTER(ctypes.c_void_p)]),
                           ("cuCtxSynchronize", []),
                           ("cuMemcpyDtoH_v2", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t])]:
            f = getattr(d, name)
            f.restype = ctypes.c_int
            f.argtypes = args
        _check(d.cuInit(0), "cuInit")
        _drv = d
    return _drv


def _check(rc, what):
    if rc != 0:
        from . import DeviceError, _lib
        raise DeviceError(_lib.EDEVICE, "%s failed (CUDA error %d)" % (what, rc))


def _in_primary(device_id, fn):
    """Runs fn() with device_id's primary context current, then restores."""
    d = _driver()
    dev = ctypes.c_int()
    _check(d.cuDeviceGet(ctypes.byref(dev), device_id), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _check(d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    try:
        _check(d.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        try:
            return fn(d)
        finally:
            d.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
    finally:
        d.cuDevicePrimaryCtxRelease_v2(dev)


def synchronize(device_id):
    _in_primary(device_id, lambda d: _check(d.cuCtxSynchronize(), "cuCtxSynchronize"))


def copy_to_host(dst_addr, src_dptr, nbytes, device_id):
    if nbytes:
        _in_primary(device_id, lambda d: _check(d.cuMemcpyDtoH_v2(dst_addr, src_dptr, nbytes), "cuMemcpyDtoH"))
