"""TIK ``scatter_v*`` (VA-register address lists): addressing against an independent per-lane numpy
reference (hypothesis sweep), one passing and one failing kernel per sub-family, chip gating."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, OutOfBounds, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import vec_kernel

CHIP = "Ascend910A"
NB = 24                                  # blocks per buffer


def _f64(fn, dt):
    """An op evaluated exactly in float64 (f16 products/sums and f32 products are exact there), rounded once."""
    return lambda *xs: np.asarray(fn(*[np.float64(x) for x in xs])).astype(dt)


#: op -> (kind, reference per lane given the source values (and the old dst for fused ops), dtypes)
OPS = {
    "vadd": ("binary", lambda dt: _f64(lambda a, b: a + b, dt), ("float16", "float32")),
    "vmul": ("binary", lambda dt: _f64(lambda a, b: a * b, dt), ("float16", "float32")),
    "vmax": ("binary", lambda dt: lambda a, b: max(a, b), ("float16", "float32", "int32")),
    "vmadd": ("binary", lambda dt: _f64(lambda a, b, d: a * d + b, dt), ("float16",)),
    "vadds": ("scalar", lambda dt: _f64(lambda a, s: a + s, dt), ("float16", "float32")),
    "vabs": ("single", lambda dt: lambda a: abs(a), ("float16", "float32")),
    "vector_mov": ("single", lambda dt: lambda a: a, ("float16",)),
}


def _ref(op, dt, bufs, dst_name, dlist, slists, snames, reps, repeat, lanes, scalar):
    """Repeat by repeat: read every active lane's sources (and old dst), then write dst blocks in order."""
    kind, mk, _ = OPS[op]
    fn = mk(np.dtype(dt))
    e = 32 // np.dtype(dt).itemsize
    st_ = {k: v.copy() for k, v in bufs.items()}
    for r in range(repeat):
        vals = []
        for lane in lanes:
            j, k = divmod(int(lane), e)
            args = [st_[nm][(lst[j] + r * rp) * e + k] for nm, lst, rp in zip(snames, slists, reps[1:])]
            if scalar is not None:
                args.append(np.asarray(scalar, dtype=dt))
            if op == "vmadd":
                args.append(st_[dst_name][(dlist[j] + r * reps[0]) * e + k])
            vals.append(fn(*args))
        for lane, v in zip(lanes, vals):
            j, k = divmod(int(lane), e)
            st_[dst_name][(dlist[j] + r * reps[0]) * e + k] = v
    return st_


@st.composite
def cases(draw):
    op = draw(st.sampled_from(sorted(OPS)))
    kind, _, dts = OPS[op]
    dt = draw(st.sampled_from(dts))
    e = 32 // np.dtype(dt).itemsize
    n = draw(st.integers(1, 8))
    repeat = draw(st.integers(1, 3))
    nsrc = {"binary": 2, "scalar": 1, "single": 1}[kind]
    reps = [draw(st.integers(0, 4)) for _ in range(nsrc + 1)]
    inplace = draw(st.booleans())                 # dst list = src0 list (same addresses and stride)
    if inplace:
        reps[1] = reps[0]

    def addrs(rep):
        return [draw(st.integers(0, NB - 1 - (repeat - 1) * rep)) for _ in range(n)]
    dlist = addrs(reps[0])
    slists = [dlist if (inplace and i == 0) else addrs(reps[i + 1]) for i in range(nsrc)]
    par = 256 // np.dtype(dt).itemsize
    if draw(st.booleans()):
        mask = draw(st.integers(1, n * e))
        lanes = np.arange(mask)
    else:
        bits = draw(st.integers(1, 2 ** (n * e) - 1))
        lanes = np.array([i for i in range(n * e) if bits >> i & 1])
        mask = [0, bits] if par == 64 else [bits >> 64, bits & (2 ** 64 - 1)]
    scalar = draw(st.integers(-4, 4)) / 2 if kind == "scalar" else None
    seed = draw(st.integers(0, 2 ** 16))
    return op, dt, dlist, slists, reps, repeat, mask, lanes, scalar, inplace, seed


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_scatter_addressing_matches_a_per_lane_reference(case):
    op, dt, dlist, slists, reps, repeat, mask, lanes, scalar, inplace, seed = case
    rng = np.random.default_rng(seed)
    e = 32 // np.dtype(dt).itemsize
    size = NB * e
    # |x| <= 1.5 keeps three in-place vmadd repeats (d = d*d + b) finite in float16 (max 245): this test
    # is about addressing, not overflow (with 4: 404**2 overflows; the reference gives inf, the simulated chip saturates to 65504)
    hi = 1.5 if op == "vmadd" else 4
    gen = (lambda: rng.integers(-50, 50, size)) if dt == "int32" else (lambda: rng.uniform(-hi, hi, size))
    bufs = {"d": gen().astype(dt), "a": gen().astype(dt), "b": gen().astype(dt)}
    snames = ["a", "b"][:len(slists)]
    dst_name = "a" if inplace else "d"

    def body(ti, ub):
        dl = [ub[dst_name][j * e] for j in dlist]
        ls = [[ub[nm][j * e] for j in lst] for nm, lst in zip(snames, slists)]
        kind = OPS[op][0]
        if kind == "binary":
            getattr(ti, "scatter_" + op)(mask, dl, ls[0], ls[1], repeat, *reps)
        elif kind == "scalar":
            getattr(ti, "scatter_" + op)(mask, dl, ls[0], scalar, repeat, *reps)
        else:
            getattr(ti, "scatter_" + op)(mask, dl, ls[0], repeat, *reps)
    out = vec_kernel(bufs, body, chip=CHIP)
    want = _ref(op, dt, bufs, dst_name, dlist, slists, snames, reps, repeat, lanes, scalar)
    for k in bufs:
        np.testing.assert_array_equal(out[k].view(np.uint8), want[k].view(np.uint8), err_msg=k)


def _f16(n=NB * 16, lo=-4, hi=4, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float16)


def test_scatter_vaxpy_and_vmaxs_pass():
    a, d = _f16(seed=1), _f16(seed=2)

    def body(ti, ub):
        ti.scatter_vaxpy(32, False, [ub["d"][0], ub["d"][64]], [ub["a"][32], ub["a"][16]], 1.5, 2, 1, 2)
    out = vec_kernel({"d": d, "a": a}, body, chip=CHIP)["d"]
    want = d.copy()
    for r in range(2):
        for j, (db, sb) in enumerate(((0, 2), (4, 1))):
            for k in range(16):
                i, s = (db + r) * 16 + k, (sb + 2 * r) * 16 + k
                want[i] = np.float16(np.float64(a[s]) * 1.5 + np.float64(d[i]))
    np.testing.assert_array_equal(out, want)

    def body2(ti, ub):         # counter mode (v200): 8 addresses, ceil(200 / 128) = 2 repeats, tail of 72 lanes
        ti.scatter_vmaxs(200, [ub["d"][16 * j] for j in range(8)], [ub["a"][16 * (7 - j)] for j in range(8)],
                         0.25, 1, 8, 8, mask_mode="counter")
    out = vec_kernel({"d": d, "a": a}, body2, chip="Ascend310P3")["d"]
    want = d.copy()
    for n in range(200):
        r, lane = divmod(n, 128)
        j, k = divmod(lane, 16)
        want[(j + 8 * r) * 16 + k] = max(a[(7 - j + 8 * r) * 16 + k], np.float16(0.25))
    np.testing.assert_array_equal(out, want)


def test_scatter_errors():
    f = _f16()
    d32 = np.zeros(NB * 8, np.float32)
    k = {"chip": CHIP, "build_only": True}
    with raises_tik(IllegalOperand, match=r"the mask reaches lane 32, in block 2, but the lists give 2"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vadd(
            33, [ub["d"][0], ub["d"][16]], [ub["a"][0], ub["a"][16]], [ub["a"][0], ub["a"][16]], 1, 0, 0, 0), **k)
    with raises_tik(IllegalOperand, match=r"src_list should contain as many tensors as dst_list \(2\), got 1"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vexp(16, [ub["d"][0], ub["d"][16]], [ub["a"][0]],
                                                                     1, 0, 0), **k)
    with raises_tik(IllegalOperand, match=r"dst_list should be a list of 1..8 tensors, got 9"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vabs(16, [ub["d"][0]] * 9, [ub["a"][0]] * 9,
                                                                     1, 0, 0), **k)
    with raises_tik(IllegalOperand, match=r"dtype float32 should be equal to src0_list\[0\]'s dtype float16"):
        vec_kernel({"d": f, "a": f, "c": d32}, lambda ti, ub: ti.scatter_vmul(
            16, [ub["d"][0], ub["d"][16]], [ub["a"][0], ub["c"][0]], [ub["a"][0], ub["a"][16]], 1, 0, 0, 0), **k)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vrelu(16, [ub["d"][16 * (NB - 1)]], [ub["a"][0]],
                                                                      2, 1, 1), **k)
    with raises_tik(IllegalOperand, match=r"in counter mode the lists should contain 8 tensors, got 2"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vadds(
            20, [ub["d"][0], ub["d"][16]], [ub["a"][0], ub["a"][16]], 1.0, 1, 0, 0, mask_mode="counter"),
            chip="Ascend310P3", build_only=True)
    with raises_tik(UnsupportedOp, match=r"store_high_half=True is not modelled"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vaxpy(16, True, [ub["d"][0]], [ub["a"][0]], 1.0,
                                                                      1, 0, 0), **k)
    with raises_tik(UnsupportedOp, match=r"float32 destination and float16 sources is not modelled"):
        vec_kernel({"d": d32, "a": f}, lambda ti, ub: ti.scatter_vmla(8, [ub["d"][0]], [ub["a"][0]], [ub["a"][0]],
                                                                       1, 0, 0, 0), **k)
    with raises_tik(UnsupportedOp, match=r"scatter_vconv is not modelled: its narrow operand takes half"):
        vec_kernel({"d": d32, "a": f}, lambda ti, ub: ti.scatter_vconv(8, "", [ub["d"][0]], [ub["a"][0]], 1, 0, 0),
                   **k)


def test_scatter_chip_gating():
    f = _f16()

    def body(ti, ub):
        ti.scatter_vadd(16, [ub["d"][0]], [ub["a"][0]], [ub["a"][16]], 1, 0, 0, 0)
    with raises_tik(UnsupportedOp, match=r"does not support float16 on Ascend910B1"):
        vec_kernel({"d": f, "a": f}, body, chip="Ascend910B1", build_only=True)
    with raises_tik(UnsupportedOp, match=r"does not support float16 on Ascend910A"):      # no vmaxs on v100
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vmaxs(16, [ub["d"][0]], [ub["a"][0]], 0.0, 1, 0, 0),
                   chip=CHIP, build_only=True)
    with raises_tik(UnsupportedOp, match=r"does not support float32 on Ascend310"):        # mini: f16 vexp only
        vec_kernel({"d": np.zeros(64, np.float32), "a": np.zeros(64, np.float32)},
                   lambda ti, ub: ti.scatter_vexp(8, [ub["d"][0]], [ub["a"][0]], 1, 0, 0), chip="Ascend310",
                   build_only=True)
    out = vec_kernel({"d": f, "a": f}, body, chip="Ascend310P3")["d"]
    np.testing.assert_array_equal(out[:16], (f[:16].astype(np.float64) + f[16:32]).astype(np.float16))


def test_scatter_runtime_mask_past_the_list_raises_when_it_runs():
    f = _f16()

    def body(ti, ub):
        ti.scatter_vmul(ub["m"], [ub["d"][0], ub["d"][32]], [ub["a"][0], ub["a"][16]], [ub["a"][0], ub["a"][16]],
                        1, 0, 0, 0)
    out = vec_kernel({"d": f, "a": f}, body, chip=CHIP, scalars={"m": ("int64", 20)})["d"]
    want = f.copy()
    want[:16] = (f[:16].astype(np.float64) ** 2).astype(np.float16)
    want[32:36] = (f[16:20].astype(np.float64) ** 2).astype(np.float16)
    np.testing.assert_array_equal(out, want)
    with raises_tik(IllegalOperand, match=r"the mask selects lanes of block 2 but dst_list gives 2 address"):
        vec_kernel({"d": f, "a": f}, body, chip=CHIP, scalars={"m": ("int64", 40)})
