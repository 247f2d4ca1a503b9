"""numpy in, gk, numpy out: dtypes, shapes, zero copy, non-contiguous inputs."""
import numpy as np
import pytest

import gk

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
SHAPES = [(), (1,), (31,), (33,), (1000003,), (2, 3, 4, 5), (1, 33, 1, 7)]


def rand(rng, shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind == "i":
        return np.asarray(rng.integers(-2 ** 31 + 1, 2 ** 31 - 1, size=shape).astype(dt))
    return np.asarray((rng.standard_normal(shape) * 100).astype(dt))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(ctx, rng, dt, shape):
    a = rand(rng, shape, dt)
    copied = ctx.set("x", a)
    assert copied == (ctx.backend == "cuda")
    assert ctx.last_set_copied == copied
    y = ctx["x"]
    assert y.shape == shape and y.dtype == np.dtype(dt) and y.ndim == len(shape)
    assert ctx.info("x") == ({"bool": "bool", "int32": "i32", "int64": "i64", "float32": "f32",
                              "float64": "f64"}[np.dtype(dt).name], shape)
    b = np.from_dlpack(y) if y.device == "cpu" else y.numpy()
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)
    if ctx.backend == "cpu":   # zero copy both ways: gk's value is numpy's buffer
        assert b.ctypes.data == a.ctypes.data


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 31, 33, 1000003])
def test_computed(ctx, rng, dt, n):
    a = rand(rng, (n,), dt)
    ctx["x"] = a
    if np.dtype(dt) == np.bool_:
        ctx.eval("y = not x; z = x[::-1]")
        want = ~a
    else:
        ctx.eval("y = x * 3 + 1; z = x[::-1]")
        want = a * np.array(3, dt) + np.array(1, dt)
    np.testing.assert_array_equal(ctx["y"].numpy(), want)
    np.testing.assert_array_equal(ctx["z"].numpy(), a[::-1])   # a view of a pending value


def test_softmax_rows(ctx, rng):
    m = rng.standard_normal((33, 1000)).astype(np.float32)
    ctx["m"] = m
    ctx.eval("e = softmax(rows(m)); s = sum(rows(m))")
    ref = np.exp(m.astype(np.float64) - m.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(ctx["e"].numpy(), ref, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ctx["s"].numpy(), m.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)


def test_numpy_view_is_read_only(rng):
    with gk.Context("cpu") as g:
        g["x"] = rng.random(5)
        v = g["x"].numpy()
        with pytest.raises(ValueError):
            v[0] = 1.0


@pytest.mark.parametrize("make", [
    lambda a: a.T,                          # transposed
    lambda a: a[:, ::2],                    # strided
    lambda a: a[::-1],                      # negative stride
    lambda a: a[1:, 3:30],                  # offset and strided rows
], ids=["transpose", "step2", "reversed", "window"])
def test_non_contiguous_copied(ctx, rng, make):
    base = rng.standard_normal((31, 33))
    a = make(base)
    assert not a.flags.c_contiguous
    assert ctx.set("x", a) is True
    assert "contiguous" in ctx.last_set_reason or ctx.backend == "cuda"
    ctx.eval("y = x * 2")
    np.testing.assert_array_equal(ctx["y"].numpy(), a * 2)
    want = a.copy()
    base[...] = 0                           # a copy: gk does not see later writes
    np.testing.assert_array_equal(ctx["x"].numpy(), want)


def test_non_contiguous_copy_false_refused():
    with gk.Context("cpu") as g:
        with pytest.raises(gk.MisuseError) as e:
            g.set("x", np.zeros((4, 6))[:, ::2], copy=False)
        assert str(e.value) == "gk: copy=False, but this array needs a copy (not contiguous)"
        assert "x" not in g


def test_copy_true_and_lent_lifetime(rng):
    import gc
    import weakref
    with gk.Context("cpu") as g:
        a = rng.random(1000)
        assert g.set("c", a, copy=True) is True and g.last_set_reason == "copy=True"
        a2 = a.copy()
        a[:] = -1
        np.testing.assert_array_equal(g["c"].numpy(), a2)

        class Owner(np.ndarray):          # a weak-referenceable numpy array
            pass
        b = rng.random(1000).view(Owner)
        want = np.asarray(b) + 1
        alive = weakref.ref(b)
        assert g.set("x", b) is False     # lent: gk keeps b alive
        g.eval("y = x + 1")
        del b
        gc.collect()
        assert alive() is not None
        np.testing.assert_array_equal(g["y"].numpy(), want)
        g.eval("x = 0")                   # gk lets go of the buffer: y is computed already
        gc.collect()
        assert alive() is None


def test_unaligned_byteswapped_and_converted(ctx, rng):
    raw = rng.random(101).tobytes()
    un = np.frombuffer(b"\0" + raw, dtype=np.float64, offset=1, count=100)
    assert un.ctypes.data % 8
    assert ctx.set("u", un) is True
    np.testing.assert_array_equal(ctx["u"].numpy(), un)
    sw = rng.random(7).astype(">f4")
    ctx["s"] = sw
    assert ctx["s"].dtype == np.float32
    np.testing.assert_array_equal(ctx["s"].numpy(), sw.astype(np.float32))
    for src, want in [(np.uint8, "i32"), (np.int16, "i32"), (np.uint32, "i64"), (np.float16, "f32"),
                      (np.int8, "i32")]:
        v = (rng.random(9) * 100).astype(src)
        assert ctx.set("v", v) is True
        assert ctx["v"].gk_dtype == want
        np.testing.assert_array_equal(ctx["v"].numpy(), v.astype(ctx["v"].dtype))
    with pytest.raises(gk.MisuseError) as e:
        ctx["c"] = np.zeros(3, np.complex64)
    assert str(e.value) == ("gk: dtype complex64 has no gk equivalent "
                            "(gk takes bool, int32, int64, float32, float64)")
    with pytest.raises(gk.MisuseError):
        ctx["c"] = np.zeros(3, np.uint64)


def test_python_values(ctx):
    ctx["a"] = 2.5
    ctx["b"] = [[1, 2], [3, 4]]
    ctx["c"] = True
    assert ctx.last_set_copied is True
    assert ctx.info("a") == ("f64", ()) and ctx.info("b") == ("i64", (2, 2)) and ctx.info("c") == ("bool", ())
    ctx.eval("d = sum(b) * a")
    assert float(ctx["d"]) == 25.0
    assert ctx["b"].tolist() == [[1, 2], [3, 4]]


def test_gk_array_back_into_gk(ctx, rng):
    a = rng.random((4, 5))
    ctx["x"] = a
    ctx.eval("y = x * 2")
    y = ctx["y"]
    with gk.Context(ctx.backend) as h:
        assert h.set("z", y) is False    # DLPack from one context into another: no copy
        h.eval("w = z + 1")
        np.testing.assert_array_equal(h["w"].numpy(), a * 2 + 1)
