"""vconv / vec_conv through kernels: the tik_api.md §10.7 rounding golden on every mode, deq,
mixed-width geometry, and the error paths (unknown mode, chip tables, deqscale misuse)."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik
from .vec_helpers import ref_lanewise, vec_kernel

MODES = ["round", "floor", "ceil", "away-zero", "to-zero", "odd"]
# tik_api.md §10.7: (conversion, input, expected per mode; None = mode not defined for it)
GOLDEN = {
    "f32->f32": (np.float32, np.float32, 0.5, [0.0, 0.0, 1.0, 1.0, 0.0, None]),
    "f32->f16": (np.float32, np.float16, 0.5 + 2 ** -12, [0.5, 0.5, 0.5 + 2 ** -11, 0.5 + 2 ** -11, 0.5,
                                                          0.5 + 2 ** -11]),
    "f32->s32": (np.float32, np.int32, 2 ** 22 + 0.5, [4194304, 4194304, 4194305, 4194305, 4194304, None]),
}


@pytest.mark.parametrize("case", sorted(GOLDEN))
@pytest.mark.parametrize("mode", MODES)
def test_golden_rounding_cases(case, mode):
    src_t, dst_t, x, want = GOLDEN[case]
    expected = want[MODES.index(mode)]
    if expected is None:
        return
    src = np.full(64, x, dtype=src_t)
    dst = np.full(256 // np.dtype(dst_t).itemsize, 7, dtype=dst_t)
    dr = 64 * np.dtype(dst_t).itemsize // 32
    out = vec_kernel({"d": dst, "s": src}, lambda ti, ub: ti.vec_conv(64, mode, ub["d"], ub["s"], 1, dr, 8),
                     chip="Ascend910B1")
    assert (out["d"][:64] == dst_t(expected)).all(), (case, mode, out["d"][:4])
    assert (out["d"][64:] == 7).all()


def test_golden_modes_follow_the_chip_tables():
    """Ascend910 (v100 cloud) has f322f16 only with '' and 'o'; Ascend310 has no f322s32r."""
    src = np.full(64, 0.5 + 2 ** -12, np.float32)
    out = vec_kernel({"d": np.zeros(128, np.float16), "s": src},
                     lambda ti, ub: ti.vec_conv(64, "odd", ub["d"], ub["s"], 1, 4, 8), chip="Ascend910A")
    assert (out["d"][:64] == np.float16(0.5 + 2 ** -11)).all()
    with raises_tik(UnsupportedOp, match="round_mode 'ceil' .*f322f16c.* on Ascend910A"):
        vec_kernel({"d": np.zeros(128, np.float16), "s": src},
                   lambda ti, ub: ti.vec_conv(64, "ceil", ub["d"], ub["s"], 1, 4, 8), chip="Ascend910A",
                   build_only=True)
    with raises_tik(UnsupportedOp, match="f322s32r"):
        vec_kernel({"d": np.zeros(64, np.int32), "s": src},
                   lambda ti, ub: ti.vec_conv(64, "round", ub["d"], ub["s"], 1, 8, 8), chip="Ascend310",
                   build_only=True)


def test_vconv_mixed_width_blocks_and_strides():
    """f16 -> f32 with TIK's usual (..., 1, 1, 8, 4) strides and a bit mask: the narrow source touches 4 blocks."""
    s = np.random.default_rng(1).uniform(-100, 100, 512).astype(np.float16)
    d = np.full(512, -3, np.float32)
    mask = [0, 0xFFFF0000FFFF00FF]
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: ti.vconv(mask, "", ub["d"], ub["s"], 3, 1, 1, 8, 4))
    want = ref_lanewise(lambda v: np.float32(v), d, [s], 3, mask, (1, 1), (8, 4), par=64)
    np.testing.assert_array_equal(out["d"], want)


def test_deq_int32_to_float16_with_keyword_deqscale():
    s = np.random.default_rng(2).integers(-3000, 3000, 128).astype(np.int32)
    d = np.zeros(128, np.float16)
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: ti.vconv(64, "none", ub["d"], ub["s"], 2, 1, 1, 4, 8,
                                                             deqscale=0.125))
    want = (s.astype(np.float64) * np.float64(np.float16(0.125))).astype(np.float16)
    np.testing.assert_array_equal(out["d"], want)


def test_f16_to_int_floor_as_kernels_call_it():
    s = np.random.default_rng(3).uniform(-50, 50, 64).astype(np.float16)
    d = np.zeros(64, np.int32)
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: ti.vconv(64, "floor", ub["d"], ub["s"], 1, 1, 1, 8, 4))
    np.testing.assert_array_equal(out["d"], np.floor(s.astype(np.float64)).astype(np.int32))


@pytest.mark.parametrize("call,cls,match", [
    (lambda ti, ub: ti.vec_conv(64, "nearest", ub["d"], ub["s"], 1, 4, 8), IllegalOperand, "round_mode 'nearest'"),
    (lambda ti, ub: ti.vec_conv(64, "", ub["d"], ub["s"], 1, 4, 8, deqscale=1.0), IllegalOperand,
     "deqscale applies only to int32 -> float16"),
    (lambda ti, ub: ti.vec_conv(64, "", ub["d"], ub["s"], 1, 4, 8, ldst_high_half=True), UnsupportedOp,
     "ldst_high_half"),
    (lambda ti, ub: ti.vec_conv(65, "", ub["d"], ub["s"], 1, 4, 8), IllegalOperand, r"mask = 65"),
])
def test_conv_errors(call, cls, match):
    with raises_tik(cls, match=match):
        vec_kernel({"d": np.zeros(128, np.float16), "s": np.zeros(64, np.float32)}, call, build_only=True)


def _conv_to(dst_dtype):
    """A kernel converting 256 float16 values to ``dst_dtype`` on Ascend910B1 (whose CANN table lists f162s8
    and the packed f322s4 / s322s4)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int8", (256,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float16", (256,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor(dst_dtype, (256,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 16, 0, 0)
    ti.vconv(128, "round", b, a, 2, 1, 1, 4, 8)
    ti.data_move(y, b, 0, 1, 8, 0, 0)
    ti.BuildCCE(kernel_name="conv_to", inputs=[x], outputs=[y])
    return ti


def test_vconv_to_int8_runs_and_to_packed_int4_is_refused():
    x = (np.arange(256) % 17 - 8).astype(np.float16)
    y, = _conv_to("int8").tikdb.start_debug({"x": x}, interactive=False)
    assert (y == x.astype(np.int8)).all() and y.dtype == np.int8
    with raises_tik(UnsupportedOp, match=r"vconv with dst of dtype int4 \(packed 4-bit elements\) is not modelled"):
        _conv_to("int4")


def test_pto_vconv_hint_table_matches_the_facade_round_modes():
    """`pto.ub.vconv`'s Fix for a TIK round_mode name (vector_conv.TIK_ROUND_MODE_LETTERS, h_user453) gives the
    letter the facade itself lowers that name to (vector_common.ROUND_MODES)."""
    from pto_core.ops.vector_conv import TIK_ROUND_MODE_LETTERS
    from tbe_compat.tik.vector_common import ROUND_MODES
    assert {name: letter or "" for name, letter in TIK_ROUND_MODE_LETTERS.items()} == ROUND_MODES


def test_the_unmodelled_tik_instructions_pto_names_as_such_are_the_facades():
    """registry.TIK_UNMODELLED_INSTRUCTIONS (the Fix of pto.ub.vbi & co: 'has no PTO op', review457) lists exactly
    the instructions the facade refuses as unmodelled (vector.UNMODELLED, vector_scatter.UNMODELLED_SCATTER) that
    registry.TIK_API_OPS does not map to a PTO op."""
    from pto_core.ops import registry
    from tbe_compat.tik.vector import UNMODELLED
    from tbe_compat.tik.vector_scatter import UNMODELLED_SCATTER
    assert set(registry.TIK_UNMODELLED_INSTRUCTIONS) == (set(UNMODELLED) | set(UNMODELLED_SCATTER)) - set(
        registry.TIK_API_OPS)
