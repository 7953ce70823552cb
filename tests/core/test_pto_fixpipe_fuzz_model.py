"""Direct PTO cube path and FIXPIPE against an independent model written from pto_spec.md alone (fuzz452).

The model below uses numpy and ml_dtypes only (no `pto_core.numerics`, no other test reference): Nz / Zz / Zn
offsets of pto_spec.md §2.2, the `mte_gm_l1_frac` placement of §3.2, the MAD table of §4.2, the FIXPIPE chain of
§5.1-§5.6 (pre_quant -> pre_relu -> clip -> convert under sat, nz2nd / nz2dn / normal / nz2nz layouts, loop3, GM
atomics, UB dual destination) with the simulator's named choices where the spec is ambiguous
(migration_guide/fixpipe_semantics.md #1 S9/S17/S5 then signed offset, #6 alpha replaces the scale, #15 normal_relu
gives +0). Hypothesis draws the seeds (derandomized); each example builds one random program on one of the four PTO
targets and compares every byte it can observe. The scratch fuzzer behind it (10,000 programs, 200 x ~25 illegal
calls) is recorded in /work/scratch_fuzz452/RESULTS.md.
"""
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from pto_core import Machine, pto
from pto_core.errors import PtoError

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "s8": np.int8, "u8": np.uint8,
      "s16": np.int16, "s32": np.int32, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
SIZE = {"f16": 2, "bf16": 2, "f32": 4, "s8": 1, "u8": 1, "s16": 2, "s32": 4, "e4m3": 1, "e5m2": 1}
FMAX = {"f16": 65504.0, "bf16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), "e4m3": 448.0,
        "f32": float(np.finfo(np.float32).max)}
MAD = {"A2A3": [("s8", "s8", "s32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f32", "f32", "f32")],
       "Kirin9030": [("f16", "f16", "f16"), ("s8", "s8", "s32")], "KirinX90": [("f16", "f16", "f16"), ("s8", "s8", "s32")]}
MAD["A5"] = MAD["A2A3"] + [(a, b, "f32") for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")]
L0A_NZ = {"A2A3": False, "KirinX90": False, "A5": True, "Kirin9030": True}        # §2.3 TileLeft aliases
TARGETS = tuple(MAD)
# mode: (accumulator, destinations, kind); availability per fixpipe_semantics.md #33 / pto_fixpipe.md
MODES = {"f32_f16": ("f32", ("f16",), "cast"), "f32_bf16": ("f32", ("bf16",), "cast"),
         "qf322f16_pre": ("f32", ("f16",), "float"), "qf322bf16_pre": ("f32", ("bf16",), "float"),
         "qf322f32_pre": ("f32", ("f32",), "float"), "qf322fp8_pre": ("f32", ("e4m3",), "float"),
         "qf322b8_pre": ("f32", ("s8", "u8"), "b8"), "qf162b8_pre": ("f32", ("s8", "u8"), "b8h"),
         "req8": ("s32", ("s8", "u8"), "b8"), "deqf16": ("s32", ("f16",), "float"),
         "deqs16": ("s32", ("s16",), "s16"), "qs322bf16_pre": ("s32", ("bf16",), "float"),
         "deqs32_int": ("s32", ("s32",), "s32")}
A5_ONLY = {"qf322f32_pre", "qf322fp8_pre", "deqs32_int"}
KIRIN = {"Kirin9030": {"req8", "deqf16", "deqs16"}, "KirinX90": {"req8", "deqf16"}}


def c0(dt):
    return 32 // SIZE[dt]


def rup(x, g=16):
    return -(-x // g) * g


def off_nz(r, c, rows, ir, ic):
    return (c // ic) * rows * ic + (r // ir) * ir * ic + (r % ir) * ic + c % ic


def off_zz(r, c, cols, ir, ic):
    return (r // ir) * cols * ir + (c // ic) * ir * ic + (r % ir) * ic + c % ic


def off_zn(r, c, cols, ir, ic):
    return (r // ir) * cols * ir + (c // ic) * ir * ic + (c % ic) * ir + r % ir


def fp19(x):
    """§5.3: scales and alphas are used as f32 bits [31:13]."""
    return float(np.array([np.array([x], np.float32).view(np.uint32)[0] & 0xFFFFE000], np.uint32).view(np.float32)[0])


def to_float(v, dt, sat):
    """float64 -> dt, one rounding (RNE); sat: finite overflow / inf clamp, NaN -> 0 ('nan' keeps NaN); §5.5."""
    v = np.asarray(v, np.float64)
    if dt == "f32":
        out = v.astype(np.float32)
        if sat != "nosat":
            out = np.where(np.isfinite(v) & ~np.isfinite(out), np.sign(v) * FMAX["f32"], out).astype(np.float32)
        return out
    if sat == "nosat":
        return v.astype(NP[dt])
    nan = np.isnan(v)
    w = np.where(nan, 0.0, np.where(np.isinf(v), np.sign(v) * FMAX[dt], v))
    out = w.astype(NP[dt]).astype(np.float64)
    out = np.where(np.isfinite(out), out, np.sign(w) * FMAX[dt])
    if sat == "nan":
        out = np.where(nan, np.nan, out)
    return out.astype(NP[dt])


def model_fixpipe(x, mode, dst, sat, scale, offset, signed, relu, alpha, clip):
    x = np.asarray(x, np.float64)
    kind = MODES[mode][2] if mode else None
    if kind == "b8h":                      # qf162*: f16 stage first (fixpipe_semantics.md #11)
        x, kind = to_float(x, "f16", "sat").astype(np.float64), "b8"
    mult = np.ones_like(x) if kind in (None, "cast") else np.broadcast_to(scale, x.shape)
    neg = x < 0
    if relu in ("scalar_relu", "vector_relu"):
        mult = np.where(neg, np.broadcast_to(alpha, x.shape), mult)
    y = x * mult
    if relu == "normal_relu":
        y = np.where(neg, 0.0, y)
    if kind in ("b8", "s16", "s32") or (kind is None and dst == "s32"):
        r = np.rint(np.where(np.isnan(y), 0.0, y))
        if kind in ("b8", "s16"):
            lim = 256 if kind == "b8" else 65536
            r = np.clip(r, -lim, lim - 1) + offset
        if clip is not None:
            r = np.where(r > clip, clip, r)
        if kind == "b8":
            r = np.clip(r, np.where(signed, -128, 0), np.where(signed, 127, 255)).astype(np.int64)
            return (r & 0xFF).astype(np.uint8).view(NP[dst])
        lo, hi = {"s16": (-2 ** 15, 2 ** 15 - 1), "s32": (-2 ** 31, 2 ** 31 - 1)}[dst]
        return np.clip(r, lo, hi).astype(np.int64).astype(NP[dst])
    if mode is None and relu is None and clip is None and dst == "f32":
        return x.astype(np.float32)
    if clip is not None:
        y = np.where(y > clip, clip, y)
    return to_float(y, dst, sat)


def dst_index(layout, i, j, ds, dst):
    if layout == "nz2nd":
        return i * ds + j
    if layout == "nz2dn":
        return j * ds + i
    cb = 8 if layout == "nz2nz1" else (16 if SIZE[dst] >= 2 else 32)
    return (j // cb) * ds + i * cb + j % cb


def transpose_refused(target, dt, which, m, k, n):
    """pto_cube.md TRANSPOSE_SHAPE_FITS (the one non-spec rule the chain must know)."""
    if SIZE[dt] == 1 and (which == "b" or L0A_NZ[target]):
        return 1 <= (m if which == "a" else n) % 32 <= 16 and k > 32
    return SIZE[dt] == 4 and which == "a" and not L0A_NZ[target] and 1 <= k % 16 <= 8 and m > 16


def bytes_equal(got, exp, what):
    g, e = np.asarray(got).view(np.uint8).ravel(), np.asarray(exp).view(np.uint8).ravel()
    bad = np.flatnonzero(g != e)
    assert bad.size == 0, f"{what}: {bad.size} bytes differ, first at {bad[:8]}"


def fixpipe(M, rng, target, acc, c, m, n, rows, acc_of, loop3_ok):
    """One random legal FIXPIPE write-back of the L0C tile at ``c``; every destination byte compared."""
    choices = [(None, acc)] + [(md, d) for md, (a, ds, _) in MODES.items() for d in ds if a == acc
                               and not (md in A5_ONLY and target != "A5") and (target not in KIRIN or md in KIRIN[target])]
    mode, dst = choices[rng.integers(len(choices))]
    kind = MODES[mode][2] if mode else None
    dest = ["gm", "l1", "ub"][rng.integers(3 if target == "A5" else 2)]
    layouts = ["nz2nd", "nz2dn", "normal"] + (["nz2nz", "nz2nz1"] if dst == "f32" else [])
    layout = layouts[rng.integers(len(layouts))]
    relu = [None, "normal_relu", "scalar_relu", "vector_relu", "no_relu"][rng.integers(5)]
    sat = ["sat", "nan", "nosat", None][rng.integers(4)]
    clip = None
    if relu and dst in ("f16", "u8", "s8", "s16") and rng.integers(3) == 0:
        clip = float(np.float16(rng.uniform(0.5, 30))) if dst == "f16" else float(rng.integers(1, 20))
    dst_mode = None
    if dest == "ub":
        opts = [0, 1] + (["split_m"] if m % 2 == 0 else []) + (["split_n"] if n % 32 == 0 else [])
        dst_mode = opts[rng.integers(len(opts))] if mode is None and relu is None and layout in ("nz2nd", "normal") \
            else int(rng.integers(2))
    atomic = ["add", "max", "min"][rng.integers(3)] if dest == "gm" and dst in ("f32", "f16", "bf16", "s32", "s16", "s8") \
        and rng.integers(3) == 0 else None
    scale, offset, signed, alpha = np.ones(n), np.zeros(n), np.full(n, dst != "u8"), np.zeros(n)
    kw, fb_loads = {}, []
    if kind == "cast":
        kw["pre_quant"] = (0.0, {"mode": mode})
    elif mode and rng.integers(2) == 0:
        p = [np.float16, ml_dtypes.bfloat16, np.float32][rng.integers(3)](2.0 ** rng.integers(-3, 3) * rng.uniform(.5, 1.5))
        kw["pre_quant"] = (p, {"mode": mode + "_scalar"})
        scale[:] = fp19(np.float32(p))
    elif mode:
        words = np.zeros(n, np.uint64)
        for j in range(n):
            s = np.float32(2.0 ** rng.integers(-3, 3) * rng.uniform(0.5, 1.5))
            scale[j], w = fp19(s), int(np.array([s], np.float32).view(np.uint32)[0])
            if kind in ("b8", "b8h", "s16"):
                bits = 17 if kind == "s16" else 9
                offset[j] = int(rng.integers(-20, 21))
                w |= (int(offset[j]) & ((1 << bits) - 1)) << 37
                if kind != "s16":
                    signed[j] = bool(rng.integers(2))
                    w |= int(signed[j]) << 46
            words[j] = w
        fb_loads.append((M.gm_tensor(words, name="words"), M.ptr("l1", "u8", 0x50000), M.ptr("fb", "f32", 0), n * 8))
        kw["pre_quant"] = (M.ptr("fb", "f32", 0), {"mode": mode + "_vec"})
    if relu == "scalar_relu":
        a = np.float32(rng.uniform(0.05, 1.0))
        alpha[:] = fp19(a)
        kw["pre_relu"] = (a, {"mode": relu})
    elif relu == "vector_relu":
        adt = ["f32", "f16", "bf16"][rng.integers(3)]
        al = rng.uniform(0.05, 1.0, n).astype(NP[adt])
        alpha[:] = [fp19(np.float32(v)) for v in al]
        fb_loads.append((M.gm_tensor(al, name="alphas"), M.ptr("l1", adt, 0x58000), M.ptr("fb", adt, 1024),
                         n * SIZE[adt]))
        kw["pre_relu"] = (M.ptr("fb", adt, 1024), {"mode": relu})
    elif relu:
        kw["pre_relu"] = {"mode": relu}
    if clip is not None:
        cv = np.float16(clip) if dst == "f16" else int(clip)
        pr = kw["pre_relu"]
        kw["pre_relu"] = (pr[0], dict(pr[1], clip=cv)) if isinstance(pr, tuple) else dict(pr, clip=cv)
    for g, l1p, fbp, nb in fb_loads:
        pto.mte_gm_l1(g, l1p, nb, nburst=(1, rup(nb, 32), rup(nb, 32)))
    if fb_loads:
        pto.set_flag("MTE2", "FIX", 1)
        pto.wait_flag("MTE2", "FIX", 1)
        for g, l1p, fbp, nb in fb_loads:
            pto.mte_l1_fb(l1p, fbp, rup(nb, 128) // 128, nburst=(1, 0, 0))
    kw.update({"nz2nd": {"nz2nd": True}, "nz2dn": {"nz2dn": 1}, "nz2nz": {"nz2nz": True},
               "nz2nz1": {"nz2nz": 1}}.get(layout, {}))
    cb = 8 if layout == "nz2nz1" else (16 if SIZE[dst] >= 2 else 32)
    if layout == "nz2nd":
        ds = n + int(rng.integers(0, 8)); total = (m - 1) * ds + n
    elif layout == "nz2dn":
        ds = m + int(rng.integers(0, 8)); total = (n - 1) * ds + m
    else:
        ds = (m + int(rng.integers(0, 3))) * cb; total = (-(-n // cb) - 1) * ds + m * cb
    loop3 = None
    if loop3_ok and layout in ("nz2nd", "nz2dn") and dst_mode not in ("split_m", "split_n") and rng.integers(2) == 0:
        loop3 = (int(rng.integers(2, 4)), 16 * int(rng.integers(0, 3)), int(rng.integers(0, 2)) * total + 2 * int(rng.integers(0, 5)))
        total += (loop3[0] - 1) * loop3[2]
        kw["loop3"] = loop3
    if sat:
        kw["sat"] = {"sat": True, "nan": "preserve_nan", "nosat": False}[sat]
    if atomic:
        kw["atomic"] = {"type": dst, "op": atomic}
    total = rup(total * SIZE[dst], 32) // SIZE[dst] + 32
    init = (rng.integers(0, 5, total) if dst in ("s8", "u8", "s16", "s32") else rng.integers(-3, 4, total)).astype(NP[dst])
    addr = {"gm": 0, "l1": 0x60000, "ub": 0x1000}[dest]
    if dest == "gm":
        dptr = M.gm_tensor(init, name="out")
    else:
        dptr = M.ptr(dest, dst, addr)
        for sub in ((0, 1) if dest == "ub" else (0,)):
            M.write(M.ptr(dest, dst, addr, sub=sub), init)
    args = (c, dptr, m, n, rows, ds)
    if dest == "gm":
        pto.mte_l0c_gm(*args, 0, 0, **kw)
    elif dest == "l1":
        pto.mte_l0c_l1(*args, **kw)
    else:
        pto.mte_l0c_ub(*args, dst_mode=dst_mode, **kw)
    model_sat = sat or "nosat"       # PTO targets default to the inf/NaN overflow mode (targets.md)
    vals = [model_fixpipe(acc_of(r * (loop3[1] if loop3 else 0)), mode, dst, model_sat, scale[None], offset[None],
                          signed[None], relu, alpha[None], clip) for r in range(loop3[0] if loop3 else 1)]
    what = f"{target} {mode} -> {dst} {dest} {layout} relu={relu} clip={clip} sat={sat} atomic={atomic} " \
           f"dst_mode={dst_mode} loop3={loop3} m={m} n={n}"
    if dst_mode in ("split_m", "split_n"):
        v = vals[0]
        halves = (v[:m // 2], v[m // 2:]) if dst_mode == "split_m" else (v[:, :n // 2], v[:, n // 2:])
        for sub, h in enumerate(halves):
            exp = init.copy()
            ii, jj = np.indices(h.shape)
            exp[dst_index(layout, ii, jj, ds, dst)] = h
            bytes_equal(M.read(M.ptr("ub", dst, addr, sub=sub), total), exp, f"{what} UB{sub}")
        return
    exp = init.copy()
    ii, jj = np.indices((m, n))
    for r, v in enumerate(vals):
        idx = dst_index(layout, ii, jj, ds, dst) + (r * loop3[2] if loop3 else 0)
        if atomic and dst in ("s8", "s16", "s32"):
            o, bits = exp[idx].astype(np.int64), SIZE[dst] * 8
            res = {"add": o + v, "max": np.maximum(o, v), "min": np.minimum(o, v)}[atomic]
            v = (((res + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))).astype(NP[dst])
        elif atomic == "add":
            v = exp[idx] + v if dst == "f32" else to_float(exp[idx].astype(np.float64) + v, dst, model_sat)
        elif atomic:
            v = ieee_maxmin(atomic, exp[idx], v)
        exp[idx] = v
    if dest == "ub":
        bytes_equal(M.read(M.ptr("ub", dst, addr, sub=1 - dst_mode), total), init, f"{what} other UB")
        dptr = M.ptr("ub", dst, addr, sub=dst_mode)
    got = M.read(dptr, total)
    bytes_equal(got, exp, what)


def ieee_maxmin(op, a, b):
    """The model's float atomic max/min: NaN propagates, and -0 < +0 (IEEE 754-2019 maximum / minimum; the
    simulator's named choice ATOMIC_MAXMIN_SIGNED_ZERO, fixpipe_semantics.md #37)."""
    r = (np.maximum if op == "max" else np.minimum)(a, b)
    zeros = (a == 0) & (b == 0)
    neg = (np.signbit(a) & np.signbit(b)) if op == "max" else (np.signbit(a) | np.signbit(b))
    return np.where(zeros, np.where(neg, -0.0, 0.0).astype(r.dtype), r)


def run_chain(seed):
    """GM -> L1 (nd2nz / dn2nz) -> L0A / L0B (transposed or not) [-> BT] -> mad / mad_acc / mad_bias -> FIXPIPE."""
    rng = np.random.default_rng(seed)
    target = TARGETS[rng.integers(len(TARGETS))]
    adt, bdt, cdt = MAD[target][rng.integers(len(MAD[target]))]
    m, k, n = (int(v) for v in rng.integers(1, [41, 65, 41]))
    ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
    op = ["mad", "mad_acc", "mad_bias"][rng.integers(3)]
    M = Machine(target)
    M.activate()

    def vals(dt, shape):
        return rng.integers(-8, 9, shape).astype(np.int8) if dt == "s8" else \
            rng.integers(-4, 5, shape).astype(np.float64).astype(NP[dt])
    A, B = vals(adt, (m, k)), vals(bdt, (k, n))
    la, lb = M.ptr("l1", adt, 0), M.ptr("l1", bdt, 0x20000)
    # A (or A^T with a transposing load) and B (B^T via dn2nz without transpose) as Nz tiles in L1
    for lp, T, dt, is_a in ((la, ta, adt, True), (lb, tb, bdt, False)):
        g = max(16, c0(dt))
        if is_a:
            logical, src, nd = (A.T, A.T, True) if T else (A, A, True)
        else:
            logical, src, nd = (B, B, True) if T else (B.T, B, False)
        rows = rup(logical.shape[0], g if T else 16)
        gm = M.gm_tensor(np.ascontiguousarray(src), name="A" if is_a else "B")
        shape = logical.shape
        pto.mte_gm_l1_frac(gm, lp, **{"nd2nz" if nd else "dn2nz": True}, shape=shape,
                           src_layout=(src.shape[1] * SIZE[dt],), dst_group=(1, 1, rows, 0), ctrl=(0, 0))
        cols = rup(shape[1], c0(dt))
        got = M.read(lp, rows * cols)
        ii, jj = np.indices((shape[0], cols))
        exp = np.zeros((shape[0], cols), NP[dt])
        exp[:, :shape[1]] = logical
        bytes_equal(got[off_nz(ii, jj, rows, 16, c0(dt))], exp, f"L1 {'A' if is_a else 'B'} seed {seed}")
    if op == "mad_bias":
        bsd = {"f32": ["f32", "f16"] + (["bf16"] if target == "A5" else []), "s32": ["s32"], "f16": ["f16"]}[cdt]
        bsd = bsd[rng.integers(len(bsd))]
        bias = rng.integers(-4, 5, n).astype(np.float64).astype(NP[bsd])
        nb = rup(n * SIZE[bsd], 32)
        pto.mte_gm_l1(M.gm_tensor(bias, name="bias"), M.ptr("l1", bsd, 0x40000), nb, nburst=(1, nb, nb))
    pto.set_flag("MTE2", "MTE1", 0)
    pto.wait_flag("MTE2", "MTE1", 0)
    a0, b0 = M.ptr("l0a", adt, 0), M.ptr("l0b", bdt, 0)
    for which, lp, dp, T, r, cc, dt in (("a", la, a0, ta, m, k, adt), ("b", lb, b0, tb, k, n, bdt)):
        load = pto.mte_l1_l0a if which == "a" else pto.mte_l1_l0b
        if T and transpose_refused(target, dt, which, m, k, n):
            with pytest.raises(PtoError):
                load(lp, dp, r, cc, transpose=True)
            return
        load(lp, dp, r, cc, transpose=True) if T else load(lp, dp, r, cc)
    ii, jj = np.indices((m, k))
    offs = off_nz(ii, jj, rup(m), 16, c0(adt)) if L0A_NZ[target] else off_zz(ii, jj, rup(k, c0(adt)), 16, c0(adt))
    bytes_equal(M.read(a0, rup(m) * rup(k, c0(adt)))[offs], A, f"L0A seed {seed}")
    ii, jj = np.indices((k, n))
    bytes_equal(M.read(b0, rup(k, c0(bdt)) * rup(n))[off_zn(ii, jj, rup(n), c0(bdt), 16)], B, f"L0B seed {seed}")
    if op == "mad_bias":
        unit = 32 if target == "A5" else 64          # BT load unit (pto_cube.md BT_LOAD_UNIT)
        pto.mte_l1_bt(M.ptr("l1", bsd, 0x40000), M.ptr("bt", cdt, 0), -(-n * SIZE[bsd] // unit), nburst=(1, 0, 0))
    pto.set_flag("MTE1", "M", 0)
    pto.wait_flag("MTE1", "M", 0)
    c = M.ptr("l0c", cdt, 0)
    exact = A.astype(np.float64) @ B.astype(np.float64)           # small integers: exact in every accumulator
    kw = {"disable_gemv": True} if m == 1 else {}
    if op == "mad_bias":
        pto.mad_bias(a0, b0, c, M.ptr("bt", cdt, 0), m, n, k, **kw)
        C = exact + bias.astype(np.float64)
    else:
        pto.mad(a0, b0, c, m, n, k, **kw)
        C = exact
        if op == "mad_acc":
            pto.mad_acc(a0, b0, c, m, n, k, **kw)
            C = 2 * exact
    ii, jj = np.indices((m, n))
    bytes_equal(M.read(c, rup(m) * rup(n))[off_nz(ii, jj, rup(m), 16, 16)], C.astype(NP[cdt]), f"L0C seed {seed}")
    pto.set_flag("M", "FIX", 0)
    pto.wait_flag("M", "FIX", 0)
    fixpipe(M, rng, target, cdt, c, m, n, rup(m), lambda _r: C, loop3_ok=False)


SPECIALS = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 65504.0, 65520.0, -65520.0, 448.0, 464.0, 1e-8, 3e38,
                     -3e38, 255.5, 256.5, -256.5, 127.5, 0.5, 1.5, 2.5])


def run_direct(seed):
    """L0C written by the host with random, large and special values (inf, NaN, +-0, ties), then one write-back."""
    rng = np.random.default_rng(seed)
    target = TARGETS[rng.integers(len(TARGETS))]
    acc = ["f32" if target in ("A2A3", "A5") else "f16", "s32"][rng.integers(2)]
    m, n = (int(v) for v in rng.integers(1, 41, 2))
    rows = rup(m) + 16 * int(rng.integers(0, 3))
    count = rows * rup(n) + 16 * 16 * 8
    if acc == "s32":
        flat = (rng.integers(-2 ** 31, 2 ** 31, count) if rng.integers(3) == 0 else rng.integers(-300, 300, count))
    else:
        flat = np.where(rng.integers(0, 2, count) == 0, SPECIALS[rng.integers(len(SPECIALS), size=count)],
                        rng.standard_normal(count) * 10.0 ** rng.integers(-3, 6, count))
    flat = flat.astype(NP[acc])
    M = Machine(target)
    M.activate()
    c = M.ptr("l0c", acc, 0)
    M.write(c, flat)
    ii, jj = np.indices((m, n))
    fixpipe(M, rng, target, acc, c, m, n, rows,
            lambda r: flat.astype(np.float64)[r * 16 + off_nz(ii, jj, rows, 16, 16)], loop3_ok=True)


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1))
def test_cube_chain_and_fixpipe_match_the_spec_model(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_chain(seed)


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1))
def test_fixpipe_special_values_match_the_spec_model(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_direct(seed)


@pytest.mark.parametrize("target", ["Kirin9030", "KirinX90"])
@pytest.mark.parametrize("sat", [True, "preserve_nan", False])
def test_f16_accumulator_same_type_write_back_applies_sat(target, sat):
    """fuzz452: an f16 accumulator written to f16 without pre_quant / activation copied its bytes, so ``sat`` left
    +-inf and NaN as they were, while the same write-back with ``pre_relu(no_relu... normal_relu)`` or an
    ``atomic`` clause clamped them (pto_spec.md §5.5: sat maps +-inf to +-65504 and NaN to 0; only f32
    destinations keep exceptional values)."""
    M = Machine(target)
    M.activate()
    c = M.ptr("l0c", "f16", 0)
    acc = np.array([np.inf, -np.inf, np.nan, 1.0] + [2.0] * 252, np.float16)
    M.write(c, acc)
    out = M.gm_tensor(np.zeros(256, np.float16), name="out")
    pto.mte_l0c_gm(c, out, 16, 16, 16, 16, 0, 0, nz2nd=True, sat=sat)
    exp = {True: [65504, -65504, 0, 1], "preserve_nan": [65504, -65504, np.nan, 1],
           False: [np.inf, -np.inf, np.nan, 1]}[sat]
    bytes_equal(M.read(out, 4), np.array(exp, np.float16), f"{target} sat={sat}")
    relu = M.gm_tensor(np.zeros(256, np.float16), name="relu")
    pto.mte_l0c_gm(c, relu, 16, 16, 16, 16, 0, 0, pre_relu={"mode": "normal_relu"}, nz2nd=True, sat=sat)
    bytes_equal(M.read(relu, 4)[[0, 2, 3]], M.read(out, 4)[[0, 2, 3]], "same values with normal_relu")


def _state(m):
    """Bytes and written flags of every buffer made so far (on-chip and GM) plus the special registers."""
    s = {}
    for core in m.cores:
        for sp, b in core.buffers.items():
            s[core.index, sp] = (b.data.copy(), np.array(b.written))
        for i, b in enumerate(core._ubs):
            if b is not None:
                s[core.index, "ub", i] = (b.data.copy(), np.array(b.written))
    for r in m.gm.regions:
        s["gm", r.name] = (r.buffer.data.copy(), np.array(r.buffer.written))
    return s, [dict(ctx.spr) for ctx in m._contexts]


def _illegal_calls(M, target, rng):
    """(what, op, one-line call): each breaks one rule of pto_spec.md §1.2 / §4.2-§4.4 / §5.1-§5.7."""
    acc = "f32" if target in ("A2A3", "A5") else "f16"
    a, b, c = M.ptr("l0a", "f16", 0), M.ptr("l0b", "f16", 0), M.ptr("l0c", acc, 0)
    out, o16 = M.gm_alloc((16, 16), acc, name="out"), M.gm_alloc((16, 16), "f16", name="o16")
    l1 = M.ptr("l1", acc, 0x1000)
    bad_triple = [t for t in (("f16", "f16", "s32"), ("s8", "f16", "f32"), ("bf16", "bf16", "f16"), ("e4m3", "e4m3", "f32"),
                              ("f16", "f16", "f32")) if t not in MAD[target]][int(rng.integers(2))]
    pa, pb, pc = (M.ptr(sp, dt, 0) for sp, dt in zip(("l0a", "l0b", "l0c"), bad_triple))
    off = 2 * int(rng.integers(1, 16))
    yield "mad dtype triple", "mad", lambda: pto.mad(pa, pb, pc, 16, 16, 32)
    yield "mad k = 4096", "mad", lambda: pto.mad(a, b, c, 16, 16, 4096)
    yield "mad misaligned l0b", "mad", lambda: pto.mad(a, M.ptr("l0b", "f16", off), c, 16, 16, 32)
    yield "mad L0A past capacity", "mad", lambda: pto.mad(M.ptr("l0a", "f16", M.context().core.buffer("l0a", 0).size - 512), b, c, 16, 16, 32)
    yield "mad tf32 on f16", "mad", lambda: pto.mad(a, b, c, 16, 16, 32, tf32_mode="round_even")
    yield "f16 dst without pre_quant", "mte_l0c_gm", lambda: pto.mte_l0c_gm(c, o16, 16, 16, 16, 16, 0, 0, nz2nd=True) if acc == "f32" else pto.mte_l0c_gm(c, out, 16, 16, 16, 16, 0, 0, pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}), nz2nd=True)
    yield "loop3 with the normal layout", "mte_l0c_l1", lambda: pto.mte_l0c_l1(c, l1, 16, 16, 16, 256, loop3=(2, 16, 256))
    yield "normal_relu with a payload", "mte_l0c_l1", lambda: pto.mte_l0c_l1(c, l1, 16, 16, 16, 16, pre_relu=(0.5, {"mode": "normal_relu"}), nz2nd=True)
    yield "unit_flag with nz2dn(2)", "mte_l0c_l1", lambda: pto.mte_l0c_l1(c, l1, 8, 16, 16, 16, unit_flag="check_only", nz2dn=2)
    yield "atomic type != dst", "mte_l0c_gm", lambda: pto.mte_l0c_gm(c, out, 16, 16, 16, 16, 0, 0, nz2nd=True, atomic={"type": "s32", "op": "max"})
    yield "src_stride not 16k", "mte_l0c_l1", lambda: pto.mte_l0c_l1(c, l1, 16, 32, 16 + off // 2, 32, nz2nd=True)
    yield "GM destination too small", "mte_l0c_gm", lambda: pto.mte_l0c_gm(c, out, 16, 16, 16, 64, 0, 0, nz2nd=True)
    yield "split_m with odd m", "mte_l0c_ub", lambda: pto.mte_l0c_ub(c, M.ptr("ub", acc, 0), 15, 16, 16, 16, dst_mode="split_m", nz2nd=True)
    yield "frac misaligned L1", "mte_gm_l1_frac", lambda: pto.mte_gm_l1_frac(M.gm_tensor(np.ones((16, 32), np.float16), name="g"), M.ptr("l1", "f16", 0x2000 + off), nd2nz=True, shape=(16, 32), src_layout=(64,), dst_group=(1, 1, 16, 0), ctrl=(0, 0))
    yield "mad_bias bias type != dst", "mad_bias", lambda: pto.mad_bias(a, b, c, M.ptr("bt", "s32", 0), 16, 16, 32)


@pytest.mark.parametrize("target", TARGETS)
def test_illegal_direct_calls_are_refused_with_op_line_and_fix_and_change_nothing(target):
    """Every illegal call raises a PtoError naming the op, this file's line and a Fix; bytes, written flags and
    SPRs stay as they were, and a legal write-back afterwards passes the hazard verifier (its M -> FIX flag was
    consumed before the refused calls)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(452)
        M = Machine(target)
        M.activate()
        acc = "f32" if target in ("A2A3", "A5") else "f16"
        a, b, c = M.ptr("l0a", "f16", 0), M.ptr("l0b", "f16", 0), M.ptr("l0c", acc, 0)
        M.write(a, np.ones(16 * 32, np.float16))
        M.write(b, np.ones(16 * 32, np.float16))
        pto.mad(a, b, c, 16, 16, 32)
        pto.set_flag("M", "FIX", 0)
        pto.wait_flag("M", "FIX", 0)
        for what, op, call in _illegal_calls(M, target, rng):
            before, spr = _state(M)
            with pytest.raises(PtoError) as info:
                call()
            msg = str(info.value)
            line = f"test_pto_fixpipe_fuzz_model.py:{call.__code__.co_firstlineno}"
            assert op in msg and line in msg and "Fix" in msg, f"{target} {what}: {msg}"
            after, spr_after = _state(M)
            for key, (data, flags) in before.items():
                assert np.array_equal(after[key][0], data) and np.array_equal(after[key][1], flags), f"{what}: {key}"
            assert spr_after == spr, what
        res = M.gm_alloc((16, 16), acc, name="res")
        pto.mte_l0c_gm(c, res, 16, 16, 16, 16, 0, 0, nz2nd=True)
        assert (M.read(res, (16, 16)) == 32).all()
