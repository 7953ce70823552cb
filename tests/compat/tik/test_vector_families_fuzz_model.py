"""Differential regression of the remaining TIK vector families against independent, docs-only models.

Compact copy of helper task k461's fuzzer (/work/scratch_fuzz461/fz_new.py, ~15,000 generated kernels on
Ascend310/910/310P3/910B1 and the v200/v210/v300 parts Ascend610/BS9SX1AA/Ascend310B1) plus task k421's scratch
models of the reductions, compare/select and transposes, which had never been committed. Nothing here imports
pto_core (except the error base class) or another test's reference. Sources of each model:

* vmrgsort4 -- Ascend C MrgSort4: merge up to 4 score-descending region-proposal lists (8 elements, score =
  element 4), equal scores: the earlier proposal first (earlier list), ifExhaustedSuspension stops once a list
  is exhausted, the repeat form (4 valid lists of equal length, no suspension) skips the lists' total length.
* vsort32 / vmrgsort -- Ascend C Sort32 / MrgSort: 32 (score, uint32 index) 8-byte records per repeat, index in
  the high 4 bytes, score in the low bytes (half: 2 reserved bytes), "if i > j, score[j] first".
* vreduce / vreducev2 -- CCE vreducev2: patterns 1 = even lanes, 2 = odd, 3..6 = lane % 4 == p - 3, 7 = all, or a
  u16/u32 bit tensor; kept elements packed from dst; vreducev2 ignores the normal-mode mask; RSVD_CNT = count.
* vaadd / viou -- TIK: "sum of the two proposal areas", "intersection area of two proposals", 16 x 16 per repeat,
  every operation in the element dtype, RPN offset 1 after reset; numerics.md §3: saturation-mode chips clamp
  +-inf to +-max and NaN to 0.
* vci (CreateVecIndex: first + i), vgather / vscatter (CCE: one 4-byte byte offset per lane), vbcb (Brcb: src
  element 8r + j fills destination block j; block stride 0 acts as 1).
* reductions / vec_cmpv + vec_sel / vec_trans + vnchwconv -- tik_api.md §9.7-§9.10.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

F16, F32, U16, S16, U32, S32, U8, S8 = (np.dtype(t) for t in (np.float16, np.float32, np.uint16, np.int16,
                                                                np.uint32, np.int32, np.uint8, np.int8))
TIK = {F16: "float16", F32: "float32", U16: "uint16", S16: "int16", U32: "uint32", S32: "int32", U8: "uint8",
       S8: "int8", np.dtype(np.uint64): "uint64", np.dtype(np.int64): "int64"}
SATURATING = {"Ascend310", "Ascend910", "Ascend310P3", "Ascend610", "BS9SX1AA"}    # numerics.md §3
V100 = ("Ascend310", "Ascend910")
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


# ----------------------------------------------------------------------------- harness
def run(chip, bufs, body, core="AiCore"):
    """GM -> UB, ``body(ti, ub)``, UB -> GM; returns the GM outputs (or raises what ``body`` raised)."""
    set_current_compile_soc_info(chip, core)
    ti = tik.Tik()
    gm = {n: ti.Tensor(TIK[a.dtype], (a.size,), name=n, scope=tik.scope_gm) for n, a in bufs.items()}
    ub = {n: ti.Tensor(TIK[a.dtype], (a.size,), name=n + "_ub", scope=tik.scope_ubuf) for n, a in bufs.items()}
    for n, a in bufs.items():
        ti.data_move(ub[n], gm[n], 0, 1, a.nbytes // 32, 0, 0)
    body(ti, ub)
    for n, a in bufs.items():
        ti.data_move(gm[n], ub[n], 0, 1, a.nbytes // 32, 0, 0)
    ti.BuildCCE(kernel_name="k461", inputs=list(gm.values()), outputs=list(gm.values()))
    return dict(zip(bufs, ti.tikdb.start_debug(feed_dict={k: v.copy() for k, v in bufs.items()},
                                                 interactive=False)))


def check(chip, bufs, call, want, core="AiCore", post=None, cmp=None):
    outs = run(chip, bufs, lambda ti, ub: (call(ti, ub), post and post(ti, ub)), core)
    for n, w in want.items():
        if cmp is not None:
            cmp(n, outs[n])
        else:
            assert outs[n].tobytes() == w.tobytes(), (n, outs[n], w)


def refused(chip, bufs, call, api, core="AiCore"):
    """An illegal call: a PtoError naming the API, this file's line and a Fix; the kernel still runs unchanged."""
    caught = []

    def body(ti, ub):
        try:
            call(ti, ub)
        except PtoError as e:
            caught.append(e)
    outs = run(chip, bufs, body, core)
    assert caught, f"{api} accepted an illegal call"
    msg = str(caught[0])
    assert api in msg and "test_vector_families_fuzz_model.py:" in msg and "Fix:" in msg, msg
    for n, a in bufs.items():
        assert outs[n].tobytes() == a.tobytes(), n


def pad(n, dt):
    e = 32 // np.dtype(dt).itemsize
    return max(e, -(-n // e) * e)


def rnd(rng, dt, n):
    if dt.kind == "f":
        return (rng.standard_normal(n) * 10).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(dt)


def scores(rng, dt, n):
    """keys with many ties, +-0, +-inf, subnormals"""
    pool = [0.0, -0.0, 1.0, -1.0, 2.5, 3.0, np.inf, -np.inf, 6e-8 if dt == F16 else 1e-45, -7.0]
    return rng.choice(np.array(pool), n).astype(dt)


def mask_bits(mask, par):
    if isinstance(mask, list):
        v = (int(mask[0]) << 64) | int(mask[1])
        return np.array([(v >> i) & 1 for i in range(par)], bool)
    return np.arange(par) < mask


def draw_mask(rng, par):
    if rng.random() < 0.5:
        return int(rng.integers(1, par + 1))
    lo = int(rng.integers(1, 2 ** 32 if par == 32 else 2 ** 63))
    return [0 if par <= 64 else int(rng.integers(0, 2 ** 63)), lo]


def sat(v, chip):
    if chip not in SATURATING or v.dtype.kind != "f":
        return v
    fi = np.finfo(v.dtype)
    return np.clip(np.where(np.isnan(v), 0, v), fi.min, fi.max).astype(v.dtype)


def op1(x, dt, chip):
    """one operation rounded to the element type, in the chip's overflow mode"""
    with np.errstate(all="ignore"):
        return sat(np.asarray(x, np.float64).astype(dt), chip)


# ----------------------------------------------------------------------------- proposals: vmrgsort4, vaadd, viou
def merge(lists, key, exhausted):
    pos, out = [0] * len(lists), []
    while True:
        live = [k for k in range(len(lists)) if pos[k] < len(lists[k])]
        if not live or (exhausted and len(live) < len(lists)):
            return out, pos
        k = max(live, key=lambda k: (float(key(lists[k][pos[k]])), -k))
        out.append(lists[k][pos[k]])
        pos[k] += 1


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_vmrgsort4_merges_as_documented(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310", "Ascend910", "Ascend310P3", "Ascend610", "BS9SX1AA"]))
    dt = F16 if chip in V100 or rng.random() < 0.5 else F32
    nl = int(rng.integers(2, 5))
    exh = bool(rng.random() < 0.3)
    lens = [int(rng.integers(1, 12))] * nl if rng.random() < 0.4 else [int(rng.integers(1 if exh else 0, 12))
                                                                       for _ in range(nl)]
    lens[0] = max(lens[0], 1)
    rep = int(rng.integers(1, 4)) if nl == 4 and len(set(lens)) == 1 and not exh else 1
    total = sum(lens)
    offs = np.cumsum([0] + lens[:-1])
    src = rnd(rng, dt, pad(total * 8 * rep, dt))
    for r in range(rep):
        for k, n in enumerate(lens):
            b = src[(r * total + offs[k]) * 8:(r * total + offs[k] + n) * 8].reshape(n, 8)
            b[:, 4] = np.sort(scores(rng, dt, n).astype(np.float64))[::-1]
            b[:, 5] = np.arange(n) + 16 * k + 64 * r
    dst = np.full(pad(total * 8 * rep + 8, dt), -3, dt)
    want = dst.copy()
    cnt = np.zeros(8, np.int64)
    wcnt = cnt.copy()
    for r in range(rep):
        lists = [src[(r * total + offs[k]) * 8:(r * total + offs[k] + lens[k]) * 8].reshape(lens[k], 8)
                 for k in range(nl)]
        out, taken = merge(lists, lambda p: p[4], exh)
        want[r * total * 8:r * total * 8 + 8 * len(out)] = np.concatenate(out)
        wcnt[:nl] = taken
    hold = {}

    def call(ti, ub):
        srcs = [ub["src"][int(o) * 8:] for o in offs]
        if exh:
            hold["sr"] = [ti.Scalar("int64", init_value=-1) for _ in range(4)]
            ti.vmrgsort4(ub["dst"], srcs, lens, exh, {2: 3, 3: 7, 4: 15}[nl], rep, vms4_sr_scalar_array=hold["sr"])
        else:
            ti.vmrgsort4(ub["dst"], srcs, lens, exh, {2: 3, 3: 7, 4: 15}[nl], rep)

    def post(ti, ub):
        for i in range(4 if exh else 0):
            ub["cnt"][i].set_as(hold["sr"][i])
    check(chip, {"src": src, "dst": dst, "cnt": cnt}, call, {"dst": want, "cnt": wcnt if exh else cnt}, post=post)


def _boxes(rng, dt, n):
    x1, y1 = np.round(rng.uniform(0, 40, n)), np.round(rng.uniform(0, 40, n))
    w, h = np.round(rng.uniform(-3, 30, n) * 4) / 4, np.round(rng.uniform(-3, 30, n) * 4) / 4
    v = rng.standard_normal((n, 8))
    v[:, 0], v[:, 1], v[:, 2], v[:, 3] = x1, y1, x1 + w, y1 + h
    if rng.random() < 0.3:                       # huge coordinates: widths overflow the dtype
        v[rng.integers(0, n, 3), 2] = np.finfo(dt).max
        v[rng.integers(0, n, 3), 0] = -np.finfo(dt).max
    return v.astype(dt).ravel()


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_vaadd_and_viou_match_the_model(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310", "Ascend910", "Ascend310P3", "Ascend610", "BS9SX1AA"]))
    dt = F16 if chip in V100 or rng.random() < 0.5 else F32
    rep = int(rng.integers(1, 3))
    want = np.zeros(256 * rep, dt)
    if rng.random() < 0.5:
        api = "vaadd"
        a, b = scores(rng, dt, pad(16 * rep, dt)), scores(rng, dt, pad(16, dt))
        a[rng.integers(0, a.size)] = np.finfo(dt).max
        with np.errstate(invalid="ignore"):              # inf + -inf
            for i in range(16 * rep):
                want[16 * i:16 * i + 16] = op1(a[i].astype(np.float64) + b[:16].astype(np.float64), dt, chip)
    else:
        api = "viou"
        a, b = _boxes(rng, dt, 16 * rep), _boxes(rng, dt, 16)
        A, B = a.reshape(-1, 8).astype(np.float64), b.reshape(-1, 8).astype(np.float64)
        for i in range(16 * rep):
            w = op1(op1(np.minimum(A[i, 2], B[:, 2]) - np.maximum(A[i, 0], B[:, 0]), dt, chip).astype(np.float64)
                    + 1, dt, chip).astype(np.float64)
            h = op1(op1(np.minimum(A[i, 3], B[:, 3]) - np.maximum(A[i, 1], B[:, 1]), dt, chip).astype(np.float64)
                    + 1, dt, chip).astype(np.float64)
            want[16 * i:16 * i + 16] = op1(np.maximum(w, 0) * np.maximum(h, 0), dt, chip)
    dst = np.full(256 * rep + 16, -5, dt)
    w = dst.copy()
    w[:256 * rep] = want
    check(chip, {"a": a, "b": b, "dst": dst}, lambda ti, ub: getattr(ti, api)(ub["dst"], ub["a"], ub["b"], rep),
          {"dst": w})


# ----------------------------------------------------------------------------- v2 sort: vsort32, vmrgsort
def records(dt, sc, idx):
    raw = np.zeros((len(sc), 8), np.uint8)
    raw[:, 4:] = idx.astype(np.uint32).view(np.uint8).reshape(-1, 4)
    raw[:, :dt.itemsize] = sc.astype(dt).view(np.uint8).reshape(-1, dt.itemsize)
    return raw


def record_cmp(dt, want_raw, dst):
    keep = np.ones(8, bool)
    keep[2:4] = dt != F16                         # half: 2 reserved bytes

    def cmp(n, got):
        g = got.view(np.uint8)
        assert (g[:want_raw.size].reshape(-1, 8)[:, keep] == want_raw[:, keep]).all()
        assert g[want_raw.size:].tobytes() == dst.view(np.uint8)[want_raw.size:].tobytes()
    return cmp


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_vsort32_and_vmrgsort_match_the_model(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend910B1", "Ascend310B1"]))
    dt = F16 if rng.random() < 0.5 else F32
    per = 8 // dt.itemsize
    if rng.random() < 0.5:
        rep = int(rng.integers(1, 4))
        sc = scores(rng, dt, pad(32 * rep, dt))
        ix = rng.permutation(10 ** 5)[:pad(32 * rep, U32)].astype(np.uint32)
        dst = rnd(rng, dt, pad(32 * rep * per + per, dt))
        order = [32 * r + np.argsort(-sc[32 * r:32 * r + 32].astype(np.float64), kind="stable") for r in range(rep)]
        want_raw = np.concatenate([records(dt, sc[o], ix[o]) for o in order])
        check(chip, {"dst": dst, "sc": sc, "ix": ix}, lambda ti, ub: ti.vsort32(ub["dst"], ub["sc"], ub["ix"], rep),
              {"dst": dst}, cmp=record_cmp(dt, want_raw, dst))
        return
    nl = int(rng.integers(1, 5))
    exh = bool(rng.random() < 0.3)
    lens = [int(rng.integers(1 if exh else 0, 20)) for _ in range(nl)]
    lens[0] = max(lens[0], 1)
    raws = [records(dt, np.sort(scores(rng, dt, n).astype(np.float64))[::-1], np.arange(n) + 1000 * k)
            for k, n in enumerate(lens)]
    allr = np.concatenate(raws + [np.zeros((4 - sum(lens) % 4, 8), np.uint8)])
    src = allr.view(dt).ravel().copy()
    offs = np.cumsum([0] + lens[:-1])
    out, _ = merge(raws, lambda r: r[:dt.itemsize].view(dt)[0], exh)
    want_raw = np.array(out, np.uint8).reshape(-1, 8)
    dst = rnd(rng, dt, pad(sum(lens) * per + per, dt))
    check(chip, {"src": src, "dst": dst},
          lambda ti, ub: ti.vmrgsort(ub["dst"], [ub["src"][int(o) * per:] for o in offs], lens, exh, 1),
          {"dst": dst}, cmp=record_cmp(dt, want_raw, dst))


# ----------------------------------------------------------------------------- vreduce, vci, vgather/vscatter, vbcb
def pattern(p, par):
    i = np.arange(par)
    return {1: i % 2 == 0, 2: i % 2 == 1, 3: i % 4 == 0, 4: i % 4 == 1, 5: i % 4 == 2, 6: i % 4 == 3,
            7: i >= 0}[p]


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_vreduce_keeps_the_pattern_lanes(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310P3", "Ascend610", "BS9SX1AA", "Ascend910B1", "Ascend310B1"]))
    api = "vreduce" if chip in ("Ascend310P3", "Ascend610", "BS9SX1AA") else "vreducev2"
    dt = [F16, F32, U16, S16, U32, S32][rng.integers(6)]
    E, pdt = 32 // dt.itemsize, (U16 if dt.itemsize == 2 else U32)
    par, wb = 8 * E, 8 * pdt.itemsize
    pw = par // wb
    rep, sb, sr, pr = int(rng.integers(1, 5)), int(rng.choice([1, 2, 0])), int(rng.choice([8, 16, 0, 9])), 1
    mask = draw_mask(rng, par)
    use_tensor = rng.random() < 0.4
    pat = int(rng.integers(1, 7 if api == "vreduce" else 8))
    src = rnd(rng, dt, pad(max(r * sr * E + 7 * sb * E + E for r in range(rep)), dt))
    pbuf = rng.integers(0, 2 ** wb, pad(rep * pw, pdt), dtype=np.uint64).astype(pdt)
    dst = rnd(rng, dt, pad(rep * par + 8, dt))
    m = np.ones(par, bool) if api == "vreducev2" else mask_bits(mask, par)     # CCE: v2 ignores the mask
    kept = []
    for r in range(rep):
        bits = (np.array([(int(pbuf[r * pw + i // wb]) >> (i % wb)) & 1 for i in range(par)], bool)
                if use_tensor else pattern(pat, par))
        lanes = np.nonzero(bits & m)[0]
        kept.append(src[r * sr * E + (lanes // E) * sb * E + lanes % E])
    kept = np.concatenate(kept)
    want = dst.copy()
    want[:kept.size] = kept
    cnt = np.zeros(8, np.uint32)
    hold = {}

    def call(ti, ub):
        hold["n"] = ti.Scalar("uint32", init_value=7)
        getattr(ti, api)(mask, ub["dst"], ub["src"], ub["pat"] if use_tensor else pat, rep, sb, sr, pr,
                         rsvd_scalar=hold["n"])
    check(chip, {"src": src, "dst": dst, "pat": pbuf, "cnt": cnt}, call,
          {"dst": want, "cnt": np.array([kept.size] + [0] * 7, np.uint32)},
          post=lambda ti, ub: ub["cnt"][0].set_as(hold["n"]))


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_index_fill_gather_scatter_and_block_broadcast_match_the_model(seed):
    rng = np.random.default_rng(seed)
    fam = str(rng.choice(["vci", "gather", "vbcb"]))
    dt = [F16, F32, S16, S32][rng.integers(4)] if fam == "vci" else [F16, F32, U16, S16, U32, S32][rng.integers(6)]
    E = 32 // dt.itemsize
    par = 8 * E
    rep = int(rng.integers(1, 4))
    if fam == "vci":                       # tik_api.md Appendix B: tik.vci on 310P / 610 / 310B
        chip, core = str(rng.choice(["Ascend310P3", "Ascend610", "Ascend310B1"])), str(rng.choice(["AiCore",
                                                                                                   "VectorCore"]))
        start = float(rng.choice([0.0, -3.0, 1.5, 65000.0])) if dt.kind == "f" else int(rng.choice([0, -5, 32700]))
        if dt == F32:
            start = float(rng.choice([0.0, -3.0, 16777210.0]))
        mask, db, dr = draw_mask(rng, par), int(rng.choice([1, 2])), int(rng.choice([8, 9, 16]))
        dst = rnd(rng, dt, pad(max(r * dr * E + 7 * db * E + E for r in range(rep)), dt))
        want = dst.copy()
        lanes = np.nonzero(mask_bits(mask, par))[0]
        for r in range(rep):
            k = r * par + lanes
            if dt.kind == "f":
                v = op1(np.float64(dt.type(start)) + k, dt, chip)
            else:
                b = 8 * dt.itemsize
                v = ((int(start) + k + 2 ** (b - 1)) % 2 ** b - 2 ** (b - 1)).astype(dt)
            want[r * dr * E + (lanes // E) * db * E + lanes % E] = v
        check(chip, {"dst": dst}, lambda ti, ub: ti.vci(mask, ub["dst"], start, rep, db, dr), {"dst": want}, core)
    elif fam == "gather":
        chip = str(rng.choice(["Ascend310P3", "Ascend610", "Ascend910B1", "Ascend310B1"]))
        api = "vgather" if chip == "Ascend910B1" or rng.random() < 0.5 else "vscatter"
        rs, base_el = int(rng.choice([8, 9, 16])), int(rng.integers(0, 4))
        mask = draw_mask(rng, par)
        lanes = np.nonzero(mask_bits(mask, par))[0]
        idx = rnd(rng, dt, pad(rep * par + 8, dt))
        strided = rnd(rng, dt, pad(max(r * rs * E + par for r in range(rep)), dt))
        off = (rng.integers(0, idx.size - base_el, pad(rep * par, S32)) * dt.itemsize).astype(np.int32)
        want = (strided if api == "vgather" else idx).copy()
        for r in range(rep):
            for e in lanes:
                j = base_el + off[r * par + e] // dt.itemsize
                if api == "vgather":
                    want[r * rs * E + e] = idx[j]
                else:
                    want[j] = strided[r * rs * E + e]          # duplicate targets: the later lane wins

        def call(ti, ub):
            if api == "vgather":
                ti.vgather(mask, ub["strided"], ub["idx"], ub["off"], rep, rs, base_el * dt.itemsize)
            else:
                ti.vscatter(mask, ub["idx"], ub["strided"], ub["off"], rep, rs, base_el * dt.itemsize)
        check(chip, {"idx": idx, "strided": strided, "off": off}, call,
              {"strided" if api == "vgather" else "idx": want})
    else:
        chip = str(rng.choice(["Ascend910B1", "Ascend310B1"]))
        db, dr = int(rng.choice([1, 0, 2])), int(rng.choice([8, 16, 20]))
        src = rnd(rng, dt, pad(8 * rep, dt))
        dst = rnd(rng, dt, pad(max(r * dr * E + 7 * max(db, 1) * E + E for r in range(rep)), dt))
        want = dst.copy()
        for r in range(rep):
            for j in range(8):
                a = (r * dr + j * max(db, 1)) * E          # Ascend C Brcb: block stride 0 acts as 1
                want[a:a + E] = src[8 * r + j]
        check(chip, {"src": src, "dst": dst}, lambda ti, ub: ti.vbcb(ub["dst"], ub["src"], rep, db, dr),
              {"dst": want})


# ----------------------------------------------------------------------------- reductions (k421's model, §9.7)
ROWS = {"vcmax": {"Ascend310": (F16,), "Ascend910": (F16,)}, "vcgadd": {"Ascend310": (F16,), "Ascend910": (F16,)}}


def tree(v, dt, chip):
    v = list(v)
    while len(v) > 1:
        v = [op1(np.float64(v[2 * i]) + np.float64(v[2 * i + 1]), dt, chip)[()] for i in range(len(v) // 2)]
    return v[0]


def first_extreme(v, largest):
    f = v.astype(np.float64)
    return int(np.nonzero(f == (f.max() if largest else f.min()))[0][0])


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_reductions_match_the_model(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1"]))
    api = str(rng.choice(["vcadd", "vcmax", "vcmin", "vcgadd", "vcgmax", "vcgmin", "vcpadd", "vec_reduce_max",
                          "vec_reduce_min"]))
    dt = F16 if chip in V100 and api != "vcadd" else (F16 if rng.random() < 0.5 else F32)
    E, par = 32 // dt.itemsize, 256 // dt.itemsize
    mask = draw_mask(rng, par)
    act = mask_bits(mask, par)
    lanes = np.nonzero(act)[0]
    rep = int(rng.integers(1, 6))
    sblk, srep = (int(rng.choice([1, 2])) if api.startswith("vc") else 1), int(rng.choice([8, 0, 10]))
    src = rng.integers(-5, 6, pad(max(r * srep * E + 7 * sblk * E + E for r in range(rep)), dt)).astype(dt)
    if rng.random() < 0.5:
        src = (src + rng.standard_normal(src.size)).astype(dt)
    dst = (rnd(rng, dt, pad(rep * (par // 2) + 2 * E, dt)) + dt.type(100)).astype(dt)
    out = dst.copy()
    iv = out.view(np.uint16 if dt.itemsize == 2 else np.uint32)
    vals = [src[r * srep * E + (lanes // E) * sblk * E + lanes % E] for r in range(rep)]
    per = {"vcadd": 1, "vcmax": 2, "vcmin": 2, "vcgadd": 8, "vcgmax": 8, "vcgmin": 8, "vcpadd": par // 2}.get(api)
    for r in range(rep if per else 0):
        full = np.zeros(par, dt)
        full[lanes] = vals[r]
        b = r * per
        if api == "vcadd":
            out[b] = tree(full, dt, chip)
        elif api in ("vcmax", "vcmin"):
            k = first_extreme(vals[r], api == "vcmax")
            out[b], iv[b + 1] = vals[r][k], lanes[k]
        elif api == "vcpadd":
            for i in range(par // 2):
                if act[2 * i] or act[2 * i + 1]:
                    out[b + i] = op1(np.float64(full[2 * i]) + np.float64(full[2 * i + 1]), dt, chip)
        else:
            for g in range(8):
                sel = [x for x in range(g * E, g * E + E) if act[x]]
                if sel and api == "vcgadd":
                    out[b + g] = tree(full[g * E:g * E + E], dt, chip)
                elif sel:
                    out[b + g] = full[sel][first_extreme(full[sel], api == "vcgmax")]
    cal = False
    if not per:
        allv, alli = np.concatenate(vals), np.concatenate([r * par + lanes for r in range(rep)])
        k = first_extreme(allv, api.endswith("max"))
        cal = bool(rng.random() < 0.5)
        out[0] = allv[k]
        if cal:
            iv[1] = alli[k]
    work = rnd(rng, dt, pad(4 * rep + 4 * E, dt))

    def call(ti, ub):
        if per:
            getattr(ti, api)(mask, ub["d"], ub["s"], rep, 1, sblk, srep)
        else:
            getattr(ti, api)(mask, ub["d"], ub["s"], ub["w"], rep, srep, cal)
    check(chip, {"d": dst, "s": src, "w": work}, call, {"d": out})


# ----------------------------------------------------------------------------- vec_cmpv + vec_sel (§9.8, §9.9)
CMP = {"lt": np.less, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal, "le": np.less_equal}


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_cmpv_then_sel_match_the_model(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1"]))
    dt = F16 if chip == "Ascend310" or rng.random() < 0.5 else F32
    E, par = 32 // dt.itemsize, 256 // dt.itemsize
    op = str(rng.choice(list(CMP)))
    rep = int(rng.integers(1, 4))
    mode = 0 if chip in V100 else int(rng.choice([0, 1, 2]))
    mask = draw_mask(rng, par)
    lanes = np.nonzero(mask_bits(mask, par))[0]
    r0, r1 = int(rng.choice([8, 0, 9])), int(rng.choice([8, 0, 9]))
    n = pad(max(r * max(r0, r1) * E + par for r in range(rep)), dt)
    a, b = (rng.integers(-3, 4, n) / 2).astype(dt), (rng.integers(-3, 4, n) / 2).astype(dt)
    bits = np.concatenate([CMP[op](a[r * r0 * E + np.arange(par)], b[r * r1 * E + np.arange(par)])
                           for r in range(rep)])
    sel = np.zeros(pad(rep * par // 8, U8), np.uint8)
    packed = np.packbits(bits.astype(np.uint8), bitorder="little")
    sel[:packed.size] = packed
    d = (rng.integers(-9, 9, pad(rep * 8 * E + E, dt)) * 3).astype(dt)
    out = d.copy()
    scalar = 0.5
    for r in range(rep):
        sb = bits[(lanes if mode == 0 else r * par + lanes)]
        other = np.full(lanes.size, dt.type(scalar)) if mode == 1 else b[r * r1 * E + lanes]
        out[r * 8 * E + lanes] = np.where(sb, a[r * r0 * E + lanes], other)

    def call(ti, ub):
        getattr(ti, f"vec_cmpv_{op}")(ub["sel"], ub["a"], ub["b"], rep, r0, r1)
        ti.vec_sel(mask, mode, ub["d"], ub["sel"], ub["a"], scalar if mode == 1 else ub["b"], rep, 8, r0, r1)
    check(chip, {"sel": np.zeros_like(sel), "a": a, "b": b, "d": d}, call, {"sel": sel, "d": out})


# ----------------------------------------------------------------------------- transposes (§9.10)
@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_transposes_match_the_model(seed):
    rng = np.random.default_rng(seed)
    chip = str(rng.choice(["Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1"]))
    if rng.random() < 0.4:
        dt = [F16, S16, U16][rng.integers(3)]
        rep, dr, sr = int(rng.integers(1, 4)), int(rng.choice([1, 2])), int(rng.choice([1, 2, 3]))
        src, dst = rnd(rng, dt, ((rep - 1) * sr + 1) * 256), rnd(rng, dt, ((rep - 1) * dr + 1) * 256 + 16)
        out = dst.copy()
        for r in range(rep):
            out[r * dr * 256:r * dr * 256 + 256] = src[r * sr * 256:r * sr * 256 + 256].reshape(16, 16).T.ravel()
        check(chip, {"d": dst, "s": src}, lambda ti, ub: ti.vec_trans(ub["d"], ub["s"], rep, dr, sr), {"d": out})
        return
    dts = [F16, S16, U16, S8, U8] + ([S32, U32, F32] if chip not in V100 else [])
    dt = dts[rng.integers(len(dts))]
    E = 32 // dt.itemsize
    rep = int(rng.integers(2, 4))
    dr, sr = int(rng.choice([16, 17, 32])), int(rng.choice([16, 1, 32]))
    dh, sh = (bool(rng.integers(2)), bool(rng.integers(2))) if dt.itemsize == 1 else (False, False)
    dblk, sblk = rng.permutation(40)[:16], rng.permutation(40)[:16]
    src, dst = rnd(rng, dt, (40 + rep * sr) * E), rnd(rng, dt, (40 + rep * dr + 1) * E)
    out = dst.copy()
    for r in range(rep):
        S = [src[(sblk[k] + r * sr) * E:(sblk[k] + r * sr) * E + E] for k in range(16)]
        D = [(dblk[e] + r * dr) * E for e in range(16)]
        for e in range(16):
            for k in range(16 if dt.itemsize != 4 else 8):
                if dt.itemsize == 2:
                    out[D[e] + k] = S[k][e]
                elif dt.itemsize == 4:
                    out[D[e] + k] = S[k + 8 * (e % 2)][e // 2]
                else:
                    out[D[e] + k + 16 * dh] = S[k][e + 16 * sh]
    check(chip, {"d": dst, "s": src},
          lambda ti, ub: ti.vnchwconv(dh, sh, [ub["d"][int(b) * E] for b in dblk], [ub["s"][int(b) * E] for b in sblk],
                                      rep, dr, sr), {"d": out})


# ----------------------------------------------------------------------------- illegal calls
@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_illegal_calls_are_refused_and_change_nothing(seed):
    rng = np.random.default_rng(seed)
    kind = str(rng.choice(["mrg4_valid", "mrg4_lists", "mrg4_count", "mrg4_overlap", "nms_chip", "nms_rep",
                           "vreduce_pattern", "vci_chip", "gather_offset_dtype", "vbcb_rep", "vsort32_index",
                           "vmrgsort_rep"]))
    h = np.full(512, 1, F16)
    w = np.zeros(256, F16)
    i32 = np.zeros(128, np.int32)
    bufs = {"h": h, "w": w, "i": i32}
    if kind.startswith("mrg4"):
        chip, api = str(rng.choice(["Ascend310", "Ascend310P3"])), "vmrgsort4"
        call = {"mrg4_valid": lambda ti, ub: ti.vmrgsort4(ub["w"], [ub["h"], ub["h"][64:]], [4, 4], False, 16, 1),
                "mrg4_lists": lambda ti, ub: ti.vmrgsort4(ub["w"], [ub["h"], ub["h"][64:]], [4, 4], False, 15, 1),
                "mrg4_count": lambda ti, ub: ti.vmrgsort4(ub["w"], [ub["h"], ub["h"][64:]], [4096, 1], False, 3, 1),
                "mrg4_overlap": lambda ti, ub: ti.vmrgsort4(ub["h"], [ub["h"], ub["h"][64:]], [4, 4], False, 3, 1),
                }[kind]
    elif kind.startswith("nms"):
        api = "viou"
        chip = "Ascend910B1" if kind == "nms_chip" else "Ascend310"
        rep = 1 if kind == "nms_chip" else int(rng.choice([0, 256]))
        call = lambda ti, ub: ti.viou(ub["w"], ub["h"], ub["h"], rep)        # noqa: E731
    elif kind == "vreduce_pattern":
        chip, api = "Ascend310P3", "vreduce"
        call = lambda ti, ub: ti.vreduce(128, ub["w"], ub["h"], int(rng.choice([0, 7])), 1, 1, 8, 0)   # noqa: E731
    elif kind == "vci_chip":
        chip, api = str(rng.choice(["Ascend910B1", "Ascend310", "BS9SX1AA"])), "vci"
        call = lambda ti, ub: ti.vci(128, ub["w"], 0, 1, 1, 8)              # noqa: E731
    elif kind == "gather_offset_dtype":
        chip, api = "Ascend310P3", "vgather"
        call = lambda ti, ub: ti.vgather(128, ub["w"], ub["h"], ub["h"], 1, 8)   # noqa: E731
    elif kind == "vbcb_rep":
        chip, api = "Ascend910B1", "vbcb"
        call = lambda ti, ub: ti.vbcb(ub["w"], ub["h"], int(rng.choice([0, 256])), 1, 8)   # noqa: E731
    elif kind == "vsort32_index":
        chip, api = "Ascend910B1", "vsort32"
        call = lambda ti, ub: ti.vsort32(ub["w"], ub["h"], ub["i"], 1)     # noqa: E731
    else:
        chip, api = "Ascend910B1", "vmrgsort"
        call = lambda ti, ub: ti.vmrgsort(ub["w"], [ub["h"], ub["h"][64:]], [4, 4], False, 2)   # noqa: E731
    refused(chip, bufs, call, api)


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910", "Ascend310P3"])
def test_nms_ops_saturate_like_vadd(chip):
    """vaadd of +-max + +-max and viou of a width past the f16 range: +-inf clamps to +-65504 on the
    saturation-mode chips (numerics.md §3), as vadd does; they wrote inf before."""
    a = np.full(16, 65504, F16)
    a[1::2] = -65504
    b = np.full(16, 65504, F16)
    b[1::2] = -65504
    boxes = np.zeros((16, 8), F16)
    boxes[:, 0], boxes[:, 2], boxes[:, 3] = -60000, 60000, 1
    want_add = np.where((np.arange(16)[:, None] % 2) == (np.arange(16)[None, :] % 2),
                        np.where(np.arange(16)[:, None] % 2 == 0, 65504, -65504), 0).astype(F16).ravel()
    dst = np.full(256, 7, F16)
    check(chip, {"a": a, "b": b, "dst": dst}, lambda ti, ub: ti.vaadd(ub["dst"], ub["a"], ub["b"], 1),
          {"dst": want_add})
    b2 = boxes.ravel()
    check(chip, {"a": b2, "b": b2.copy(), "dst": dst}, lambda ti, ub: ti.viou(ub["dst"], ub["a"], ub["b"], 1),
          {"dst": np.full(256, 65504, F16)})


@pytest.mark.parametrize("step", [True, False])
def test_nms_overflow_mode_applies_at_each_step(step, monkeypatch):
    """review470: NMS_OVERFLOW_AT_EACH_STEP (named choice, vector_nms.py). A box with x1 = x2 = +inf: its width
    inf - inf is NaN, which the saturation-mode step writes as 0, + offset 1 = 1; height (1 - 0) + 1 = 2; area 2
    (vrpac), and the same for viou of two such boxes. Saturating only the final area would give NaN -> 0."""
    from pto_core.ops import vector_nms
    monkeypatch.setattr(vector_nms, "NMS_OVERFLOW_AT_EACH_STEP", step)
    boxes = np.zeros((16, 8), F16)
    boxes[:, 0] = boxes[:, 2] = np.inf
    boxes[:, 3] = 1
    want = np.full(16, 2 if step else 0, F16)
    check("Ascend310P3", {"a": boxes.ravel(), "dst": np.full(16, 7, F16)},
          lambda ti, ub: ti.vrpac(ub["dst"], ub["a"], 1), {"dst": want})
    check("Ascend310P3", {"a": boxes.ravel(), "b": boxes.ravel().copy(), "dst": np.full(256, 7, F16)},
          lambda ti, ub: ti.viou(ub["dst"], ub["a"], ub["b"], 1), {"dst": np.full(256, want[0], F16)})


# ----------------------------------------------------------------------------- vadddeqrelu, vmulconv, counter mode
def lane_addr(r, lanes, blk, rep, e):
    """tik_api.md §9.1, stride_unit 0, in the operand's own elements (e = 32 / itemsize)"""
    return r * rep * e + (lanes // e) * blk * e + lanes % e


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1))
def test_vadddeqrelu_vmulconv_and_sel_after_counter_mode(seed):
    rng = np.random.default_rng(seed)
    fam = str(rng.choice(["deq", "mulconv", "sel"]))
    rep = int(rng.integers(1, 4))
    if fam == "sel":          # vec_sel has no mask_mode: a counter-mode op before it must not leak into it
        chip = str(rng.choice(["Ascend310P3", "Ascend610", "Ascend910B1"]))
        n = int(rng.integers(1, 300))
        mask = draw_mask(rng, 128)
        lanes = np.nonzero(mask_bits(mask, 128))[0]
        x, a, b = (rng.integers(-4, 5, 384) / 2).astype(F16), rnd(rng, F16, 128 * rep), rnd(rng, F16, 128 * rep)
        bits = rng.random(128 * rep) < 0.5
        sel = np.zeros(pad(16 * rep, U8), np.uint8)
        sel[:16 * rep] = np.packbits(bits.astype(np.uint8), bitorder="little")
        d = np.full(128 * rep, 9, F16)
        wx, wd = x.copy(), d.copy()
        wx[:n] = x[:n] + F16.type(1)
        for r in range(rep):
            k = r * 128 + lanes
            wd[k] = np.where(bits[k], a[k], b[k])

        def call(ti, ub):
            ti.vec_adds(n, ub["x"], ub["x"], 1.0, 1, 8, 8, mask_mode="counter")
            ti.vec_sel(mask, 2, ub["d"], ub["sel"], ub["a"], ub["b"], rep, 8, 8, 8)
        check(chip, {"x": x, "a": a, "b": b, "sel": sel, "d": d}, call, {"x": wx, "d": wd})
        return
    deq = fam == "deq"
    chip = str(rng.choice(["Ascend910", "Ascend310P3"] if deq else ["Ascend910", "Ascend310P3", "Ascend910B1"]))
    par = 64 if deq else 128
    sdt, ddt = (S32, F16) if deq else (F16, U8 if rng.random() < 0.5 else S8)
    es, ed = 32 // sdt.itemsize, 32 // ddt.itemsize
    mask = draw_mask(rng, par)
    lanes = np.nonzero(mask_bits(mask, par))[0]
    blks = [int(rng.choice([1, 2])), int(rng.choice([1, 0, 2])), int(rng.choice([1, 2]))]
    reps = [int(rng.choice([4, 8, 9])), int(rng.choice([8, 0, 9])), int(rng.choice([8, 16]))]
    ext = [int(lane_addr(rep - 1, lanes, b, r, e).max()) + 1 for b, r, e in zip(blks, reps, (ed, es, es))]
    if deq:       # |a + b| < 2**31: the sum's int32 overflow is undocumented (the simulator wraps)
        a, b = [rng.integers(-2 ** 29, 2 ** 29, pad(n, S32)).astype(np.int32) for n in ext[1:]]
        scale = float(rng.choice([0.5, -0.25, 1e-3, 3.0, 6e-8]))
    else:
        pool = [0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.0, 255.5, 256.0, -128.5, -129.0, np.inf, -np.inf, 0.0, 23.1]
        a = rng.choice(np.array(pool), pad(ext[1], F16)).astype(F16)
        b = rng.choice(np.array([1.0, -1.0, 0.5, 2.0, 3.0]), pad(ext[2], F16)).astype(F16)
    d = rnd(rng, ddt, pad(ext[0], ddt) + ed)
    want = d.copy()
    for r in range(rep):
        x = a[lane_addr(r, lanes, blks[1], reps[1], es)].astype(np.float64)
        y = b[lane_addr(r, lanes, blks[2], reps[2], es)].astype(np.float64)
        if deq:       # TIK: relu(deqscale * (src0 + src1)), one rounding to f16; relu(-0) = +0
            v = op1((x + y) * float(F16.type(scale)), F16, chip)
            v = np.where(v > 0, v, F16.type(0)).astype(F16)
        else:         # MulCast: Cast(src0 * src1): the half product, then nearest-even, saturated
            p = op1(x * y, F16, chip).astype(np.float64)
            info = np.iinfo(ddt)
            v = np.clip(np.rint(np.where(np.isnan(p), 0, p)), info.min, info.max).astype(ddt)
        want[lane_addr(r, lanes, blks[0], reps[0], ed)] = v

    def call(ti, ub):
        if deq:
            ti.vadddeqrelu(mask, ub["d"], scale, ub["a"], ub["b"], rep, *blks, *reps)
        else:
            ti.vmulconv(mask, ub["d"], ub["a"], ub["b"], rep, *blks, *reps)
    check(chip, {"d": d, "a": a, "b": b}, call, {"d": want})
