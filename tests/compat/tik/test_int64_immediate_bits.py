"""INT64_IMMEDIATE_BIT_PATTERN (tik_core.md): an int immediate in [2**63, 2**64) stored into a 64-bit signed
Scalar (``init_value=`` / ``set_as``), or combined with a 64-bit signed TIK value in arithmetic
(``2**64 - 1 - s``), is its 64-bit two's-complement pattern (2**64-1 -> -1), as TIK passes it to
``tvm.const`` through a 64-bit FFI slot. CANN's dynamic concat (``concat_v2_d_tik``) builds its all-ones vadd
masks as ``Scalar("int64", init_value=2**64-1)``, and CANN's dynamic arg_max_v2 its tail masks as
``MAX_MASK_INT64 - mask`` (an int64 Scalar), on every compile; both were refused at trace time.
Anything wider than 64 bits, out-of-range immediates for narrower values, and comparisons are still errors."""
import numpy as np

from pto_core.errors import IllegalOperand
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run


def _kernel(values):
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int64", (4,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (4,), name="ub", scope=tik.scope_ubuf)
    regs = [ti.Scalar("int64", name=f"s{i}", init_value=v) for i, v in enumerate(values[:2])]
    late = ti.Scalar("int64", name="late")
    late.set_as(values[2])
    arr = ti.ScalarArray("int64", 1, "arr", init_value=values[3])
    for i, r in enumerate(regs + [late, arr[0]]):
        ub[i].set_as(r)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "bits", [], [y])
    return ti


def test_an_int64_scalar_takes_an_immediate_up_to_2_64_as_its_bit_pattern():
    values = [2 ** 64 - 1, 2 ** 63, 0xFFFF_FFFF_0000_0000, 2 ** 63 + 5]
    got = run(_kernel(values))[0]
    want = np.array(values, dtype=np.uint64).view(np.int64)
    assert np.array_equal(got, want), (got, want)         # the output starts as 0xFF.. fill, != these values


def test_the_all_ones_mask_keeps_every_bit_in_shifts_and_ands():
    """concat_v2_d_tik's use: l = all-ones; l & (l << 3) clears the low 3 bits."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int64", (4,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (4,), name="ub", scope=tik.scope_ubuf)
    m = ti.Scalar("int64", name="m", init_value=2 ** 64 - 1)
    m.set_as(m & (m << 3))
    ub[0].set_as(m)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "mask", [], [y])
    assert run(ti)[0][0] == -8


def test_immediates_beyond_64_bits_or_too_wide_for_narrower_scalars_are_still_errors():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match="18446744073709551616 .* does not fit int64"):
        ti.Scalar("int64", name="big", init_value=2 ** 64)
    with raises_tik(IllegalOperand, match="does not fit int32"):
        ti.Scalar("int32", name="w", init_value=2 ** 32 - 1)
    with raises_tik(IllegalOperand, match="does not fit uint64"):
        ti.Scalar("uint64", name="u").set_as(2 ** 64)
    with raises_tik(IllegalOperand, match="does not fit int64"):
        ti.Scalar("int64", name="n").set_as(-2 ** 63 - 1)


def test_an_int64_expression_takes_an_immediate_up_to_2_64_as_its_bit_pattern():
    """arg_max_v2's tail mask: all ones minus the low `tail` bits, as ``2**64 - 1 - (2**tail - 1)``; the
    immediate is -1 in int64, so the result keeps every bit (and the other operators follow C int64)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int64", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (8,), name="ub", scope=tik.scope_ubuf)
    mask = ti.Scalar("int64", name="mask", init_value=7)
    results = [2 ** 64 - 1 - mask, mask + (2 ** 64 - 1), (2 ** 63) | mask,
               mask & 0xFFFF_FFFF_FFFF_FFF0, mask ^ (2 ** 64 - 1), mask * (2 ** 64 - 1)]
    for i, e in enumerate(results):
        r = ti.Scalar("int64", name=f"r{i}")
        r.set_as(e)
        ub[i].set_as(r)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    build(ti, "tail_mask", [], [y])
    got = run(ti)[0][:len(results)]
    want = np.array([2 ** 64 - 8, 6, 2 ** 63 + 7, 0, 2 ** 64 - 8, 2 ** 64 - 7], dtype=np.uint64).view(np.int64)
    assert np.array_equal(got, want), (got, want)


def test_expression_immediates_beyond_64_bits_narrower_values_and_comparisons_are_still_errors():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    s64 = ti.Scalar("int64", name="s64", init_value=1)
    s32 = ti.Scalar("int32", name="s32", init_value=1)
    with raises_tik(IllegalOperand, match="18446744073709551616 .* does not fit int64"):
        ti.Scalar("int64", name="a").set_as(2 ** 64 - s64)
    with raises_tik(IllegalOperand, match="does not fit int32"):
        ti.Scalar("int32", name="b").set_as(2 ** 32 - 1 - s32)
    with raises_tik(IllegalOperand, match="does not fit int64"):
        with ti.if_scope(s64 < 2 ** 64 - 1):
            pass
