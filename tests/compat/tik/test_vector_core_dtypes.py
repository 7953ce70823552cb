"""Ascend310P / Ascend610 ``VectorCore``: the instructions and dtypes its own ini map
(``[VectorCoreintrinsicDtypeMap]``, tik_api.md Appendix A column 310P-AIV) lists beyond the AI core's
run there and compute like numpy; on the AI core they raise. Regression for round 5 of the
documented-semantics checks (the simulator used the AI core table for both core types)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import UnsupportedOp
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik
from .vec_helpers import vec_kernel


@pytest.fixture(autouse=True)
def _restore_chip():
    yield
    set_current_compile_soc_info("Ascend310")


def _on(chip, core, bufs, body):
    set_current_compile_soc_info(chip, core_type=core)
    return vec_kernel(bufs, body)


def test_int16_abs_and_reduce_max_on_the_vector_core():
    a = np.arange(128, dtype=np.int16) * 7 - 300
    a[5] = -32767
    out = _on("Ascend310P3", "VectorCore", {"a": a, "d": np.full(128, 5, np.int16)},
              lambda ti, ub: ti.vec_abs(128, ub["d"], ub["a"], 1, 8, 8))
    assert np.array_equal(out["d"], np.abs(a.astype(np.int32)).astype(np.int16))
    out = _on("Ascend610", "VectorCore", {"a": a, "d": np.full(16, 5, np.int16)},
              lambda ti, ub: ti.vcmax(128, ub["d"], ub["a"], 1, 1, 1, 8))
    assert out["d"][0] == a.max() and out["d"][1] == int(np.argmax(a))
    assert (out["d"][2:] == 5).all()
    b = (np.arange(128) % 3 * 7 - 300).astype(np.int16)

    def cmp(ti, ub):
        ti.mov_cmpmask_to_tensor(ub["m"], ti.vcmp_eq(128, ub["a"], ub["b"], 1, 1))
    out = _on("Ascend310P3", "VectorCore", {"a": a, "b": b, "m": np.full(32, 0xAA, np.uint8)}, cmp)
    assert np.array_equal(out["m"][:16], np.packbits(a == b, bitorder="little"))


@pytest.mark.parametrize("api", ["vabs", "vshl"])
def test_vector_core_only_dtypes_raise_on_the_ai_core(api):
    a = np.arange(128, dtype=np.int16)

    def body(ti, ub):
        if api == "vabs":
            ti.vec_abs(128, ub["d"], ub["a"], 1, 8, 8)
        else:
            ti.vshl(128, ub["d"], ub["a"], 3, 1, 1, 1, 8, 8)
    with raises_tik(UnsupportedOp, match="int16 on Ascend310P3 AiCore"):
        _on("Ascend310P3", "AiCore", {"a": a, "d": np.zeros(128, np.int16)}, body)


def test_shifts_on_the_vector_core():
    a = (np.arange(128, dtype=np.int32) * 1021 - 60000).astype(np.int16)
    out = _on("Ascend310P3", "VectorCore", {"a": a, "d": np.full(128, 9, np.int16), "e": np.full(128, 9, np.int16)},
              lambda ti, ub: (ti.vshl(128, ub["d"], ub["a"], 3, 1, 1, 1, 8, 8),
                              ti.vshr(128, ub["e"], ub["a"], 2, 1, 1, 1, 8, 8)))
    assert np.array_equal(out["d"], (a.astype(np.int32) << 3).astype(np.int16))
    assert np.array_equal(out["e"], a >> 2)  # arithmetic shift for signed (tik_api.md §9.4)


@pytest.mark.parametrize("quarter", range(4))
def test_s16_to_f32_every_value_on_the_vector_core(quarter):
    src = np.arange(-32768 + 16384 * quarter, -16384 + 16384 * quarter, dtype=np.int32).astype(np.int16)
    out = _on("Ascend310P3", "VectorCore", {"s": src, "d": np.full(16384, 0.25, np.float32)},
              lambda ti, ub: (ti.vec_conv(64, "", ub["d"], ub["s"], 255, 8, 4),
                              ti.vec_conv(64, "", ub["d"][255 * 64:], ub["s"][255 * 64:], 1, 8, 4)))
    assert np.array_equal(out["d"], src.astype(np.float32))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-40000, 40000, width=32), min_size=64, max_size=64))
def test_f32_to_s16_round_and_trunc_on_the_vector_core(xs):
    src = np.array(xs, np.float32)
    src[:4] = [2.5, -2.5, 3.5, -0.5]
    out = _on("Ascend310P3", "VectorCore", {"s": src, "r": np.full(64, 7, np.int16), "z": np.full(64, 7, np.int16)},
              lambda ti, ub: (ti.vec_conv(64, "round", ub["r"], ub["s"], 1, 4, 8),
                              ti.vec_conv(64, "to-zero", ub["z"], ub["s"], 1, 4, 8)))
    assert np.array_equal(out["r"], np.clip(np.rint(src.astype(np.float64)), -32768, 32767).astype(np.int16))
    assert np.array_equal(out["z"], np.clip(np.trunc(src.astype(np.float64)), -32768, 32767).astype(np.int16))


def test_deq_is_ai_core_only_and_float_shift_is_rejected():
    s = np.arange(64, dtype=np.int32)
    with raises_tik(UnsupportedOp, match="VectorCore"):
        _on("Ascend310P3", "VectorCore", {"s": s, "d": np.zeros(128, np.float16)},
            lambda ti, ub: ti.vec_conv(64, "", ub["d"], ub["s"], 1, 4, 8, deqscale=1.0))
    with raises_tik(UnsupportedOp):
        _on("Ascend310P3", "VectorCore", {"a": np.ones(128, np.float16), "d": np.zeros(128, np.float16)},
            lambda ti, ub: ti.vshl(128, ub["d"], ub["a"], 1, 1, 1, 1, 8, 8))
