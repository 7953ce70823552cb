"""Lane-wise pto.ub ops: every op against a per-lane reference written from the documented semantics,
over random geometries, dtypes, masks and both overflow modes; exhaustive f16 sweeps; error paths."""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, MachineOptions, UnsupportedOp, dtype, pto, vector_isa, get_target

import vector_ref as ref
from vector_harness import REGION, assert_same, bases, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 15))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------- reference semantics


def f64(x):
    return np.float64(x)


def fin(x, dt, sat):
    """Exact-ish f64 value -> dst float type, rounded once; ACL saturation if ``sat``."""
    with np.errstate(all="ignore"):
        r = dt.type(x)
    return ref.saturate(r, dt) if sat else r


def vmax(a, b):
    """IEEE 754-2019 maximum on scalars."""
    if np.isnan(a) or np.isnan(b):
        return a if np.isnan(a) else b
    if a == b:
        return b if math.copysign(1, float(a)) < 0 else a
    return a if a > b else b


def vmin(a, b):
    """IEEE 754-2019 minimum on scalars."""
    if np.isnan(a) or np.isnan(b):
        return a if np.isnan(a) else b
    if a == b:
        return a if math.copysign(1, float(a)) < 0 else b
    return a if a < b else b


def is_float(dt):
    return np.dtype(dt).kind == "f" or dt == np.dtype(ml_dtypes.bfloat16)


def arith2(op):
    def make(dt, sat, scalar):
        if is_float(dt):
            return lambda src0, src1: fin(op(f64(src0), f64(src1)), dt, sat)
        return lambda src0, src1: ref.wrap(op(int(src0), int(src1)), dt)
    return make


def relu_of(make):
    def outer(dt, sat, scalar):
        inner = make(dt, sat, scalar)
        zero = dt.type(0)
        return lambda **kw: vmax(inner(**kw), zero) if is_float(dt) else max(inner(**kw), zero)
    return outer


def select2(fn):
    return lambda dt, sat, scalar: (lambda src0, src1: fn(src0, src1))


def bitwise2(op):
    return lambda dt, sat, scalar: (lambda src0, src1: ref.wrap(op(int(src0), int(src1)), dt))


def unary_f64(fn):
    def make(dt, sat, scalar):
        def g(src):
            with np.errstate(all="ignore"):
                return fin(fn(f64(src)), dt, sat)
        return g
    return make


def vs_arith(op):
    def make(dt, sat, scalar):
        if is_float(dt):
            s = f64(dt.type(scalar))
            return lambda src: fin(op(f64(src), s), dt, sat)
        return lambda src: ref.wrap(op(int(src), int(scalar)), dt)
    return make


def vs_select(fn):
    return lambda dt, sat, scalar: (lambda src: fn(src, dt.type(scalar)) if is_float(dt)
                                    else dt.type(fn(int(src), int(scalar))))


def lrelu(dt, sat, scalar):
    s = f64(dt.type(scalar))
    return lambda src: fin(f64(src), dt, sat) if src >= 0 else fin(f64(src) * s, dt, sat)


def shl(dt, sat, scalar):
    return lambda src: ref.wrap(int(src) << int(scalar), dt)


def shr(round_en):
    def make(dt, sat, scalar):
        n = int(scalar)

        def g(src):
            x = int(src)
            if round_en and n > 0:
                x += 1 << (n - 1)
            return ref.wrap(x >> n, dt)
        return g
    return make


def fused(expr):
    """dst = expr(...) exactly in f64, rounded once (src dtypes may be narrower than dst)."""
    def make(dt, sat, scalar):
        def g(**kw):
            vals = {k: f64(v) for k, v in kw.items()}
            with np.errstate(all="ignore"):
                return fin(expr(vals, scalar), dt, sat)
        return g
    return make


def mulconv(dt, sat, scalar):
    def g(src0, src1):
        p = fin(f64(src0) * f64(src1), np.dtype(np.float16), sat)
        if np.isnan(p):
            return dt.type(0)
        info = np.iinfo(dt)
        return dt.type(min(max(np.rint(float(p)), info.min), info.max))
    return g


def adddeqrelu(dt, sat, scalar):
    def g(src0, src1):
        s = ref.wrap(int(src0) + int(src1), np.dtype(np.int32))
        v = fin(float(s) * float(np.float16(scalar)), dt, sat)
        return vmax(v, dt.type(0))
    return g


# name -> (memory operands and roles, scalar kind, reference maker, targets to try)
OPS = {
    "vadd": (("dst:w", "src0:r", "src1:r"), None, arith2(lambda a, b: a + b)),
    "vsub": (("dst:w", "src0:r", "src1:r"), None, arith2(lambda a, b: a - b)),
    "vmul": (("dst:w", "src0:r", "src1:r"), None, arith2(lambda a, b: a * b)),
    "vdiv": (("dst:w", "src0:r", "src1:r"), None, arith2(lambda a, b: a / b)),
    "vmax": (("dst:w", "src0:r", "src1:r"), None, select2(vmax)),
    "vmin": (("dst:w", "src0:r", "src1:r"), None, select2(vmin)),
    "vand": (("dst:w", "src0:r", "src1:r"), None, bitwise2(lambda a, b: a & b)),
    "vor": (("dst:w", "src0:r", "src1:r"), None, bitwise2(lambda a, b: a | b)),
    "vaddrelu": (("dst:w", "src0:r", "src1:r"), None, relu_of(arith2(lambda a, b: a + b))),
    "vsubrelu": (("dst:w", "src0:r", "src1:r"), None, relu_of(arith2(lambda a, b: a - b))),
    "vmla": (("dst:rw", "src0:r", "src1:r"), None, fused(lambda v, s: v["src0"] * v["src1"] + v["dst"])),
    "vmadd": (("dst:rw", "src0:r", "src1:r"), None, fused(lambda v, s: v["src0"] * v["dst"] + v["src1"])),
    "vmaddrelu": (("dst:rw", "src0:r", "src1:r"), None,
                  relu_of(fused(lambda v, s: v["src0"] * v["dst"] + v["src1"]))),
    "vmulconv": (("dst:w", "src0:r", "src1:r"), None, mulconv),
    "vadddeqrelu": (("dst:w", "src0:r", "src1:r"), "float", adddeqrelu),
    "vabs": (("dst:w", "src:r"), None, lambda dt, sat, s: (lambda src: abs(src) if is_float(dt)
                                                           else ref.wrap(abs(int(src)), dt))),
    "vrelu": (("dst:w", "src:r"), None, lambda dt, sat, s: (lambda src: vmax(src, dt.type(0)) if is_float(dt)
                                                            else max(src, dt.type(0)))),
    "vnot": (("dst:w", "src:r"), None, lambda dt, sat, s: (lambda src: ref.wrap(~int(src), dt))),
    "vexp": (("dst:w", "src:r"), None, unary_f64(np.exp)),
    "vln": (("dst:w", "src:r"), None, unary_f64(np.log)),
    "vsqrt": (("dst:w", "src:r"), None, unary_f64(np.sqrt)),
    "vrec": (("dst:w", "src:r"), None, unary_f64(lambda x: 1.0 / x)),
    "vrsqrt": (("dst:w", "src:r"), None, unary_f64(lambda x: 1.0 / np.sqrt(x))),
    "vadds": (("dst:w", "src:r"), "value", vs_arith(lambda a, b: a + b)),
    "vmuls": (("dst:w", "src:r"), "value", vs_arith(lambda a, b: a * b)),
    "vmaxs": (("dst:w", "src:r"), "value", vs_select(vmax)),
    "vmins": (("dst:w", "src:r"), "value", vs_select(vmin)),
    "vlrelu": (("dst:w", "src:r"), "value", lrelu),
    "vshl": (("dst:w", "src:r"), "shift", shl),
    "vshr": (("dst:w", "src:r"), "shift", shr(False)),
    "vaxpy": (("dst:rw", "src:r"), "value", fused(lambda v, s: f64(s) * v["src"] + v["dst"])),
}

TARGETS = ("Ascend910B1", "Ascend310P3", "Ascend310", "Ascend310B1")


def _cases():
    """Each (op, signature) once, on the first chip that has it; vadd/vmul/vexp on every chip."""
    out = []
    for name in OPS:
        seen = set()
        for target in TARGETS:
            for sig in sorted(vector_isa.supported(get_target(target), name)):
                if sig not in seen or name in ("vadd", "vmul", "vexp"):
                    seen.add(sig)
                    out.append((name, target, sig))
    return out


CASES = _cases()


def _dtypes(name, sig):
    mem = OPS[name][0]
    names = [m.split(":")[0] for m in mem]
    if len(sig) <= 4:                       # single type
        return {n: dtype(sig) for n in names}
    # mixed signature: dst then sources (f32f16f16, u8f16f16, f16s32s32)
    codes = []
    rest = sig
    while rest:
        for code in ("bf16", "f16", "f32", "s32", "s16", "u16", "s8", "u8"):
            if rest.startswith(code):
                codes.append(code)
                rest = rest[len(code):]
                break
    return {n: dtype(codes[min(i, len(codes) - 1)]) for i, n in enumerate(names)}


def test_every_lanewise_op_has_a_reference_case():
    covered = {c[0] for c in CASES}
    assert covered == set(OPS)
    from pto_core.ops.vector_elementwise import LANEWISE
    assert {r.name for r in LANEWISE} == set(OPS)


@pytest.mark.parametrize("name,target,sig", CASES)
@SETTINGS
@given(data=st.data())
def test_lanewise_matches_reference(name, target, sig, data):
    mem, scalar_kind, make = OPS[name]
    dts = _dtypes(name, sig)
    sat = get_target(target).overflow_mode == "saturation"
    par = 256 // max(d.itemsize for d in dts.values())
    repeat = data.draw(st.integers(0, 3), "repeat")
    unit = data.draw(st.integers(0, 3), "unit")
    blk = data.draw(st.lists(st.integers(0, 2), min_size=len(mem), max_size=len(mem)), "blk")
    rep = data.draw(st.lists(st.integers(0, 10), min_size=len(mem), max_size=len(mem)), "rep")
    base = data.draw(bases(len(mem)), "base")
    if len({d.name for d in dts.values()}) > 1:
        # mixed widths: keep dst apart from the sources, or NaN payloads (unspecified) would be
        # reinterpreted at another width by later repeats
        base = [base[0] // 64 * 32] + [8192 + b for b in base[1:]]
    mask = data.draw(masks(par), "mask")
    dst_dt = dts["dst"]
    scalar = None
    if scalar_kind == "value":
        src_dt = dts.get("src", dst_dt)
        scalar = data.draw(st.floats(-8, 8, width=16) if src_dt.is_float else
                           st.integers(max(src_dt.min, -300), min(src_dt.max, 300)), "scalar")
    elif scalar_kind == "shift":
        scalar = data.draw(st.integers(0, dst_dt.bits), "shift")
    elif scalar_kind == "float":
        scalar = data.draw(st.floats(-4, 4, width=16), "deqscale")
    m = machine(target, seed=data.draw(st.integers(0, 3), "seed"))
    before = ub_bytes(m).copy()
    names = [x.split(":")[0] for x in mem]
    ptrs = [m.ptr("ub", dts[n], b) for n, b in zip(names, base)]
    args = ptrs + ([scalar] if scalar is not None else []) + [repeat]
    kw = {} if mask is None else {"mask": mask}
    getattr(pto.ub, name)(*args, **kw, blk_stride=tuple(blk), rep_stride=tuple(rep), stride_unit=unit)
    want = before.copy()
    _, lanes = ref.active_lanes(par, mask, repeat)
    ops = [dict(name=n, base=b, dtype=dts[n].storage, blk=bb, rep=rr, role=x.split(":")[1])
           for n, b, bb, rr, x in zip(names, base, blk, rep, mem)]
    fn = make(dst_dt.storage, sat and dst_dt.is_float, scalar)
    ref.run_lanewise(want, ops, par, lanes, fn, unit=unit)
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], dst_dt.storage, f"{name} {sig} {target}")


def test_vshr_rounding_matches_reference():
    m = machine("Ascend910B1")
    d, s = m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 512)
    vals = np.array([-7, -6, -5, -1, 0, 1, 5, 6, 7, 2 ** 31 - 1, -2 ** 31] + [3] * 53, dtype=np.int32)
    m.write(s, vals)
    pto.ub.vshr(d, s, 1, 1, round=True)
    want = [ref.wrap((int(v) + 1) >> 1, np.dtype(np.int32)) for v in vals]
    np.testing.assert_array_equal(m.read(d, 64), want)


# ----------------------------------------------------------------------------- exhaustive / bulk numerics


def _all_f16():
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _run_unary_all(m, name, x):
    s = m.ptr("ub", "f16", 0)
    m.write(s, x)
    for k in range(0, 512, 255):
        n = min(255, 512 - k)
        getattr(pto.ub, name)(s + k * 128, s + k * 128, n)      # in place
    return m.read(s, 1 << 16)


@pytest.mark.parametrize("name, fn", [
    ("vexp", math.exp), ("vln", math.log), ("vsqrt", math.sqrt), ("vrec", lambda v: 1.0 / v),
    ("vrsqrt", lambda v: 1.0 / math.sqrt(v)),
])
def test_transcendentals_are_correctly_rounded_over_all_f16(name, fn):
    """Modelled precision: exact (libm f64) then one nearest-even rounding, for all 65536 inputs."""
    x = _all_f16()
    got = _run_unary_all(Machine("Ascend910B1"), name, x)
    want = np.empty_like(x)
    for i, v in enumerate(x.astype(float)):
        try:
            r = fn(v)
        except (ValueError, ZeroDivisionError):
            r = (math.copysign(math.inf, v) if name in ("vrec",) else
                 (-math.inf if name == "vln" and v == 0 else
                  (math.copysign(math.inf, v) if name == "vrsqrt" and v == 0 else math.nan)))
        except OverflowError:
            r = math.inf
        want[i] = np.float16(r) if not math.isnan(r) else np.float16(np.nan)
    assert_same(got.view(np.uint8), want.view(np.uint8), np.float16, name)


@pytest.mark.parametrize("name, op", [("vadd", np.add), ("vsub", np.subtract), ("vmul", np.multiply),
                                      ("vdiv", np.divide)])
def test_f16_binary_is_correctly_rounded(name, op):
    """f16 via f32 equals one rounding of the exact result (f64 reference) on 64k random pairs incl. specials."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 16, 1 << 15, dtype=np.uint16).view(np.float16)
    b = rng.integers(0, 1 << 16, 1 << 15, dtype=np.uint16).view(np.float16)
    m = Machine("Ascend910B1")
    pa, pb, pd = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1 << 16), m.ptr("ub", "f16", 1 << 17)
    m.write(pa, a)
    m.write(pb, b)
    getattr(pto.ub, name)(pd, pa, pb, 255)
    getattr(pto.ub, name)(pd + 255 * 128, pa + 255 * 128, pb + 255 * 128, 1)
    with np.errstate(all="ignore"):
        want = op(a.astype(np.float64), b.astype(np.float64)).astype(np.float16)
    assert_same(m.read(pd, 1 << 15).view(np.uint8), want.view(np.uint8), np.float16, name)


def test_overflow_modes():
    big = np.full(128, 65504, np.float16)
    nan = np.full(128, np.nan, np.float16)
    for mode, want_over, want_nan in (("inf_nan", np.inf, None), ("saturation", 65504, 0)):
        m = Machine("Ascend910B1", options=MachineOptions(overflow_mode=mode))
        a, n, d = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 256), m.ptr("ub", "f16", 512)
        m.write(a, big)
        m.write(n, nan)
        pto.ub.vadd(d, a, a, 1)
        assert (m.read(d, 128) == want_over).all()
        pto.ub.vmuls(d, n, 2.0, 1)
        out = m.read(d, 128)
        assert np.isnan(out).all() if want_nan is None else (out == want_nan).all()
    # chip default: Ascend310 saturates, A2A3 does not
    assert Machine("Ascend310").overflow_mode == "saturation" and Machine("A2A3").overflow_mode == "inf_nan"


def test_integer_arithmetic_wraps():
    m = Machine("Ascend910B1")
    a, b, d = m.ptr("ub", "s16", 0), m.ptr("ub", "s16", 256), m.ptr("ub", "s16", 512)
    m.write(a, np.full(128, 32767, np.int16))
    m.write(b, np.full(128, 2, np.int16))
    pto.ub.vadd(d, a, b, 1)
    assert (m.read(d, 128) == -32767).all()
    pto.ub.vmul(d, a, b, 1)
    assert (m.read(d, 128) == -2).all()


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("target, name, dt, match", [
    ("Ascend910A", "vmaxs", "f16", "Ascend910A has no vmaxs instruction"),
    ("Ascend910B1", "vsubrelu", "f16", "Ascend910B1 has no vsubrelu instruction"),
    ("Ascend310P3", "vshl", "s16", "Ascend310P3 has no vshl instruction"),
    ("Ascend310", "vexp", "f32", "Ascend310 does not support vexp for f32"),
    ("Ascend310", "vrelu", "f32", "Ascend310 does not support vrelu for f32"),
])
def test_chip_legality(target, name, dt, match):
    m = Machine(target)
    p = m.ptr("ub", dt, 0)
    nmem = len(OPS[name][0])
    args = [p] * nmem + ([1] if OPS[name][1] else []) + [1]
    with pytest.raises(UnsupportedOp, match=match):
        getattr(pto.ub, name)(*args)


def test_scalar_errors():
    m = Machine("Ascend910B1")
    i16, f16 = m.ptr("ub", "s16", 0), m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand, match="does not fit s16") as e:
        pto.ub.vadds(i16, i16, 40000, 1)
    assert e.value.operand == "scalar" and e.value.limit == "[-32768, 32767]"
    with pytest.raises(IllegalOperand, match="integer scalar"):
        pto.ub.vadds(i16, i16, 1.5, 1)
    with pytest.raises(IllegalOperand, match="outside \\[0, 16\\]") as e:
        pto.ub.vshl(i16, i16, 17, 1)
    assert e.value.operand == "scalar"
    with pytest.raises(IllegalOperand, match="expects a number"):
        pto.ub.vmuls(f16, f16, "2", 1)


def test_mixed_precision_forms():
    m = Machine("Ascend910B1")
    d, s = m.ptr("ub", "f32", 0), m.ptr("ub", "f16", 1024)
    m.write(d, np.ones(64, np.float32))
    m.write(s, np.full(64, 3, np.float16))
    pto.ub.vaxpy(d, s, 0.5, 1)
    np.testing.assert_array_equal(m.read(d, 64), np.full(64, 2.5, np.float32))
    with pytest.raises(IllegalOperand, match="source dtypes differ"):
        pto.ub.vmla(d, s, m.ptr("ub", "f32", 2048), 1)
    with pytest.raises(UnsupportedOp, match="f16f32f32"):
        pto.ub.vaxpy(m.ptr("ub", "f16", 0), m.ptr("ub", "f32", 1024), 1.0, 1)


def test_vector_dup_dtypes_and_values():
    m = Machine("Ascend910B1")
    d = m.ptr("ub", "bf16", 0)
    pto.ub.vector_dup(d, 1.00390625, 1, mask=3)            # rounds to bf16 nearest-even: 1.0
    out = m.read(d, 3)
    assert (out.astype(np.float32) == 1.0).all()
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vector_dup for bf16"):
        pto.ub.vector_dup(Machine("Ascend310").ptr("ub", "bf16", 0), 1.0, 1)
    with pytest.raises(UnsupportedOp, match="Ascend910B1 does not support vector_dup for s8"):
        pto.ub.vector_dup(m.ptr("ub", "s8", 0), 1, 1)
    p = Machine("Ascend310B1").ptr("ub", "s8", 0)
    pto.ub.vector_dup(p, -3, 1, mask=(0, 0, 0, 5))
    assert list(p.ctx.machine.read(p, 3)) == [-3, 0x55, -3]    # lane 1 keeps the on-chip fill (0x55)


@pytest.mark.parametrize("name", ["f32", "f16", "bf16"])
def test_an_int_scalar_wider_than_float64_is_rounded_once(name):
    """An int immediate into a float vector op is converted from its exact value with one rounding, as a
    float Scalar's init_value is (numerics.md §1: wider-than-double sources are not rounded twice):
    2**60 + 2**36 + 1 is 2**60 + 2**37 in f32 (float64 first gave 2**60); an int past float64's range is
    the signed inf (was a bare OverflowError), as a float immediate past the format's range is."""
    from pto_core.scalars import int_to_float
    m = Machine("Ascend910B1")
    d = m.ptr("ub", name, 0)
    for v in (2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**40 + 2**29 + 1, 2**2000, -2**2000, np.int64(2**62 + 2**38 + 1)):
        want = int_to_float(v, dtype(name))
        pto.ub.vector_dup(d, v, 1, mask=2)
        assert m.read(d, 2).astype(np.float64).tolist() == [want] * 2, (name, v)
        if name == "bf16":
            continue                                       # no bf16 vadds
        pto.ub.vector_dup(d, 0, 1, mask=2)
        pto.ub.vadds(d, d, v, 1, mask=2)
        assert m.read(d, 2).astype(np.float64).tolist() == [want] * 2, (name, v)
    if name == "f32":
        assert int_to_float(2**60 + 2**36 + 1, dtype("f32")) == 2.0**60 + 2.0**37
