"""Bytes a lowering wrote into its own scratch are not the user's data: once the scratch is freed
(`CubeBase._cube_scratch`, a lowering's ``new_stmt_scope``), a user tensor placed over them and read
before the user writes it is reported by the uninitialised-read check (``pto.mark_unwritten``)."""
import inspect
import warnings

import numpy as np
import pytest

from pto_core.errors import UninitializedReadWarning
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik import control

from .helpers import build, run


def _after_fixpipe(chip, tail_use):
    """fixpipe (relu: the vector composition through UB scratch on chips without a FIXPIPE unit), then a UB
    tensor ``t`` declared in the freed scratch, only its first 16 elements written, then ``tail_use``."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    g = ti.Tensor("float32", (256,), name="l0c_in", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (256,), name="dst", scope=tik.scope_gm)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
    l0c = ti.Tensor("float32", (256,), name="l0c", scope=tik.scope_cbuf_out)
    ti.data_move(ub, g, 0, 1, 32, 0, 0)
    ti.data_move(l0c, ub, 0, 1, 1, 0, 0)
    ti.fixpipe(dst, l0c, 1, 32, 0, 0, {"relu": True, "quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    t = ti.Tensor("float16", (256,), name="t", scope=tik.scope_ubuf)
    ti.vec_dup(16, t, 7.0, 1, 8)
    tail_use(ti, t, out)
    build(ti, "k", [g], [dst, out])
    assert [c.lowering for c in ti.fixpipe_calls] == ["vector"]
    return ti


def _store(ti, t, out):
    ti.data_move(out, t, 0, 1, 16, 0, 0)


def _add_then_store(ti, t, out):
    ti.vec_add(128, t[128:], t[128:], t[128:], 1, 8, 8, 8)      # reads elements [128, 256): never written
    ti.data_move(out, t, 0, 1, 16, 0, 0)


@pytest.mark.parametrize("chip", ["Ascend910A", "Ascend310"])
def test_a_tensor_over_freed_fixpipe_scratch_is_unwritten_where_the_user_did_not_write(chip):
    """It read the fixpipe's leftovers (out[16:] == fixpipe data) with no report: the scratch's bytes
    still counted as written after the lowering freed them."""
    x = np.arange(256, dtype=np.float32) - 100
    ti = _after_fixpipe(chip, _store)
    with pytest.warns(UninitializedReadWarning, match=r"output 'out': 480 of 512 bytes .*elements \[16, 256\)"):
        d, o = run(ti, {"l0c_in": x})
    assert d.tobytes() == np.maximum(x, 0).astype(np.float16).tobytes()         # the fixpipe itself: unchanged
    assert (o[:16] == 7).all()
    assert "'dst'" not in str(ti.tikdb.executable.unwritten_outputs)


def test_a_vector_read_of_the_freed_scratch_is_reported():
    ti = _after_fixpipe("Ascend910A", _add_then_store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninitializedReadWarning)
        run(ti, {"l0c_in": np.ones(256, np.float32)})
    assert ti.tikdb.reports and all(k == "uninitialized" and "pto.ub.vadd" in msg and "byte 0x500" in msg
                                    for k, msg in ti.tikdb.reports)


def test_a_kernel_that_writes_its_tensor_in_the_freed_scratch_is_not_reported():
    def write_all(ti, t, out):
        ti.vec_dup(128, t, 1.0, 2, 8)
        ti.data_move(out, t, 0, 1, 16, 0, 0)
    ti = _after_fixpipe("Ascend910A", write_all)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninitializedReadWarning)
        _, o = run(ti, {"l0c_in": np.ones(256, np.float32)})
    assert ti.tikdb.reports == [] and (o == 1).all()


def _after_h_reduce():
    """h_reduce_max over rows of 96 f16 (its row scratch: a ``new_stmt_scope`` the lowering opens), then a UB
    tensor declared in the freed scratch, stored to GM without being written."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (4, 96), name="x", scope=tik.scope_gm)
    m = ti.Tensor("float16", (16,), name="m", scope=tik.scope_gm)
    out = ti.Tensor("float16", (192,), name="out", scope=tik.scope_gm)
    x = ti.Tensor("float16", (4, 96), name="x_ub", scope=tik.scope_ubuf)
    r = ti.Tensor("float16", (16,), name="r_ub", scope=tik.scope_ubuf)
    ti.data_move(x, g, 0, 1, 24, 0, 0)
    ti.vec_dup(16, r, 0.0, 1, 8)
    ti.h_reduce_max(r[0:4], x, 1)
    ti.data_move(m, r, 0, 1, 1, 0, 0)
    t = ti.Tensor("float16", (192,), name="t", scope=tik.scope_ubuf)      # over the row scratch, out, work
    ti.data_move(out, t, 0, 1, 12, 0, 0)
    return build(ti, "k", [g], [m, out])


def test_a_tensor_over_freed_h_reduce_scratch_is_unwritten():
    x = np.arange(384, dtype=np.float16).reshape(4, 96)
    ti = _after_h_reduce()
    with pytest.warns(UninitializedReadWarning, match=r"output 'out': 384 of 384 bytes"):
        mx, _ = run(ti, {"x": x})
    assert mx[:4].tolist() == x.max(axis=1).tolist()


def _redeclared():
    """A UB tensor written in one new_stmt_scope, then another declared over its bytes in a second scope and
    stored without being written."""
    ti = tik.Tik()
    g = ti.Tensor("float16", (128,), name="g", scope=tik.scope_gm)
    out = ti.Tensor("float16", (128,), name="out", scope=tik.scope_gm)
    with ti.new_stmt_scope():
        a = ti.Tensor("float16", (128,), name="a", scope=tik.scope_ubuf)
        ti.data_move(a, g, 0, 1, 8, 0, 0)
    with ti.new_stmt_scope():
        b = ti.Tensor("float16", (128,), name="b", scope=tik.scope_ubuf)
        ti.data_move(out, b, 0, 1, 8, 0, 0)
    return build(ti, "k", [g], [out])


@pytest.mark.parametrize("choice", [False, True])
def test_a_user_tensor_redeclared_over_a_freed_one_follows_freed_tensors_unwritten(monkeypatch, choice):
    monkeypatch.setattr(control, "FREED_TENSORS_UNWRITTEN", choice)
    ti = _redeclared()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", UninitializedReadWarning)
        out, = run(ti, {"g": np.arange(128, dtype=np.float16)})
    assert out.tolist() == list(range(128))         # the bytes are the device's leftovers either way
    assert bool([w for w in rec if "output 'out'" in str(w.message)]) == choice


@pytest.mark.parametrize("run_time_index", [True, False])
def test_a_scalar_read_of_never_written_bytes_is_reported_at_its_line(run_time_index):
    """h_fix322: ``x.set_as(ub[u])`` of bytes no op wrote is a use (a ``pto.load_scalar`` report in tikdb.reports,
    at the set_as line), with a run-time index as with a constant one; storing ``x`` writes ``o[0]``, so the run
    does not warn about the output (only moves carry the not-written state along: migration_guide/tik_core.md)."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    src = ti.Tensor("float16", (64,), name="src", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (16,), name="dst", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    o = ti.Tensor("float16", (16,), name="o", scope=tik.scope_ubuf)
    ti.data_move(ub, src, 0, 1, 4, 0, 0)
    ti.vec_dup(16, o, 0, 1, 8)
    x = ti.Scalar("float16")
    idx = ti.Scalar("int32", init_value=70) if run_time_index else 70
    line = inspect.currentframe().f_lineno + 1
    x.set_as(ub[idx])
    o[0].set_as(x)
    ti.data_move(dst, o, 0, 1, 1, 0, 0)
    build(ti, "k", [src], [dst])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UninitializedReadWarning)
        out, = run(ti, {"src": np.arange(64).astype(np.float16)})
    assert out[0] == np.frombuffer(b"\x55\x55", np.float16)[0]
    reads = [m for kind, m in ti.tikdb.reports if kind == "uninitialized"]
    assert len(reads) == 1 and "pto.load_scalar" in reads[0] and f"test_scratch_unwritten.py:{line}" in reads[0]
