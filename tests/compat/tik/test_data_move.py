"""data_move for every scope pair with TIK's units (32-byte blocks, gaps), the argument
forms seen in real kernels, every error path; tensor_mov (plain), data_move_pad,
set_atomic_add, block_barrier, pipe_barrier."""
import functools

import numpy as np
import pytest

from pto_core.errors import GmOverreadWarning, GmPaddingWriteWarning, IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run


def here() -> int:
    """Line number of the caller's next line."""
    import inspect
    return inspect.currentframe().f_back.f_lineno + 1


def _gapped_reference(src, n, burst, src_gap, dst_gap, dst_size, unit):
    """Independent reference of the gap semantics: element copy loop over bursts."""
    out = np.full(dst_size, -1, src.dtype)
    s = d = 0
    for _ in range(n):
        out[d:d + burst * unit] = src[s:s + burst * unit]
        s += (burst + src_gap) * unit
        d += (burst + dst_gap) * unit
    return out


@pytest.mark.parametrize("path", ["gm-ub-gm", "gm-l1-ub-gm", "gm-ub-l1-ub-gm", "gm-ub-ub-gm"])
@pytest.mark.parametrize("n,burst,src_gap,dst_gap", [(1, 4, 0, 0), (3, 2, 1, 2), (4, 1, 3, 0)])
def test_paths_units_and_gaps(path, n, burst, src_gap, dst_gap):
    """The strided move is done once, on the first hop of each path; the other hops copy whole tensors."""
    unit = 16                                                  # float16 elements per 32-byte block
    size = ((n - 1) * (burst + max(src_gap, dst_gap)) + burst) * unit
    ti = tik.Tik()
    x = ti.Tensor("float16", (size,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (size,), name="y", scope=tik.scope_gm)
    hops = path.split("-")
    scopes = {"ub": tik.scope_ubuf, "l1": tik.scope_cbuf}
    bufs = [x] + [ti.Tensor("float16", (size,), name=f"t{i}", scope=scopes[h]) for i, h in enumerate(hops[1:-1])] + [y]
    blocks = size // unit
    for i, (src, dst) in enumerate(zip(bufs, bufs[1:])):
        if i == 0:
            if len(bufs) > 2:
                ti.data_move(dst, src, 0, 1, blocks, 0, 0)          # pre-fill the destination first ...
            ti.data_move(dst, src, 0, n, burst, src_gap, dst_gap)  # ... then the strided move on top
        else:
            ti.data_move(dst, src, 0, 1, blocks, 0, 0)
    build(ti, "paths", [x], [y])
    xs = np.arange(size, dtype=np.float16)
    out, = run(ti, {"x": xs})
    want = _gapped_reference(xs, n, burst, src_gap, dst_gap, size, unit)
    if len(bufs) > 2:
        want = np.where(want == -1, xs, want)
    mask = want != -1
    np.testing.assert_array_equal(out[mask], want[mask])
    assert np.isnan(out[~mask]).all()                          # bytes no burst wrote keep the GM pattern


def test_large_and_dynamic_bursts():
    ti = tik.Tik()
    n = 2053 * 16                                               # a prime number of blocks > 2047
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float16", (n,), name="z", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (n,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 2053, 0, 0)
    ti.data_move(y, ub, 0, 1, 2053, 0, 0)
    b = ti.Scalar("int32", name="b", init_value=2053)
    ti.data_move(z, ub, 0, 1, b, 0, 0)                          # burst as a Scalar (CHECKLIST S12)
    build(ti, "big", [x], [y, z])
    xs = np.random.default_rng(0).standard_normal(n).astype(np.float16)
    oy, oz = run(ti, {"x": xs})
    assert np.array_equal(oy, xs) and np.array_equal(oz, xs)


def test_argument_forms_seen_in_real_kernels():
    ti = tik.Tik()
    x = ti.Tensor("int32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (64,), name="ub", scope=tik.scope_ubuf)
    cont = functools.partial(ti.data_move, sid=0, nburst=1, src_stride=0, dst_stride=0)   # D1
    cont(dst=ub, src=x, burst=8)
    ti.data_move(y, ub, 0, 1, 4, 0, 0, 0)                       # 8th positional mode argument (D2)
    ti.tensor_mov(y[32], ub[32], "", 1, 4, 0, 0)                # tensor_mov as a plain move (D5)
    build(ti, "forms", [x], [y])
    xs = np.arange(64, dtype=np.int32)
    assert run(ti, {"x": xs})[0].tolist() == xs.tolist()


@pytest.mark.parametrize("mode", ["m", "v", "sc", "dp"])
def test_tensor_mov_block_modes_move_32_byte_blocks_off_l0c(mode):
    """Off L0C paths CANN TIK's unit tables give 32-byte bursts and gaps whatever the block mode
    (tik_api.md §7.3; Ascend IndexSDK's int8_l2_norm.py moves GM -> UB with 'v')."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (8, 32), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (8, 32), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (8, 32), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(128, ub, 0.0, 2, 1, 8)
    ti.tensor_mov(ub, x, mode, 4, 1, 1, 1)          # 4 bursts of 32 B, 32 B gaps on both sides (dst_stride first)
    ti.tensor_mov(y, ub, mode, 1, 16, 0, 0)
    build(ti, "tmv", [x], [y])
    xs = np.arange(256, dtype=np.float16).reshape(8, 32) + 1
    got, = run(ti, {"x": xs})
    want = np.zeros(256, np.float16)
    for b in range(4):
        want[b * 32:b * 32 + 16] = xs.reshape(-1)[b * 32:b * 32 + 16]
    assert np.array_equal(got.reshape(-1), want)


def test_l1_to_gm_exists_on_910b_and_310b_only():
    ti = tik.Tik()
    l1 = ti.Tensor("float16", (16,), name="l1", scope=tik.scope_cbuf)
    g = ti.Tensor("float16", (16,), name="g", scope=tik.scope_gm)
    with raises_tik(UnsupportedOp, match="L1 -> GM .* not available on Ascend310"):
        ti.data_move(g, l1, 0, 1, 1, 0, 0)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (32,), name="y", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (32,), name="l1", scope=tik.scope_cbuf)
    ti.data_move(l1, x, 0, 1, 2, 0, 0)
    ti.data_move(y, l1, 0, 2, 1, 0, 0)
    build(ti, "l1gm", [x], [y])
    xs = np.arange(32, dtype=np.float16)
    assert np.array_equal(run(ti, {"x": xs})[0], xs)


def test_data_move_errors():
    ti = tik.Tik()
    g = ti.Tensor("float16", (64,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    with raises_tik(IllegalOperand, match=r"nburst = 0 is outside \[1, 4095\]"):
        ti.data_move(ub, g, 0, 0, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"burst = 0 is outside \[1, 65535\]"):
        ti.data_move(ub, g, 0, 1, 0, 0, 0)
    with raises_tik(IllegalOperand, match=r"sid = 16 is outside \[0, 15\]"):
        ti.data_move(ub, g, 16, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"src_stride = -1 is outside \[0, 65535\]"):
        ti.data_move(ub, g, 0, 2, 1, -1, 0)
    with raises_tik(OutOfBounds, match=r"tensor overflow: .* needs 192 bytes .* 'ub' \(128 B\) has only 128 B"):
        ti.data_move(ub, g, 0, 1, 6, 0, 0)             # (reading g past its end is allowed: the UB side is not)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        ti.data_move(ub[48], g, 0, 2, 1, 0, 1)
    with raises_tik(Misaligned, match="dst address is not 32-byte aligned: tensor 'ub' \\+ 2 B"):
        ti.data_move(ub[1], g, 0, 1, 1, 0, 0)
    with raises_tik(UnsupportedOp, match="no data_move path from GM to L0A"):
        ti.data_move(l0a, g, 0, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match="must be a tik Tensor"):
        ti.data_move(ub, np.zeros(4), 0, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match="takes at most 8 positional arguments, got 9"):
        ti.data_move(ti.Tensor("float16", (64,), name="l1x", scope=tik.scope_cbuf), g, 0, 1, 1, 0, 0, 0, 0)
    with raises_tik(IllegalOperand, match="bad arguments: missing a required argument: 'src'"):
        ti.data_move(ub)
    with raises_tik(UnsupportedOp, match="PadMode 1"):
        ti.data_move(ti.Tensor("float16", (64,), name="l1", scope=tik.scope_cbuf), g, 0, 1, 1, 0, 0, 1)
    with raises_tik(IllegalOperand, match="block_mode 'q' is not a tensor_mov block mode"):
        ti.tensor_mov(ub, g, "q", 1, 1, 0, 0)
    with raises_tik(UnsupportedOp, match="tensor_mov with deqscale between GM .* and UB .* is not modelled"):
        ti.tensor_mov(ub, g, "", 1, 1, 0, 0, deqscale=1.0)
    # a tensor deqscale (vector deq) is named too, not compared as a value (h_author307: it raised "comparing
    # tensor view ... needs a single element" about operand 'self')
    scales = ti.Tensor("float16", (16,), name="scales", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="tensor_mov with deqscale between GM .* and UB .* is not modelled"):
        ti.tensor_mov(ub, g, "", 1, 1, 0, 0, deqscale=scales)
    other = tik.Tik()
    with raises_tik(IllegalOperand, match="belongs to another Tik instance"):
        ti.data_move(ub, other.Tensor("float16", (64,), name="o", scope=tik.scope_gm), 0, 1, 1, 0, 0)


def test_dma_paths_copy_bytes_between_different_dtypes():
    """GM/L1/UB moves are byte copies: a float32 GM tensor moved into a float16 UB buffer keeps its
    bytes (CANN TIK compares no dtypes on these paths); the halves are then picked by a float16
    vector op and moved back into a float32 output."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    halves = ti.Tensor("float16", (128,), name="halves", scope=tik.scope_ubuf)
    doubled = ti.Tensor("int16", (128,), name="doubled", scope=tik.scope_ubuf)
    l1 = ti.Tensor("uint8", (256,), name="l1", scope=tik.scope_cbuf)
    ti.data_move(halves, x, 0, 1, 8, 0, 0)              # float32 GM -> float16 UB
    ti.data_move(l1, halves, 0, 1, 8, 0, 0)             # float16 UB -> uint8 L1
    ti.data_move(doubled, l1, 0, 1, 8, 0, 0)            # uint8 L1 -> int16 UB
    ti.data_move(y, doubled, 0, 1, 8, 0, 0)             # int16 UB -> float32 GM
    build(ti, "bytes", [x], [y])
    xs = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    assert np.array_equal(run(ti, {"x": xs})[0].view(np.uint32), xs.view(np.uint32))


def test_l0c_moves_still_require_matching_dtypes():
    ti = tik.Tik()
    l0c = ti.Tensor("float32", (256,), name="l0c", scope=tik.scope_cc)
    ub16 = ti.Tensor("int16", (256,), name="ub16", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"float32 -> dst dtype int16 is not a conversion of this path"):
        ti.data_move(ub16, l0c, 0, 1, 1, 0, 0)


def test_run_time_out_of_bounds_names_the_call_and_the_loop():
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 4, 0, 0)
    with ti.for_range(0, 4) as i:
        ti.data_move(x[i * 16], ub, 0, 1, 3, 0, 0)            # i = 3 writes past x and its padding
    build(ti, "oob", [x], [])
    with raises_tik(OutOfBounds) as info:
        run(ti, {"x": np.zeros(64, np.float16)})
    text = str(info.value)
    assert f"{__file__}:" in text and "tik.data_move" in text and "i=3" in text and "core=0" in text


def test_int32_to_float16_data_move_emits_nothing():
    ti = tik.Tik()
    g = ti.Tensor("int32", (16,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, g, 0, 1, 1, 0, 0)                          # TIK quirk (tik_api.md §7.1)
    build(ti, "quirk", [g], [])
    assert "mte_gm_ub" not in ti.program.to_asm()


# ------------------------------------------------------------------ data_move_pad

def test_data_move_pad_gm_ub_with_padding_and_back():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (3, 10), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (3, 10), name="y", scope=tik.scope_gm)
    dump = ti.Tensor("float16", (3, 16), name="dump", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (3, 16), name="ub", scope=tik.scope_ubuf)
    ub2 = ti.Tensor("float16", (3, 16), name="ub2", scope=tik.scope_ubuf)
    ti.data_move_pad(ub, x, 3, 20, 0, 0, right_padding=4, left_padding=2, padding_value=-1.0)
    ti.data_move(dump, ub, 0, 1, 3, 0, 0)
    ti.data_move_pad(ub2, x, 3, 20, 0, 0)                      # rows of 20 B start every 32 B
    ti.data_move_pad(y, ub2, 3, 20, 0, 0)                      # UB -> GM: exactly 20 bytes per burst
    build(ti, "pad", [x], [y, dump])
    xs = np.arange(30, dtype=np.float16).reshape(3, 10)
    oy, od = run(ti, {"x": xs})
    assert np.array_equal(oy, xs)
    assert np.array_equal(od[:, 2:12], xs) and (od[:, :2] == -1).all() and (od[:, 12:16] == -1).all()


def test_data_move_pad_padding_rules_only_cann81_refuses_run_with_one_warning_per_site():
    """PADDING_VALUE_CANN81_WARN: CANN 8.1 TIK's _check_padding_value refuses a padding_value with zero paddings and
    paddings with padding_value=None; the TIK reference allows both, so they run as before (the value fills the
    unaligned burst's block tail; None pads with 0) with a Cann81RuleWarning once per call site at the user's line;
    the calls CANN 8.1 accepts warn nothing; with the choice off each is an IllegalOperand at the line."""
    import warnings
    from tbe_compat.tik import data
    from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
    _CANN81_WARNED.clear()
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x[32], 0, 1, 2, 0, 0)                     # 32..63 everywhere the pad moves do not write
    ti.data_move(ub[32], x[32], 0, 1, 2, 0, 0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):                                      # one site, three calls: one warning
            line_a = here()
            ti.data_move_pad(ub, x, 1, 6, 0, 0, padding_value=3.0)
        line_b = here()
        ti.data_move_pad(ub[16], x, 1, 6, 0, 0, left_padding=3)
        ti.data_move_pad(ub[32], x, 1, 6, 0, 0, left_padding=3, padding_value=0)        # CANN 8.1 accepts these
        ti.data_move_pad(ub[48], x, 1, 6, 0, 0)
    ours = [w for w in seen if issubclass(w.category, Cann81RuleWarning)]
    assert [(w.lineno, str(w.message).split(": ", 1)[1][:60]) for w in ours] == [
        (line_a, "data_move_pad with padding_value=3.0 and left_padding = righ"),
        (line_b, "data_move_pad with left_padding=3, right_padding=0 and paddi")]
    assert all("CANN 8.1 TIK refuses this call" in str(w.message) and "Fix: " in str(w.message) for w in ours)
    assert "Fix: pass padding_value=0" in str(ours[1].message)
    ti.data_move(y, ub, 0, 1, 4, 0, 0)
    build(ti, "pad_rules", [x], [y])
    out, = run(ti, {"x": np.arange(64, dtype=np.float16) + 100})
    f = np.float16
    assert out[:16].tolist() == [100, 101, 102] + [3] * 13                            # the value fills the block
    assert out[16:32].tolist() == [0, 0, 0, 100, 101, 102] + [0] * 10                   # padded with 0
    assert out[32:48].tolist() == [0, 0, 0, 100, 101, 102] + [0] * 10
    assert out[48:].tolist() == [100, 101, 102] + [100] * 13                            # dummy: the first element
    assert out.dtype == f
    _CANN81_WARNED.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", Cann81RuleWarning)
        with pytest.raises(Cann81RuleWarning, match=r"test_data_move\.py:\d+ in `tik\.data_move_pad`: .*"
                                                     r"padding_value=None"):
            ti.data_move_pad(ub, x, 1, 6, 0, 0, right_padding=2)
    saved = data.PADDING_VALUE_CANN81_WARN
    data.PADDING_VALUE_CANN81_WARN = False
    try:
        for kw in (dict(padding_value=1.0), dict(right_padding=2)):
            with raises_tik(IllegalOperand, match=r"test_data_move\.py:\d+ in `tik\.data_move_pad`: .*CANN 8\.1 "
                                                  r"TIK refuses it.*Fix:"):
                ti.data_move_pad(ub, x, 1, 6, 0, 0, **kw)
    finally:
        data.PADDING_VALUE_CANN81_WARN = saved
        _CANN81_WARNED.clear()


def test_data_move_pad_numpy_padding_value_runs_with_a_cann81_warning(monkeypatch):
    """fix451: CANN 8.1 TIK's _check_padding_value first checks isinstance(padding_value, (int, float)) ("When
    padding_value is not None, it can be int or float"): np.float32(1.5) / np.int32(7) are refused there (np.float64
    subclasses float and passes). They ran silently; they now run with their value and a Cann81RuleWarning at the
    line whose Fix gives the Python number; a Python number or np.float64 warns nothing; off: an IllegalOperand."""
    import warnings
    from tbe_compat.tik import data
    from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
    _CANN81_WARNED.clear()
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = here()
        ti.data_move_pad(ub, x, 1, 6, 0, 0, left_padding=2, padding_value=np.float32(1.5))
        ti.data_move_pad(ub[16], x, 1, 6, 0, 0, left_padding=2, padding_value=np.float64(2.5))
        ti.data_move_pad(ub[32], x, 1, 6, 0, 0, left_padding=2, padding_value=3)
        ti.data_move_pad(ub[48], x, 1, 6, 0, 0, left_padding=2, padding_value=4.0)
    ours = [w for w in seen if issubclass(w.category, Cann81RuleWarning)]
    assert [w.lineno for w in ours] == [line], [str(w.message) for w in ours]
    text = str(ours[0].message)
    assert "data_move_pad with padding_value=np.float32(1.5), a numpy float32 (CANN 8.1 TIK: \"When padding_value " \
           "is not None, it can be int or float\")" in text
    assert "the simulator runs it (it pads with its value, 1.5). Fix: pass a Python number: padding_value=1.5" in text
    ti.data_move(y, ub, 0, 1, 4, 0, 0)
    build(ti, "pad_numpy", [x], [y])
    out, = run(ti, {"x": np.arange(64, dtype=np.float16) + 100})
    assert out[:16].tolist() == [1.5, 1.5, 100, 101, 102] + [1.5] * 11          # the value pads
    assert out[16:19].tolist() == [2.5, 2.5, 100]
    monkeypatch.setattr(data, "PADDING_VALUE_CANN81_WARN", False)
    with raises_tik(IllegalOperand, match=r"padding_value=np.int32\(7\), a numpy int32 .*CANN 8\.1 TIK refuses it.*"
                                          r"Fix: pass a Python number: padding_value=7 "):
        ti2 = tik.Tik()
        x2 = ti2.Tensor("int32", (64,), name="x", scope=tik.scope_gm)
        ub2 = ti2.Tensor("int32", (64,), name="ub", scope=tik.scope_ubuf)
        ti2.data_move_pad(ub2, x2, 1, 8, 0, 0, left_padding=2, padding_value=np.int32(7))
    _CANN81_WARNED.clear()


@pytest.mark.parametrize("runtime_burst", [False, True])
def test_data_move_pad_burst_above_64_kib(runtime_burst):
    # square_sum_all (CANN dynamic op) moves up to 97792 B per data_move_pad burst: bursts are 21-bit
    # byte counts (tik_api.md 7.2), not 16-bit ones
    set_current_compile_soc_info("Ascend910B1")
    n = 24448 + 5                                              # 97812 B: also not a 32 B multiple
    ti = tik.Tik()
    x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (n + 3,), name="ub", scope=tik.scope_ubuf)
    burst = ti.Scalar("int64", init_value=n * 4) if runtime_burst else n * 4
    ti.data_move_pad(ub, x, 1, burst, 0, 0)
    ti.data_move_pad(y, ub, 1, burst, 0, 0)
    build(ti, "pad_long", [x], [y])
    xs = np.arange(n, dtype=np.float32)
    (oy,) = run(ti, {"x": xs})
    assert np.array_equal(oy, xs)


def test_unsupported_api_says_whether_any_dtype_would_do():
    """An API the chip lacks altogether is not refused as if only the dtype were wrong (author262:
    data_move_pad on Ascend910A read "with float16 is not supported", suggesting another dtype);
    a dtype the chip lacks for an API it has keeps the dtype advice."""
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (32,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match=r"tik.data_move_pad with float16 is not supported on Ascend910A AiCore: "
                                         r"the chip has no tik.data_move_pad for any dtype"):
        ti.data_move_pad(ub, x, 1, 20, 0, 0)
    with raises_tik(UnsupportedOp, match=r"tik.set_atomic_add with float16 is not supported on Ascend910A AiCore "
                                         r"Fix: the chip has tik.set_atomic_add for float32: use it "
                                         r"\(set_atomic_add\(1\) for float32; convert the data"):
        ti.set_atomic_add(2)
    set_current_compile_soc_info("Ascend310P3")      # the Fix lists every plain dtype the chip has the API for
    with raises_tik(UnsupportedOp, match=r"with int32 is not supported on Ascend310P3 AiCore Fix: the chip has "
                                         r"tik.set_atomic_add for int16, float16, float32: use one of them "
                                         r"\(set_atomic_add\(1\) for float32, set_atomic_add\(2\) for float16, "
                                         r"set_atomic_add\(3\) for int16;"):
        tik.Tik().set_atomic_add(4)


def test_data_move_pad_errors():
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (32,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="tik.data_move_pad with float16 is not supported on Ascend310"):
        ti.data_move_pad(ub, x, 1, 20, 0, 0)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (32,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="burst 21 B is not a multiple of the element size 2 B"):
        ti.data_move_pad(ub, x, 1, 21, 0, 0)
    with raises_tik(IllegalOperand, match=r"left_padding = 17 is outside \[0, 16\]"):
        ti.data_move_pad(ub, x, 1, 20, 0, 0, left_padding=17)



def test_data_move_pad_overruns_are_tensor_overflow_errors():
    # a data_move_pad whose bursts (rows rounded to 32 B, plus gaps) run past either tensor used to be
    # accepted and wrote into the UB neighbour; like data_move it is TIK's trace-time "tensor overflow"
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (3, 16), name="ub", scope=tik.scope_ubuf)
    with raises_tik(OutOfBounds, match="tensor overflow: 4 burst.s. of data_move_pad .dst: 128 B"):
        ti.data_move_pad(ub, x, 4, 20, 0, 0)                   # 4 rows of 32 B into 96 B
    with raises_tik(OutOfBounds, match="tensor overflow: 3 burst.s. of data_move_pad .dst: 160 B"):
        ti.data_move_pad(ub, x, 3, 20, 1, 0)                   # dst_gap 1 block: rows 64 B apart
    with raises_tik(OutOfBounds, match="tensor overflow: 3 burst.s. of data_move_pad .src: 736 B"):
        ti.data_move_pad(ub, x[16:], 3, 32, 0, 320)           # GM source runs far past x
    with raises_tik(OutOfBounds, match="tensor overflow: 2 burst.s. of data_move_pad .dst: 1064 B"):
        ti.data_move_pad(y[8:], ub, 2, 32, 1000, 0)            # UB -> GM far past y
    ti.data_move_pad(ub, x, 3, 20, 0, 0)                       # exactly the 3 rows of 32 B: fine
    ti.data_move_pad(y, ub, 3, 20, 0, 0)
    build(ti, "pad_ok", [x], [y])
    xs = np.arange(64, dtype=np.float16) + 1
    (oy,) = run(ti, {"x": xs})
    assert np.array_equal(oy[:30], np.concatenate([xs[i * 10:i * 10 + 10] for i in range(3)]))



@pytest.mark.parametrize("which", ["nburst", "burst", "dst_gap"])
def test_data_move_pad_run_time_counts_are_checked_against_the_ub_tensor(which):
    """A GM -> UB data_move_pad whose nburst, burst or dst_gap is a run-time value: the UB extent (rows
    rounded to 32 B, plus gaps) is checked when it runs, like data_move's; before, the rows past the tensor
    overwrote the next UB tensor (here `after`), with no error at the call."""
    set_current_compile_soc_info("Ascend910B1")
    for fits in (True, False):
        ti = tik.Tik()
        x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (48,), name="y", scope=tik.scope_gm)
        z = ti.Tensor("float16", (64,), name="z", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (48,), name="ub", scope=tik.scope_ubuf)        # 3 blocks of 32 B
        after = ti.Tensor("float16", (64,), name="after", scope=tik.scope_ubuf)
        ti.vec_dup(64, after, 5, 1, 8)
        ti.vec_dup(48, ub, 0, 1, 8)
        args = {"nburst": 3 if fits else 4, "burst": 20, "dst_gap": 0}           # 3 rows of 20 B -> 96 B
        if which == "burst":
            args.update(nburst=1, burst=96 if fits else 98)
        if which == "dst_gap":
            args.update(nburst=2, dst_gap=1 if fits else 2)
        args[which] = ti.Scalar("int32", init_value=args[which])
        ti.data_move_pad(ub, x, args["nburst"], args["burst"], args["dst_gap"], 0)
        ti.data_move(y, ub, 0, 1, 3, 0, 0)
        ti.data_move(z, after, 0, 1, 4, 0, 0)
        build(ti, "pad_rt", [x], [y, z])
        xs = np.arange(256, dtype=np.float16) + 1
        if fits:
            _, oz = run(ti, {"x": xs})
            assert (oz == 5).all()
        else:
            with pytest.raises(OutOfBounds, match=r"test_data_move.py:\d+ in `tik.data_move_pad`: tensor overflow: "
                                                  r"dst of tik.data_move_pad .*tensor 'ub'.* but the tensor has only 48"):
                run(ti, {"x": xs})


def test_data_move_pad_run_time_dst_offset_may_use_the_block_tail():
    """A GM -> UB data_move_pad into a view whose start is a run-time value: the rest of the tensor's last
    32-byte block is the tensor's (as for a static start, and as data_move's run-time check allows); the
    run-time check gave no slack and refused the exact fit (ub[64:] of a 125-element f16 tensor, 4 rows of 32
    B ending at byte 256). Past that block it is still an error."""
    set_current_compile_soc_info("Ascend910B1")
    for start, fits in ((64, True), (80, False)):
        ti = tik.Tik()
        x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (125,), name="ub", scope=tik.scope_ubuf)
        o = ti.Scalar("int32", init_value=start)
        ti.vec_dup(125, ub, 0, 1, 8)
        ti.data_move_pad(ub[o:], x, 4, 20, 0, 0, left_padding=3, padding_value=0)
        ti.data_move(y, ub, 0, 1, 8, 0, 0)
        build(ti, "pad_rt_off", [x], [y])
        xs = np.arange(256, dtype=np.float16) + 1
        if fits:
            oy, = run(ti, {"x": xs})
            rows = [np.concatenate([[0] * 3, xs[i * 10:i * 10 + 10], [0] * 3]) for i in range(4)]   # pad, data, dummies = pad
            assert np.array_equal(oy[64:128], np.concatenate(rows))
        else:
            with pytest.raises(OutOfBounds, match=r"test_data_move.py:\d+ in `tik.data_move_pad`: tensor overflow: "
                                                  r"dst of tik.data_move_pad .*tensor 'ub'"):
                run(ti, {"x": xs})


# ------------------------------------------------------------------ atomic add, barrier

def test_set_atomic_add_accumulates_moves_into_gm():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (4, 8), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, 4, block_num=4) as c:
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[c, 0], 0, 1, 1, 0, 0)
        with ti.if_scope(c != 2):                              # inside if_scope (CHECKLIST T23)
            ti.set_atomic_add(1)
            ti.data_move(y, ub, 0, 1, 1, 0, 0)
            ti.set_atomic_add(0)
    build(ti, "atomic", [x], [y])
    xs = np.arange(32, dtype=np.float32).reshape(4, 8)
    got, = run(ti, {"x": xs})
    assert got.tolist() == (xs[0] + xs[1] + xs[3]).tolist()
    ti.tikdb.order = "random"                                  # any core interleaving gives the same sum
    assert run(ti, {"x": xs})[0].tolist() == got.tolist()


def test_set_atomic_add_modes_and_chip_support():
    ti = tik.Tik()
    with raises_tik(UnsupportedOp, match="tik.set_atomic_add with float32 is not supported on Ascend310"):
        ti.set_atomic_add(1)
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    with raises_tik(UnsupportedOp, match="float16 is not supported on Ascend910A"):
        ti.set_atomic_add(2)
    with raises_tik(IllegalOperand, match=r"mode = 7 is outside \[0, 6\]"):
        ti.set_atomic_add(7)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    m = ti.Scalar("int64", name="m", init_value=4)             # int32 atomic, mode from a Scalar
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.set_atomic_add(m)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.set_atomic_add("int32")
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.set_atomic_add(0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "atomic_int", [x], [y])
    assert run(ti, {"x": np.arange(8, dtype=np.int32)})[0].tolist() == list(range(8))
    ti2 = tik.Tik()
    x2 = ti2.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y2 = ti2.Tensor("int32", (8,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    ub2 = ti2.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti2.data_move(ub2, x2, 0, 1, 1, 0, 0)
    ti2.set_atomic_add("int32")
    for _ in range(3):
        ti2.data_move(y2, ub2, 0, 1, 1, 0, 0)
    ti2.set_atomic_add(0)
    build(ti2, "atomic_int3", [x2], [y2])
    assert run(ti2, {"x": np.arange(8, dtype=np.int32)})[0].tolist() == [3 * i for i in range(8)]


def test_block_barrier_orders_the_cores():
    ti = tik.Tik()
    x = ti.Tensor("float32", (2, 8), name="x", scope=tik.scope_gm)
    w = ti.Tensor("float32", (2, 8), name="w", scope=tik.scope_gm, is_workspace=True)
    sw = ti.Tensor("int64", (8,), name="sw", scope=tik.scope_gm, is_workspace=True)
    y = ti.Tensor("float32", (2, 8), name="y", scope=tik.scope_gm)
    with ti.for_range(0, 2, block_num=2) as c:
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[c, 0], 0, 1, 1, 0, 0)
        ti.data_move(w[c, 0], ub, 0, 1, 1, 0, 0)
        ti.block_barrier(sw)
        ti.data_move(ub, w[1 - c, 0], 0, 1, 1, 0, 0)          # the other core's row
        ti.data_move(y[c, 0], ub, 0, 1, 1, 0, 0)
    build(ti, "swap", [x], [y])
    xs = np.arange(16, dtype=np.float32).reshape(2, 8)
    assert np.array_equal(run(ti, {"x": xs})[0], xs[::-1])
    with raises_tik(IllegalOperand, match="must be in GM"):
        ti2 = tik.Tik()
        ti2.block_barrier(ti2.Tensor("int64", (8,), name="s", scope=tik.scope_ubuf))


def test_pipe_barrier_records_the_barrier_and_keeps_the_data():
    """IndexSDK's distance ops write their flag after ``pipe_barrier("PIPE_MTE3")``."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.pipe_barrier("PIPE_MTE2")
    ti.vadds(16, ub, ub, 1.0, 1, 1, 1, 8, 8)
    ti.pipe_barrier("PIPE_V")
    ti.pipe_barrier("PIPE_ALL")
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.pipe_barrier("PIPE_MTE3")
    build(ti, "barriers", [x], [y])
    text = ti.program.to_asm()
    for pipe in ("MTE2", "V", "ALL", "MTE3"):
        assert f'pto.pipe_barrier "PIPE_{pipe}"' in text
    xs = np.arange(16, dtype=np.float16)
    assert np.array_equal(run(ti, {"x": xs})[0], xs + 1)
    for bad, match in (("PIPE_S", r"pipe_barrier\(PIPE_S\) is illegal"), ("PIPE_X", "pipe"), (2, "pipe name")):
        with raises_tik(IllegalOperand, match=match):
            tik.Tik().pipe_barrier(bad)


def test_pipe_barrier_pipe_s_is_refused_in_tik_words():
    """CANN 8.1 TIK's _check_pipe_supported accepts PIPE_S and emits cce.coproc_sync(PIPE_S), which CCE/Ascend C
    document as an error (pto_sync.md). The TIK refusal gave the PTO limit (V, M, ..., FIX, ALL: FIX is not a TIK
    pipe_barrier pipe) and a Fix to hand-write set_flag/wait_flag, which a TIK kernel may only do in a
    disable_sync scope (review: fix438 item 4). It now names TIK's pipes and says to drop the call."""
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"test_data_move\.py:\d+ in `tik\.pipe_barrier`: operand pipe: "
                                          r"pipe_barrier\(PIPE_S\) is illegal on the device: CANN TIK passes it on, "
                                          r"but CCE documents a barrier on pipe S as an error .*\(limit: PIPE_V, PIPE_M, "
                                          r"PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL\) Fix: drop the call: .*"
                                          r"pipe_barrier\(\"PIPE_ALL\"\)"):
        ti.pipe_barrier("PIPE_S")
    assert not [s for s in ti.program.body if getattr(getattr(s, "call", None), "spec", None) is not None]


def test_gm_reads_may_end_inside_the_last_32_byte_block():
    """A 1-element float32 GM tensor read with one 32-byte burst (a real kernel does this):
    legal, the bytes past the tensor are unknown; a read past its 64-byte allocation (32-byte
    rounding plus one block of padding) reads unknown data too, with a warning naming the line
    (GM_OVERREAD_READS_UNKNOWN), and a use of those bytes is a read of unwritten data."""
    ti = tik.Tik()
    m = ti.Tensor("float32", (1,), name="m", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, m, 0, 1, 1, 0, 0)
    s = ti.Scalar("float32", init_value=ub[0])
    ub[1].set_as(s * 2)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "tail", [m], [y])
    out, = run(ti, {"m": np.array([3.0], np.float32)})
    assert out[:2].tolist() == [3.0, 6.0]
    ti2 = tik.Tik()
    g = ti2.Tensor("float32", (1,), name="g", scope=tik.scope_gm)
    h = ti2.Tensor("float32", (24,), name="h", scope=tik.scope_gm)
    u = ti2.Tensor("float32", (24,), name="u", scope=tik.scope_ubuf)
    line = here()
    ti2.data_move(u, g, 0, 1, 3, 0, 0)                         # 96 B from a 4-byte tensor (64 B allocated)
    ti2.vec_muls(8, u, u, 2.0, 1, 8, 8)                          # uses only g's element
    ti2.data_move(h, u, 0, 1, 3, 0, 0)
    build(ti2, "overread", [g], [h])
    with pytest.warns(GmOverreadWarning, match=rf"test_data_move.py:{line} in `tik.data_move`: tik.data_move reads float32 "
                                               rf"elements 0..23 \(bytes \[0, 96\)\) of tensor 'g' \(1 element, 4 B; "
                                               rf"the host allocates 64 B\)"):
        out, = run(ti2, {"g": np.array([3.0], np.float32)})
    assert out[0] == 6.0
    assert [k for k, _ in ti2.tikdb.reports].count("gm-overread") == 1


def test_run_time_gm_moves_may_use_the_allocation_padding():
    """A GM tensor of n bytes owns round32(n) + 32 bytes on the device (the host's padding, named
    choice "GM allocation padding"): moves at run-time offsets may read a whole block starting past
    the tensor (unknown bytes) or store one (dropped, a gm-tail report), as CANN's dynamic in_top_k
    does for a row count that is not a multiple of 32; one block further is an error."""
    def kernel(blocks):
        ti = tik.Tik()
        x = ti.Tensor("float32", (20,), name="x", scope=tik.scope_gm)        # 80 B: allocation 128 B
        y = ti.Tensor("float32", (20,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float32", (40,), name="ub", scope=tik.scope_ubuf)
        with ti.for_range(0, 1) as i:
            ti.data_move(ub, x[i * 32], 0, 1, blocks, 0, 0)                 # [0, 32 * blocks)
            ti.vec_adds(8, ub, ub, 1.0, 3, 1, 1)                             # the first 24 elements + 1
            ti.data_move(y[i * 32], ub, 0, 1, blocks, 0, 0)
        build(ti, "padding", [x], [y])
        return ti
    ti = kernel(4)
    xs = np.arange(20, dtype=np.float32) * 3
    with pytest.warns(GmPaddingWriteWarning, match=r"tensor 'y' \(20 elements, 80 B\): the float32 elements 20..31 "
                                                   r"\(bytes \[80, 128\)\) past"):
        out, = run(ti, {"x": xs})                                   # past y's last block (96 B): warns
    assert np.array_equal(out, xs + 1)
    assert any(kind == "gm-tail" and "float32 elements 20..31 (bytes [80, 128)) past the end of tensor 'y'" in msg
               for kind, msg in ti.tikdb.reports)
    with raises_tik(OutOfBounds, match="and of its allocation's padding"):
        run(kernel(5), {"x": xs})


def test_atomic_adds_into_a_zeroed_output_report_no_uninitialised_read():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.set_atomic_add(1)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.set_atomic_add(0)
    build(ti, "clean_atomic", [x], [y])
    run(ti, {"x": np.ones(8, np.float32)})
    assert ti.tikdb.reports == []


def test_data_move_extra_positional_arguments_are_ignored_where_tik_reads_none():
    """Ascend IndexSDK's int8_l2_norm.py passes two extra positional arguments to a UB -> GM move; CANN
    TIK reads an extended argument only on GM -> L1 and L0C paths, so the move runs (with a warning)."""
    from tbe_compat.tik.data import IgnoredArgumentWarning
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 4, 0, 0)
    with pytest.warns(IgnoredArgumentWarning, match=r"test_data_move.py:\d+ .*ignores the extra positional "
                                                    r"arguments \(3, 3\)"):
        ti.data_move(y, ub, 0, 1, 4, 0, 0, 3, 3)
    build(ti, "extra", [x], [y])
    xs = np.arange(64, dtype=np.float16)
    assert np.array_equal(run(ti, {"x": xs})[0], xs)


def test_on_chip_destination_overrun_at_a_run_time_offset_is_caught_when_it_runs():
    """A move whose destination starts at a loop-variable offset is checked against the destination
    tensor when it runs (the PTO op only sees the whole buffer); a source over-read past its tensor
    (harmless on hardware, done by shipped kernels) is left alone."""
    from pto_core.errors import OutOfBounds
    for overrun_dst in (True, False):
        ti = tik.Tik()
        x = ti.Tensor("float16", (512,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
        src = ti.Tensor("float16", (256,), name="src", scope=tik.scope_ubuf)
        dst = ti.Tensor("float16", (256,), name="dst", scope=tik.scope_ubuf)
        ti.data_move(src, x, 0, 1, 16, 0, 0)
        with ti.for_range(0, 2) as k:
            if overrun_dst:
                ti.data_move(dst[k * 128], src, 0, 1, 16, 0, 0)         # k = 1: dst [128, 384) of 256
            else:
                ti.data_move(dst, src[k * 128], 0, 1, 16, 0, 0)         # k = 1: reads src [128, 384)
        ti.data_move(y, dst, 0, 1, 16, 0, 0)
        build(ti, "dyn_overrun", [x], [y])
        xs = np.arange(512, dtype=np.float16)
        if overrun_dst:
            with pytest.raises(OutOfBounds, match=r"tensor overflow: dst of tik.data_move .* tensor 'dst'\) needs "
                                                  r"elements \[128, 384\) but the tensor has only 256"):
                run(ti, {"x": xs})
        else:
            got, = run(ti, {"x": xs})
            assert np.array_equal(got[:128], xs[128:256])


@pytest.mark.parametrize("which", ["nburst", "burst"])
def test_data_move_run_time_counts_are_range_checked_under_their_tik_names(which):
    """A burst count / length from a TIK value is checked when the move runs, and a 0 is reported as
    data_move's own operand (the PTO op sees it as its repeat count)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    n = ti.InputScalar("int32", name="n")
    if which == "nburst":
        ti.data_move(ub, x, 0, n, 8, 0, 0)
    else:
        ti.data_move(ub, x, 0, 1, n, 0, 0)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    ti.BuildCCE("counts", inputs=[x, n], outputs=[y])
    out, = ti.tikdb.start_debug({"x": np.ones(128, np.float16), "n": 1 if which == "nburst" else 8},
                                interactive=False)
    assert out[0] == 1
    with raises_tik(IllegalOperand, match=rf"{which} of tik.data_move .* = 0 is outside \[1, "):
        ti.tikdb.start_debug({"x": np.ones(128, np.float16), "n": 0}, interactive=False)


@pytest.mark.parametrize("which", ["src_stride", "dst_stride"])
@pytest.mark.parametrize("bad", [65536, -1])
def test_data_move_run_time_gaps_are_range_checked_under_their_tik_names(which, bad):
    """A gap from a TIK value is checked when the move runs against data_move's range [0, 65535] and reported
    under its data_move name (found by differential testing: the error named the PTO op's operand
    'nburst(%src_gap)')."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    ub2 = ti.Tensor("float16", (256,), name="ub2", scope=tik.scope_ubuf)
    g = ti.InputScalar("int32", name="g")
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    ti.vector_dup(128, ub2, 0.0, 2, 1, 8)
    if which == "src_stride":
        ti.data_move(ub2, ub, 0, 2, 4, g, 0)
    else:
        ti.data_move(ub2, ub, 0, 2, 4, 0, g)
    ti.data_move(y, ub2, 0, 1, 16, 0, 0)
    ti.BuildCCE("gaps", inputs=[x, g], outputs=[y])
    xs = np.arange(256).astype(np.float16)
    out, = ti.tikdb.start_debug({"x": xs, "g": 4}, interactive=False)
    exp = np.zeros(256, np.float16)
    if which == "src_stride":      # bursts of 64 elements read 64 apart (gap 4 blocks), written back to back
        exp[:64], exp[64:128] = xs[:64], xs[128:192]
    else:                          # read back to back, written with a 4-block gap
        exp[:64], exp[128:192] = xs[:64], xs[64:128]
    assert np.array_equal(out, exp)
    with raises_tik(IllegalOperand, match=rf"{which} of tik.data_move .* = {bad} is outside \[0, 65535\]"):
        ti.tikdb.start_debug({"x": xs, "g": bad}, interactive=False)


@pytest.mark.parametrize("chip, mode", [("Ascend910", 2), ("Ascend310P3", 4), ("Ascend310", 1), ("Ascend910B1", 7)])
def test_run_time_atomic_mode_the_chip_lacks_stops_the_run(chip, mode):
    """A Scalar mode is refused when the kernel runs, as the same number is refused when traced (tik_api.md
    §6.4 availability); it used to leave atomics as they were, so the move overwrote GM silently."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    m = ti.InputScalar("int32", name="m")
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    line = here()
    ti.set_atomic_add(m)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    ti.set_atomic_add(0)
    build(ti, "atomic_rt", [x, m], [y])
    with raises_tik(IllegalOperand, match=rf"test_data_move.py:{line} in `tik.set_atomic_add`: mode of "
                                          rf"tik.set_atomic_add \(.* supports 0 off.*\) = {mode}"
                                          rf"( is outside|, but it must be 0)"):     # (Ascend310: only 0)
        run(ti, {"x": np.ones(16, np.float16), "m": mode})
    if chip == "Ascend910B1":
        assert run(ti, {"x": np.ones(16, np.float16), "m": 2})[0].tolist() == [1.0] * 16

def test_mov_atomic_add_to_scalar_reads_the_mode_set_atomic_add_wrote():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    y = ti.Tensor("uint64", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("uint64", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vec_dup(16, ub.reinterpret_cast_to("uint32"), 77, 1, 8)
    mode = ti.Scalar("uint64", name="mode", init_value=99)
    m = ti.Scalar("int64", name="m", init_value=4)
    for slot, setter in enumerate([None, 2, "int8", m, 0, "bfloat16"]):
        if setter is not None:
            ti.set_atomic_add(setter)
        assert ti.mov_atomic_add_to_scalar(mode) is mode
        ub[slot].set_as(mode)
    ti.set_atomic_add(0)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    build(ti, "atomic_mode", [], [y])
    assert run(ti)[0].tolist() == [0, 2, 5, 4, 0, 6] + [77 | 77 << 32] * 2


def test_mov_atomic_add_to_scalar_errors():
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match="scalar must be uint64, got int64"):
        ti.mov_atomic_add_to_scalar(ti.Scalar("int64"))
    with raises_tik(IllegalOperand, match="input scalar should be Scalar, got int"):
        ti.mov_atomic_add_to_scalar(3)
    set_current_compile_soc_info("Ascend310B1", "VectorCore")
    ti = tik.Tik()
    with raises_tik(UnsupportedOp, match="tik.mov_atomic_add_to_scalar is not supported on Ascend310B1 VectorCore"):
        ti.mov_atomic_add_to_scalar(ti.Scalar("uint64"))


@pytest.mark.parametrize("counts, fits", [
    ((1, 3, 0), False),        # 3 blocks into a 1-block tensor: the bytes after it would be clobbered
    ((2, 1, 1), False),        # 2 bursts with a 1-block gap: 3 blocks
    ((1, 1, 0), True),         # one block fills the tensor's own 32-byte allocation
])
def test_on_chip_destination_overrun_by_run_time_counts_is_caught_when_it_runs(counts, fits):
    """nburst / burst / dst_gap read from GM at run time: the destination's extent is checked when
    the move runs; a one-block move into a tensor smaller than a block stays in its 32-byte allocation."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    c = ti.Tensor("int32", (8,), name="c", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    c_ub = ti.Tensor("int32", (8,), name="c_ub", scope=tik.scope_ubuf)
    ti.data_move(c_ub, c, 0, 1, 1, 0, 0)
    n, b, g = (ti.Scalar("int32", init_value=c_ub[i]) for i in range(3))
    small = ti.Tensor("float32", (5,), name="small", scope=tik.scope_ubuf)       # 20 B, allocation 32 B
    after = ti.Tensor("float32", (64,), name="after", scope=tik.scope_ubuf)
    ti.vector_dup(64, after, -1.0, 1, 1, 8)
    ti.data_move(small, x, 0, n, b, 0, g)
    ti.data_move(y, small, 0, 1, 1, 0, 0)
    build(ti, "rt_counts", [x, c], [y])
    xs = np.arange(64, dtype=np.float32) + 1
    feed = {"x": xs, "c": np.array(list(counts) + [0] * 5, np.int32)}
    if fits:
        got, = run(ti, feed)
        assert np.array_equal(got, xs[:8])
    else:
        with pytest.raises(OutOfBounds, match=r"tensor overflow: dst of tik.data_move \(nburst/burst/gap computed "
                                              r"at run time, in 32-byte units, tensor 'small', 32 B with the rest "
                                              r"of its last 32-byte block\) needs elements \[0, 24\) but the tensor "
                                              r"has only 8"):
            run(ti, feed)


@pytest.mark.parametrize("static_one", [True, False])
def test_a_run_time_gap_of_a_single_burst_move_is_unused(static_one):
    """RUN_TIME_GAP_OF_ONE_BURST: one burst never uses its gaps, so a negative run-time gap is harmless there
    (CANN's dynamic arg_max_v2 computes -21 for its single-burst moves); with two bursts it is refused."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    g = ti.InputScalar("int32", name="g")
    n = ti.InputScalar("int32", name="n")
    ti.vector_dup(128, ub, 0.0, 2, 1, 8)
    ti.data_move(ub, x, 0, 1 if static_one else n, 4, g, g)
    ti.data_move(y, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE("one_burst", inputs=[x, g, n], outputs=[y])
    xs = np.arange(1, 257).astype(np.float16)
    out, = ti.tikdb.start_debug({"x": xs, "g": -21, "n": 1}, interactive=False)
    assert np.array_equal(out[:64], xs[:64]) and not out[64:].any()
    if not static_one:
        with raises_tik(IllegalOperand, match=r"src_stride of tik.data_move .* = -21 is outside \[0, 65535\]"):
            ti.tikdb.start_debug({"x": xs, "g": -21, "n": 2}, interactive=False)


def test_every_chip_s_atomic_modes_are_contiguous_from_one():
    """RUNTIME_ATOMIC_MODE_CHECKED refuses a run-time mode above the chip's highest supported one, which
    is right only while each chip's modes are 1..k without a gap (tik_api.md §6.4 availability)."""
    from tbe_compat import platform
    from tbe_compat.tik.data import ATOMIC_MODES
    checked = set()
    for soc in platform.soc_names():
        for core_type in ("AiCore", "VectorCore"):
            try:
                set_current_compile_soc_info(soc, core_type=core_type)
            except Exception:
                continue
            codes = [c for c, dt in ATOMIC_MODES.items() if platform.api_check_support("tik.set_atomic_add", dt)]
            assert codes == list(range(1, len(codes) + 1)), (soc, core_type, codes)
            checked.add(tuple(codes))
    assert len(checked) >= 4  # 910A f32 only ... 910B all six: the sweep reached distinct chips


def test_data_move_pad_int_padding_value_into_float_data_is_rounded_once():
    """An int padding_value for float data is rounded once from its exact value: bfloat16 took 2**24 + 2**16 + 1
    through float32 (2**24 + 2**16, a tie, then 2**24) instead of 2**24 + 2**17; an int past float64's range was a
    bare OverflowError, it is the range error (as 70000 on float16 is)."""
    import ml_dtypes
    set_current_compile_soc_info("Ascend910B1")

    def kernel(dt, value):
        ti = tik.Tik()
        x = ti.Tensor(dt, (64,), name="x", scope=tik.scope_gm)
        y = ti.Tensor(dt, (64,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor(dt, (64,), name="ub", scope=tik.scope_ubuf)
        ti.data_move_pad(ub, x, 1, 4, 0, 0, left_padding=2, padding_value=value)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        return build(ti, "pad_int", [x], [y])

    for dt, npt, value, want in (("bfloat16", ml_dtypes.bfloat16, 2 ** 24 + 2 ** 16 + 1, 2.0 ** 24 + 2.0 ** 17),
                                 ("float32", np.float32, 2 ** 60 + 2 ** 36 + 1, 2.0 ** 60 + 2.0 ** 37),
                                 ("float16", np.float16, 2049, 2048.0)):
        got = run(kernel(dt, value), {"x": np.zeros(64, npt)})[0]
        assert float(got[0]) == want and float(got[1]) == want, (dt, got[:2])
    for dt, value in (("float32", 2 ** 1100), ("float16", -2 ** 1100), ("float16", 65519)):
        with raises_tik(IllegalOperand, match="outside the finite range") as e:
            kernel(dt, value)
        assert e.value.where.file == __file__, e.value


@pytest.mark.parametrize("sid_value", [16, -1])
def test_scalar_sid_outside_its_range_stops_the_run_at_the_call(sid_value):
    """h_review443: an immediate sid of 16 was refused at the call (tik_api.md §7.1: sid in [0, 15]) while a
    Scalar sid of 16, or one read from a tensor, ran; it is now checked when the move runs, at the user's line,
    as data_move's other TIK values are. A Scalar sid of 15 still runs."""
    set_current_compile_soc_info("Ascend910B1")
    xs = np.arange(16, dtype=np.float16)
    for value, ok in ((15, True), (sid_value, False)):
        ti = tik.Tik()
        x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
        t = ti.Tensor("int32", (8,), name="t", scope=tik.scope_gm)
        y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
        tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
        ti.data_move(tu, t, 0, 1, 1, 0, 0)
        sid = ti.Scalar("int32", name="sid")
        sid.set_as(tu[3])
        line = here()
        ti.data_move(ub, x, sid, 1, 1, 0, 0)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        build(ti, "sid_rt", [x, t], [y])
        feed = {"x": xs.copy(), "t": np.full(8, value, np.int32)}
        if ok:
            assert np.array_equal(run(ti, feed)[0], xs)
            continue
        with raises_tik(IllegalOperand, match=rf"test_data_move.py:{line} in `tik.data_move`: sid of tik.data_move "
                                              rf"\(stream id\) = {sid_value} is outside \[0, 15\]"):
            run(ti, feed)
        assert np.array_equal(feed["x"], xs) and (feed["t"] == value).all()   # the caller's arrays are untouched


def test_scalar_sid_of_load2d_is_checked_when_it_runs():
    """h_review443: load2dv2's sid, as data_move's (the immediate range [0, 15] the simulator already applies)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (256,), name="l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    ti.data_move(l1, x, 0, 1, 16, 0, 0)
    line = here()
    ti.load2dv2(l0a, l1, 0, 1, 0, 1, ti.Scalar("int32", name="sid", init_value=16))
    build(ti, "sid_l2d", [x], [])
    with raises_tik(IllegalOperand, match=rf"test_data_move.py:{line} in `tik.load2dv2`: sid of tik.load2dv2 = 16 "
                                          rf"is outside \[0, 15\]"):
        run(ti, {"x": np.ones(256, np.float16)})
