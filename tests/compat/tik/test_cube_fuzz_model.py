"""Differential regression of TIK conv2d / matmul + legacy fixpipe against an independent reading of the docs.

A compact copy of the fuzzer of helper task k435 (its full version ran ~25k random kernels over 8 SoCs,
plus ~2k illegal calls, dynamic-offset loops and boundary values, without a disagreement; see the
branch's report). The model below is written from tik_api.md §8.0-§8.4 and seed 002 only (no import of
pto_core or of other test references):

* conv2d ``C[ho*Wo+wo, co] = sum w[ci//C0, kh, kw, co, ci%C0] * x(ci, ho*sh-pt+kh*dh, wo*sw-pl+kw*dw)`` with
  ``x`` = pad_value outside the map; matmul ``a[k//K0, m, k%K0] = A[m, k]``, ``b[k//K0, n, k%K0] = B[k, n]``,
  only the first m rows / k columns / n columns count (the rest of the storage is junk here);
  L0C ``[N1, round16(rows), 16]``; ``init_l1out=False`` adds; a cube ``bias`` (910B/310B) adds ``bias[co]``;
* fixpipe: ``howo = burst_len*32/sizeof(src)/16``, src block c at ``c*round16(howo)*16``, dst block c at
  ``c*(howo*16 + dst_stride*32/sizeof(dst))``; per element bias[c*16+j] -> element-wise-add[c, p, j]
  -> quantize (fp322fp16: nearest even; int322fp16: ``f16(x*scale)`` rounded once) -> relu; float16 results
  saturate to +-65504 on the v100/v200 SoCs; the dst_stride gaps are not written;
* data are small integers, so every fp32 / fp16 accumulation is exact whatever the summation order;
* illegal calls are refused with a PtoError naming the argument, the user's line and a Fix, and a legal
  kernel built afterwards in the same container still matches the model.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

CHIPS = ("Ascend310", "Ascend910", "Ascend310P3", "Ascend610", "Ascend910B1", "Ascend310B1", "Hi3796CV300CS")
V220 = {"Ascend910B1", "Ascend310B1"}          # hardware FIXPIPE: no bias / ewa / tensor or Scalar scales
HISI = {"Hi3796CV300CS"}                       # f16 L0C for f16 inputs, no relu key
SATURATING = {"Ascend310", "Ascend910", "Ascend310P3", "Ascend610", "Hi3796CV300CS"}
ESZ = {"int8": 1, "float16": 2, "float32": 4, "int32": 4}
C0 = {"int8": 32, "float16": 16, "float32": 8}


def r16(x):
    return -(-x // 16) * 16


def conv_model(fm, w, fs, ks, stride, pad, dil, pv):
    c1, h, wd, c0 = fs
    _, kh, kw, cout, _ = ks
    pl, pr, pt, pb = pad
    ho = (h + pt + pb - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + pl + pr - dil[1] * (kw - 1) - 1) // stride[1] + 1
    x = np.full((c1, h + pt + pb, wd + pl + pr, c0), pv, np.float64)
    x[:, pt:pt + h, pl:pl + wd] = fm.reshape(fs)
    wt = w.reshape(ks).astype(np.float64)
    out = np.zeros((ho * wo, cout))
    for i in range(ho):
        for j in range(wo):
            for a in range(kh):
                for b in range(kw):
                    pix = x[:, i * stride[0] + a * dil[0], j * stride[1] + b * dil[1], :]
                    out[i * wo + j] += np.einsum("ac,aoc->o", pix, wt[:, a, b])
    return out


def matmul_model(a, b, m, k, n, k0):
    k1 = -(-k // k0)
    A = a.reshape(k1, r16(m), k0).transpose(1, 0, 2).reshape(r16(m), -1)[:m, :k].astype(np.float64)
    B = b.reshape(k1, r16(n), k0).transpose(1, 0, 2).reshape(r16(n), -1)[:n, :k].astype(np.float64)
    return A @ B.T


def fixpipe_model(img, known, src_dt, dst_dt, cb, burst_len, dst_stride, ext, chip):
    """img/known: flat L0C image from the src start; returns (values, written, known) of the dst."""
    howo = burst_len * 32 // ESZ[src_dt] // 16
    gap = dst_stride * 32 // ESZ[dst_dt]
    n = (cb - 1) * (howo * 16 + gap) + howo * 16
    vals, wr, kn = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
    for c in range(cb):
        s = c * r16(howo) * 16
        x = img[s:s + howo * 16].reshape(howo, 16).copy()
        if "bias" in ext:
            x += ext["bias"][c * 16:c * 16 + 16]
        if "ewa" in ext:
            x += ext["ewa"][s:s + howo * 16].reshape(howo, 16)
        if src_dt == "int32":
            x = (x + 2.0 ** 31) % 2.0 ** 32 - 2.0 ** 31
        elif src_dt == "float32":
            x = x.astype(np.float32).astype(np.float64)
        if "scale" in ext:
            x = x * ext["scale"]
        if dst_dt == "float16":
            with np.errstate(over="ignore"):
                x = x.astype(np.float16).astype(np.float64)
            if chip in SATURATING:
                x = np.clip(x, -65504.0, 65504.0)
        if ext.get("relu"):
            x = np.maximum(x, 0.0)
        d = c * (howo * 16 + gap)
        vals[d:d + howo * 16], wr[d:d + howo * 16], kn[d:d + howo * 16] = x.reshape(-1), True, known[s:s + howo * 16]
    return vals, wr, kn


class Kernel:
    def __init__(self, chip, seed):
        set_current_compile_soc_info(chip)
        self.ti = tik.Tik()
        self.rng = np.random.default_rng(seed)
        self.feed, self.ins, self.n = {}, [], 0

    def l1(self, dt, data):
        """An L1 tensor loaded from a fed GM tensor (flat, padded to 32 bytes)."""
        self.n += 1
        size = -(-data.size * ESZ[dt] // 32) * 32 // ESZ[dt]
        full = np.zeros(size, data.dtype)
        full[:data.size] = data
        g = self.ti.Tensor(dt, (size,), name=f"g{self.n}", scope=tik.scope_gm)
        t = self.ti.Tensor(dt, (size,), name=f"l{self.n}", scope=tik.scope_cbuf)
        self.ti.data_move(t, g, 0, 1, size * ESZ[dt] // 32, 0, 0)
        self.feed[f"g{self.n}"] = full
        self.ins.append(g)
        return t

    def ints(self, dt, n, lim):
        return self.rng.integers(-lim, lim + 1, n).astype(dt)


@st.composite
def cases(draw):
    chip = draw(st.sampled_from(CHIPS))
    ins = draw(st.sampled_from(["int8", "float16"] + (["float32"] if chip in V220 else [])))
    l0c = {"int8": "int32", "float16": "float16" if chip in HISI else "float32", "float32": "float32"}[ins]
    c = dict(chip=chip, ins=ins, l0c=l0c, seed=draw(st.integers(0, 2 ** 31)), kind=draw(st.sampled_from(["conv", "mm"])),
             init2=draw(st.booleans()), cube_bias=chip in V220 and draw(st.booleans()))
    if c["kind"] == "conv":
        c04 = ins == "float16" and draw(st.booleans()) and draw(st.booleans())
        c0 = 4 if c04 else C0[ins]
        kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        dil = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
        pad = [draw(st.integers(0, 2)) for _ in range(4)]
        h = draw(st.integers(max(1, dil[0] * (kh - 1) + 1 - pad[2] - pad[3]), 7))
        wd = draw(st.integers(max(1, dil[1] * (kw - 1) + 1 - pad[0] - pad[1]), 7))
        c.update(fs=[1 if c04 else draw(st.integers(1, 2)), h, wd, c0], kh=kh, kw=kw, dil=dil, pad=pad,
                 stride=[draw(st.integers(1, 3)), draw(st.integers(1, 3))], cout=16 * draw(st.integers(1, 3)),
                 pv=draw(st.integers(-2, 2)))
    else:
        c.update(m=draw(st.integers(1, 40)), n=draw(st.integers(1, 40)), k=draw(st.integers(1, 90)),
                 k2=draw(st.integers(1, 90)))
    pairs = {"int32": ["int32", "float16"], "float32": ["float32", "float16"], "float16": ["float16"]}[l0c]
    c["dst"] = draw(st.sampled_from(pairs))
    quant = c["dst"] == "float16" and l0c != "float16"
    scale_kinds = ["imm"] if chip in V220 else (["imm", "scalar"] if chip in HISI else ["imm", "scalar", "tensor"])
    c["scale_kind"] = draw(st.sampled_from(scale_kinds)) if quant and l0c == "int32" else None
    addend_ok = chip not in V220 and not (chip in HISI and quant) and c["scale_kind"] != "tensor"
    c["addend"] = draw(st.sampled_from([None, "bias", "ewa"])) if addend_ok else None
    relu_ok = chip not in HISI and not c["addend"] and c["scale_kind"] not in ("imm", "scalar")
    c["relu"] = relu_ok and draw(st.booleans())
    c["dst_stride"] = draw(st.integers(0, 3))
    c["partial"] = draw(st.booleans()) and draw(st.booleans())
    return c


def build_and_check(c, illegal=None):
    chip, l0c = c["chip"], c["l0c"]
    K = Kernel(chip, c["seed"])
    ti, rng = K.ti, K.rng
    lim = 1 if l0c == "float16" else 3
    if c["kind"] == "conv":
        fs, ks = c["fs"], [c["fs"][0], c["kh"], c["kw"], c["cout"], c["fs"][3]]
        rows, cols = None, c["cout"]
    else:
        rows, cols = c["m"], c["n"]
    total, dst = None, None
    for op in range(2 if c["init2"] else 1):
        kw = {} if op == 0 else {"init_l1out": False}
        if c["kind"] == "conv":
            fm, w = K.ints(c["ins"], int(np.prod(fs)), lim), K.ints(c["ins"], int(np.prod(ks)), lim)
            res = conv_model(fm, w, fs, ks, c["stride"], c["pad"], c["dil"], c["pv"])
            rows = res.shape[0]
        else:
            k, k0 = (c["k"], c["k2"])[op], C0[c["ins"]]
            k1 = -(-k // k0)
            a, b = K.ints(c["ins"], k1 * r16(rows) * k0, lim), K.ints(c["ins"], k1 * r16(cols) * k0, lim)
            res = matmul_model(a, b, rows, k, cols, k0)
        if dst is None:
            dst = ti.Tensor(l0c, (-(-cols // 16), r16(rows), 16), name="l0c", scope=tik.scope_cbuf_out)
        if c["cube_bias"] and op == 0:
            bias = K.ints(l0c, cols, 3)
            kw["bias"] = K.l1(l0c, bias)
            res = res + bias
        if c["kind"] == "conv":
            args = dict(dst=dst, feature_map=K.l1(c["ins"], fm), weight=K.l1(c["ins"], w), fm_shape=fs,
                        kernel_shape=ks, stride=c["stride"], pad=c["pad"], dilation=c["dil"], pad_value=c["pv"], **kw)
        else:
            args = dict(dst=dst, a=K.l1(c["ins"], a), b=K.l1(c["ins"], b), m=rows, k=k, n=cols, **kw)
        if illegal and illegal[0] == c["kind"] and op == 0:
            refused(ti, "conv2d" if c["kind"] == "conv" else "matmul", args, illegal)
        (ti.conv2d if c["kind"] == "conv" else ti.matmul)(**args)
        total = res if total is None else total + res
    n1 = -(-cols // 16)
    img, known = np.zeros((n1, r16(rows), 16)), np.zeros((n1, r16(rows), 16), bool)
    for blk in range(n1):
        wdt = min(16, cols - 16 * blk)
        img[blk, :rows, :wdt], known[blk, :rows, :wdt] = total[:, 16 * blk:16 * blk + wdt], True
    howo = max(1, rows // 2) if c["partial"] else rows
    burst_len = howo * 16 * ESZ[l0c] // 32
    cb = n1 if not c["partial"] else max(1, n1 - 1)
    ext_t, ext_m = {}, {}
    if c["addend"] == "bias":
        v = K.ints(l0c, cb * 16, 3)
        ext_t["bias"], ext_m["bias"] = K.l1(l0c, v), v.astype(np.float64)
    if c["addend"] == "ewa":
        v = K.ints(l0c, cb * r16(howo) * 16, 3)
        ext_t["element-wise-add"], ext_m["ewa"] = K.l1(l0c, v), v.astype(np.float64)
    if c["dst"] == "float16" and l0c == "float32":
        ext_t["quantize_params"] = {"mode": "fp322fp16", "mode_param": None}
    if c["scale_kind"]:
        scale = np.float16(rng.choice([0.25, 0.5, 0.375, 3.0, 4096.0])) if chip not in V220 else np.float16(0.375)
        if c["scale_kind"] == "imm":
            mp = float(scale)
        elif c["scale_kind"] == "scalar":
            mp = ti.Scalar("float16", name="s", init_value=float(scale))
        else:
            scale = rng.choice([-0.5, 0.25, 0.125, 2.0], 16).astype(np.float16)
            mp = K.l1("float16", scale)
        ext_t["quantize_params"] = {"mode": "int322fp16", "mode_param": mp}
        ext_m["scale"] = np.asarray(scale, np.float64)
    if c["relu"]:
        ext_t["relu"] = ext_m["relu"] = True
    ref, wr, kn = fixpipe_model(img.reshape(-1), known.reshape(-1), l0c, c["dst"], cb, burst_len, c["dst_stride"],
                                ext_m, chip)
    out = ti.Tensor(c["dst"], (ref.size,), name="out", scope=tik.scope_gm)
    args = dict(dst=out, src=dst, cburst_num=cb, burst_len=burst_len, dst_stride=c["dst_stride"], src_stride=0,
                extend_params=ext_t or None)
    if illegal and illegal[0] == "fixpipe":
        refused(ti, "fixpipe", args, illegal)
    ti.fixpipe(**args)
    ti.BuildCCE(kernel_name="cube_fuzz", inputs=K.ins, outputs=[out])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # the dst_stride gaps are never written (by design)
        got = np.asarray(ti.tikdb.start_debug(feed_dict=K.feed, interactive=False)[0]).reshape(-1)
    check = wr & kn
    np.testing.assert_array_equal(got[check].astype(np.float64), ref[check], err_msg=str(c))
    assert (got[~wr].view(np.uint8) == 0xFF).all(), "a dst_stride gap was written"    # launch fill untouched


@settings(max_examples=70, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(cases())
def test_cube_kernels_match_the_documented_model(c):
    build_and_check(c)


# ---------------------------------------------------------------------------------------------- illegal calls
def refused(ti, api, args, illegal):
    _, key, words = illegal
    bad = {**args, **MUTATIONS[api][key](ti, args)}
    with pytest.raises(PtoError) as info:
        getattr(ti, api)(**bad)
    msg = str(info.value)
    assert any(w in msg for w in words), msg
    assert "Fix" in msg and __file__.rsplit("/", 1)[-1] in msg, msg


_NAMES = iter(range(1 << 30))


def _t(dt, scope, n=8192):
    def make(ti, args):
        return ti.Tensor(dt(args), (n,), name=f"bad{next(_NAMES)}", scope=scope)
    return make


MUTATIONS = {
    "conv2d": {
        "stride0": lambda ti, a: {"stride": [0, 1]},
        "stride64": lambda ti, a: {"stride": [1, 64]},
        "pad256": lambda ti, a: {"pad": [256, 0, 0, 0]},
        "pad3": lambda ti, a: {"pad": [0, 0, 0]},
        "dil0": lambda ti, a: {"dilation": [0, 1]},
        "cout24": lambda ti, a: {"kernel_shape": a["kernel_shape"][:3] + [24, a["kernel_shape"][4]]},
        "c1": lambda ti, a: {"kernel_shape": [a["kernel_shape"][0] + 1] + a["kernel_shape"][1:]},
        "dst_l1": lambda ti, a: {"dst": _t(lambda x: x["dst"].dtype, tik.scope_cbuf)(ti, a)},
        "fm_ub": lambda ti, a: {"feature_map": _t(lambda x: x["feature_map"].dtype, tik.scope_ubuf)(ti, a)},
        "init": lambda ti, a: {"init_l1out": "no"},
    },
    "matmul": {
        "m0": lambda ti, a: {"m": 0},
        "n4097": lambda ti, a: {"n": 4097},
        "kmax": lambda ti, a: {"k": 32768 // ESZ[a["a"].dtype] + 1},
        "mfloat": lambda ti, a: {"m": a["m"] + 0.5},
        "b_gm": lambda ti, a: {"b": _t(lambda x: x["b"].dtype, tik.scope_gm)(ti, a)},
        "dst_l1": lambda ti, a: {"dst": _t(lambda x: x["dst"].dtype, tik.scope_cbuf)(ti, a)},
    },
    "fixpipe": {
        "cb0": lambda ti, a: {"cburst_num": 0},
        "cb_over": lambda ti, a: {"cburst_num": a["cburst_num"] + 300},
        "bl0": lambda ti, a: {"burst_len": 0},
        "ds_neg": lambda ti, a: {"dst_stride": -1},
        "key": lambda ti, a: {"extend_params": {**(a["extend_params"] or {}), "biass": None}},
        "dst_short": lambda ti, a: {"dst": _t(lambda x: x["dst"].dtype, tik.scope_gm, 15)(ti, a)},
        "dst_l1": lambda ti, a: {"dst": _t(lambda x: x["dst"].dtype, tik.scope_cbuf)(ti, a)},
        "relu_int": lambda ti, a: {"extend_params": {**(a["extend_params"] or {}), "relu": 1}},
    },
}
WORDS = {"stride0": ["stride"], "stride64": ["stride"], "pad256": ["pad"], "pad3": ["pad"], "dil0": ["dilation"],
         "cout24": ["Cout", "kernel_shape"], "c1": ["kernel_shape", "C1", "fm_shape"], "dst_l1": ["dst"],
         "fm_ub": ["feature_map"], "init": ["init_l1out"], "m0": ["m"], "n4097": ["n"], "kmax": ["k"], "mfloat": ["m"],
         "b_gm": ["b"], "cb0": ["cburst_num"], "cb_over": ["src", "cburst_num"], "bl0": ["burst_len"],
         "ds_neg": ["dst_stride"], "key": ["biass"], "dst_short": ["dst"], "relu_int": ["relu"]}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(cases(), st.data())
def test_illegal_cube_calls_are_refused_and_change_nothing(c, data):
    api = data.draw(st.sampled_from(["fixpipe", "conv2d" if c["kind"] == "conv" else "matmul"]))
    key = data.draw(st.sampled_from(sorted(MUTATIONS[api])))
    if key == "relu_int" and c["chip"] in HISI:
        key = "cb0"
    build_and_check(c, illegal=("fixpipe" if api == "fixpipe" else c["kind"], key, WORDS[key]))
