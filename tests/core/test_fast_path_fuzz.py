"""Differential fuzz of two speed paths against their general forms (review413):

* `cube.MAD_F16_PLAN`: random eager mads (mad / mad_acc / mad_bias, f16 and other types, odd m / n / k, every
  chip family with or without f16 x f16 -> f32, sat / nosat / the machine's overflow mode, +-0 / subnormal / inf /
  NaN codes, partly written L0A / L0B / L0C, uninitialized raise / record / off, hazards on / off, an unsynchronised
  MTE1 write before the mad, out-of-bounds L0A, unit flags, a repeated mad) run with the plan on and off: the same
  first error (class, text), reports, and L0A / L0B / L0C bytes and written flags;
* `shadow.SMALL_MAP_PATHS`: random `BlockMap.assign` sequences (also with tiny `MAX_RUNS`) against a plain array,
  with the same runs on both paths after every step.

The scratch fuzzers behind these (2,000+ mads, 12,000 sequences) are recorded in the review413 RESULTS.md."""
import random
import warnings

import numpy as np

from pto_core import Machine, MachineOptions, pto
from pto_core.checks import shadow
from pto_core.checks.shadow import BlockMap
from pto_core.ops import cube

CHIPS = ("A2A3", "A5", "Ascend310", "Ascend910A", "Ascend310P3", "Ascend610", "BS9SX1AA", "Ascend910B1",
         "Ascend310B1", "Kirin9030", "KirinX90", "SD3403")
#: +-0, +-smallest subnormal, largest subnormal, +-65504, +-inf, quiet / signalling NaN, negative NaN, 2**-14, 1.0
F16_SPECIALS = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
                         0xFE00, 0x0400, 0x3C00], np.uint16)


def _case(seed):
    r = random.Random(seed)
    return dict(seed=seed, target=r.choice(CHIPS), op=r.choice(("mad", "mad_acc", "mad_acc", "mad", "mad_bias")),
                m=r.choice((1, 2, 15, 16, 17, 31, 33, r.randint(1, 130))), n=r.choice((1, 15, 16, 17, 47, r.randint(1, 130))),
                k=r.choice((1, 3, 15, 16, 17, 33, 64, r.randint(1, 200))), dt=r.choice(("f16",) * 10 + ("bf16", "f32")),
                dst=r.choice(("f32",) * 10 + ("f16",)), sat=r.choice((None, None, True, False)),
                ovf=r.choice((None, "saturation", "inf_nan")), uninit=r.choice(("record", "raise", "off")),
                hazards=r.random() < 0.8, disable_gemv=r.random() < 0.7,
                unit_flag=r.choice((None, None, "check_and_set", "check_only")), specials=r.random() < 0.3,
                partial=r.choice((None, None, "a", "b", "c")), race=r.random() < 0.15, oob=r.random() < 0.05,
                addr=r.choice((0, 0, 512, 1024 * r.randint(0, 30))), caddr=r.choice((0, 0, 1024, 4096 * r.randint(0, 20))),
                fill=r.choice(("pattern", "random", "zero")), twice=r.random() < 0.3)


def _codes(rng, c, nel):
    if c["dt"] == "f32":
        x = rng.standard_normal(nel).astype(np.float32)
        if c["specials"]:
            x[rng.integers(0, nel, max(1, nel // 20))] = np.inf
        return x.view(np.uint8)
    if c["specials"]:
        x = rng.integers(0, 65536, nel).astype(np.uint16)
        idx = rng.integers(0, nel, max(1, nel // 10))
        x[idx] = rng.choice(F16_SPECIALS, idx.size)
    elif c["dt"] == "f16":
        x = rng.standard_normal(nel).astype(np.float16).view(np.uint16)
    else:
        x = (rng.standard_normal(nel).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return x.view(np.uint8)


def _run(c, plan):
    """One case with `MAD_F16_PLAN` = ``plan``: (first error, reports, L0A / L0B / L0C bytes and written flags)."""
    cube.MAD_F16_PLAN = plan
    m = Machine(c["target"], options=MachineOptions(fill=c["fill"], seed=c["seed"], uninitialized=c["uninit"],
                                                    check_hazards=c["hazards"], overflow_mode=c["ovf"]))
    rng = np.random.default_rng(c["seed"])
    mm, n, k, dt = c["m"], c["n"], c["k"], c["dt"]
    esz = 4 if dt == "f32" else 2
    ka, rows, na = -(-k // (32 // esz)) * (32 // esz), -(-mm // 16) * 16, -(-n // 16) * 16
    err = None
    try:
        lhs = m.ptr("l0a", dt, c["addr"] + (1 << 20 if c["oob"] else 0))
        rhs, dst = m.ptr("l0b", dt, c["addr"]), m.ptr("l0c", c["dst"], c["caddr"])
        a, b = _codes(rng, c, rows * ka), _codes(rng, c, na * ka)
        acc = rng.standard_normal(rows * na).astype(np.float32 if c["dst"] == "f32" else np.float16).view(np.uint8)
        cut = {"a": a, "b": b, "c": acc}.get(c["partial"])
        if cut is not None:                      # only the first part of the tile written
            cut = cut[: max(32, cut.size // 2 // 32 * 32)]
            a, b, acc = (cut if c["partial"] == "a" else a, cut if c["partial"] == "b" else b,
                         cut if c["partial"] == "c" else acc)
        if not c["oob"]:
            m.write(lhs.cast("u8"), a)
        m.write(rhs.cast("u8"), b)
        m.write(dst.cast("u8"), acc)
        bias = ()
        if c["op"] == "mad_bias":
            bias = (m.ptr("bt", c["dst"], 0),)
            m.write(bias[0].cast("u8"), rng.standard_normal(n).astype(np.float32).view(np.uint8))
        if c["race"]:                             # an MTE1 write into L0A, no flag before the mad
            src = m.ptr("l1", dt, 0)
            m.write(src.cast("u8"), rng.integers(0, 60, 4096).astype(np.uint8))
            pto.mte_l1_l0a(src, m.ptr("l0a", dt, c["addr"]), 0, 0, 1, 1, 1, 1)
        clauses = {}
        if c["unit_flag"]:
            clauses["unit_flag"] = c["unit_flag"]
        if c["disable_gemv"]:
            clauses["disable_gemv"] = True
        if c["sat"] is not None:
            clauses["sat"] = c["sat"]
        for _ in range(2 if c["twice"] else 1):
            getattr(pto, c["op"])(lhs, rhs, dst, *bias, mm, n, k, **clauses)
    except Exception as e:                        # noqa: BLE001 - compared between the two paths
        err = (type(e).__name__, str(e))
    core = m.cores[0]
    return err, list(m.reports), [(core.buffer(sp).data.tobytes(), np.asarray(core.buffer(sp).written).tobytes())
                                  for sp in ("l0a", "l0b", "l0c")]


def test_mad_f16_plan_equals_the_general_path_on_random_mads(monkeypatch):
    monkeypatch.setattr(cube, "MAD_F16_PLAN", True)      # restored afterwards (each run sets it)
    calls = []
    plan_run = cube._mad_f16
    monkeypatch.setattr(cube, "_mad_f16", lambda *a, **kw: calls.append(1) or plan_run(*a, **kw))
    taken = refused = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(400):
            c = _case(seed)
            before = len(calls)
            fast = _run(c, True)
            taken += len(calls) > before
            slow = _run(c, False)
            assert fast == slow, c
            refused += fast[0] is not None
    assert taken > 150 and 50 < refused < 350          # both paths exercised, failures included


def test_small_map_paths_equal_a_plain_array_and_the_general_path(monkeypatch):
    for seed in range(1500):
        r = random.Random(seed)
        n = r.choice((1, 2, 3, 5, 16, 64, r.randint(1, 300)))
        vals = r.choice(((0, 1), (0, 1, 2), tuple(range(50))))
        fill = r.choice(vals)
        ops = []
        for _ in range(r.randint(1, 30)):
            x = r.random()
            if x < 0.25:
                b0, b1 = 0, n
            elif x < 0.45 and n > 1:
                cut = r.randint(1, n - 1)
                b0, b1 = (0, cut) if r.random() < 0.5 else (cut, n)
            else:
                b0 = r.randint(0, n - 1)
                b1 = r.randint(b0 + 1, n)
            ops.append((b0, b1, r.choice(vals)))
        monkeypatch.setattr(shadow, "MAX_RUNS", (512, 512, 3, 2, 1)[seed % 5])
        forms = []
        for fast in (True, False):
            monkeypatch.setattr(shadow, "SMALL_MAP_PATHS", fast)
            ref, bm, hist = np.full(n, fill, np.int64), BlockMap(n, fill), []
            for b0, b1, v in ops:
                bm.assign(b0, b1, v)
                ref[b0:b1] = v
                assert np.array_equal(bm.array(0, n), ref), (seed, fast, ops)
                if bm.starts is not None:         # canonical runs: neighbours differ
                    assert bm.starts[0] == 0 and all(x != y for x, y in zip(bm.vals, bm.vals[1:]))
                hist.append((bm.starts and list(bm.starts), bm.vals and list(bm.vals),
                             None if bm.arr is None else bm.arr.tolist()))
            forms.append(hist)
        assert forms[0] == forms[1], (seed, ops)
