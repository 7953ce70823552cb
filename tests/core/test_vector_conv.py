"""pto.ub.vconv: tik_api.md §10.7 goldens, every conversion code of every chip table against an
independent neighbour-selection reference, deq, mixed-width geometry, chip legality and errors."""
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, MachineOptions, UnsupportedOp, dtype, get_target, pto, vector_isa

import vector_ref as ref
from vector_harness import REGION, assert_same, bases, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 15))
MODES = {"r": "even", "a": "away", "f": "floor", "c": "ceil", "z": "zero", "o": "odd", "": "even"}


def run_conv(target, src_dt, dst_dt, values, rnd=None, *, deqscale=None, overflow_mode=None):
    m = Machine(target, options=MachineOptions(overflow_mode=overflow_mode))
    src_dt, dst_dt = dtype(src_dt), dtype(dst_dt)
    n = len(values)
    par = 256 // max(src_dt.itemsize, dst_dt.itemsize)
    rep = -(-n // par)
    s = m.ptr("ub", src_dt, 0)
    d = m.ptr("ub", dst_dt, 65536)
    vals = np.zeros(rep * par, dtype=src_dt.storage)
    vals[:n] = values
    m.write(s, vals)
    kw = {}
    if rnd:
        kw["round"] = rnd
    if deqscale is not None:
        kw["deqscale"] = deqscale
    pto.ub.vconv(d, s, rep, **kw)
    return m.read(d, n)


# ----------------------------------------------------------------------------- goldens (tik_api.md §10.7)


@pytest.mark.parametrize("rnd, want", [("r", 0.0), ("f", 0.0), ("c", 1.0), ("a", 1.0), ("z", 0.0)])
def test_golden_f32_to_f32(rnd, want):
    assert run_conv("Ascend910B1", "f32", "f32", [0.5], rnd)[0] == want


@pytest.mark.parametrize("rnd, want", [(None, 0x3800), ("r", 0x3800), ("f", 0x3800), ("z", 0x3800),
                                       ("c", 0x3801), ("a", 0x3801), ("o", 0x3801)])
def test_golden_f32_to_f16(rnd, want):
    out = run_conv("Ascend910B1", "f32", "f16", [0.5 + 2 ** -12], rnd)
    assert out.view(np.uint16)[0] == want


@pytest.mark.parametrize("dst", ["s32", "s64"])
@pytest.mark.parametrize("rnd, want", [("r", 4194304), ("f", 4194304), ("z", 4194304), ("c", 4194305),
                                       ("a", 4194305)])
def test_golden_f32_to_int(dst, rnd, want):
    assert run_conv("Ascend910B1", "f32", dst, [2 ** 22 + 0.5], rnd)[0] == want


def test_golden_chip_restrictions():
    """Ascend910A has f322f16 only with '' and 'o' (tik_api.md §10.7)."""
    assert run_conv("Ascend910A", "f32", "f16", [0.5 + 2 ** -12], "o").view(np.uint16)[0] == 0x3801
    with pytest.raises(UnsupportedOp, match="Ascend910A does not support vconv for f322f16r"):
        run_conv("Ascend910A", "f32", "f16", [1.0], "r")


# ----------------------------------------------------------------------------- independent reference


def _float_type(name):
    return {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}[name]


def expect_float(x64: np.ndarray, t, mode: str) -> np.ndarray:
    """Round exact float64 values to float type ``t`` by choosing between the two neighbours."""
    with np.errstate(all="ignore"):
        cand = x64.astype(t)
        c64 = cand.astype(np.float64)
        lo = np.where(c64 <= x64, cand, np.nextafter(cand, t(-np.inf)))
        hi = np.where(c64 >= x64, cand, np.nextafter(cand, t(np.inf)))
        big = t(ml_dtypes.finfo(t).max)
        lo = np.where(np.isinf(cand) & (x64 > 0), big, lo)
        hi = np.where(np.isinf(cand) & (x64 < 0), -big, hi)
        exact = c64 == x64
        lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
        bits = np.dtype(f"u{np.dtype(t).itemsize}")
        lo_odd = (lo.view(bits) & 1).astype(bool)
        if mode == "floor":
            r = lo
        elif mode == "ceil":
            r = hi
        elif mode == "zero":
            r = np.where(x64 > 0, lo, hi)
        elif mode == "odd":
            r = np.where(lo_odd & np.isfinite(lo64), lo, hi)
            r = np.where(np.isinf(r), np.where(x64 > 0, lo, hi), r)
        else:
            dl, dh = x64 - lo64, hi64 - x64
            tie_hi = (lo_odd) if mode == "even" else (x64 > 0)
            r = np.where(dl < dh, lo, np.where(dh < dl, hi, np.where(tie_hi, hi, lo)))
            r = np.where(np.isinf(hi64) & (x64 > 0), np.where(cand == hi, hi, lo), r)
            r = np.where(np.isinf(lo64) & (x64 < 0), np.where(cand == lo, lo, hi), r)
        return np.where(exact | np.isnan(x64), cand, r)


def expect_int(x64: np.ndarray, t, mode: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        if mode == "even":
            r = np.rint(x64)
        elif mode == "floor":
            r = np.floor(x64)
        elif mode == "ceil":
            r = np.ceil(x64)
        elif mode == "zero":
            r = np.trunc(x64)
        else:
            r = np.copysign(np.floor(np.abs(x64) + 0.5), x64)
        info = np.iinfo(t)
        r = np.nan_to_num(r, nan=0.0)
        out = np.clip(r, float(info.min), float(info.max))
        # clip in float64 can round the int64 maximum up; saturate exactly instead
        res = np.where(r >= float(info.max), info.max, np.where(r <= float(info.min), info.min,
                                                                 out.astype(np.int64) if t != np.uint64 else out))
    return res.astype(t)


_SRC_SAMPLES = {
    "f32": lambda rng, n: np.concatenate([
        rng.standard_normal(n // 2).astype(np.float32) * np.float32(1000),
        rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)]),
    "f16": lambda rng, n: rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16).view(np.float16),
    "bf16": lambda rng, n: rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16),
    "s32": lambda rng, n: rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32),
    "s16": lambda rng, n: rng.integers(-2 ** 15, 2 ** 15, n, dtype=np.int64).astype(np.int16),
    "s64": lambda rng, n: np.concatenate([rng.integers(-2 ** 62, 2 ** 62, n // 2, dtype=np.int64),
                                          rng.integers(-2 ** 24, 2 ** 24, n // 2, dtype=np.int64)]),
    "s8": lambda rng, n: rng.integers(-128, 128, n).astype(np.int8),
    "u8": lambda rng, n: rng.integers(0, 256, n).astype(np.uint8),
}


def _parse(code):
    if code == "deq":
        return "s32", "f16", ""
    names = ("bf16", "f16", "f32", "s32", "s16", "s64", "s8", "u8", "s4")
    for s in names:
        if code.startswith(s + "2"):
            rest = code[len(s) + 1:]
            for d in names:
                if rest.startswith(d):
                    return s, d, rest[len(d):]
    raise ValueError(code)


def _codes():
    """Each conversion code once, on the first of these chips that lists it."""
    out = {}
    for t in ("Ascend910B1", "Ascend310P3", "Ascend910A", "Ascend310"):
        for code in sorted(vector_isa.supported(get_target(t), "vconv")):
            if code != "deq" and not code.endswith("s4"):
                out.setdefault(code, t)
    return sorted(out.items())


CODES = _codes()


@pytest.mark.parametrize("code, target", CODES)
def test_every_conversion_code(code, target):
    src, dst, rnd = _parse(code)
    mode = MODES[rnd]
    rng = np.random.default_rng(zlib.crc32(code.encode()))
    x = _SRC_SAMPLES[src](rng, 256)
    sat = get_target(target).overflow_mode == "saturation"
    got = run_conv(target, src, dst, x, rnd or None)
    sd, dd = dtype(src), dtype(dst)
    if sd.is_int and sd.itemsize == 8:
        x64 = None
    else:
        x64 = x.astype(np.float64)
    if dd.is_float:
        t = _float_type(dst)
        if sd is dd:
            want = {"even": np.rint, "floor": np.floor, "ceil": np.ceil, "zero": np.trunc,
                    "away": lambda v: np.copysign(np.floor(np.abs(v) + 0.5), v)}[mode](x64).astype(t)
        elif x64 is None:      # s64 -> f32: exact rational neighbour selection
            import vector_numerics_ref as nref
            want = nref.int_to_float(x, dst, rounding=mode)
        else:
            want = expect_float(x64, t, mode)
        if sat:
            with np.errstate(all="ignore"):
                w = want.astype(np.float64)
                big = float(ml_dtypes.finfo(t).max)
                want = np.nan_to_num(np.clip(w, -big, big), nan=0.0).astype(t)
        assert_same(got.view(np.uint8), np.asarray(want, dtype=t).view(np.uint8), t, code)
    elif sd.is_float:
        want = expect_int(x64, dd.storage.type, mode)
        np.testing.assert_array_equal(got, want, err_msg=code)
    else:
        info = np.iinfo(dd.storage)
        want = np.clip(x.astype(np.int64), info.min, info.max).astype(dd.storage)
        np.testing.assert_array_equal(got, want, err_msg=code)


def test_deq():
    rng = np.random.default_rng(3)
    x = rng.integers(-2 ** 31, 2 ** 31, 256, dtype=np.int64).astype(np.int32)
    for scale in (0.5, 1e-3, 0.1, 3.0):
        got = run_conv("Ascend910B1", "s32", "f16", x, deqscale=scale)
        want = (x.astype(np.float64) * np.float64(np.float16(scale))).astype(np.float16)
        assert_same(got.view(np.uint8), want.view(np.uint8), np.float16, f"deq {scale}")
    got = run_conv("Ascend310P3", "s32", "f16", np.array([2 ** 30, -2 ** 30], np.int32), deqscale=1.0)
    assert list(got) == [65504, -65504]            # saturation mode chip clamps


def test_exact_widening_and_narrowing_ints():
    x = np.arange(-3, 253, dtype=np.int64)
    got = run_conv("Ascend910B1", "u8", "f16", x.clip(0, 255).astype(np.uint8))
    np.testing.assert_array_equal(got, x.clip(0, 255).astype(np.float16))
    got = run_conv("Ascend910B1", "s32", "s16", np.array([70000, -70000, 5] + [0] * 61, np.int32))
    assert list(got[:3]) == [32767, -32768, 5]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), repeat=st.integers(0, 4), blk=st.lists(st.integers(0, 2), min_size=2, max_size=2),
       rep=st.lists(st.integers(0, 9), min_size=2, max_size=2), base=bases(2), unit=st.integers(0, 3),
       narrowing=st.booleans())
def test_mixed_width_geometry(data, repeat, blk, rep, base, unit, narrowing):
    """f32 -> f16 and f16 -> f32: the narrow operand touches half the blocks; any strides, masks, overlap."""
    mask = data.draw(masks(64))
    src_dt, dst_dt = ("f32", "f16") if narrowing else ("f16", "f32")
    m = machine("Ascend910B1")
    before = ub_bytes(m).copy()
    d, s = m.ptr("ub", dst_dt, base[0]), m.ptr("ub", src_dt, base[1])
    kw = {} if mask is None else {"mask": mask}
    pto.ub.vconv(d, s, repeat, **kw, blk_stride=tuple(blk), rep_stride=tuple(rep), stride_unit=unit)
    want = before.copy()
    _, lanes = ref.active_lanes(64, mask, repeat)
    sd, dd = dtype(src_dt).storage, dtype(dst_dt).storage
    ops = [dict(name="dst", base=base[0], dtype=dd, blk=blk[0], rep=rep[0], role="w"),
           dict(name="src", base=base[1], dtype=sd, blk=blk[1], rep=rep[1], role="r")]
    ref.run_lanewise(want, ops, 64, lanes, lambda src: ref.round_to(float(src), dd), unit=unit)
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], dd, "vconv")


# ----------------------------------------------------------------------------- errors


def test_conv_errors():
    m = Machine("Ascend910B1")
    f32, f16, s32 = m.ptr("ub", "f32", 0), m.ptr("ub", "f16", 1024), m.ptr("ub", "s32", 2048)
    with pytest.raises(IllegalOperand, match="without a rounding mode") as e:
        pto.ub.vconv(f32, f32, 1)
    assert e.value.operand == "round"
    with pytest.raises(IllegalOperand, match="s32 to f16") as e:
        pto.ub.vconv(f16, f32, 1, deqscale=0.5)
    assert e.value.operand == "deqscale"
    with pytest.raises(IllegalOperand, match="no rounding mode"):
        pto.ub.vconv(f16, s32, 1, round="r", deqscale=0.5)
    with pytest.raises(IllegalOperand, match="is not one of"):
        pto.ub.vconv(f16, f32, 1, round="q")
    with pytest.raises(UnsupportedOp, match="Ascend910B1 does not support vconv for f162s32") as e:
        pto.ub.vconv(s32, f16, 1)
    assert "f162s32r" in e.value.limit
    # the fix names the missing rounding clause (it said "convert with pto.ub.vconv", the op being called)
    assert "give round= one of" in e.value.hint and "'r' (nearest-even)" in e.value.hint
    p = Machine("Ascend310P3")
    with pytest.raises(UnsupportedOp, match="packed 4-bit"):
        pto.ub.vconv(p.ptr("ub", "s4", 0), p.ptr("ub", "f16", 1024), 1)
    old = Machine("Ascend310")
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vconv for f322s32r"):
        pto.ub.vconv(old.ptr("ub", "s32", 0), old.ptr("ub", "f32", 1024), 1, round="r")
