"""Differential regression of TIK data movement, multi-core stores and atomic add against an independent
reading of tik_api.md §1.2-1.4, §6.1, §6.4, §7.1-7.3.

A compact copy of the fuzzer of helper task k436 (its full version also drove L0C tensor_mov 'm'/'v' with
relu / f32->f16, mixed-dtype byte copies and ~2000 illegal calls per seed; ~25k kernels over Ascend310 / 910 /
310P3 / 910B1 / 310B1 without a disagreement after the fixes below). The model (no import of the simulator):

* data_move / tensor_mov('') (§7.1): burst ``b`` copies ``32*burst`` bytes from
  ``src + b*32*(burst + src_stride)`` to ``dst + b*32*(burst + dst_stride)`` (gaps, 32 B units); a byte copy;
  tensor_mov takes ``dst_stride`` before ``src_stride``;
* data_move_pad GM -> UB (§7.2): burst bytes from ``src + b*(burst + src_gap)``; UB rows start 32 B aligned, hold
  ``left`` pads, the data, ``right`` pads, then up to a 32 B multiple copies of the row's first element (no
  padding) or the pad value; next row after that + ``dst_gap*32``. UB -> GM: row ``b`` at
  ``src + b*(round32(burst) + 32*src_gap)``, exactly ``burst`` bytes to ``dst + b*(burst + dst_gap)``;
* multi-core (§6.1): each core runs the body; bytes two cores both store are reported as a GM race, others not;
* atomic add (§6.4, per-chip modes): GM destinations accumulate ``gm = round(gm + data)`` in the atomic dtype
  (ints wrap), in any core order, with no race report;
* illegal calls are refused with an error naming the API, the argument, the user's line and a Fix, change
  nothing, and a later legal call still works.
"""
import inspect
import warnings

import ml_dtypes
import numpy as np
from hypothesis import given, settings, strategies as st

from pto_core.errors import IllegalOperand, PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.data import Cann81RuleWarning

from .helpers import raises_tik

DT = {n: np.dtype(n) for n in ("uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32",
                               "uint64", "int64")}
DT["bfloat16"] = np.dtype(ml_dtypes.bfloat16)
CHIPS = ("Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1", "Ascend310B1")
PAD_CHIPS = ("Ascend910B1", "Ascend310B1")
PAD_DTYPES = ("uint8", "int8", "uint16", "int16", "float16", "int32", "float32", "uint32")
ATOMIC = {"Ascend910": ("float32",), "Ascend310P3": ("float32", "float16", "int16"),
          "Ascend310B1": ("float32", "float16", "int16", "int32"),
          "Ascend910B1": ("float32", "float16", "int16", "int32", "int8", "bfloat16")}
ATOMIC_MODE = {"float32": 1, "float16": 2, "int16": 3, "int32": 4, "int8": 5, "bfloat16": 6}
SCOPE = {"gm": tik.scope_gm, "ub": tik.scope_ubuf, "l1": tik.scope_cbuf}


def r32(n):
    return -(-n // 32) * 32


def isfloat(dt):
    return dt.kind == "f" or dt == DT["bfloat16"]


def model_move(dst, dbase, src, sbase, nburst, burst, ss, ds):
    for b in range(nburst):
        s, d = sbase + 32 * b * (burst + ss), dbase + 32 * b * (burst + ds)
        dst[d:d + 32 * burst] = src[s:s + 32 * burst]


def model_pad_in(dst, dbase, src, sbase, nburst, burst, dgap, sgap, right, left, pv, dt):
    sz = dt.itemsize
    row = r32((left + right) * sz + burst)
    pvb = np.array([0 if pv is None else pv]).astype(dt).tobytes()
    for b in range(nburst):
        s, d = sbase + b * (burst + sgap), dbase + b * (row + 32 * dgap)
        data = bytes(src[s:s + burst])
        body = pvb * left + data + pvb * right
        dst[d:d + row] = body + (pvb if (left or right or pv is not None) else data[:sz]) * ((row - len(body)) // sz)


def model_pad_out(dst, dbase, src, sbase, nburst, burst, dgap, sgap):
    for b in range(nburst):
        s, d = sbase + b * (r32(burst) + 32 * sgap), dbase + b * (burst + dgap)
        dst[d:d + burst] = src[s:s + burst]


def call(ti, fn, args, kw):
    return getattr(ti, fn)(*args, **kw)   # the user's line the refusals must name


CALL_LINE = inspect.getsourcelines(call)[1] + 1


def _load(ti, dst, src, nbytes):
    ti.data_move(dst, src, 0, 1, nbytes // 32, 0, 0)


def run_move(chip, dtn, path, fn, ns, nd, sofs, dofs, args, kw, xb, zb, rt=(), after=False):
    """src filled from x, dst filled from z, the tested call (caught if refused), optionally one legal block
    move after it, dst -> y. Returns (y bytes, refusal)."""
    dt = DT[dtn]
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor(dtn, (ns,), name="x", scope=tik.scope_gm)
    z = ti.Tensor(dtn, (nd,), name="z", scope=tik.scope_gm)
    y = ti.Tensor(dtn, (nd,), name="y", scope=tik.scope_gm)
    if path[0] == "gm":
        s = x
    else:
        s = ti.Tensor(dtn, (ns,), name="s", scope=SCOPE[path[0]])
        _load(ti, s, x, ns * dt.itemsize)
    # (a UB dst goes to y directly: with a tmp too, a UB -> UB move of 2049 blocks needed 3 x 65568 B of UB, more
    # than the 192 KB of Ascend910B1 / 310B, and the drawn case failed with TikCapacityExceeded -- h_review443)
    tmp = None if path[1] == "ub" else ti.Tensor(dtn, (nd,), name="tmp", scope=tik.scope_ubuf)
    if path[1] == "gm":
        _load(ti, tmp, z, nd * dt.itemsize)
        _load(ti, y, tmp, nd * dt.itemsize)
        d = y
    else:
        d = ti.Tensor(dtn, (nd,), name="d", scope=SCOPE[path[1]])
        _load(ti, d, z, nd * dt.itemsize)
    args = [ti.Scalar("int32", init_value=a) if i in rt else a for i, a in enumerate(args)]
    refusal = None
    try:
        call(ti, fn, [d[dofs:], s[sofs:]] + args, kw)
    except PtoError as exc:
        refusal = exc
    if after:
        ti.data_move(d, s, 0, 1, 1, 0, 0)
    if tmp is None:
        _load(ti, y, d, nd * dt.itemsize)
    elif path[1] != "gm":
        _load(ti, tmp, d, nd * dt.itemsize)
        _load(ti, y, tmp, nd * dt.itemsize)
    ti.BuildCCE(kernel_name="mv", inputs=[x, z], outputs=[y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        feed = {"x": np.frombuffer(xb, dt).copy(), "z": np.frombuffer(zb, dt).copy()}
        (out,) = ti.tikdb.start_debug(feed_dict=feed, interactive=False)
    return out.tobytes(), refusal


def data(draw, n):
    return np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1))).integers(0, 256, n, dtype=np.uint8).tobytes()


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_data_move_and_tensor_mov_match_the_model(draw):
    """Every DMA path of the chip, every dtype width, GM offsets off the 32 B grid, gaps, bursts above the
    2047-block row split, run-time (Scalar) counts."""
    d = draw.draw
    chip = d(st.sampled_from(CHIPS))
    paths = [("gm", "ub"), ("ub", "gm"), ("ub", "ub"), ("gm", "l1"), ("l1", "ub"), ("ub", "l1")]
    path = d(st.sampled_from(paths + ([("l1", "gm")] if chip in PAD_CHIPS else [])))
    dtn = d(st.sampled_from([k for k in DT if k != "bfloat16" or chip == "Ascend910B1"]))
    sz = DT[dtn].itemsize
    e = 32 // sz
    fn = d(st.sampled_from(["data_move", "tensor_mov"]))
    nburst, burst = d(st.sampled_from([(1, 1), (2, 3), (3, 1), (5, 2), (1, 2049)]))
    ss, ds = d(st.integers(0, 3)), d(st.integers(0, 3))
    sofs = d(st.integers(0, 3 * e)) if path[0] == "gm" else e * d(st.integers(0, 3))
    dofs = d(st.integers(0, 3 * e)) if path[1] == "gm" else e * d(st.integers(0, 3))
    ns = r32(sofs * sz + 32 * (nburst * burst + (nburst - 1) * ss) + 32 * d(st.integers(0, 2))) // sz
    nd = r32(dofs * sz + 32 * (nburst * burst + (nburst - 1) * ds) + 32 * d(st.integers(0, 2))) // sz
    xb, zb = data(d, ns * sz), data(d, nd * sz)
    args = [0, nburst, burst, ss, ds] if fn == "data_move" else ["", nburst, burst, ds, ss]
    rt = tuple(i for i in range(1, 5) if d(st.booleans()))
    got, refusal = run_move(chip, dtn, path, fn, ns, nd, sofs, dofs, args, {}, xb, zb, rt=rt)
    assert refusal is None, refusal
    exp = bytearray(zb)
    model_move(exp, dofs * sz, xb, sofs * sz, nburst, burst, ss, ds)
    assert got == bytes(exp)


def test_ub_to_ub_move_of_2049_blocks_fits_the_harness(chip="Ascend910B1"):
    """h_review443: the case the fuzz test above drew in a full-suite run (a UB -> UB move of 2049 uint8 blocks,
    above the 2047-block row split, on a 192 KB UB) stopped the harness with TikCapacityExceeded (3 UB tensors of
    65568 B); it runs now and matches the model."""
    nd = ns = 2049 * 32
    xb, zb = bytes(range(256)) * (ns // 256) + bytes(ns % 256), bytes(nd)
    got, refusal = run_move(chip, "uint8", ("ub", "ub"), "data_move", ns, nd, 0, 0, [0, 1, 2049, 0, 0], {}, xb, zb)
    exp = bytearray(zb)
    model_move(exp, 0, xb, 0, 1, 2049, 0, 0)
    assert refusal is None and got == bytes(exp) != zb


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_data_move_pad_matches_the_model(draw):
    d = draw.draw
    chip = d(st.sampled_from(PAD_CHIPS))
    dtn = d(st.sampled_from(PAD_DTYPES + (("bfloat16",) if chip == "Ascend910B1" else ())))
    dt = DT[dtn]
    sz, e = dt.itemsize, 32 // dt.itemsize
    nburst, burst = d(st.integers(1, 4)), sz * d(st.integers(1, 3 * e))
    kw = {}
    if d(st.booleans()):
        left, right = d(st.integers(0, e)), d(st.integers(0, e))
        pv = d(st.sampled_from([None, 0, 1, 3])) if not (left or right) else d(st.sampled_from([0, 1, 3]))
        if isfloat(dt) and pv is not None:
            pv = pv * 0.75
        kw = dict(left_padding=left, right_padding=right)
        if pv is not None:
            kw["padding_value"] = pv
        dgap, sgap = d(st.integers(0, 2)), d(st.sampled_from([0, 1, sz, 33]))
        sofs, dofs = d(st.integers(0, 3 * e)), e * d(st.integers(0, 2))
        sext = nburst * burst + (nburst - 1) * sgap
        dext = nburst * r32((left + right) * sz + burst) + (nburst - 1) * 32 * dgap
        path = ("gm", "ub")
    else:
        dgap, sgap = d(st.sampled_from([0, 1, sz, 33])), d(st.integers(0, 2))
        sofs, dofs = e * d(st.integers(0, 2)), d(st.integers(0, 3 * e))
        sext = nburst * r32(burst) + (nburst - 1) * 32 * sgap
        dext = nburst * burst + (nburst - 1) * dgap
        path = ("ub", "gm")
    ns, nd = r32(sofs * sz + sext) // sz + e, r32(dofs * sz + dext) // sz + e
    xb, zb = data(d, ns * sz), data(d, nd * sz)
    rt = tuple(i for i in range(4) if d(st.booleans()))
    with warnings.catch_warnings():
        # padding_value with zero paddings and paddings without one run with a Cann81RuleWarning on purpose
        # (PADDING_VALUE_CANN81_WARN): the model checks what the simulator computes for them
        warnings.simplefilter("ignore", Cann81RuleWarning)
        got, refusal = run_move(chip, dtn, path, "data_move_pad", ns, nd, sofs, dofs, [nburst, burst, dgap, sgap],
                                kw, xb, zb, rt=rt)
    assert refusal is None, refusal
    exp = bytearray(zb)
    if path == ("gm", "ub"):
        model_pad_in(exp, dofs * sz, xb, sofs * sz, nburst, burst, dgap, sgap, kw.get("right_padding", 0),
                     kw.get("left_padding", 0), kw.get("padding_value"), dt)
    else:
        model_pad_out(exp, dofs * sz, xb, sofs * sz, nburst, burst, dgap, sgap)
    assert got == bytes(exp)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_multi_core_stores_races_and_atomic_add_match_the_model(draw):
    """N cores store bursts of their own data at per-core GM offsets read from a tensor (data_move, or
    data_move_pad on the chips with it); with set_atomic_add the stores accumulate."""
    d = draw.draw
    chip = d(st.sampled_from(CHIPS))
    atomic = chip in ATOMIC and d(st.booleans())
    pad = chip in PAD_CHIPS and d(st.booleans())
    pool = PAD_DTYPES + (("bfloat16",) if chip == "Ascend910B1" else ()) if pad else \
        [k for k in DT if k != "bfloat16" or chip == "Ascend910B1"]
    dtn = d(st.sampled_from([k for k in ATOMIC[chip] if k in pool] if atomic else pool))
    dt = DT[dtn]
    sz, e = dt.itemsize, 32 // dt.itemsize
    ncores, nburst = d(st.integers(2, 4)), d(st.integers(1, 3))
    if pad:
        burst, gap = sz * d(st.integers(1, 2 * e)), d(st.sampled_from([0, sz, 32]))
        step_b, src_step, ext = burst + gap, r32(burst), nburst * burst + (nburst - 1) * gap
    else:
        burst, gap = d(st.integers(1, 2)), d(st.integers(0, 2))
        step_b, src_step, ext = 32 * (burst + gap), 32 * burst, 32 * (nburst * burst + (nburst - 1) * gap)
    per = nburst * src_step // sz
    ofs = [d(st.integers(0, 2 * ext // sz)) for _ in range(ncores)]
    ny = r32(max(ofs) * sz + ext) // sz
    seed = d(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    if atomic and isfloat(dt):
        xs = (rng.integers(-64, 64, ncores * per) / 4).astype(dt)                  # exact sums
    elif atomic:
        xs = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, ncores * per, endpoint=True).astype(dt)   # wraps
    else:
        xs = np.frombuffer(rng.integers(0, 256, ncores * per * sz, dtype=np.uint8).tobytes(), dt)
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor(dtn, (ncores * per,), name="x", scope=tik.scope_gm)
    o = ti.Tensor("int32", (8,), name="o", scope=tik.scope_gm)
    y = ti.Tensor(dtn, (ny,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, ncores, block_num=ncores) as core:
        ub = ti.Tensor(dtn, (per,), name="ub", scope=tik.scope_ubuf)
        ob = ti.Tensor("int32", (8,), name="ob", scope=tik.scope_ubuf)
        _load(ti, ub, x[core * per], per * sz)
        ti.data_move(ob, o, 0, 1, 1, 0, 0)
        off = ti.Scalar("int32", init_value=ob[core])
        if atomic:
            ti.set_atomic_add(ATOMIC_MODE[dtn])
        if pad:
            ti.data_move_pad(y[off], ub, nburst, burst, gap, 0)
        else:
            ti.data_move(y[off], ub, 0, nburst, burst, 0, gap)
        if atomic:
            ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="mc", inputs=[x, o], outputs=[y])
    if atomic:
        ti.tikdb.order = d(st.sampled_from(["sequential", "random"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (out,) = ti.tikdb.start_debug(feed_dict={"x": xs.copy(), "o": np.array(ofs + [0] * (8 - ncores), np.int32)},
                                      interactive=False)
    exp = np.zeros(ny, dt)
    ex = bytearray(exp.tobytes())
    owners = {}
    for c in range(ncores):
        src = xs[c * per:(c + 1) * per].tobytes()
        for b in range(nburst):
            lo = ofs[c] * sz + b * step_b
            chunk = src[b * src_step:b * src_step + (burst if pad else 32 * burst)]
            if atomic:
                cur = np.frombuffer(bytes(ex[lo:lo + len(chunk)]), dt)
                add = np.frombuffer(chunk, dt)
                wide = np.float64 if isfloat(dt) else np.int64
                ex[lo:lo + len(chunk)] = (cur.astype(wide) + add.astype(wide)).astype(dt).tobytes()
            else:
                ex[lo:lo + len(chunk)] = chunk
            for i in range(lo, lo + len(chunk)):
                owners.setdefault(i, set()).add(c)
    shared = {i for i, cs in owners.items() if len(cs) > 1}
    races = [m for k, m in ti.tikdb.reports if k == "race"]
    assert bool(races) == (bool(shared) and not atomic), races
    got = out.tobytes()
    assert all(got[i] == ex[i] for i in range(len(ex)) if i not in shared or atomic)


ILLEGAL = [  # (chip, dtype, path, fn, args, kw, operand, pattern)
    ("Ascend910", "float16", ("gm", "ub"), "data_move", [0, 0, 1, 0, 0], {}, "nburst", r"\[1, 4095\]"),
    ("Ascend310P3", "int8", ("ub", "gm"), "data_move", [0, 4096, 1, 0, 0], {}, "nburst", r"\[1, 4095\]"),
    ("Ascend910B1", "float32", ("ub", "ub"), "data_move", [0, 1, 65536, 0, 0], {}, "burst", r"\[1, 65535\]"),
    ("Ascend310", "int32", ("gm", "ub"), "data_move", [0, 2, 1, -1, 0], {}, "src_stride", r"\[0, 65535\]"),
    ("Ascend310B1", "uint16", ("ub", "gm"), "data_move", [16, 1, 1, 0, 0], {}, "sid", r"\[0, 15\]"),
    ("Ascend910", "float16", ("ub", "ub"), "tensor_mov", ["q", 1, 1, 0, 0], {}, "block_mode", ""),
    ("Ascend910", "float16", ("l1", "gm"), "data_move", [0, 1, 1, 0, 0], {}, "dst", "not available"),
    ("Ascend910", "float16", ("gm", "ub"), "data_move_pad", [1, 32, 0, 0], {}, "data_move_pad", "not supported"),
    ("Ascend910B1", "float16", ("gm", "ub"), "data_move_pad", [1, 31, 0, 0], {}, "burst", "multiple"),
    ("Ascend910B1", "int8", ("gm", "ub"), "data_move_pad", [1, 8, 0, 0], {"left_padding": 33}, "left_padding", ""),
    # k436: ignored before (a UB -> GM move has no padding: CANN TIK "UB to OUT, padding_value must be None")
    ("Ascend910B1", "float16", ("ub", "gm"), "data_move_pad", [1, 32, 0, 0], {"padding_value": 1.0},
     "padding_value", "GM -> UB moves only"),
    # k436: gaps had no upper bound (CANN TIK: [0, 2**32 - 1] on the 910B / 310B class)
    ("Ascend310B1", "int32", ("gm", "ub"), "data_move_pad", [1, 32, 0, 2 ** 32], {}, "src_gap",
     r"\[0, 4294967295\]"),
]


def test_illegal_moves_are_refused_and_change_nothing():
    for chip, dtn, path, fn, args, kw, operand, pattern in ILLEGAL:
        n = 512 // DT[dtn].itemsize
        xb = bytes(range(256)) * 2
        zb = bytes(255 - i % 256 for i in range(512))
        got, refusal = run_move(chip, dtn, path, fn, 0 + n, n, 0, 0, args, kw, xb, zb, after=path != ("l1", "gm"))
        assert refusal is not None, (chip, fn, args, kw)
        msg = str(refusal)
        assert f"tik.{fn}" in msg and f"test_move_fuzz_model.py:{CALL_LINE}" in msg and "Fix" in msg, msg
        assert operand in msg and (not pattern or __import__("re").search(pattern, msg)), msg
        exp = bytearray(zb)
        if path != ("l1", "gm"):
            exp[:32] = xb[:32]                                  # the later legal move still works
        assert got == bytes(exp), (chip, fn, args, kw)


def _pad_kernel(vals, direction):
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (512,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (512,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (512,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 32, 0, 0)
    n, b, dg, sg = (ti.Scalar("int32", init_value=v) for v in vals)
    if direction == "in":
        ti.data_move_pad(ub, x, n, b, dg, sg)
        ti.data_move(y, ub, 0, 1, 32, 0, 0)
    else:
        ti.data_move(y, ub, 0, 1, 32, 0, 0)
        ti.data_move_pad(y, ub, n, b, dg, sg)
    ti.BuildCCE(kernel_name="pad_rt", inputs=[x], outputs=[y])
    return ti


def test_data_move_pad_run_time_odd_burst_reads_as_the_trace_time_refusal():
    """review443/k445: a run-time burst that is no multiple of the element size said "burst of tik.data_move_pad
    (bytes) modulo the element size 2 B = 1 is outside [0, 0]" (the remainder); it names the burst itself, at the
    user's data_move_pad line, with a Fix, in the words of the trace-time refusal."""
    feed = {"x": np.arange(512).astype(np.float16)}
    with open(__file__) as f:
        line = next(i for i, t in enumerate(f, 1) if "ti.data_move_pad(y, ub, n, b, dg, sg)" in t)
    ti = _pad_kernel((1, 33, 0, 0), "out")
    with raises_tik(IllegalOperand) as info:
        ti.tikdb.start_debug(feed, interactive=False)
    text = str(info.value)
    assert text.startswith(f"{__file__}:{line} in `tik.data_move_pad`: operand burst: burst 33 B is not a multiple "
                           f"of the element size 2 B"), text
    assert "Fix: use a multiple of 2" in text and "modulo" not in text and "[0, 0]" not in text, text


def test_data_move_pad_run_time_counts_are_range_checked():
    """k436: a run-time nburst of 4096, a negative gap or an odd float16 burst ran (the rows overlapped or
    split elements); nburst / burst 0 stopped with the PTO op's operand names and limits."""
    feed = {"x": np.arange(512).astype(np.float16)}
    for vals, what in [((4096, 2, 0, 0), r"nburst of tik.data_move_pad \(bursts\) = 4096 is outside \[1, 4095\]"),
                       ((0, 32, 0, 0), r"nburst of tik.data_move_pad \(bursts\) = 0"),
                       ((1, 0, 0, 0), r"burst of tik.data_move_pad \(bytes\) = 0 is outside \[1, 2097151\]"),
                       ((2, 32, -1, 0), r"dst_gap of tik.data_move_pad \(gap\) = -1"),
                       ((2, 32, 0, -1), r"src_gap of tik.data_move_pad \(gap\) = -1"),
                       ((2, 31, 0, 0), r"operand burst: burst 31 B is not a multiple of the element size 2 B")]:
        for direction in ("in", "out"):
            ti = _pad_kernel(vals, direction)
            with raises_tik(PtoError, match=what):
                ti.tikdb.start_debug(feed, interactive=False)
    # one burst never uses its gaps (RUN_TIME_GAP_OF_ONE_BURST, as data_move)
    for direction in ("in", "out"):
        (y,) = _pad_kernel((1, 64, -3, -5), direction).tikdb.start_debug(feed, interactive=False)
        assert (y == feed["x"]).all()
