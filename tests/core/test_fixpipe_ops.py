"""FIXPIPE write-back ops: layouts, strides, loop3, UB dual destination, GM atomics, sync, peer cases.

Layouts and strides are checked against `fixpipe_support.ref_offsets` (explicit per-element
offsets) and `fixpipe_support.ref_convert` (exact rational arithmetic), comparing the
whole destination region so that elements outside ``m x n`` must keep the fill pattern.
"""
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fixpipe_support import ROW, fb_words, load_acc, nz_pack, ref_convert, ref_offsets
from pto_core import HazardError, IllegalOperand, Machine, MachineOptions, SyncError, UninitializedRead, dtype, pto
from pto_core.numerics import quant as Q

def fill_byte(machine, ptr) -> int:
    """The byte a buffer of ``ptr``'s space starts with (on-chip and GM patterns differ)."""
    opts = machine.options
    if ptr.space == "gm" and opts.gm_fill_byte is not None:
        return opts.gm_fill_byte
    return opts.fill_byte


def region(machine, ptr, count):
    return machine.read(ptr, (count,))


def expected_region(dst, count, writes, fill):
    """Destination storage of ``count`` elements holding the ``fill`` byte, then ``writes`` = [(offsets, values)]."""
    d = dtype(dst)
    out = np.full(d.nbytes(count), fill, np.uint8).view(d.storage).copy()
    for off, vals in writes:
        out[np.asarray(off).reshape(-1)] = np.asarray(vals).reshape(-1)
    return out


def c0_of(dst, layout):
    return {"nz2nz_split": 8}.get(layout, 16 if dtype(dst).bits in (16, 32) else 32)


# ----------------------------------------------------------------------------- seed 001 example


def test_seed_001_example_runs_and_gives_its_clauses_result():
    m = Machine("A2A3")
    x = (np.arange(16 * 32, dtype=np.float32).reshape(16, 32) - 200.0) * np.float32(3.1)
    src, ss = load_acc(m, x)
    l1 = m.ptr("l1", "f16", 0)
    pto.mte_l0c_l1(src, l1, 16, 32, 16, 32, pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}),
                   pre_relu=(0.25, {"mode": "scalar_relu"}), nz2nd=True, sat=True)
    xd = x.astype(np.float64)
    exp = np.where(xd < 0, xd * 0.25, xd * 1.0).astype(np.float16)       # exact products, one RNE rounding
    np.testing.assert_array_equal(m.read(l1, (16, 32)), exp)
    assert m.reports == []


# ----------------------------------------------------------------------------- layouts (hypothesis)


def _pack_rows(logical, ss, ls):
    """NZ storage where logical row i of each fractal column sits at row i * ls (nz2dn loop0_src_stride)."""
    m, n = logical.shape
    n1 = -(-n // ROW)
    out = np.zeros((n1, ss, ROW), logical.dtype)
    pad = np.zeros((m, n1 * ROW), logical.dtype)
    pad[:, :n] = logical
    for j1 in range(n1):
        for i in range(m):
            out[j1, i * ls, :] = pad[i, j1 * ROW:(j1 + 1) * ROW]
    return out


@st.composite
def writeback_cases(draw):
    layout = draw(st.sampled_from(["normal", "nz2nd", "nz2dn", "nz2nz", "nz2nz_split"]))
    conv = "plain" if layout.startswith("nz2nz") else draw(st.sampled_from(["plain", "f16_vec", "s8_scalar"]))
    m = draw(st.integers(1, 33))
    n = draw(st.integers(1, 50))
    ls = draw(st.integers(1, 3)) if layout == "nz2dn" else 1
    rows = (m - 1) * ls + 1
    ss = -(-rows // ROW) * ROW + ROW * draw(st.integers(0, 1))
    dst = {"plain": "f32", "f16_vec": "f16", "s8_scalar": "s8"}[conv]
    c0d = c0_of(dst, layout)
    runs, run_len = {"nz2nd": (m, n), "nz2dn": (n, m)}.get(layout, (-(-n // c0d), m * c0d))
    dst_stride = run_len + draw(st.integers(0, 5))
    count, s3, d3 = 1, 0, 0
    if layout in ("nz2nd", "nz2dn"):
        count = draw(st.integers(1, 3))
        s3 = -(-n // ROW) * ss + ROW * draw(st.integers(0, 2))
        d3 = (runs - 1) * dst_stride + run_len + draw(st.integers(0, 7))
    space = draw(st.sampled_from(["l1", "gm"]))
    return dict(layout=layout, conv=conv, m=m, n=n, ls=ls, ss=ss, dst=dst, c0d=c0d, dst_stride=dst_stride,
                loop3=(count, s3, d3), space=space, seed=draw(st.integers(0, 2 ** 16)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(writeback_cases())
def test_layouts_strides_and_loop3_match_the_reference(case):
    rng = np.random.default_rng(case["seed"])
    m, n, ss, ls = case["m"], case["n"], case["ss"], case["ls"]
    count, s3, d3 = case["loop3"]
    mach = Machine("A2A3")
    tiles = [(rng.integers(-300, 300, (m, n)) * np.float32(0.37)).astype(np.float32) for _ in range(count)]
    src = mach.ptr("l0c", "f32", 0)
    for r, t in enumerate(tiles):
        mach.write(src + r * s3 * ROW, _pack_rows(t, ss, ls))
    kw, vals_kw = {}, {}
    if case["conv"] == "f16_vec":
        scales = rng.uniform(0.1, 2.0, n).astype(np.float32)
        fb = fb_words(mach, [Q.make_word(s, offset_bits=0) for s in scales])
        kw["pre_quant"] = (fb, {"mode": "qf322f16_pre_vec"})
        vals_kw = dict(mode="qf322f16_pre_vec", scale=scales, sat="nosat")
    elif case["conv"] == "s8_scalar":
        kw["pre_quant"] = (0.75, {"mode": "qf322b8_pre_scalar"})
        vals_kw = dict(mode="qf322b8_pre_scalar", scale=0.75, signed=True)
    layout = case["layout"]
    if layout == "nz2nd":
        kw["nz2nd"] = True
    elif layout == "nz2dn":
        kw["nz2dn"] = ls
    elif layout == "nz2nz":
        kw["nz2nz"] = True
    elif layout == "nz2nz_split":
        kw["nz2nz"] = 1
    if count > 1 or s3 or d3:
        kw["loop3"] = (count, s3, d3)
    total = (count - 1) * d3 + ref_offsets(layout, m, n, case["dst_stride"], case["c0d"]).max() + 1 + 9
    if case["space"] == "l1":
        dst = mach.ptr("l1", case["dst"], 0)
        pto.mte_l0c_l1(src, dst, m, n, ss, case["dst_stride"], **kw)
    else:
        dst = mach.gm_alloc((total,), case["dst"], name="out")
        pto.mte_l0c_gm(src, dst, m, n, ss, case["dst_stride"], 0, 0, **kw)
    writes = []
    off = ref_offsets(layout, m, n, case["dst_stride"], case["c0d"])
    for r, t in enumerate(tiles):
        vals = ref_convert(t, mode=vals_kw.get("mode"), dst=case["dst"],
                           **{k: v for k, v in vals_kw.items() if k != "mode"})
        writes.append((off + r * d3, vals))
    np.testing.assert_array_equal(region(mach, dst, total).view(np.uint8),
                                  expected_region(case["dst"], total, writes, fill_byte(mach, dst)).view(np.uint8))


def test_nz_normal_layout_of_8_bit_destinations_merges_two_fractal_columns():
    mach = Machine("A2A3")
    x = np.arange(5 * 70, dtype=np.int32).reshape(5, 70) % 200 - 100
    src, ss = load_acc(mach, x)
    dst = mach.ptr("l1", "s8", 0)
    pto.mte_l0c_l1(src, dst, 5, 70, ss, 5 * 32 + 3, pre_quant=(1.0, {"mode": "req8_scalar"}))
    off = ref_offsets("normal", 5, 70, 5 * 32 + 3, 32)
    total = off.max() + 1
    np.testing.assert_array_equal(region(mach, dst, total), expected_region("s8", total, [(off, x.astype(np.int8))],
                                                                          fill_byte(mach, dst)))


def test_s4_destination_is_packed_two_per_byte():
    mach = Machine("A5")
    x = np.arange(-8, 8, dtype=np.int32).reshape(2, 8)
    src, ss = load_acc(mach, x)
    out = mach.gm_alloc((16,), "s4", name="out")
    pto.mte_l0c_gm(src, out, 2, 8, ss, 8, 0, 0, pre_quant=(1.0, {"mode": "req4_scalar"}), nz2nd=True)
    raw = mach.read(out, (8,), "u8")
    codes = (np.arange(-8, 8) & 0xF).astype(np.uint8)
    np.testing.assert_array_equal(raw, codes[0::2] | (codes[1::2] << 4))


# ----------------------------------------------------------------------------- UB dual destination


def _ub_run(m, n, dst_mode, layout="nz2nd", dst_stride=None):
    mach = Machine("A5")
    x = (np.arange(m * n, dtype=np.float32).reshape(m, n) * np.float32(1.5)) - 7
    src, ss = load_acc(mach, x)
    ub = mach.ptr("ub", "f32", 0x100)
    kw = {"nz2nd": True} if layout == "nz2nd" else {}
    if dst_stride is None:
        rows, cols = (m // 2, n) if dst_mode == "split_m" else (m, n // 2) if dst_mode == "split_n" else (m, n)
        dst_stride = cols if layout == "nz2nd" else rows * 16
    pto.mte_l0c_ub(src, ub, m, n, ss, dst_stride, dst_mode=dst_mode, **kw)
    return mach, ub, x, dst_stride


@pytest.mark.parametrize("layout", ["nz2nd", "normal"])
@pytest.mark.parametrize("m", [2, 8, 34])
def test_split_m_gives_aiv0_the_upper_and_aiv1_the_lower_half(layout, m):
    n = 40
    mach, ub, x, ds = _ub_run(m, n, "split_m", layout)
    h = m // 2
    off = ref_offsets(layout, h, n, ds)
    total = off.max() + 1
    for sub, part in ((0, x[:h]), (1, x[h:])):
        got = mach.read(ub.__class__(ub.space, ub.dtype, ub.addr, sub, ub.ctx), (total,))
        np.testing.assert_array_equal(got.view(np.uint32), expected_region("f32", total, [(off, part)], fill_byte(mach, ub)).view(np.uint32))


@pytest.mark.parametrize("layout", ["nz2nd", "normal"])
@pytest.mark.parametrize("m,n", [(7, 32), (16, 64), (3, 96)])
def test_split_n_gives_aiv0_the_left_and_aiv1_the_right_half(layout, m, n):
    mach, ub, x, ds = _ub_run(m, n, "split_n", layout)
    h = n // 2
    off = ref_offsets(layout, m, h, ds)
    total = off.max() + 1
    for sub, part in ((0, x[:, :h]), (1, x[:, h:])):
        got = mach.read(ub.__class__(ub.space, ub.dtype, ub.addr, sub, ub.ctx), (total,))
        np.testing.assert_array_equal(got.view(np.uint32), expected_region("f32", total, [(off, part)], fill_byte(mach, ub)).view(np.uint32))


@pytest.mark.parametrize("m", [1, 7, 33])
def test_split_m_needs_an_even_m(m):
    with pytest.raises(IllegalOperand, match="split_m.*even") as ei:
        _ub_run(m, 16, "split_m")
    assert ei.value.operand == "%m"


@pytest.mark.parametrize("n", [16, 40, 33, 31])
def test_split_n_needs_n_multiple_of_32(n):
    with pytest.raises(IllegalOperand, match="multiple of 32") as ei:
        _ub_run(4, n, "split_n")
    assert ei.value.operand == "%n"


@pytest.mark.parametrize("sub", [0, 1])
def test_sub_blockid_writes_one_vector_cores_ub(sub):
    mach, ub, x, ds = _ub_run(5, 20, sub)
    other = 1 - sub
    got = mach.read(ub.__class__("ub", ub.dtype, ub.addr, sub, ub.ctx), (100,))
    np.testing.assert_array_equal(got.reshape(5, 20), x)
    untouched = mach.read(ub.__class__("ub", ub.dtype, ub.addr, other, ub.ctx), (100,))
    assert (untouched.view(np.uint8) == fill_byte(mach, ub)).all()


# ----------------------------------------------------------------------------- GM atomics


@pytest.mark.parametrize("dst,op", [(d, o) for d in ("f32", "f16", "bf16", "s32", "s16", "s8") for o in ("add", "max", "min")])
def test_gm_atomics_read_modify_write_in_the_atomic_type(dst, op):
    rng = np.random.default_rng(3)
    mach = Machine("A5")
    d = dtype(dst)
    m_, n_ = 3, 20
    if d.is_float:
        x = (rng.integers(-50, 50, (m_, n_)) * 0.75).astype(np.float32)
        old = (rng.integers(-50, 50, (m_, n_)) * 0.5).astype(d.storage)
        mode = {"f32": None, "f16": "qf322f16_pre_scalar", "bf16": "qf322bf16_pre_scalar"}[dst]
        new = x.astype(np.float64)
    else:
        x = rng.integers(-100, 100, (m_, n_)).astype(np.int32)
        old = rng.integers(-100, 100, (m_, n_)).astype(d.storage)
        mode = {"s32": None, "s16": "deqs16_scalar", "s8": "req8_scalar"}[dst]
        new = x.astype(np.int64)
    src, ss = load_acc(mach, x)
    out = mach.gm_tensor(old, name="out", dtype=dst)
    kw = {} if mode is None else {"pre_quant": (1.0, {"mode": mode})}
    pto.mte_l0c_gm(src, out, m_, n_, ss, n_, 0, 0, **kw, nz2nd=True, atomic={"type": dst, "op": op})
    got = mach.read(out, (m_, n_))
    if d.is_float:
        o = old.astype(np.float64)
        r = o + new if op == "add" else np.maximum(o, new) if op == "max" else np.minimum(o, new)
        exp = r.astype(d.storage)
    else:
        o = old.astype(np.int64)
        r = o + new if op == "add" else np.maximum(o, new) if op == "max" else np.minimum(o, new)
        exp = r.astype(d.storage)   # add wraps modulo 2**bits
    np.testing.assert_array_equal(got.astype(np.float64), exp.astype(np.float64))


def test_atomic_add_on_s8_wraps_and_on_f16_follows_the_saturation_mode():
    mach = Machine("A5")
    x = np.array([[100, 60000]], dtype=np.int32)
    src, ss = load_acc(mach, x)
    out = mach.gm_tensor(np.array([100, 0], np.int8), name="o8")
    pto.mte_l0c_gm(src, out, 1, 1, ss, 1, 0, 0, pre_quant=(1.0, {"mode": "req8_scalar"}), nz2nd=True,
                   atomic={"type": "s8", "op": "add"})
    assert mach.read(out, (2,)).tolist() == [-56, 0]          # 100 + 100 wraps to -56
    xf = np.array([[60000.0, 60000.0]], dtype=np.float32)
    srcf, ssf = load_acc(mach, xf, addr=0x2000)
    for sat, want in ((True, 65504.0), (False, np.inf)):
        outf = mach.gm_tensor(np.array([60000.0, 1.0], np.float16), name=f"of{sat}")
        pto.mte_l0c_gm(srcf, outf, 1, 1, ssf, 1, 0, 0, pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}),
                       nz2nd=True, sat=sat, atomic={"type": "f16", "op": "add"})
        assert mach.read(outf, (2,))[0] == want


# ----------------------------------------------------------------------------- synchronisation


class RecordingTracker:
    """A stand-in hazard tracker recording what FIXPIPE reports (the protocol of pto_core.memory)."""

    def __init__(self):
        self.ops, self.accesses, self.consumed = [], [], []

    def begin_op(self, op_name, pipe, where):
        self.ops.append((op_name, pipe))

    def on_access(self, buf, lo, hi, is_write, operand=""):
        self.accesses.append((buf.space, lo, hi, is_write))

    def unit_flag_publish(self, buf, lo, hi):
        pass

    def unit_flag_consume(self, buf, lo, hi, clear):
        self.consumed.append((buf.space, lo, hi, clear))

    def end_kernel(self):
        return []


@pytest.mark.parametrize("flag,clear", [("check_only", False), ("check_and_clear", True)])
def test_fixpipe_runs_on_the_fix_pipe_and_consumes_the_unit_flag(flag, clear):
    mach = Machine("A2A3")
    ctx = mach.context(0)
    tracker = RecordingTracker()
    ctx.hazards = tracker
    x = np.ones((20, 40), np.float32)
    src, ss = load_acc(mach, x, addr=0x800)
    out = mach.gm_alloc((20, 40), "f32", name="out")
    pto.mte_l0c_gm(src, out, 20, 40, ss, 40, 0, 0, unit_flag=flag, nz2nd=True)
    assert tracker.ops == [("pto.mte_l0c_gm", "FIX")]
    span_end = 0x800 + ((3 - 1) * ss + 32) * 16 * 4      # whole 16-row fractals of the 20 rows read
    assert tracker.consumed == [("l0c", 0x800, span_end, clear)]
    reads = [a for a in tracker.accesses if a[0] == "l0c"]
    assert reads and all(not w for *_, w in reads) and min(r[1] for r in reads) == 0x800
    assert any(a[0] == "gm" and a[3] for a in tracker.accesses)


def test_only_the_logical_elements_must_be_initialised():
    x = np.arange(5 * 20, dtype=np.float32).reshape(5, 20)
    nz = nz_pack(x, 16)

    def machine_with(skip=None):
        mach = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
        src = mach.ptr("l0c", "f32", 0)
        for j1, lanes in ((0, 16), (1, 4)):              # only the 5 valid rows and the 20 valid lanes
            for i in range(5):
                if (j1, i) != skip:
                    mach.write(src + (j1 * 16 + i) * 16, nz[j1, i, :lanes])
        return mach, src

    mach, src = machine_with()
    out = mach.gm_alloc((5, 20), "f32", name="out")
    pto.mte_l0c_gm(src, out, 5, 20, 16, 20, 0, 0, nz2nd=True)
    np.testing.assert_array_equal(mach.read(out, (5, 20)), x)
    mach, src = machine_with(skip=(1, 3))                   # row 3 of the second fractal column missing
    out = mach.gm_alloc((5, 20), "f32", name="out")
    with pytest.raises(UninitializedRead, match="uses 16 byte") as ei:
        pto.mte_l0c_gm(src, out, 5, 20, 16, 20, 0, 0, nz2nd=True)
    assert ei.value.operand == "%src"


def test_omitted_sat_follows_the_machine_overflow_mode():
    x = np.array([[1e6, np.nan]], dtype=np.float32)
    for mode, want in (("saturation", [65504.0, 0.0]), ("inf_nan", [np.inf, np.nan])):
        mach = Machine("A2A3", options=MachineOptions(overflow_mode=mode))
        src, ss = load_acc(mach, x)
        out = mach.gm_alloc((2,), "f16", name="out")
        pto.mte_l0c_gm(src, out, 1, 2, ss, 2, 0, 0, pre_quant=(0.0, {"mode": "f32_f16"}), nz2nd=True)
        np.testing.assert_array_equal(mach.read(out, (2,)), np.array(want, np.float16))


def test_plan_reuse_between_verify_and_execute_keeps_the_machine_overflow_mode():
    x = np.array([[1e6]], dtype=np.float32)
    for mode, want in (("saturation", 65504.0), ("inf_nan", np.inf), ("saturation", 65504.0)):
        mach = Machine("A2A3", options=MachineOptions(overflow_mode=mode))
        src, ss = load_acc(mach, x)
        out = mach.gm_alloc((1,), "f16", name="out")
        pto.mte_l0c_gm(src, out, 1, 1, ss, 1, 0, 0, pre_quant=(0.0, {"mode": "f32_f16"}), nz2nd=True)
        assert mach.read(out, (1,))[0] == want


# ----------------------------------------------------------------------------- pto-isa tstore_acc2gm cases

# (name, dst, a/b dtype, format, m, n, k, quant (0 none, 1 scalar, 2 vector), scalar, relu)
TSTORE_CASES = [
    ("case0", "f32", "f32", "nd", 128, 128, 32, 0, 1, 0),
    ("case1", "f32", "f32", "nd", 128, 128, 16, 0, 1, 0),
    ("case2", "f32", "f32", "nd", 31, 32, 15, 0, 1, 0),
    ("case3", "f32", "f16", "nd", 65, 128, 96, 0, 1, 0),
    ("case4", "f16", "f16", "nd", 73, 64, 32, 0, 1, 0),
    ("case5", "f32", "bf16", "nd", 13, 32, 25, 0, 1, 0),
    ("case6", "bf16", "bf16", "nd", 100, 222, 60, 0, 1, 0),
    ("case13", "s32", "s8", "nd", 44, 128, 27, 0, 1, 0),
    ("case16", "f16", "s8", "nd", 64, 64, 64, 1, 5, 0),
    ("case17", "s8", "s8", "nd", 31, 32, 26, 1, 2, 0),
    ("case18", "u8", "s8", "nd", 16, 32, 17, 1, 2, 0),
    ("case24", "s8", "f16", "nd", 25, 35, 32, 1, 2, 0),
    ("case25", "u8", "f32", "nd", 16, 20, 25, 1, 1, 0),
    ("case26", "f16", "f16", "nd", 49, 65, 37, 1, 3, 0),
    ("case27", "bf16", "f16", "nd", 160, 79, 51, 1, 3, 0),
    ("case_relu_1", "f32", "f32", "nd", 117, 97, 71, 0, 1, 1),
    ("case_relu_21", "s8", "f16", "nd", 77, 34, 81, 1, 2, 1),
    ("nz_f32", "f32", "f32", "nz", 32, 64, 16, 0, 1, 0),
    ("nz_s8", "s8", "s8", "nz", 32, 64, 32, 1, 1, 0),
    ("nz_f32_channel_split", "f32", "f32", "nz8", 48, 64, 16, 0, 1, 0),
    ("vec_f16", "f16", "f16", "nd", 49, 65, 37, 2, 1, 0),
    ("vec_s8", "s8", "s8", "nd", 31, 32, 26, 2, 1, 0),
    ("vec_u8_relu", "u8", "s8", "nd", 16, 32, 17, 2, 1, 1),
]

_CAST = {"f16": "f32_f16", "bf16": "f32_bf16"}
_SCALAR = {("f32", "f16"): "qf322f16_pre_scalar", ("f32", "bf16"): "qf322bf16_pre_scalar",
           ("f32", "s8"): "qf322b8_pre_scalar", ("f32", "u8"): "qf322b8_pre_scalar",
           ("s32", "f16"): "deqf16_scalar", ("s32", "s8"): "req8_scalar", ("s32", "u8"): "req8_scalar"}


@pytest.mark.parametrize("case", TSTORE_CASES, ids=[c[0] for c in TSTORE_CASES])
def test_tstore_acc2gm_cases_against_float64_references(case):
    name, dst, ab, fmt, M, N, K, quant, scalar, relu = case
    rng = np.random.default_rng(19)
    lo, hi = (-1, 2) if dst == "s8" else (1, 4) if dst == "u8" else (-5, 5)
    a = rng.integers(lo, hi, (M, K)).astype(np.float64)
    b = rng.integers(lo, hi, (K, N)).astype(np.float64)
    acc64 = a @ b                                             # exact: small integers
    acc_t = "s32" if ab == "s8" else "f32"
    mach = Machine("A2A3")
    src, ss = load_acc(mach, acc64.astype(np.int32 if acc_t == "s32" else np.float32))
    kw = {}
    scale = np.ones(N)
    if quant == 1:
        kw["pre_quant"] = (float(scalar), {"mode": _SCALAR[(acc_t, dst)]})
        scale[:] = scalar
    elif quant == 2:
        scale = rng.integers(1, 5, N).astype(np.float64) if dst in ("s8", "u8") else \
            (rng.uniform(0.1, 2.0, N).astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
        words = [Q.make_word(s, offset_bits=9, signed=dst == "s8") for s in scale]
        mode = _SCALAR[(acc_t, dst)].replace("_scalar", "_vec")
        kw["pre_quant"] = (fb_words(mach, words), {"mode": mode})
    elif dst in _CAST:
        kw["pre_quant"] = (0.0, {"mode": _CAST[dst]})
    if relu:
        kw["pre_relu"] = {"mode": "normal_relu"}
    if fmt == "nd":
        kw["nz2nd"] = True
        stride = N
    elif fmt == "nz8":
        kw["nz2nz"] = 1
        stride = M * 8
    else:
        stride = M * (32 if dtype(dst).bits == 8 else 16)
    out = mach.gm_alloc((M * N,), dst, name="out")
    pto.mte_l0c_gm(src, out, M, N, ss, stride, 0, 0, **kw)
    # float64 reference
    y = acc64 * np.asarray(scale, dtype=np.float64)[None, :]
    if relu:
        y = np.maximum(y, 0.0)
    if dtype(dst).is_int:
        yi = np.clip(np.rint(y), -256, 255)
        ref = np.clip(yi, -128, 127).astype(np.int8) if dst == "s8" else \
            np.clip(yi, 0, 255).astype(np.uint8) if dst == "u8" else yi.astype(np.int32) if dst == "s32" else None
        if dst == "s32":
            ref = np.rint(y).astype(np.int32)
    else:
        ref = y.astype(ml_dtypes.bfloat16 if dst == "bf16" else dtype(dst).storage)
    got = mach.read(out, (M * N,))
    if fmt == "nd":
        np.testing.assert_array_equal(got.reshape(M, N), ref)
    else:
        c0 = 8 if fmt == "nz8" else (32 if dtype(dst).bits == 8 else 16)
        golden = ref.reshape(M // 16, 16, N // c0, c0).transpose(2, 0, 1, 3).reshape(-1)
        np.testing.assert_array_equal(got, golden)


# ----------------------------------------------------------------------------- cube -> FIXPIPE chain


def _stage_f16(mach, a, b):
    """A (M x K) into L0A (Zz on A2A3) and B (K x N) into L0B (Zn), f16, padded to whole fractals."""
    from pto_core import layout
    ceil = lambda v, q: -(-v // q) * q  # noqa: E731
    (mm, k), n = a.shape, b.shape[1]
    A = np.zeros((ceil(mm, 16), ceil(k, 16)), np.float16)
    A[:mm, :k] = a
    B = np.zeros((ceil(k, 16), ceil(n, 16)), np.float16)
    B[:k, :n] = b
    lhs, rhs = mach.ptr("l0a", "f16", 0), mach.ptr("l0b", "f16", 0)
    mach.write(lhs, layout.pack(A, "Zz", "f16"))
    mach.write(rhs, layout.pack(B, "Zn", "f16"))
    return lhs, rhs


@pytest.mark.parametrize("sync", ["flags", "unit_flag"])
@pytest.mark.parametrize("mm,n,k", [(16, 32, 16), (20, 40, 33), (1, 17, 5)])
def test_mad_then_fixpipe_gives_the_matmul_in_nd(mm, n, k, sync):
    rng = np.random.default_rng(7)
    a = rng.integers(-4, 5, (mm, k)).astype(np.float16)
    b = rng.integers(-4, 5, (k, n)).astype(np.float16)
    mach = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    lhs, rhs = _stage_f16(mach, a, b)
    acc = mach.ptr("l0c", "f32", 0)
    out = mach.gm_alloc((mm, n), "f16", name="out")
    fix = dict(pre_quant=(0.0, {"mode": "f32_f16"}), nz2nd=True)
    if sync == "flags":
        pto.mad(lhs, rhs, acc, mm, n, k, disable_gemv=True)
        pto.set_flag("M", "FIX", 0)
        pto.wait_flag("M", "FIX", 0)
        pto.mte_l0c_gm(acc, out, mm, n, -(-mm // 16) * 16, n, 0, 0, **fix)
    else:
        pto.mad(lhs, rhs, acc, mm, n, k, unit_flag="check_and_set", disable_gemv=True)
        pto.mte_l0c_gm(acc, out, mm, n, -(-mm // 16) * 16, n, 0, 0, unit_flag="check_and_clear", **fix)
    exp = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(mach.read(out, (mm, n)), exp)
    assert mach.end_kernel() == []


def test_fixpipe_without_synchronisation_after_mad_is_a_hazard():
    mach = Machine("A2A3")
    a = np.ones((16, 16), np.float16)
    lhs, rhs = _stage_f16(mach, a, a)
    acc = mach.ptr("l0c", "f32", 0)
    out = mach.gm_alloc((16, 16), "f32", name="out")
    pto.mad(lhs, rhs, acc, 16, 16, 16)
    with pytest.raises(HazardError, match="RAW hazard .* PIPE_FIX") as ei:
        pto.mte_l0c_gm(acc, out, 16, 16, 16, 16, 0, 0, nz2nd=True)
    assert "set_flag" in str(ei.value)
    # a unit-flag check with no published tile would wait forever
    mach2 = Machine("A2A3")
    lhs, rhs = _stage_f16(mach2, a, a)
    acc2 = mach2.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, acc2, 16, 16, 16)
    pto.pipe_barrier("ALL")
    out2 = mach2.gm_alloc((16, 16), "f32", name="out")
    pto.mte_l0c_gm(acc2, out2, 16, 16, 16, 16, 0, 0, nz2nd=True)          # the barrier orders them
    with pytest.raises(SyncError, match="wait forever") as ei:
        pto.mte_l0c_gm(acc2, out2, 16, 16, 16, 16, 0, 0, unit_flag="check_only", nz2nd=True)
    assert ei.value.operand == "unit_flag"


# ----------------------------------------------------------------------------- programs and PTO-AS text


def test_fixpipe_ops_record_print_parse_and_run_like_eager_calls():
    from pto_core import asm
    from pto_core.program import program
    M, N = 20, 40
    x = (np.arange(M * N, dtype=np.float32).reshape(M, N) - 300) * np.float32(0.7)
    words = [Q.make_word(0.25 * (j % 4 + 1), offset_bits=0) for j in range(N)]
    clauses = dict(pre_quant=None, pre_relu=(0.5, {"mode": "scalar_relu", "clip": 100.0}), nz2nd=True,
                   loop3=(1, 0, 0), sat=True, atomic={"type": "f16", "op": "max"})

    def machine():
        mach = Machine("A5", options=MachineOptions(check_hazards=False))
        load_acc(mach, x, src_stride=32)
        fb_words(mach, words)
        return mach

    with program("fix", target="A5") as k:
        out = k.gm_arg("out", "f16", (M * N,), io="out", init=np.full(M * N, -1.0, np.float16))
        n = k.scalar_arg("n", "s32")
        acc, fb = k.ptr("l0c", "f32", 0), k.ptr("fb", "f32", 0)
        pto.mte_l0c_gm(acc, out, M, n, 32, n, 0, 0, **{**clauses, "pre_quant": (fb, {"mode": "qf322f16_pre_vec"})})
    text = asm.print_program(k.program)
    # the clauses follow the operands after commas, as the ISA docs write them (asm.COMMA_CLAUSE_OPS)
    assert ("%c0_i64, %c0_i64, pre_quant(%2, mode = qf322f16_pre_vec), pre_relu(%cst, mode = scalar_relu, "
            "clip = %cst_1), nz2nd, loop3(%c1_i64, %c0_i64, %c0_i64), sat, atomic(type = f16, op = max) :") in text
    again = asm.parse(text)
    assert asm.print_program(again) == text
    # text saved before the comma form (clauses after spaces) still loads, as the same program
    spaced = re.sub(r", (?=(pre_quant|pre_relu|nz2nd|loop3|sat|atomic)\b)", " ", text)
    assert "%c0_i64 pre_quant(" in spaced and "nz2nd loop3(" in spaced
    old = asm.parse(spaced)
    assert asm.print_program(old) == text
    got = [p.run({"n": N}, machine=machine())["out"] for p in (k.program, again, old)]
    eager = machine()
    dst = eager.gm_tensor(np.full(M * N, -1.0, np.float16), name="out")
    pto.mte_l0c_gm(eager.ptr("l0c", "f32", 0), dst, M, N, 32, N, 0, 0,
                   **{**clauses, "pre_quant": (eager.ptr("fb", "f32", 0), {"mode": "qf322f16_pre_vec"})})
    want = eager.read(dst, (M * N,))
    for g in got:
        np.testing.assert_array_equal(g.view(np.uint16), want.view(np.uint16))
    assert (want == -1.0).any() and (want > 0).any()


_SPELLING_CASES = [
    ("l1", dict(pre_quant=(0.0, {"mode": "f32_f16"}), pre_relu=({"mode": "normal_relu"}), nz2nd=True, sat=True)),
    ("l1", dict(pre_quant=(0.0, {"mode": "f32_f16"}), nz2nd=True, loop3=(2, 16, 512), sat="preserve_nan")),
    ("ub", dict(dst_mode="split_m", nz2nd=True, sat=False)),
    ("ub", dict(dst_mode=0)),
    ("gm", dict(nz2nd=True, loop3=(2, 16, 512), sat=False)),
    ("gm", dict(pre_quant=(0.0, {"mode": "f32_f16"}), nz2nd=True, atomic={"type": "f16", "op": "add"})),
    ("frac", dict(dn2nz=True, shape=(16, 32), src_layout=(32,), dst_group=(1, 1, 16, 0), ctrl=(0, False))),
]


@pytest.mark.parametrize("where,clauses", _SPELLING_CASES)
def test_comma_ops_print_commas_and_read_both_spellings_to_the_same_bytes(where, clauses):
    """FIXPIPE write-backs and the frac load print their clauses after commas (pto-isa mte-l0c-*.md,
    pto_spec.md §3.2/§5.1); the text printed before that (clauses after spaces) parses to the same
    program, and all three run to the same bytes."""
    from pto_core import asm
    from pto_core.program import program
    M, N = 16, 32
    x = (np.arange(2 * M * N, dtype=np.float32).reshape(2 * M, N) - 300) * np.float32(0.7)
    src_gm = (np.arange(M * N, dtype=np.float32) % 7 - 3).astype(np.float16)
    dst_dtype = "f16" if "pre_quant" in clauses else "f32"

    def machine():
        mach = Machine("A5", options=MachineOptions(check_hazards=False))
        load_acc(mach, x, src_stride=32)
        return mach

    with program("spell", target="A5") as k:
        out = k.gm_arg("out", dst_dtype, (2 * M * N,), io="out",
                       init=np.full(2 * M * N, 1.0, np.float32 if dst_dtype == "f32" else np.float16))
        a = k.gm_arg("a", "f16", (M * N,))
        acc = k.ptr("l0c", "f32", 0)
        if where == "l1":
            pto.mte_l0c_l1(acc, k.ptr("l1", "f16", 0), M, N, 32, N, **clauses)
        elif where == "ub":
            pto.mte_l0c_ub(acc, k.ptr("ub", "f32", 0), M, N, 32, N if "nz2nd" in clauses else 16 * M, **clauses)
        elif where == "gm":
            pto.mte_l0c_gm(acc, out, M, N, 32, N, 0, 0, **clauses)
        else:
            pto.mte_gm_l1_frac(a, k.ptr("l1", "f16", 0), **clauses)
    text = asm.print_program(k.program)
    line = next(ln for ln in text.split("\n") if "pto.mte_l0c_" in ln or "pto.mte_gm_l1_frac" in ln)
    first = next(iter(clauses))
    assert re.search(rf"%\w+, {first}\b", line), line
    spaced = re.sub(r", (?=(" + "|".join(["nosat"] + [c.name for c in
                                                      registry_spec(line).clauses]) + r")\b)", " ", text)
    assert spaced != text
    progs = [k.program, asm.parse(text), asm.parse(spaced)]
    assert asm.print_program(progs[2]) == text
    dumps = []
    for p in progs:
        mach = machine()
        res = p.run({"a": src_gm}, machine=mach)
        region = mach.read(mach.ptr("ub" if where == "ub" else "l1", "u8", 0), (4096,)) if where != "gm" else \
            res["out"].view(np.uint8)
        dumps.append(region.tobytes())
    assert dumps[0] == dumps[1] == dumps[2]
    fresh = machine()
    before = fresh.read(fresh.ptr("ub" if where == "ub" else "l1", "u8", 0), (4096,)).tobytes() if where != "gm" else \
        np.full(2 * M * N, 1.0, np.float32 if dst_dtype == "f32" else np.float16).view(np.uint8).tobytes()
    assert dumps[0] != before


def registry_spec(line):
    from pto_core.ops import registry
    return registry.OPS[re.search(r"pto\.(\w+)", line).group(1)]
