"""Differential regression of the TIK vector API against an independent reading of tik_api.md §9.

A compact copy of the fuzzer of helper task k421 (its full version, with vec_conv, reductions,
cmpv/sel, transposes, overlap, counter mode and stride units, ran ~30k cases without a
disagreement; see the branch's report). The model below is written from the docs only
(no import of pto_core or of the other test references):

* element address of lane ``e`` of repeat ``r`` (§9.1, stride_unit 0):
  ``base + r*rep_stride*E + (e // E)*blk_stride*E + e % E``, ``E = 32 / itemsize``;
* masks: a count ``N`` = lanes ``0..N-1``; ``[hi, lo]`` = bit ``i`` of ``lo`` is lane ``i``,
  bit ``j`` of ``hi`` lane ``64 + j``; inactive lanes keep their bytes;
* repeats run in order; float results are one IEEE rounding of the exact value, clamped
  (+-inf -> +-max, NaN -> 0) on the saturation-mode chips (numerics.md §3), ints wrap;
* illegal calls (repeat 0 / 256, empty or oversized masks, a high mask word for 32-bit
  operands, misaligned or overflowing operands, dtypes the chip lacks per Appendix A)
  are refused with a PtoError naming the API, the user's line and a Fix, and change nothing.
"""
import inspect
import warnings

import numpy as np
from hypothesis import given, settings, strategies as st

from pto_core.errors import PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

CHIPS = ("Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1")
SATURATING = {"Ascend310", "Ascend910", "Ascend310P3"}        # numerics.md §3 (910B: IEEE inf/NaN)
F16, F32, S32, S16, U16 = (np.dtype(t) for t in (np.float16, np.float32, np.int32, np.int16, np.uint16))
TIK_NAME = {F16: "float16", F32: "float32", S32: "int32", S16: "int16", U16: "uint16"}
#: Appendix A: vadd/vsub/vmul/vmax/vmin rows; vadds/vmuls rows
BINARY_DTYPES = {c: (F16, F32, S32) if c in ("Ascend310", "Ascend910") else (F16, F32, S32, S16) for c in CHIPS}
SCALAR_DTYPES = {c: (F16, F32) if c in ("Ascend310", "Ascend910") else (F16, F32, S32, S16) for c in CHIPS}
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def lanes_of(mask, par):
    if isinstance(mask, list):
        bits = (int(mask[0]) << 64) | int(mask[1])
        return np.array([i for i in range(par) if bits >> i & 1], dtype=np.int64)
    return np.arange(mask, dtype=np.int64)


def addr(r, lanes, base, blk, rep, e):
    return base + r * rep * e + (lanes // e) * blk * e + lanes % e


def extent(base, lanes, repeat, blk, rep, e):
    return int(max(addr(r, lanes, base, blk, rep, e).max() for r in (0, repeat - 1))) + 1


def compute(op, dt, chip, a, b):
    if dt.kind == "f":
        if op in ("max", "min"):
            return OPS[op](a, b)
        with np.errstate(over="ignore"):
            v = OPS[op](a.astype(np.float64), b.astype(np.float64)).astype(dt)
        if chip in SATURATING:
            v = np.clip(np.where(np.isnan(v), dt.type(0), v), np.finfo(dt).min, np.finfo(dt).max).astype(dt)
        return v
    wide = OPS[op](a.astype(np.int64), b.astype(np.int64))
    return (wide & ((1 << (8 * dt.itemsize)) - 1)).astype(np.uint64).astype(f"u{dt.itemsize}").view(dt)


def model(op, dt, chip, bufs, bases, blks, reps, mask, repeat, scalar=None):
    """Sequential per-repeat reference: read the sources of a repeat, then write dst."""
    out = bufs["d"].copy()
    par = 256 // dt.itemsize
    e = 32 // dt.itemsize
    lanes = lanes_of(mask, par)
    for r in range(repeat):
        ia = addr(r, lanes, bases[1], blks[1], reps[1], e)
        b = (np.full(lanes.size, np.array(scalar).astype(dt)) if scalar is not None
             else bufs["b"][addr(r, lanes, bases[2], blks[2], reps[2], e)])
        out[addr(r, lanes, bases[0], blks[0], reps[0], e)] = compute(op, dt, chip, bufs["a"][ia], b)
    return out


def call(ti, api, args):
    return getattr(ti, api)(*args)   # the user's line the refusals must name


CALL_LINE = inspect.getsourcelines(call)[1] + 1


def run_kernel(chip, bufs, api, args_of):
    """GM -> UB, one vector call, UB -> GM. Returns (outputs, refusal); a refused call is caught and
    the kernel still runs, so the outputs show that the refusal changed nothing."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    gm, ub = {}, {}
    for name, arr in bufs.items():
        gm[name] = ti.Tensor(TIK_NAME[arr.dtype], (arr.size,), name=name, scope=tik.scope_gm)
        ub[name] = ti.Tensor(TIK_NAME[arr.dtype], (arr.size,), name=name + "_ub", scope=tik.scope_ubuf)
        ti.data_move(ub[name], gm[name], 0, 1, arr.nbytes // 32, 0, 0)
    refusal = None
    try:
        call(ti, api, args_of(ub))
    except PtoError as exc:
        refusal = exc
    for name, arr in bufs.items():
        ti.data_move(gm[name], ub[name], 0, 1, arr.nbytes // 32, 0, 0)
    ti.BuildCCE(kernel_name="fuzz", inputs=list(gm.values()), outputs=list(gm.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = ti.tikdb.start_debug(feed_dict={k: v.copy() for k, v in bufs.items()}, interactive=False)
    return dict(zip(bufs, outs)), refusal


def check_refusal(exc, api, outs, bufs):
    msg = str(exc)
    assert api in msg, msg
    assert f"{__file__.rsplit('/', 1)[-1]}:{CALL_LINE}" in msg, msg
    assert "Fix" in msg, msg
    for name, arr in bufs.items():
        assert outs[name].tobytes() == arr.tobytes(), f"refused {api} changed {name}"


@st.composite
def masks(draw, par):
    if draw(st.booleans()):
        return draw(st.integers(1, par))
    lo = draw(st.integers(1, 2 ** 64 - 1))
    hi = draw(st.integers(0, 2 ** 64 - 1)) if par == 128 else 0
    return [hi, lo]


def data(draw, dt, n):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    if dt.kind == "f":
        if seed % 2:                         # large: f16 sums and products overflow (saturation vs inf)
            return (rng.choice([-1.0, 1.0], n) * rng.uniform(2.0e4, 6.0e4, n)).astype(dt)
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=np.int64, endpoint=True).astype(dt)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_binary_and_scalar_ops_match_the_model(draw):
    """vec_<op> / legacy v<op> (block strides) / vec_adds, vec_muls over chips, dtypes, masks, repeats,
    repeat strides (0 = re-read, < 8 overlap within a source, > 8 gaps) and block-aligned offsets."""
    d = draw.draw
    chip = d(st.sampled_from(CHIPS))
    form = d(st.sampled_from(["vec", "legacy", "scalar"]))
    op = d(st.sampled_from(["add", "mul"] if form == "scalar" else list(OPS)))
    dt = d(st.sampled_from((SCALAR_DTYPES if form == "scalar" else BINARY_DTYPES)[chip]))
    par, e = 256 // dt.itemsize, 32 // dt.itemsize
    mask = d(masks(par))
    repeat = d(st.integers(1, 6))
    blks = [d(st.integers(1, 3)), d(st.integers(0, 3)), d(st.integers(0, 3))] if form == "legacy" else [1, 1, 1]
    reps = [d(st.sampled_from([8, 8, 0, 3, 12])) if i else d(st.sampled_from([8, 9, 16, 1])) for i in range(3)]
    bases = [e * d(st.integers(0, 3)) for _ in range(3)]
    lanes = lanes_of(mask, par)
    bufs = {}
    for name, base, b, r in zip("dab", bases, blks, reps):
        size = -(-extent(base, lanes, repeat, b, r, e) // e) * e + e * d(st.integers(0, 2))
        bufs[name] = data(d, dt, size)
    scalar = None
    if form == "scalar":
        scalar = float(np.float16(d(st.floats(-8, 8)))) if dt.kind == "f" else d(st.integers(-300, 300))
        del bufs["b"]
    api = {"vec": f"vec_{op}", "legacy": f"v{op}", "scalar": f"vec_{op}s"}[form]

    def args_of(ub):
        ops = [ub[n][b] if b else ub[n] for n, b in zip(bufs, bases)]
        if form == "vec":
            return [mask, *ops, repeat, *reps]
        if form == "legacy":
            return [mask, *ops, repeat, *blks, *reps]
        return [mask, ops[0], ops[1], scalar, repeat, reps[0], reps[1]]
    outs, refusal = run_kernel(chip, bufs, api, args_of)
    assert refusal is None, refusal
    want = model(op, dt, chip, bufs, bases, blks, reps, mask, repeat, scalar)
    assert outs["d"].tobytes() == want.tobytes(), (api, chip, dt, mask, repeat, blks, reps, bases)
    for name in set(bufs) - {"d"}:
        assert outs[name].tobytes() == bufs[name].tobytes()


ILLEGAL = ["repeat0", "repeat256", "mask0", "mask_over", "mask_bits_zero", "mask_hi_32bit", "misaligned",
           "overflow", "dtype", "rep_stride256"]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_illegal_calls_are_refused_and_change_nothing(draw):
    d = draw.draw
    chip = d(st.sampled_from(CHIPS))
    kind = d(st.sampled_from(ILLEGAL))
    api = d(st.sampled_from(["vec_add", "vec_max", "vadd", "vmul"]))
    legacy = not api.startswith("vec_")
    dt = F32 if kind == "mask_hi_32bit" else d(st.sampled_from(BINARY_DTYPES[chip]))
    if kind == "dtype":
        dt = S16 if chip in ("Ascend310", "Ascend910") else U16
    e, par = 32 // dt.itemsize, 256 // dt.itemsize
    mask = {"mask0": 0, "mask_over": par + d(st.integers(1, 8)), "mask_bits_zero": [0, 0],
            "mask_hi_32bit": [d(st.integers(1, 2 ** 64 - 1)), 1]}.get(kind, par)
    repeat = {"repeat0": 0, "repeat256": 256}.get(kind, d(st.integers(1, 3)))
    reps = [8, 8, 256 if kind == "rep_stride256" else 8]
    n = 8 * e * 4
    bufs = {k: data(d, dt, n) for k in "dab"}
    offset = d(st.integers(1, e - 1)) if kind == "misaligned" and e > 1 else 0
    if kind == "misaligned" and e == 1:
        offset = 0
    start = n - e if kind == "overflow" else offset

    def args_of(ub):
        ops = [ub["d"][start] if start else ub["d"], ub["a"], ub["b"]]
        return [mask, *ops, repeat, *([1, 1, 1] if legacy else []), *reps]
    outs, refusal = run_kernel(chip, bufs, api, args_of)
    assert refusal is not None, (kind, api, chip, dt)
    check_refusal(refusal, api, outs, bufs)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_conversions_round_as_documented(draw):
    """vec_conv f32 -> f16 with every rounding mode the chip lists (§9.6, §10.7), and f16 -> s32 with
    r/a/f/c/z: the exact value rounded once by the mode (ties as named), ints saturate."""
    d = draw.draw
    chip = d(st.sampled_from(CHIPS))
    to_int = d(st.booleans())
    if to_int:
        modes = {"Ascend310": ["round", "floor", "ceil"]}.get(chip, ["round", "away-zero", "floor", "ceil", "to-zero"])
        src_dt, dst_dt = F16, S32
    else:
        modes = {"Ascend310": ["none"], "Ascend910": ["none", "odd"], "Ascend310P3": ["none", "odd"]}.get(
            chip, ["none", "round", "floor", "ceil", "away-zero", "to-zero", "odd"])
        src_dt, dst_dt = F32, F16
    mode = d(st.sampled_from(modes))
    repeat = d(st.integers(1, 3))
    mask = d(st.integers(1, 64))
    rng = np.random.default_rng(d(st.integers(0, 2 ** 32 - 1)))
    ulp_scale = 2.0 ** rng.integers(-14, 15, 64 * repeat)
    src = ((rng.integers(-2048, 2048, 64 * repeat) + rng.choice([0.0, 0.5, 0.25, 0.75, 0.3], 64 * repeat))
           * (1.0 if to_int else ulp_scale / 1024)).astype(src_dt)
    dst = np.full(64 * repeat, 7, dst_dt)
    outs, refusal = run_kernel(chip, {"d": dst, "s": src}, "vec_conv",
                               lambda ub: [mask, mode, ub["d"], ub["s"], repeat, 8 if to_int else 4, 4 if to_int else 8])
    assert refusal is None, refusal
    x = src.astype(np.float64)
    want = dst.copy()
    for r in range(repeat):
        v = x[r * 64:r * 64 + mask]
        want[r * 64:r * 64 + mask] = round_to(v, dst_dt, mode, chip)
    assert outs["d"].tobytes() == want.tobytes(), (chip, mode, to_int)


def round_to(v, dt, mode, chip):
    """Round exact float64 values ``v`` to ``dt`` with a TIK round_mode (§9.6)."""
    if dt.kind == "i":
        f = {"round": np.rint, "floor": np.floor, "ceil": np.ceil, "to-zero": np.trunc,
             "away-zero": lambda y: np.sign(y) * np.floor(np.abs(y) + 0.5)}[mode]
        return np.clip(f(v), np.iinfo(dt).min, np.iinfo(dt).max).astype(dt)
    near = v.astype(dt)                                  # nearest-even
    out = near.copy()
    if mode not in ("none", "round"):
        bits = near.view(np.uint16).astype(np.int64)
        below = near.astype(np.float64) > v              # rounded up: the other neighbour is one step down
        step = np.where((near.astype(np.float64) > 0) == below, -1, 1)
        step = np.where(near == 0, np.where(v > 0, 1, -1), step)
        other_bits = np.where(near == 0, np.where(v > 0, 1, 0x8001), bits + step)
        other = other_bits.astype(np.uint16).view(dt)
        lo = np.where(below, other, near)
        hi = np.where(below, near, other)
        exact = near.astype(np.float64) == v
        pick = {"floor": lo, "ceil": hi, "to-zero": np.where(v > 0, lo, hi),
                "away-zero": np.where((v - lo.astype(np.float64)) == (hi.astype(np.float64) - v),
                                      np.where(v > 0, hi, lo), near),
                "odd": np.where(lo.view(np.uint16) & 1, lo, hi)}[mode]
        out = np.where(exact, near, pick).astype(dt)
    if chip in SATURATING:
        out = np.clip(out, np.finfo(dt).min, np.finfo(dt).max).astype(dt)
    return out
