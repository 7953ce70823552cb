"""vec_rec/rsqrt/ln_high_preci: every float16 input bit for bit against correctly rounded float64
results (saturation chips: NaN -> 0, +-inf -> +-max), and the documented work_tensor minimum
(hiascend TIK pages atlastikapi_07_0058 / _0060 / _0062): accepted at the minimum, refused one below."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

F16 = np.float16
SATURATING = {"Ascend310": True, "Ascend910": True, "Ascend310P3": True, "Ascend910B1": False}
FUNCS = {"rec": lambda x: 1.0 / x, "rsqrt": lambda x: 1.0 / np.sqrt(x), "ln": np.log}
WORK_DTYPE = {"rec": "float32", "rsqrt": "float32", "ln": "float16"}


def _ref(op, x16, saturating):
    with np.errstate(all="ignore"):
        out = FUNCS[op](x16.astype(np.float64)).astype(F16)
    if saturating:
        out = np.clip(np.where(np.isnan(out), F16(0), out), F16(-65504), F16(65504)).astype(F16)
    return out


def _kernel(op, n, work, mask=128, rep=None):
    rep = rep or n // 128
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    s = ti.Tensor("float16", (n,), name="s", scope=tik.scope_ubuf)
    w = ti.Tensor(WORK_DTYPE[op], (work,), name="w", scope=tik.scope_ubuf)
    ti.data_move(s, x, 0, 1, n // 16, 0, 0)
    getattr(ti, f"vec_{op}_high_preci")(mask, s, s, w, rep, 8, 8)      # in place (dst is src)
    ti.data_move(y, s, 0, 1, n // 16, 0, 0)
    return build(ti, op, [x], [y])


@pytest.mark.parametrize("chip", sorted(SATURATING))
@pytest.mark.parametrize("op", sorted(FUNCS))
def test_every_float16_input_is_correctly_rounded(op, chip):
    set_current_compile_soc_info(chip)
    allv = np.arange(0x10000, dtype=np.uint16).view(F16)
    n = 128 * 32
    units = {"rec": 4, "rsqrt": 6, "ln": 10}[op]
    for i in range(0, allv.size, n):
        x = allv[i:i + n]
        out, = run(_kernel(op, n, units * n), {"x": x})
        assert (out.view(np.uint16) == _ref(op, x, SATURATING[chip]).view(np.uint16)).all()


# (op, chip, mask, documented minimum for 2 repeats of float16 at src_rep_stride 8)
WORK_MIN = [("ln", "Ascend310", 128, 10 * 256), ("ln", "Ascend910B1", 128, 10 * 256),
            ("ln", "Ascend910", [3, 2**64 - 1], 10 * 208),          # the page's bit-mask example: 2080
            ("rsqrt", "Ascend310", 128, 6 * 256), ("rsqrt", "Ascend910", 128, 5 * 256),
            ("rsqrt", "Ascend310P3", 66, 5 * 208), ("rec", "Ascend910B1", 128, 4 * 256)]


@pytest.mark.parametrize("op,chip,mask,need", WORK_MIN)
def test_work_tensor_minimum_is_accepted_and_one_less_refused(op, chip, mask, need):
    set_current_compile_soc_info(chip)
    x = np.linspace(0.5, 8, 256).astype(F16)
    out, = run(_kernel(op, 256, need, mask=mask), {"x": x})
    assert np.isfinite(out).all()
    set_current_compile_soc_info(chip)
    with raises_tik(IllegalOperand, match=rf"work tensor size\({need - 1}\).*needed size\({need}\)"):
        _kernel(op, 256, need - 1, mask=mask)


def test_h_cast_to_int4_is_a_clear_error_not_a_key_error():
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    a = ti.Tensor("float16", (256,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("int4", (256,), name="b", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match=r"test_vector_high_preci.py:\d+.*h_cast does not convert int4"):
        ti.h_cast(b, a, "none")
