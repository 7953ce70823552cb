"""GM writes into a tensor's allocation padding (GM_TAIL_PAD): legal and dropped, and never silent
past the tensor's last 32-byte block (named choice GM_PADDING_WRITE_WARNS, pto_core.ops.mte): a
`GmPaddingWriteWarning` at the user's line naming the tensor, the bytes past its end and a Fix."""
import inspect
import warnings

import numpy as np
import pytest

from pto_core.errors import GmPaddingWriteWarning, OutOfBounds
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _store(path: str, offset: int, blocks: int = 16):
    """x (128 float32) -> on-chip -> y[offset:] by ``path``; returns (tik instance, line of the store)."""
    set_current_compile_soc_info("Ascend910B1" if path in ("l1", "pad") else "Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm, is_atomic_add=path == "atomic")
    buf = ti.Tensor("float32", (128,), name="buf", scope=tik.scope_cbuf if path == "l1" else tik.scope_ubuf)
    ti.data_move(buf, x, 0, 1, 16, 0, 0)
    if path == "atomic":
        ti.set_atomic_add(1)
    if path == "pad":
        line = _line() + 1
        ti.data_move_pad(y[offset], buf, 1, 32 * blocks, 0, 0)
    elif path == "tensor_mov":
        line = _line() + 1
        ti.tensor_mov(y[offset], buf, "", 1, blocks, 0, 0)
    else:
        line = _line() + 1
        ti.data_move(y[offset], buf, 0, 1, blocks, 0, 0)
    if path == "atomic":
        ti.set_atomic_add(0)
    return build(ti, "store_" + path, [x], [y]), line


@pytest.mark.parametrize("path", ["ub", "l1", "pad", "tensor_mov", "atomic"])
def test_a_store_past_the_last_block_warns_at_the_line_naming_the_tensor(path):
    ti, line = _store(path, 8)                      # 16 blocks from element 8: 8 elements past y's end
    xs = np.arange(128, dtype=np.float32)
    with pytest.warns(GmPaddingWriteWarning, match=r"tensor 'y' \(128 elements, 512 B\): the float32 "
                                                   r"elements 128..135 \(bytes \[512, 544\)\) past its end are "
                                                   r"dropped.*Fix: ") as rec:
        out, = run(ti, {"x": xs})
    mine = [w for w in rec if w.category is GmPaddingWriteWarning]
    assert len(mine) == 1 and mine[0].filename == __file__ and mine[0].lineno == line
    assert np.array_equal(out[8:], xs[:120])        # the elements inside y are stored, the rest dropped
    assert any(kind == "gm-tail" for kind, _ in ti.tikdb.reports)


def test_the_warning_is_once_per_line_and_tensor():
    ti = tik.Tik()
    x = ti.Tensor("float32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    with ti.for_range(0, 3):
        ti.data_move(y[8], ub, 0, 1, 16, 0, 0)
    build(ti, "loop", [x], [y])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run(ti, {"x": np.zeros(128, np.float32)})
    assert sum(w.category is GmPaddingWriteWarning for w in rec) == 1


def test_a_whole_block_store_of_a_partial_last_block_stays_quiet():
    """The usual idiom: 20 float32 stored as 3 whole blocks (bytes up to round32(80) = 96) is a gm-tail
    report only."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (20,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (20,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (24,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 3, 0, 0)
    ti.data_move(y, ub, 0, 1, 3, 0, 0)
    build(ti, "idiom", [x], [y])
    xs = np.arange(20, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, = run(ti, {"x": xs})
    assert np.array_equal(out, xs)
    assert [kind for kind, _ in ti.tikdb.reports] == ["gm-tail"]


def test_a_run_time_offset_into_the_padding_warns_and_one_further_is_an_error():
    ti = tik.Tik()
    k = ti.InputScalar("int32", name="k")
    x = ti.Tensor("float32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    ti.data_move(y[k], ub, 0, 1, 16, 0, 0)
    build(ti, "rt", [x, k], [y])
    xs = np.arange(128, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(run(ti, {"x": xs, "k": 0})[0], xs)
    with pytest.warns(GmPaddingWriteWarning, match=r"float32 elements 128..135 \(bytes \[512, 544\)\) past its end"):
        run(ti, {"x": xs, "k": 8})
    with raises_tik(OutOfBounds, match="and of its allocation's padding"):
        run(ti, {"x": xs, "k": 16})


def test_data_move_pad_warnings_explain_its_byte_counts():
    """review450: a data_move_pad store past its tensor's last block had data_move's Fix (burst counts 32-byte
    blocks; use data_move_pad), false for a call whose burst counts bytes; now a Fix in data_move_pad's terms. One
    element past the end is one element ("is dropped", "it"), not "are dropped ... them"."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    k = ti.InputScalar("int32", name="k")
    x = ti.Tensor("float16", (17,), name="x", scope=tik.scope_gm)        # 34 B: allocation 96 B
    y = ti.Tensor("float16", (17,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ti.data_move_pad(ub, x[k], 1, 66, 0, 0)          # k = 16: bytes [32, 98), one element past the allocation
    ti.data_move_pad(y, ub, 1, 34, 0, 0)
    ti.data_move_pad(y[2 * k], ub, 1, 2, 0, 0)       # k = 16: bytes [64, 66), one element past y's last block
    build(ti, "pad_fix", [x, k], [y])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run(ti, {"x": np.zeros(17, np.float16), "k": 16})
    got = {w.category.__name__: str(w.message) for w in rec}
    pad, over = got["GmPaddingWriteWarning"], got["GmOverreadWarning"]
    assert ("the float16 element 32 (bytes [64, 66)) past its end is dropped (it lands in the host's allocation "
            "padding of 62 B, never in the tensor; the output does not receive it)") in pad
    assert "the 1 element past that allocation (2 B) read as unknown data" in over and "never uses it --" in over
    for text in (pad, over):
        fix = text.split("Fix: ", 1)[1]
        assert "counts of tik.data_move_pad" in fix and "bursts of burst bytes" in fix, fix
        assert "32-byte blocks" not in fix and "data_move_pad on chips" not in fix, fix


def test_fixpipe_past_a_gm_tensor_is_a_tensor_overflow_not_a_drop():
    """FIXPIPE writes elements, not whole blocks: no padding slack (an error, never a silent drop)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    cc = ti.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
    out = ti.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    with raises_tik(OutOfBounds, match="tensor overflow.*'out'"):
        ti.fixpipe(out[8], cc, 1, 32, 0, 0)


def test_a_relaunched_kernel_warns_once_for_a_padding_write_before_its_block_loop():
    """RELAUNCH_WIDER: a store past y's last block before the block loop warned in the aborted first
    attempt and again in the relaunch (the warning was not held with the attempt's other output)."""
    from tbe.common.platform import get_soc_spec
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    tiling = ti.Tensor("int32", (8,), name="tiling", scope=tik.scope_gm)
    y = ti.Tensor("int32", (16,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("int32", (8,), name="z", scope=tik.scope_gm)
    tu = ti.Tensor("int32", (16,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling, 0, 1, 1, 0, 0)
    ti.data_move(tu[8], tiling, 0, 1, 1, 0, 0)
    blocks = ti.Scalar("int32", name="blocks", init_value=tu[0])
    line = _line() + 1
    ti.data_move(y[8], tu, 0, 1, 2, 0, 0)            # 8 int32 past y's end
    with ti.for_range(0, blocks, block_num=blocks):
        pass
    ti.data_move(z, tu, 0, 1, 1, 0, 0)
    build(ti, "relaunch_pad", [], [y, z], flowtable=[tiling])
    used = get_soc_spec("CORE_NUM") + 1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run(ti, {"tiling": np.array([used] + [0] * 7, np.int32)})
    mine = [w for w in rec if w.category is GmPaddingWriteWarning]
    assert [(w.filename, w.lineno) for w in mine] == [(__file__, line)]


def _overrun(inplace):
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm)
    u = ti.Tensor("float32", (160,), name="u", scope=tik.scope_ubuf)
    ti.data_move(u, y[8], 0, 1, 20, 0, 0)           # 128 B past y's allocation: GmOverreadWarning
    ti.data_move(y[8], u, 0, 1, 16, 0, 0)           # 8 elements past y's end: GmPaddingWriteWarning
    ti.BuildCCE("overrun", inputs=[x], outputs=[y])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ti.tikdb.start_debug({"x": np.zeros(128, np.float32)}, interactive=False, inplace=inplace)
    return {w.category.__name__: str(w.message) for w in rec}


@pytest.mark.parametrize("inplace,name", [(None, "'y'"), ({"y": "x"}, "'y' (in place on 'x')")])
def test_the_warnings_name_the_tik_call_and_the_tensor_the_kernel_used(inplace, name):
    """msg270: the TIK call leads, and an output placed in place on an input (start_debug(inplace=)) is named
    as the kernel wrote it, not only by the input it shares memory with. fix447: in TIK words -- the call only
    (no PTO op), float32 elements first with the bytes in parentheses, a Fix naming the TIK call's arguments."""
    got = _overrun(inplace)
    assert ("in `tik.data_move`: tik.data_move writes float32 elements 8..135 (bytes [32, 544)) of tensor " + name
            + " (128 elements, 512 B): the float32 elements 128..135 (bytes [512, 544)) past its end are dropped") \
        in got["GmPaddingWriteWarning"]
    assert ("in `tik.data_move`: tik.data_move reads float32 elements 8..167 (bytes [32, 672)) of tensor " + name
            + " (128 elements, 512 B; the host allocates 544 B): the 32 elements past that allocation (128 B) read "
              "as unknown data") in got["GmOverreadWarning"]
    for text in (got["GmPaddingWriteWarning"], got["GmOverreadWarning"]):
        assert "pto." not in text and " f32" not in text and "Fix: " in text
        assert "offset and counts of tik.data_move" in text and "nburst and burst" in text and "data_move_pad" in text


def test_the_rounded_store_of_a_core_row_warns_in_tik_words():
    """fix447: the GmPaddingWriteWarning of a TIK kernel named `tik.data_move` (pto.mte_ub_gm), GM bytes first
    and the PTO dtype ("the 24 byte(s), 12 f16 element(s)"), and a Fix without TIK's arguments. Now: the call
    only, float16 elements first (bytes in parentheses), a Fix in data_move's terms (burst counts 32-byte blocks;
    data_move_pad or a shorter last burst). The kernel: core 1's 64-byte store of its 40-byte row of y."""
    from .test_gm_races import _row_fill_kernel
    ti = _row_fill_kernel(20)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run(ti)
    texts = [str(w.message) for w in rec if w.category is GmPaddingWriteWarning]
    assert len(texts) == 1
    text = texts[0]
    assert ("in `tik.data_move`: tik.data_move writes float16 elements 20..51 (bytes [40, 104)) of tensor 'y' "
            "(40 elements, 80 B): the float16 elements 40..51 (bytes [80, 104)) past its end are dropped") in text
    assert "pto.mte_ub_gm" not in text and "f16" not in text
    fix = text.split("Fix: ", 1)[1]
    assert "counts of tik.data_move" in fix and "burst counts 32-byte blocks" in fix and "data_move_pad" in fix \
        and "shorter last burst" in fix


def test_a_pto_programs_padding_write_and_overread_keep_pto_words():
    """With the TIK wording registered (this module imports the facade), a PTO program's warnings still name
    the PTO op, GM bytes first, the PTO dtype, and no TIK call or argument (fix447)."""
    from tbe_compat.tik.errors import TIK_RACE_WORDING      # (registered when the facade is imported)
    assert TIK_RACE_WORDING.padding_write_fix and TIK_RACE_WORDING.overread_fix
    from pto_core import pto
    from pto_core.errors import GmOverreadWarning
    from pto_core.program import program
    with program("pto_spill", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (64,))                     # 256 B: allocation 288 B
        y = k.gm_arg("y", "f32", (20,), io="out")           # 80 B: allocation 128 B
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(x + 48, ub, 0, 128, nburst=(1, 0, 0))          # [192, 320): 32 B past x's allocation
        pto.pipe_barrier("ALL")
        pto.mte_ub_gm(ub, y, 128, nburst=(1, 0, 0))                  # [0, 128): 48 B past y's end
    exe = k.program.compile()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        exe.run({"x": np.zeros(64, np.float32)})
    got = {w.category: str(w.message) for w in rec}
    over, pad = got[GmOverreadWarning], got[GmPaddingWriteWarning]
    assert "pto.mte_gm_ub reads GM bytes [192, 320) of region 'x' (256 B; the host allocates 288 B)" in over
    assert "pto.mte_ub_gm writes GM bytes [0, 128) of tensor 'y' (80 B): the 48 byte(s), 12 f32 element(s), " \
           "[80, 128) past its end are dropped" in pad
    for text in (over, pad):
        assert "tik." not in text and "float32" not in text and "data_move" not in text


def test_the_gm_tail_report_of_a_tik_call_speaks_tik():
    """fix451: a ``gm-tail`` report (bytes dropped in the allocation padding, `tikdb.reports`) of a TIK kernel read
    'a write to GM region 'y' ran 16 byte(s) past its end (bytes 80..95)'. Now: the user's file:line, the TIK call,
    the tensor, its elements in TIK's dtype spelling (bytes in parentheses), and whether the store stayed in the
    tensor's last 32-byte block (the whole-block idiom, harmless) or went further (the one that also warned)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (20,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (20,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (32,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 3, 0, 0)
    idiom = _line() + 1
    ti.data_move(y, ub, 0, 1, 3, 0, 0)                  # 24 elements from 0: the rest of y's last block
    further = _line() + 1
    ti.data_move(y[8], ub, 0, 1, 3, 0, 0)               # elements 8..31: one block past y's last
    build(ti, "tail_words", [x], [y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(ti, {"x": np.arange(20, dtype=np.float32)})
    tails = [msg for kind, msg in ti.tikdb.reports if kind == "gm-tail"]
    assert tails == [
        f"{__file__}:{idiom} in `tik.data_move`: tik.data_move writes float32 elements 20..23 (bytes [80, 96)) past "
        f"the end of tensor 'y' (20 elements, 80 B); they land in the host's allocation padding and are dropped (the "
        f"rest of the tensor's last 32-byte block, stored whole: harmless)",
        f"{__file__}:{further} in `tik.data_move`: tik.data_move writes float32 elements 20..31 (bytes [80, 128)) "
        f"past the end of tensor 'y' (20 elements, 80 B); they land in the host's allocation padding and are dropped"]
