"""Errors, prepared statements, plans, output, variables, lifetimes, threads."""
import gc
import threading

import numpy as np
import pytest

import gk


def test_error_message_located(ctx):
    ctx["a"] = np.arange(4.0)
    with pytest.raises(gk.TypeError) as e:
        ctx.eval("a = a + q")
    assert e.value.message == "<expr>:1:9: error: unknown name 'q'\na = a + q\n        ^\n"
    assert str(e.value) == "<expr>:1:9: error: unknown name 'q'\na = a + q\n        ^"
    assert e.value.status == 2 and isinstance(e.value, TypeError) and isinstance(e.value, gk.Error)
    np.testing.assert_array_equal(ctx["a"].numpy(), np.arange(4.0))   # the failed statement bound nothing


def test_error_classes(ctx):
    with pytest.raises(gk.SyntaxError) as e:
        ctx.eval("x = (1 +\ny = 2", name="model.gk")
    assert e.value.message.startswith("model.gk:")
    assert "error:" in e.value.message and e.value.message.rstrip("\n").endswith("^")
    with pytest.raises(gk.ValueError):
        ctx.eval("e = max(zeros(0)); print(e)")
    assert "e" not in ctx
    ctx.eval("s = [1, 2, 3]")
    with pytest.raises(gk.TypeError) as e:
        ctx.eval("t = s @ [[1, 2]]")
    assert e.value.message.startswith("<expr>:1:")
    with pytest.raises(KeyError):
        ctx["nope"]
    with pytest.raises(KeyError):
        del ctx["nope"]
    with pytest.raises(gk.MisuseError):
        gk.Context("tpu")


def test_closed_context():
    g = gk.Context("cpu")
    g.close()
    g.close()                       # twice is fine
    assert g.closed
    with pytest.raises(gk.MisuseError) as e:
        g.eval("x = 1")
    assert str(e.value) == "gk: the context is closed"
    with pytest.raises(gk.MisuseError):
        g["x"] = 1


def test_export_outlives_context(backend, rng):
    a = rng.standard_normal((33, 31)).astype(np.float32)
    with gk.Context(backend) as g:
        g["a"] = a
        g.eval("y = a * 2 + 1")
        y = g["y"]
        n = np.from_dlpack(y) if backend == "cpu" else None
    del g
    gc.collect()
    np.testing.assert_array_equal(y.numpy(), a * 2 + 1)
    if n is not None:
        np.testing.assert_array_equal(n, a * 2 + 1)
        del y
        gc.collect()
        np.testing.assert_array_equal(n, a * 2 + 1)   # numpy's view alone keeps the value


def test_exports_are_released(rng):
    import weakref
    with gk.Context("cpu") as g:
        g["x"] = rng.random(10)
        y = g["x"]
        alive = weakref.ref(y)
        views = [np.from_dlpack(y) for _ in range(5)]
        caps = [y.__dlpack__() for _ in range(3)]   # never consumed: the destructor calls the deleter
    del y
    gc.collect()
    assert alive() is not None                      # the views and capsules keep the Array
    del views
    gc.collect()
    assert alive() is not None
    del caps
    gc.collect()
    assert alive() is None


def test_deleter_during_exception(rng):
    """A consumer drops a tensor while an exception propagates: the real
    exception survives (a ctypes deleter would turn it into SystemError)."""
    with gk.Context("cpu") as g:
        g["x"] = rng.random(3)
        with pytest.raises(ZeroDivisionError):
            (lambda a: 1 / 0)(np.from_dlpack(g["x"]))
        with pytest.raises(TypeError):
            float(g["x"])


def test_rebind_keeps_old_arrays(ctx, rng):
    ctx["x"] = rng.random(5)
    old = ctx["x"]
    want = old.numpy().copy()
    ctx["x"] = rng.random(7)
    ctx.eval("x = x * 0")
    np.testing.assert_array_equal(old.numpy(), want)
    assert ctx["x"].shape == (7,)


def test_prepared_on_fresh_inputs(ctx, rng):
    st = ctx.prepare("y = softmax(rows(m)) * k; z = sum(rows(m))")
    for shape in [(1, 1), (31, 33), (33, 1000), (4, 5)]:
        m = rng.standard_normal(shape)
        k = float(rng.random() + 0.5)
        ctx["m"] = m
        ctx["k"] = k
        st.step()
        e = np.exp(m - m.max(1, keepdims=True))
        e = e / e.sum(1, keepdims=True) * k
        np.testing.assert_allclose(ctx["y"].numpy(), e, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ctx["z"].numpy(), m.sum(1), rtol=1e-12, atol=1e-12)
    ctx["m"] = np.zeros(3, np.bool_)
    with pytest.raises(gk.TypeError) as e:
        st.step()
    assert e.value.message.startswith("<expr>:1:")
    st.finalize()
    with pytest.raises(gk.MisuseError):
        st.step()
    with pytest.raises(gk.SyntaxError):
        ctx.prepare("y = (")
    with ctx.prepare("w = 2") as s2:
        s2.step()
    assert int(ctx["w"]) == 2


def test_flush(ctx, rng):
    x = rng.standard_normal(33)
    ctx["x"] = x
    ctx.eval("acc = x")
    st = ctx.prepare("acc = acc + x")
    for _ in range(4):
        st.step()
        ctx.flush()                      # computed (queued on cuda), not waited for
        assert ctx.vars()["acc"][2] == ctx.backend
    np.testing.assert_allclose(ctx["acc"].numpy(), 5 * x, rtol=1e-12)
    st.finalize()


def test_statement_after_close():
    g = gk.Context("cpu")
    st = g.prepare("y = 1")
    g.close()
    with pytest.raises(gk.MisuseError):
        st.step()
    st.finalize()                 # no-op: gk_close freed it


def test_plan_and_output(ctx, rng):
    ctx["m"] = rng.standard_normal((4, 8)).astype(np.float32)
    text = ctx.plan("e = softmax(rows(m))")
    assert text.endswith("kernels: 1\n")
    assert "rows (row_kernel)" in text and "exp" in text
    assert text.count("\nkernel ") + text.startswith("kernel ") == 1
    assert ctx.info("e") == ("f32", (4, 8)) and ctx.vars()["e"][2] != "pending"
    got = []
    with gk.Context(ctx.backend, output=got.append) as g:
        g.eval("print(1 + 2); [1.5, 2]")
    assert "".join(got) == "3\n[1.5 2. ]\n" or "".join(got).startswith("3\n")


def test_vars(ctx):
    ctx["a"] = np.zeros((2, 3), np.int32)
    ctx.eval("b = a + 1")
    v = ctx.vars()
    assert v["a"] == ("i32", (2, 3), ctx.backend) and v["b"] == ("i32", (2, 3), "pending")
    assert sorted(ctx) == ["a", "b"] and "a" in ctx and "c" not in ctx
    del ctx["a"]
    assert "a" not in ctx
    assert ctx["b"].tolist() == [[1, 1, 1], [1, 1, 1]]


def test_threads_two_contexts(backend, rng):
    """Two threads, each with its own context, at the same time as the main
    thread uses a third; every result checked against numpy."""
    datas = [rng.standard_normal((64, 257)) for _ in range(3)]
    errors, results = [], {}
    start = threading.Barrier(3)

    def work(i):
        try:
            with gk.Context(backend) as g:
                start.wait()
                for r in range(20):
                    g["m"] = datas[i] * (r + 1)
                    g.eval("s = sum(rows(exp(m / 100)))")
                    results[(i, r)] = g["s"].numpy().copy()
        except Exception as e:   # reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    work(2)
    for t in ts:
        t.join()
    assert not errors
    for (i, r), s in results.items():
        np.testing.assert_allclose(s, np.exp(datas[i] * (r + 1) / 100).sum(1), rtol=1e-12)
    assert len(results) == 60


def test_one_context_two_threads_serialised(rng):
    """A careless user shares one context between threads: the calls are
    serialised (no crash), each result is one of the values written."""
    with gk.Context("cpu") as g:
        bad = []

        def work(v):
            for _ in range(50):
                try:
                    g["x"] = np.full(100, v)
                    g.eval("y = x + 0")
                    y = g["y"].numpy()
                    if not (np.all(y == 1.0) or np.all(y == 2.0)):
                        bad.append(y)
                except Exception as e:
                    bad.append(e)
        ts = [threading.Thread(target=work, args=(v,)) for v in (1.0, 2.0)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not bad


def test_torch_cpu(ctx, rng):
    torch = pytest.importorskip("torch")
    for dt in [torch.bool, torch.int32, torch.int64, torch.float32, torch.float64]:
        t = torch.from_numpy(rng.random((3, 4, 5)) * 100).to(dt)
        assert ctx.set("t", t) is (ctx.backend == "cuda")
        back = torch.from_dlpack(ctx["t"]) if ctx.backend == "cpu" else torch.from_numpy(ctx["t"].numpy())
        assert back.dtype == dt and torch.equal(back, t)
        if ctx.backend == "cpu":
            assert back.data_ptr() == t.data_ptr()
    x = torch.from_numpy(rng.standard_normal((31, 33)).astype(np.float32))
    ctx["x"] = x.T                                     # non-contiguous: copied
    assert ctx.last_set_copied
    ctx.eval("e = softmax(rows(x))")
    if ctx.backend == "cpu":
        torch.testing.assert_close(torch.from_dlpack(ctx["e"]), torch.softmax(x.T, 1))
    ctx["h"] = torch.ones(3, dtype=torch.float16)     # converted
    assert ctx["h"].gk_dtype == "f32"


def test_torch_lifetime_after_close(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(1000)
    with gk.Context("cpu") as g:
        g["a"] = torch.from_numpy(a)
        g.eval("y = a * 3")
        t = torch.from_dlpack(g["y"])
    gc.collect()
    assert torch.equal(t, torch.from_numpy(a * 3))
