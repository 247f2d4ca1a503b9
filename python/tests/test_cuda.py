"""The cuda backend with torch and CuPy tensors: zero copy both ways,
streams, copies where the layout or dtype needs one, lifetimes.  Marked
`cuda`: skipped where no cuda backend opens (conftest.py)."""
import gc

import numpy as np
import pytest

import gk

pytestmark = pytest.mark.cuda


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return t


@pytest.fixture
def g():
    with gk.Context("cuda") as c:
        yield c


def test_torch_in_and_out_zero_copy(g, torch):
    for dt in [torch.bool, torch.int32, torch.int64, torch.float32, torch.float64]:
        for shape in [(), (1,), (33,), (1000003,), (2, 3, 4, 5)]:
            t = (torch.randn(shape, device="cuda", dtype=torch.float64) * 100).to(dt)
            assert g.set("t", t) is False, g.last_set_reason
            y = g["t"]
            assert y.device == "cuda:0" and y.__dlpack_device__() == (2, 0)
            back = torch.from_dlpack(y)
            assert back.device.type == "cuda" and back.dtype == dt and back.shape == t.shape
            assert back.data_ptr() == t.data_ptr()            # the same memory, both ways
            assert torch.equal(back, t)
            np.testing.assert_array_equal(y.numpy(), t.cpu().numpy())


def test_torch_softmax_matches(g, torch):
    x = torch.randn(1000, 257, device="cuda")
    g["x"] = x
    g.eval("e = softmax(rows(x)); s = sum(rows(x))")
    torch.testing.assert_close(torch.from_dlpack(g["e"]), torch.softmax(x, 1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(g["s"]), x.sum(1), rtol=1e-4, atol=1e-3)


def test_import_waits_for_producer_stream(g, torch):
    """torch writes x on a side stream and does not synchronise; gk must read
    the finished values (through __dlpack__(stream=...) and a sync)."""
    s = torch.cuda.Stream()
    a = torch.randn(2048, 2048, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        b = a
        for _ in range(30):
            b = torch.tanh(b @ a / 64)
        x = b * 1
        g["x"] = x                      # imported while s is still busy
        g.eval("y = x * 2 + 1")
        y = torch.from_dlpack(g["y"])   # consumed on s
        got = y.clone()
    torch.cuda.synchronize()
    assert torch.equal(got, x * 2 + 1)


def test_export_to_other_stream(g, torch):
    x = torch.randn(1 << 20, device="cuda")
    g["x"] = x
    g.eval("y = exp(x) - 1")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = torch.from_dlpack(g["y"])       # __dlpack__(stream=s): complete before s reads
        z = y * 2
    torch.cuda.synchronize()
    torch.testing.assert_close(z, (torch.exp(x) - 1) * 2, rtol=1e-6, atol=1e-6)


def test_copies_when_needed(g, torch):
    m = torch.randn(31, 33, device="cuda")
    assert g.set("mt", m.T) is True and "contiguous" in g.last_set_reason
    g.eval("e = softmax(rows(mt))")
    torch.testing.assert_close(torch.from_dlpack(g["e"]), torch.softmax(m.T, 1), rtol=1e-5, atol=1e-6)
    h = torch.randn(100, device="cuda", dtype=torch.float16)
    assert g.set("h", h) is True and g["h"].gk_dtype == "f32"
    assert torch.equal(torch.from_dlpack(g["h"]), h.float())
    with pytest.raises(gk.MisuseError):
        g.set("z", m.T, copy=False)
    c = torch.arange(10, device="cuda", dtype=torch.float32)
    assert g.set("c", c, copy=True) is True
    c += 1                                    # a copy: gk keeps the old values
    assert torch.equal(torch.from_dlpack(g["c"]), torch.arange(10, device="cuda", dtype=torch.float32))
    n = np.arange(12.0).reshape(3, 4)         # host memory into a cuda context: copied
    assert g.set("n", n) is True
    assert torch.equal(torch.from_dlpack(g["n"]).cpu(), torch.from_numpy(n))


def test_cuda_tensor_into_cpu_context(torch):
    t = torch.randn(5, 7, device="cuda")
    with gk.Context("cpu") as h:
        assert h.set("t", t) is True
        h.eval("y = t * 2")
        assert torch.equal(torch.from_dlpack(h["y"]), (t * 2).cpu())


def test_cuda_lifetimes(torch):
    x = torch.randn(4096, device="cuda")
    with gk.Context("cuda") as g:
        g["x"] = x
        g.eval("y = x * 3")
        y = torch.from_dlpack(g["y"])
        arr = g["y"]
    del g
    gc.collect()
    assert torch.equal(y, x * 3)                 # after the context closed
    assert torch.equal(torch.from_dlpack(arr), x * 3)
    np.testing.assert_array_equal(arr.numpy(), (x * 3).cpu().numpy())
    # a lent tensor stays alive while gk holds it
    with gk.Context("cuda") as g:
        t = torch.randn(1000, device="cuda")
        want = (t + 1).cpu()
        g["t"] = t
        g.eval("u = t + 1")
        del t
        gc.collect()
        torch.cuda.empty_cache()
        junk = torch.randn(1 << 22, device="cuda")   # would reuse t's memory if it were freed
        assert torch.equal(torch.from_dlpack(g["u"]).cpu(), want)
        del junk


def test_cupy(g):
    cupy = pytest.importorskip("cupy")
    a = cupy.random.standard_normal((33, 100), dtype=cupy.float32)
    assert g.set("a", a) is False
    g.eval("e = softmax(rows(a))")
    e = cupy.from_dlpack(g["e"])
    ref = cupy.exp(a - a.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    cupy.testing.assert_allclose(e, ref, rtol=1e-5, atol=1e-6)
    assert g.set("at", a.T) is True            # non-contiguous: copied by CuPy
    cupy.testing.assert_array_equal(cupy.from_dlpack(g["at"]), a.T)
