"""``tik-compare-fixpipe --sweep``: legacy ``fixpipe`` against the new FIXPIPE over a grid of configurations.

For every grid point (chip, L0C data, shape ``m x n``, src/dst dtypes, quantize mode and scale
kind, relu, bias / element-wise-add) the sweep

1. builds and runs a small TIK kernel (``tik.matmul`` into L0C from crafted f16 / int8
   operands, or -- on the chips with an L0C load path -- L0C loaded from UB with special bit
   patterns), with one ``tik.fixpipe`` per legacy configuration, watched by
   `tbe_compat.fixpipe_compare` (the **TIK lowering** row: must equal the legacy model bit for bit);
2. evaluates, on the same L0C bytes, the options of the new FIXPIPE a migrator would write
   instead, directly with ``pto.mte_l0c_gm`` (and ``pto.mad_bias`` for a bias) on a machine
   of the same chip: the same NZ layout with the equivalent clauses, ``nz2nd`` (row-major;
   compared after re-laying the legacy ``[N1, m, 16]`` result out as ``[m, n]``), the scale as
   an f32 (FP19) payload, per-channel scales as FB words (``deqf16_vec``), ``pre_relu``, and the
   explicit ``sat`` / ``nosat`` / ``sat(preserve_nan)`` clauses;
3. compares each against the legacy reference model (`tbe_compat.legacy_fixpipe`) element by
   element (`tbe_compat.fixpipe_compare.diff_values`), and explains every difference from the
   configuration with `KNOWN_DIFFERENCES` (a reason explains a set of elements; a mismatch
   outside every applicable reason's set, or a rejection no reason predicts, is
   *unexplained*: ``tik-compare-fixpipe --sweep`` then exits with status 1).

The L0C data of the matmul kernels: ``B = [I; 2**-12 I; 1]`` (float) or ``[127 I; I; 1]``
(int8) stacked on K, so ``C[i, j] = A[i, j] + A[i, N+j]*2**-12 + A[i, 2N]`` (float; int8:
``127*A[i, j] + ...``) -- exact sums chosen to hit rounding ties of the f16 conversion, values
above 65504 (saturation / inf), f16 underflow, negatives, and rows of +inf, -inf and NaN.
Everything is seeded: the output is the same on every run (the guide's table is generated
from it and tested). `sweep(full=True)` adds chips, shapes and scale values.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from pto_core.errors import PtoError, UnknownName, UnsupportedOp

from . import legacy_fixpipe as LF
from .fixpipe_compare import FORMATS, diff_values, fmt_metric, watch_kernel

NP = {"f32": np.float32, "s32": np.int32, "f16": np.float16}
TIK_NAME = {"f32": "float32", "s32": "int32", "f16": "float16"}
PAIRS = ("f32f16", "f32f32", "s32s32", "s32f16")
FIXPIPE_FAMILIES = ("v220", "v300")           # chips whose TIK fixpipe is the FIXPIPE unit (tik_cube.md)

DEFAULT_CHIPS = ("Ascend310", "Ascend910B1")
FULL_CHIPS = ("Ascend310", "Ascend910A", "Ascend310P3", "Ascend910B1", "Ascend310B1")
DEFAULT_SHAPES = ((20, 40), (16, 16), (1, 16))
FULL_SHAPES = ((20, 40), (16, 16), (1, 16), (33, 48), (64, 32), (7, 200))
DEFAULT_SCALES = (0.3, 3e-5, 60000.0, -0.25)
FULL_SCALES = (0.3, 3e-5, 60000.0, -0.25, 0.5, 0.0, 2.0 ** -20)
SCALAR_SCALES = (0.3, -0.25)
TENSOR_SCALES = {
    "positive": (0.5, 0.3, 3e-5, 1.0, 2.0, 0.125, 7.0, 0.01, 0.75, 1.5, 0.2, 3.0, 0.0625, 5.0, 0.9, 1e-3),
    "mixed signs": (0.1214, -0.2238, 0.4883, 0.2788, 0.0, -1.5, 0.3, 2.0, -0.01, 0.5, 1.0, -3.0, 0.125, 0.7,
                    -0.4, 0.05),
    "uniform": (0.3,) * 16,
}
SEED = 2024


# ============================================================================= configurations


@dataclass(frozen=True)
class LegacyConfig:
    """One legacy ``fixpipe`` configuration of the grid."""

    chip: str
    data: str                     # "matmul" | "specials"
    m: int
    n: int
    pair: str                     # "f32f16" | "f32f32" | "s32s32" | "s32f16"
    scale_kind: Optional[str] = None   # int322fp16: "immediate" | "scalar" | "tensor"
    scale: Any = None             # float, or the name of a TENSOR_SCALES row
    relu: bool = False
    add: Optional[str] = None     # "bias" | "element-wise-add"

    @property
    def src(self) -> str:
        return self.pair[:3]

    @property
    def dst(self) -> str:
        return self.pair[3:]

    @property
    def quant(self) -> Optional[str]:
        return {"f32f16": "fp322fp16", "s32f16": "int322fp16"}.get(self.pair)

    @property
    def n1(self) -> int:
        return -(-self.n // 16)

    @property
    def rows(self) -> int:                       # round_howo: L0C rows per block
        return -(-self.m // 16) * 16

    def scale_values(self) -> Optional[np.ndarray]:
        """The f16 scale(s) the legacy instruction uses: ``()`` or ``(16,)``."""
        if self.scale_kind == "tensor":
            return np.array(TENSOR_SCALES[self.scale], np.float16)
        if self.scale_kind is not None:
            with np.errstate(over="ignore"):
                return np.float16(self.scale)
        return None

    def quant_label(self) -> str:
        if self.quant is None:
            return "-"
        if self.quant == "fp322fp16":
            return "fp322fp16"
        if self.scale_kind == "tensor":
            return f"int322fp16 tensor[16] ({self.scale})"
        return f"int322fp16 {self.scale_kind} {self.scale!r}"

    def legacy_label(self) -> str:
        parts = [f"{TIK_NAME[self.src]}->{TIK_NAME[self.dst]}", self.quant_label()]
        if self.relu:
            parts.append("relu")
        if self.add:
            parts.append(self.add)
        return " ".join(p for p in parts if p != "-")


def _tik_accepts(chip_family: str, c: LegacyConfig) -> bool:
    """The configurations TIK accepts (tik_cube.md): FIXPIPE chips take no bias/ewa, only positive
    finite immediate scales; relu never with bias/ewa or a Scalar/immediate scale."""
    unit = chip_family in FIXPIPE_FAMILIES
    if c.relu and (c.add or c.scale_kind in ("immediate", "scalar")):
        return False
    if c.scale_kind == "tensor" and c.add:
        return False
    if unit:
        if c.add or c.scale_kind in ("scalar", "tensor"):
            return False
        if c.scale_kind == "immediate" and not (np.isfinite(np.float16(c.scale)) and np.float16(c.scale) > 0):
            return False
    return True


#: TIK SoCs whose cube writes float16 L0C results (f16f16f16 matmul; tik_cube.md). The sweep's kernels
#: accumulate f16 x f16 into float32 and int8 x int8 into int32 L0C, which these chips' ``tik.matmul`` does not
#: do, and their int322fp16 scale is a float32 [2*Cout] tensor the legacy model does not model (legacy_fixpipe.md
#: choice 11). ``--sweep --chip`` refuses them with a Fix (user456: the sweep stopped with
#: ``<unknown>:0 in `tik.matmul`: ... f16f16f32 is not supported``); their calls are compared per kernel.
F16_L0C_CHIPS = LF.HISI_SOCS


def check_chip(chip: str) -> str:
    """The canonical name of a chip the sweep can run, or an error saying why not and what to do instead:
    an unknown name (`UnknownName`), a PTO target or a SoC without ``tik.fixpipe`` (the legacy model's own
    check, `UnsupportedOp`), a chip whose L0C holds float16 results (`F16_L0C_CHIPS`, `UnsupportedOp`)."""
    from pto_core.targets import get_target
    limit = "a TIK SoC with tik.fixpipe and float32/int32 L0C results, e.g. " + ", ".join(FULL_CHIPS)
    fix = f"pick a TIK SoC such as {', '.join(FULL_CHIPS)}"
    try:
        prof = get_target(chip)
        LF._resolve_chip(prof.name, "AiCore")
    except PtoError as e:
        raise type(e)(f"--chip {chip}: {e.message}", value=chip, limit=limit, hint=fix) from None
    if prof.name in F16_L0C_CHIPS:
        raise UnsupportedOp(
            f"--chip {chip}: {prof.name}'s cube writes float16 L0C results (f16 x f16 -> f16); the sweep's "
            f"kernels accumulate into float32 / int32 L0C, which {prof.name} has no tik.matmul for",
            value=chip, limit=limit,
            hint=f"compare your kernel's own fixpipe calls: tik-compare-fixpipe --soc {prof.name} SCRIPT.py; the "
                 f"new FIXPIPE's f16 -> f16 write-back saturates on this chip where the legacy copy keeps inf/NaN "
                 f"(write nosat; fixpipe_compare.md, differences item 8)")
    return prof.name


def grid(full: bool = False, chips=None) -> list:
    """Every `LegacyConfig` of the default (or ``full``) grid, in a fixed order. ``chips`` are checked
    first (`check_chip`) and used by their canonical names (``ascend610`` -> ``Ascend610``)."""
    from pto_core.targets import get_target
    chips = tuple(check_chip(c) for c in (chips or (FULL_CHIPS if full else DEFAULT_CHIPS)))
    shapes = FULL_SHAPES if full else DEFAULT_SHAPES
    scales = FULL_SCALES if full else DEFAULT_SCALES
    out = []
    for chip in chips:
        prof = get_target(chip)
        datasets = ("matmul",) if prof.family in FIXPIPE_FAMILIES else ("matmul", "specials")
        for data in datasets:
            for m, n in shapes:
                base = dict(chip=chip, data=data, m=m, n=n)
                cfgs = []
                for pair in ("f32f16", "f32f32", "s32s32"):
                    cfgs += [LegacyConfig(pair=pair, **base), LegacyConfig(pair=pair, relu=True, **base),
                             LegacyConfig(pair=pair, add="bias", **base),
                             LegacyConfig(pair=pair, add="element-wise-add", **base)]
                imm = [LegacyConfig(pair="s32f16", scale_kind="immediate", scale=s, **base) for s in scales]
                cfgs += imm
                cfgs += [LegacyConfig(pair="s32f16", scale_kind="scalar", scale=s, **base) for s in SCALAR_SCALES]
                cfgs += [LegacyConfig(pair="s32f16", scale_kind="tensor", scale=t, **base)
                         for t in ("positive", "mixed signs")]
                cfgs += [LegacyConfig(pair="s32f16", scale_kind="tensor", scale="uniform", relu=True, **base),
                         LegacyConfig(pair="s32f16", scale_kind="immediate", scale=0.3, add="bias", **base),
                         LegacyConfig(pair="s32f16", scale_kind="immediate", scale=0.3, add="element-wise-add",
                                      **base)]
                out += [c for c in cfgs if _tik_accepts(prof.family, c)]
    return out


# ============================================================================= known differences


@dataclass(frozen=True)
class KnownDifference:
    """A documented difference between legacy ``fixpipe`` and the new FIXPIPE option.

    ``kind``: ``"values"`` (explains the mismatching elements `explains` marks), ``"rejects"``
    (the new op refuses the configuration) or ``"absent"`` (the new FIXPIPE has no such stage)."""

    id: str
    kind: str
    reason: str
    source: str


KNOWN_DIFFERENCES = {k.id: k for k in (
    KnownDifference("fp19_scale", "values",
                    "FIXPIPE uses the scale at FP19 precision (f32 truncated to 10 mantissa bits); the legacy "
                    "immediate is rounded to float16 (nearest even, subnormal below 2**-14)",
                    "fixpipe_semantics.md #4; legacy_fixpipe.md choice 7"),
    KnownDifference("scale_not_positive_normal", "rejects",
                    "FIXPIPE scales must be positive normal FP19 numbers; legacy int322fp16 accepts negative, "
                    "zero and infinite float16 scales",
                    "fixpipe_semantics.md #9; seed 002 example (negative per-channel scales)"),
    KnownDifference("relu_negative_zero", "values",
                    "an L0C -0: legacy ReLU (max(x, +0) after the conversion) gives +0, FIXPIPE normal_relu "
                    "keeps -0 (the scale path takes x >= 0)",
                    "fixpipe_semantics.md #6, #15; legacy_fixpipe.md choice 10"),
    KnownDifference("sat_mode", "values",
                    "the explicit saturation clause differs from the chip's overflow mode, which the legacy "
                    "fixpipe follows: only inf/NaN/overflowing elements change",
                    "fixpipe_semantics.md #7, #8; legacy_fixpipe.md choice 8; numerics.md §3"),
    KnownDifference("no_elementwise_add", "absent",
                    "FIXPIPE has no element-wise-add stage: add with a vector op (pto.ub.vadd) before the "
                    "conversion",
                    "fixpipe_semantics.md (pipeline); tik_cube.md (vector composition)"),
)}


# ============================================================================= rows


@dataclass
class SweepRow:
    """One (legacy configuration, new option) comparison.

    ``status``: ``match`` (bit for bit; two NaNs are equal), ``differs``, ``rejected`` (the new op
    refused the configuration), ``absent`` (no such FIXPIPE stage). ``reasons``: ids of
    `KNOWN_DIFFERENCES` that account for the difference; ``explained``: every mismatch (or the
    rejection) is accounted for."""

    config: LegacyConfig
    option: str                   # the new option (generic label)
    clauses: str                  # what was run (PTO spelling)
    status: str = "match"
    elements: int = 0
    mismatches: int = 0
    max_abs_diff: float = 0.0
    max_ulp_diff: float = 0.0
    first_mismatch: str = ""
    reasons: tuple = ()
    detail: str = ""
    explained: bool = True
    note: str = ""

    def reason_text(self) -> str:
        if not self.reasons:
            return "" if self.explained else "UNEXPLAINED"
        text = "; ".join(KNOWN_DIFFERENCES[r].reason for r in self.reasons)
        if self.detail:
            text = f"{self.detail} -- {text}"
        return text if self.explained else "UNEXPLAINED (partly): " + text

    def to_dict(self) -> dict:
        c = self.config
        return {"chip": c.chip, "data": c.data, "m": c.m, "n": c.n, "src_dtype": TIK_NAME[c.src],
                "dst_dtype": TIK_NAME[c.dst], "quant": c.quant_label(), "relu": c.relu, "add": c.add or "none",
                "option": self.option, "clauses": self.clauses, "status": self.status, "elements": self.elements,
                "mismatches": self.mismatches, "max_abs_diff": _jnum(self.max_abs_diff),
                "max_ulp_diff": _jnum(self.max_ulp_diff), "first_mismatch": self.first_mismatch,
                "reasons": list(self.reasons), "reason": self.reason_text(), "explained": self.explained,
                "note": self.note}


def _jnum(v):
    return str(v) if isinstance(v, float) and not np.isfinite(v) else v


# ============================================================================= data


def _f16(x):
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float64).astype(np.float16)


FLOAT_TARGETS = (1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -11), 1 + 2 ** -11 + 2 ** -20, 2049.0, 2051.0, -2051.0,
                 65504.0, 65519.0, 65520.0, 65535.0, 70000.0, -70000.0, 131008.0, 1.5 * 2 ** -24, 2 ** -25,
                 -(2 ** -25), 2 ** -25 + 2 ** -30, 1e-8, -1e-8, 0.0, 0.5, -3.75, 1e-3)
INT_TARGETS = (2049, 2051, -2049, 4097, 4099, 1, -1, 0, 2, 3, 16383, -16512, 5461, 1025, -1025, 32)


def _float_operands(rng, m: int, m_rows: int, n_cols: int) -> tuple:
    """``(A [M, K], B [K, N])`` f16, ``C = A @ B = 2*A[:, :N] + 2**-12*A[:, N:2N] + A[:, 2N]`` exact in f32
    (module doc); K = round16(2N + 1). Rows ``m-3 .. m-1`` (m >= 8) are +inf, -inf and NaN rows."""
    M, N = m_rows, n_cols
    K = -(-(2 * N + 1) // 16) * 16
    target = rng.choice(np.array(FLOAT_TARGETS), (M, N))
    rand = rng.integers(-4096, 4097, (M, N)) / 64.0
    target = np.where(rng.random((M, N)) < 0.5, target, rand)
    hi = _f16(target / 2)
    lo = np.clip((target - 2 * hi.astype(np.float64)) * 4096.0, -65504, 65504).astype(np.float16)
    A = np.zeros((M, K), np.float16)
    A[:, :N], A[:, N:2 * N] = hi, lo
    if m >= 8:
        A[m - 3, 2 * N], A[m - 2, 2 * N], A[m - 1, 0] = np.inf, -np.inf, np.inf
    B = np.zeros((K, N), np.float16)
    B[np.arange(N), np.arange(N)] = 2.0
    B[N + np.arange(N), np.arange(N)] = 2.0 ** -12
    B[2 * N, :] = 1.0
    return A, B


def _int_operands(rng, m: int, m_rows: int, n_cols: int) -> tuple:
    """``(A [M, K], B [K, N])`` int8, ``C = 127*A[:, :N] + A[:, N:2N] + A[:, 2N]``; K = round32(2N + 1)."""
    M, N = m_rows, n_cols
    K = -(-(2 * N + 1) // 32) * 32
    target = np.where(rng.random((M, N)) < 0.5, rng.choice(np.array(INT_TARGETS), (M, N)),
                      rng.integers(-16000, 16001, (M, N)))
    hi = np.clip(np.round(target / 127.0), -128, 127).astype(np.int64)
    lo = np.clip(target - 127 * hi, -128, 127)
    A = np.zeros((M, K), np.int8)
    A[:, :N], A[:, N:2 * N] = hi, lo
    A[:, 2 * N] = rng.integers(-2, 3, M)
    B = np.zeros((K, N), np.int8)
    B[np.arange(N), np.arange(N)] = 127
    B[N + np.arange(N), np.arange(N)] = 1
    B[2 * N, :] = 1
    return A, B


F32_SPECIALS = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 65504.0, 65519.996, 65520.0, 7e4, -7e4, 1e-8, -1e-8,
                         3.4e38, -3.4e38, 2.0 ** -25, 1 + 2.0 ** -11, 1e-40, -2.0 ** -24], np.float32)
I32_SPECIALS = np.array([2 ** 31 - 1, -2 ** 31, 0, 2049, -2049, 1, -1, 65519, 2 ** 24 + 1], np.int32)


def _special_l0c(rng, count: int, src: str) -> np.ndarray:
    """Random L0C contents with special values (loaded through UB on v100/v200 chips)."""
    if src == "f32":
        x = (rng.standard_normal(count) * 10.0 ** rng.integers(-3, 6, count)).astype(np.float32)
        k = rng.random(count) < 0.3
        x[k] = rng.choice(F32_SPECIALS, int(k.sum()))
        return x
    x = rng.integers(-2 ** 31, 2 ** 31, count, dtype=np.int64).astype(np.int32)
    small = rng.random(count) < 0.5
    x[small] = rng.integers(-20000, 20001, int(small.sum()))
    k = rng.random(count) < 0.2
    x[k] = rng.choice(I32_SPECIALS, int(k.sum()))
    return x


def _addend(rng, count: int, src: str, special: bool) -> np.ndarray:
    if src == "f32":
        x = (rng.integers(-2 ** 14, 2 ** 14, count) * 2.0 ** -8 + rng.standard_normal(count) * 2.0 ** -20)
        x = x.astype(np.float32)
        if special:
            k = rng.random(count) < 0.2
            x[k] = rng.choice(F32_SPECIALS, int(k.sum()))
        return x
    x = rng.integers(-5000, 5001, count).astype(np.int32)
    k = rng.random(count) < 0.15
    x[k] = rng.choice(np.array([2 ** 31 - 1, -2 ** 31, 2 ** 31 - 3000], np.int32), int(k.sum()))
    return x


def _to_l1_layout(mat: np.ndarray, k0: int) -> np.ndarray:
    """``[K1, R, K0]`` of an ``R x K`` matrix (the matmul L1 operand layout)."""
    r, k = mat.shape
    return np.ascontiguousarray(mat.reshape(r, k // k0, k0).transpose(1, 0, 2))


# ============================================================================= the TIK kernels


@contextlib.contextmanager
def _chip(name: str):
    from . import platform
    prev = platform.current_soc()
    platform.set_current_compile_soc_info(name)
    try:
        yield
    finally:
        platform.set_current_compile_soc_info(prev.soc_version, prev.core_type, prev.aicore_num, prev.l1_fusion)


@dataclass
class _Group:
    """The configurations sharing one L0C tile (chip, data, shape, src dtype): one kernel."""

    chip: str
    data: str
    m: int
    n: int
    src: str
    configs: list = field(default_factory=list)
    operands: tuple = ()          # (A, B) of the matmul data
    extras: list = field(default_factory=list)   # per config: {"bias": arr, ...}


def _build_and_run(g: _Group, rng) -> list:
    """Run the group's kernel; returns the `_CallWatch` of each config (with its snapshot)."""
    from tbe import tik
    m, N1 = g.m, -(-g.n // 16)
    M, N = -(-m // 16) * 16, N1 * 16
    src = TIK_NAME[g.src]
    ti = tik.Tik()
    feed, inputs = {}, []
    if g.data == "matmul":
        A, B = (_float_operands if g.src == "f32" else _int_operands)(rng, m, M, N)
        g.operands = (A, B)
        k0 = 16 if g.src == "f32" else 32
        in_dt = "float16" if g.src == "f32" else "int8"
        K1 = A.shape[1] // k0
        a_gm = ti.Tensor(in_dt, (K1, M, k0), name="a_gm", scope=tik.scope_gm)
        b_gm = ti.Tensor(in_dt, (K1, N, k0), name="b_gm", scope=tik.scope_gm)
        a = ti.Tensor(in_dt, (K1, M, k0), name="a", scope=tik.scope_cbuf)
        b = ti.Tensor(in_dt, (K1, N, k0), name="b", scope=tik.scope_cbuf)
        l0c = ti.Tensor(src, (N1, M, 16), name="l0c", scope=tik.scope_cbuf_out)
        ti.data_move(a, a_gm, 0, 1, K1 * M * k0 * A.itemsize // 32, 0, 0)
        ti.data_move(b, b_gm, 0, 1, K1 * N * k0 * B.itemsize // 32, 0, 0)
        ti.matmul(l0c, a, b, m, A.shape[1], g.n)
        feed.update(a_gm=_to_l1_layout(A, k0), b_gm=_to_l1_layout(np.ascontiguousarray(B.T), k0))
        inputs += [a_gm, b_gm]
    else:
        count = N1 * M * 16
        data = _special_l0c(rng, count, g.src)
        gm = ti.Tensor(src, (count,), name="l0c_gm", scope=tik.scope_gm)
        ub = ti.Tensor(src, (count,), name="ub", scope=tik.scope_ubuf)
        l0c = ti.Tensor(src, (count,), name="l0c", scope=tik.scope_cbuf_out)
        ti.data_move(ub, gm, 0, 1, count * 4 // 32, 0, 0)
        ti.data_move(l0c, ub, 0, 1, count // 256, 0, 0)
        feed["l0c_gm"] = data
        inputs.append(gm)
    outs = []
    for i, c in enumerate(g.configs):
        ext, extra = {}, {}
        for key, count in (("bias", N), ("element-wise-add", N1 * M * 16)):
            if c.add == key:
                arr = _addend(rng, count, g.src, g.data == "specials")
                t_gm = ti.Tensor(src, (count,), name=f"add{i}_gm", scope=tik.scope_gm)
                t = ti.Tensor(src, (count,), name=f"add{i}", scope=tik.scope_cbuf)
                ti.data_move(t, t_gm, 0, 1, count * 4 // 32, 0, 0)
                feed[f"add{i}_gm"] = arr
                inputs.append(t_gm)
                ext[key] = t
                extra[key] = arr
        if c.quant == "fp322fp16":
            ext["quantize_params"] = {"mode": "fp322fp16", "mode_param": None}
        elif c.quant == "int322fp16":
            if c.scale_kind == "immediate":
                mp = float(c.scale)
            elif c.scale_kind == "scalar":
                mp = ti.Scalar("float16", name=f"scale{i}", init_value=float(c.scale))
            else:
                s_gm = ti.Tensor("float16", (16,), name=f"scale{i}_gm", scope=tik.scope_gm)
                mp = ti.Tensor("float16", (16,), name=f"scale{i}", scope=tik.scope_cbuf)
                ti.data_move(mp, s_gm, 0, 1, 1, 0, 0)
                feed[f"scale{i}_gm"] = c.scale_values()
                inputs.append(s_gm)
            ext["quantize_params"] = {"mode": "int322fp16", "mode_param": mp}
        if c.relu:
            ext["relu"] = True
        dst = ti.Tensor(TIK_NAME[c.dst], (N1, m, 16), name=f"dst{i}", scope=tik.scope_gm)
        ti.fixpipe(dst, l0c, N1, m * 16 * 4 // 32, 0, 0, extend_params=ext or None)
        outs.append(dst)
        g.extras.append(extra)
    ti.BuildCCE(kernel_name=f"sweep_{g.chip}_{g.data}_{g.src}_{m}x{g.n}", inputs=inputs, outputs=outs)
    watch = watch_kernel(ti, keep_snapshots=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LF.ReservedArgumentWarning)
        ti.tikdb.start_debug(feed_dict=feed, interactive=False)
    return watch.calls


# ============================================================================= new FIXPIPE options


@dataclass
class _Eval:
    """Everything the reasons need about one (config, option) evaluation."""

    config: LegacyConfig
    option: str
    relu_mode: bool = False       # pre_relu normal_relu in use
    sat: Any = None               # explicit sat clause value, or None
    scale_payload: Any = None     # the scale(s) given to the new op (float / np.float16 / array)


def _fp19(x) -> np.ndarray:
    bits = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def _options(c: LegacyConfig) -> list:
    """``[(option label, clause dict, _Eval fields, layout)]``: the new options for ``c``."""
    if c.add == "element-wise-add":
        return [("no FIXPIPE stage", None, {}, "absent")]
    base = {}
    ev = {}
    if c.quant == "fp322fp16":
        base["pre_quant"] = (0.0, {"mode": "f32_f16"})
    elif c.quant == "int322fp16":
        s = c.scale_values()
        if c.scale_kind == "tensor":
            base["pre_quant"] = ("fb", {"mode": "deqf16_vec"})
        else:
            base["pre_quant"] = (np.float16(s), {"mode": "deqf16_scalar"})
        ev["scale_payload"] = s
    if c.relu:
        base["pre_relu"] = {"mode": "normal_relu"}
        ev["relu_mode"] = True
    if c.add == "bias":
        name = "mad_bias + mte_l0c_gm" if c.data == "matmul" else None
        return [(name, base, ev, "nz")] if name else [("bias: mad_bias (no A/B for loaded L0C)", None, {}, "skip")]
    opts = [("mte_l0c_gm (NZ)", base, dict(ev), "nz"), ("mte_l0c_gm nz2nd", {**base, "nz2nd": True}, dict(ev), "nd")]
    if c.scale_kind == "immediate":
        opts.append(("mte_l0c_gm (NZ), scale as f32", {**base, "pre_quant": (float(c.scale), {"mode": "deqf16_scalar"})},
                     {**ev, "scale_payload": np.float32(c.scale)}, "nz"))
    if c.scale_kind == "tensor" and c.scale == "uniform":
        opts.append(("deqf16_scalar + pre_relu", {**base, "pre_quant": (np.float16(c.scale_values()[0]),
                                                                       {"mode": "deqf16_scalar"})},
                     {**ev, "scale_payload": c.scale_values()[0]}, "nz"))
    if c.dst != "s32":
        for sat, label in ((True, "sat"), (False, "nosat"), ("preserve_nan", "sat(preserve_nan)")):
            opts.append((f"mte_l0c_gm (NZ) {label}", {**base, "sat": sat}, {**ev, "sat": sat}, "nz"))
    return opts


def _clause_text(cl: Optional[dict]) -> str:
    if cl is None:
        return "-"
    parts = []
    for k, v in cl.items():
        if k == "pre_quant":
            p, mode = v
            pay = "fb words" if isinstance(p, str) else (f"f16 {float(p)!r}" if isinstance(p, np.float16)
                                                          else f"f32 {p!r}")
            parts.append(f"pre_quant({pay}, {mode['mode']})")
        elif k == "pre_relu":
            parts.append(f"pre_relu({v['mode']})")
        elif k == "nz2nd":
            parts.append("nz2nd")
        elif k == "sat":
            parts.append({True: "sat", False: "nosat", "preserve_nan": "sat(preserve_nan)"}[v])
    return ", ".join(parts) or "(plain copy)"


def _run_new(c: LegacyConfig, clauses: dict, layout: str, snap: dict, group: _Group, extra: dict) -> np.ndarray:
    """The new op(s) on a fresh machine of the chip; returns the destination ([N1, m, 16] or [m, n])."""
    from pto_core import Machine, pto
    from pto_core.memory import MachineOptions
    from pto_core.numerics.quant import make_word
    mach = Machine(c.chip, options=MachineOptions(check_hazards=False))
    M, N1 = c.rows, c.n1
    src = mach.ptr("l0c", c.src, 0)
    if c.add == "bias":
        _mad_bias(mach, c, group, extra["bias"], src)
    else:
        mach.write(src, snap["l0c"][:N1 * M * 16])
    cl = dict(clauses)
    if isinstance(cl.get("pre_quant", (None,))[0], str):
        fb = mach.ptr("fb", "f32", 0)
        scales = np.tile(c.scale_values(), N1)
        words = np.array([make_word(float(s)) for s in scales], np.uint64)
        mach.write(mach.ptr("fb", "u8", 0), words.view(np.uint8))
        cl["pre_quant"] = (fb, cl["pre_quant"][1])
    if layout == "nd":
        out = mach.gm_alloc((c.m, c.n), c.dst, name="dst")
        pto.mte_l0c_gm(src, out, c.m, c.n, M, c.n, 0, 0, **cl)
        return mach.read(out, (c.m, c.n))
    out = mach.gm_alloc((N1, c.m, 16), c.dst, name="dst")
    pto.mte_l0c_gm(src, out, c.m, N1 * 16, M, c.m * 16, 0, 0, **cl)
    return mach.read(out, (N1, c.m, 16))


def _mad_bias(mach, c: LegacyConfig, group: _Group, bias: np.ndarray, acc) -> None:
    """``acc = A @ B + bias`` with ``pto.mad_bias`` (A in L0A as Zz, B in L0B as Zn, bias in BT), in
    column chunks that fit L0B; each L0C column depends on its B column only."""
    from pto_core import layout, pto
    A, B = group.operands
    (M, K), N = A.shape, B.shape[1]
    in_dt = "f16" if c.src == "f32" else "s8"
    l0a, l0b, bt = mach.ptr("l0a", in_dt, 0), mach.ptr("l0b", in_dt, 0), mach.ptr("bt", c.src, 0)
    mach.write(l0a, layout.pack(A, "Zz", in_dt))
    chunk = max(16, mach.target.capacity("l0b") // (K * B.itemsize) // 16 * 16)
    for j0 in range(0, N, chunk):
        nc = min(chunk, N - j0)
        mach.write(l0b, layout.pack(np.ascontiguousarray(B[:, j0:j0 + nc]), "Zn", in_dt))
        mach.write(bt, bias[j0:j0 + nc])
        pto.mad_bias(l0a, l0b, acc + j0 * M, bt, M, nc, K, disable_gemv=True)


def _legacy_other_mode(cw, snap: dict) -> np.ndarray:
    """The legacy result under the other overflow mode (marks the overflow-sensitive elements)."""
    args = cw.legacy_args(snap)
    args["overflow_mode"] = "inf_nan" if snap["overflow_mode"] == "saturation" else "saturation"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = LF.legacy_fixpipe(LF.LegacyTensor(snap["l0c"], scope="l0c"), **args)
    return r.values


def _legacy_fp19(c: LegacyConfig, l0c: np.ndarray, scale: np.float32, mode: str) -> np.ndarray:
    """The legacy int322fp16 result with the FP19 scale in place of the float16 one (the legacy
    model's own deq stage): the values `fp19_scale` accounts for. Only for the immediate-scale
    option, which has no relu, bias or element-wise-add."""
    return LF.deq_int32_to_fp16(l0c, _fp19(scale), mode)


def _sat_expected(sat, legacy: np.ndarray, other: np.ndarray, mode: str) -> np.ndarray:
    """The legacy result under an explicit ``sat`` clause (the values `sat_mode` accounts for):
    ``sat`` = the saturation mode, ``nosat`` = inf_nan, ``sat(preserve_nan)`` = saturation with NaN
    kept where the inf_nan result is NaN. ``legacy`` is in the chip's ``mode``, ``other`` in the other."""
    saturated, ieee = (legacy, other) if mode == "saturation" else (other, legacy)
    if sat is False:
        return ieee
    if sat == "preserve_nan" and saturated.dtype.kind == "f":
        return np.where(np.isnan(ieee), ieee, saturated)
    return saturated


def _explain(ev: _Eval, mask: np.ndarray, ctx: dict) -> tuple:
    """``(reason ids, detail, explained)`` for the mismatching elements ``mask`` (dst order)."""
    c = ev.config
    reasons, covered, details = [], np.zeros_like(mask), []
    if ev.scale_payload is not None and isinstance(ev.scale_payload, np.float32):
        legacy_s = float(np.float16(c.scale)) if np.isfinite(np.float16(c.scale)) else np.inf
        new_s = float(_fp19(ev.scale_payload))
        pred = ctx.get("fp19_expected")
        z = mask & ~diff_values(pred, ctx["got"]).mask if pred is not None else mask & False
        if legacy_s != new_s and z.any():            # only the elements the FP19 scale accounts for
            reasons.append("fp19_scale")
            covered |= z
            details.append(f"scale {c.scale!r}: FP19 {new_s!r}, legacy float16 {legacy_s!r}")
    if ev.relu_mode and ctx.get("src_negzero") is not None:
        g, e = ctx["got"], ctx["expected"]              # legacy +0 where FIXPIPE keeps the -0
        z = ctx["src_negzero"] & mask & (g == 0) & np.signbit(g) & (e == 0) & ~np.signbit(e)
        if z.any():
            reasons.append("relu_negative_zero")
            covered |= z
    if ev.sat is not None:
        mode = ctx["overflow_mode"]
        same = (ev.sat is True and mode == "saturation") or (ev.sat is False and mode == "inf_nan")
        pred = ctx["sat_expected"]                       # what the legacy model gives under the clause
        z = ctx["overflow_sensitive"] & mask & ~diff_values(pred, ctx["got"]).mask
        if not same and z.any():
            reasons.append("sat_mode")
            covered |= z
            label = {True: "sat", False: "nosat", "preserve_nan": "sat(preserve_nan)"}[ev.sat]
            details.append(f"{label} on {c.chip} ({mode})")
    return tuple(reasons), "; ".join(details), bool(not (mask & ~covered).any())


def _diff_row(row: SweepRow, expected: np.ndarray, got: np.ndarray, ev: _Eval, ctx: dict) -> None:
    d = diff_values(expected, got)
    row.elements, row.mismatches = d.elements, d.mismatches
    row.max_abs_diff, row.max_ulp_diff = d.max_abs_diff, d.max_ulp_diff
    if d.first is None:
        row.status = "match"
        return
    row.status = "differs"
    idx = np.unravel_index(d.first, expected.shape)
    e, g = expected.reshape(-1)[d.first], got.reshape(-1)[d.first]
    row.first_mismatch = f"[{', '.join(map(str, idx))}]: legacy {e.item()!r} vs new {g.item()!r}"
    flat = {k: (v.reshape(expected.shape).reshape(-1) if isinstance(v, np.ndarray) and v.size == expected.size else v)
            for k, v in ctx.items()}
    flat["got"], flat["expected"] = got.reshape(-1), expected.reshape(-1)
    row.reasons, row.detail, row.explained = _explain(ev, d.mask, flat)


def _evaluate(c: LegacyConfig, cw, group: _Group, extra: dict) -> list:
    """The rows of one configuration: the TIK lowering, then each new option."""
    snap = cw.snapshots[0]
    N1, m = c.n1, c.m
    legacy = snap["expected"].reshape(N1, m, 16)
    other = _legacy_other_mode(cw, snap).reshape(N1, m, 16)
    l0c = snap["l0c"].reshape(N1, c.rows, 16)[:, :m, :]
    ctx = {"overflow_mode": snap["overflow_mode"]}
    if c.src == "f32":
        src_nz = (l0c.view(np.uint32) == np.uint32(0x80000000))
        ctx["src_negzero"] = src_nz
        nonfinite = ~np.isfinite(l0c)
    else:
        ctx["src_negzero"] = None
        nonfinite = np.zeros(l0c.shape, bool)
    sens = diff_values(legacy, other).mask.reshape(legacy.shape) | nonfinite
    ctx["overflow_sensitive"] = sens
    rows = []
    tik_row = SweepRow(c, "TIK lowering", f"{cw.call.lowering} lowering (traced PTO ops)")
    tik_ev = _Eval(c, "TIK lowering", relu_mode=c.relu and cw.call.lowering != "vector")
    _diff_row(tik_row, legacy, snap["dst_after"].reshape(N1, m, 16), tik_ev, ctx)
    rows.append(tik_row)
    for label, clauses, evf, layout in _options(c):
        row = SweepRow(c, label, ("pto.mad_bias (bias in BT), " if c.add == "bias" else "") + _clause_text(clauses))
        if layout == "skip":
            continue
        if layout == "absent":
            row.status, row.reasons, row.explained = "absent", ("no_elementwise_add",), True
            rows.append(row)
            continue
        ev = _Eval(c, label, **evf)
        if ev.sat is not None:
            ctx_row = {**ctx, "sat_expected": _sat_expected(ev.sat, legacy, other, snap["overflow_mode"])}
        else:
            ctx_row = ctx
        try:
            got = _run_new(c, clauses, layout, snap, group, extra)
        except PtoError as e:
            row.status = "rejected"
            row.first_mismatch = f"{e.op or 'pto'}: {e.message}"
            bad = _scale_invalid(ev)
            row.reasons = ("scale_not_positive_normal",) if bad else ()
            row.detail = f"scale {bad}" if bad else ""
            row.explained = bool(bad)
            rows.append(row)
            if bad:
                row.note = "the layout and sat variants are rejected for the same reason (not listed)"
                break
            continue
        if layout == "nd":
            exp = np.ascontiguousarray(legacy.transpose(1, 0, 2)).reshape(m, N1 * 16)[:, :c.n]
            ctx_nd = {k: (np.ascontiguousarray(v.transpose(1, 0, 2)).reshape(m, N1 * 16)[:, :c.n]
                          if isinstance(v, np.ndarray) else v) for k, v in ctx_row.items()}
            row.note = f"compared after re-layout [N1, m, 16] -> [m, n] ({c.n} of {N1 * 16} columns)"
            _diff_row(row, exp, got, ev, ctx_nd)
        elif isinstance(ev.scale_payload, np.float32):
            _diff_row(row, legacy, got, ev, {**ctx, "fp19_expected": _legacy_fp19(c, l0c, ev.scale_payload,
                                                                                 snap["overflow_mode"])})
        else:
            _diff_row(row, legacy, got, ev, ctx_row)
        rows.append(row)
    return rows


def _scale_invalid(ev: _Eval) -> str:
    """The scale values FIXPIPE refuses (not positive normal FP19), as text; '' if none."""
    s = ev.scale_payload
    if s is None:
        return ""
    v = _fp19(np.asarray(s, np.float32).reshape(-1))
    bad = ~(np.isfinite(v) & (v >= np.float32(2.0 ** -126)))
    if not bad.any():
        return ""
    vals = sorted({float(x) for x in np.asarray(s, np.float64).reshape(-1)[bad]})
    return ", ".join(repr(x) for x in vals)


# ============================================================================= the sweep


def sweep(full: bool = False, chips=None, seed: int = SEED) -> list:
    """Run the grid (`grid`); returns the `SweepRow` list in grid order."""
    import tbe_compat.aliases
    tbe_compat.aliases.install()
    configs = grid(full, chips)
    groups: dict = {}
    for c in configs:
        key = (c.chip, c.data, c.m, c.n, c.src)
        if key not in groups:
            groups[key] = _Group(c.chip, c.data, c.m, c.n, c.src)
        groups[key].configs.append(c)
    rows_of: dict = {}
    for gi, (key, g) in enumerate(groups.items()):
        rng = np.random.default_rng([seed, gi])
        with _chip(g.chip):
            calls = _build_and_run(g, rng)
        for c, cw, extra in zip(g.configs, calls, g.extras):
            if cw.result.errors:
                raise RuntimeError(f"sweep kernel {key}: {cw.result.errors[0]}")
            rows_of[c] = _evaluate(c, cw, g, extra)
    return [r for c in configs for r in rows_of[c]]


def unexplained(rows: list) -> list:
    """Rows whose difference (or rejection) no known reason accounts for."""
    return [r for r in rows if not r.explained]


# ============================================================================= summary and formats

ROW_COLUMNS = ("chip", "data", "m x n", "legacy fixpipe", "new option", "run as", "status", "mismatches",
               "max abs diff", "max ulp diff", "first mismatch", "reason")
SUMMARY_COLUMNS = ("legacy fixpipe", "new option", "configurations", "bit-exact", "differ", "not expressible",
                   "max ulp diff", "reasons")




def row_cells(r: SweepRow) -> list:
    c = r.config
    mism = f"{r.mismatches}/{r.elements}" if r.status in ("match", "differs") else "-"
    reason = r.reason_text()
    if r.note:
        reason = f"{reason}; {r.note}" if reason else r.note
    return [c.chip, c.data, f"{c.m}x{c.n}", c.legacy_label(), r.option, r.clauses, r.status, mism,
            fmt_metric(r.max_abs_diff), fmt_metric(r.max_ulp_diff), r.first_mismatch or "-", reason or "-"]


def _scale_class(c: LegacyConfig) -> str:
    if c.scale_kind is None:
        return ""
    if c.scale_kind == "tensor":
        return f"tensor[16] {c.scale}"
    s = float(c.scale)
    f16 = float(np.float16(s)) if abs(s) < 65520 else np.inf
    if s <= 0:
        cls = "<= 0"
    elif f16 < 2 ** -14:
        cls = "f16-subnormal"
    elif float(_fp19(np.float32(s))) != f16:
        cls = "not FP19-exact"
    elif abs(s) * 2 > 65504:
        cls = "large"
    else:
        cls = "FP19-exact"
    return f"{c.scale_kind} {s!r} ({cls})"


def summary(rows: list) -> list:
    """Rows grouped by (legacy feature, new option) over chips, data and shapes:
    ``[(legacy, option, total, match, differ, rejected, max ulp, reasons)]`` in first-seen order."""
    out: dict = {}
    for r in rows:
        c = r.config
        parts = [f"{TIK_NAME[c.src]}->{TIK_NAME[c.dst]}"]
        if c.quant:
            parts.append(c.quant)
        if c.scale_kind:
            parts.append(_scale_class(c))
        if c.relu:
            parts.append("relu")
        if c.add:
            parts.append(c.add)
        key = (" ".join(parts), r.option)
        s = out.setdefault(key, {"n": 0, "match": 0, "differs": 0, "rejected": 0, "ulp": 0.0, "reasons": [],
                                 "unexplained": 0, "chips": []})
        s["n"] += 1
        s["match"] += r.status == "match"
        s["differs"] += r.status == "differs"
        s["rejected"] += r.status in ("rejected", "absent")
        s["unexplained"] += not r.explained
        s["ulp"] = max(s["ulp"], r.max_ulp_diff)
        for x in r.reasons:
            if x not in s["reasons"]:
                s["reasons"].append(x)
    result = []
    for (legacy, option), s in out.items():
        reasons = ", ".join(s["reasons"]) + (f" + {s['unexplained']} UNEXPLAINED" if s["unexplained"] else "")
        result.append([legacy, option, s["n"], s["match"], s["differs"], s["rejected"], fmt_metric(s["ulp"]),
                       reasons or "-"])
    return result


def format_sweep(rows: list, fmt: str = "table", summarize: bool = False) -> str:
    """The sweep report: every row (or the `summary`) as ``table`` / ``md`` / ``csv`` / ``json``."""
    if fmt not in FORMATS:
        raise UnknownName(f"unknown format {fmt!r}", operand="--format", value=fmt, limit=", ".join(FORMATS),
                          hint="pass --format " + " | ".join(FORMATS))
    bad = unexplained(rows)
    if fmt == "json":
        doc = {"rows": [r.to_dict() for r in rows], "unexplained": len(bad),
               "known_differences": {k: {"kind": v.kind, "reason": v.reason, "source": v.source}
                                     for k, v in KNOWN_DIFFERENCES.items()}}
        if summarize:
            doc["summary"] = [dict(zip(SUMMARY_COLUMNS, s)) for s in summary(rows)]
        return json.dumps(doc, indent=2) + "\n"
    cols, cells = (SUMMARY_COLUMNS, summary(rows)) if summarize else (ROW_COLUMNS, [row_cells(r) for r in rows])
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        w.writerows(cells)
        return out.getvalue()
    from tabulate import tabulate
    table = tabulate(cells, headers=cols, tablefmt="github" if fmt == "table" else "pipe", disable_numparse=True)
    used = [k for k in KNOWN_DIFFERENCES if any(k in r.reasons for r in rows)]
    legend = "\n".join(f"* `{k}` ({KNOWN_DIFFERENCES[k].kind}): {KNOWN_DIFFERENCES[k].reason} "
                       f"[{KNOWN_DIFFERENCES[k].source}]" for k in used)
    n_diff = sum(r.status != "match" for r in rows)
    verdict = (f"{len(rows)} comparisons: {len(rows) - n_diff} bit-exact, {n_diff} differ or are not expressible, "
               + (f"{len(bad)} UNEXPLAINED" if bad else "all explained by known differences"))
    return f"{table}\n\n{legend}\n\n{verdict}\n"


__all__ = ["LegacyConfig", "SweepRow", "KnownDifference", "KNOWN_DIFFERENCES", "grid", "sweep", "unexplained",
           "summary", "format_sweep", "row_cells", "DEFAULT_CHIPS", "FULL_CHIPS"]
