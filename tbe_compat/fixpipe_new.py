"""``tik-compare-fixpipe --new-fixpipe``: for every legacy ``fixpipe`` call of a kernel, the new FIXPIPE call
that replaces it (``pto.mte_l0c_gm``, copy-pasteable into the kernel as a mixed-kernel statement) and what it
writes on the **same L0C data** as that call, compared with the legacy reference model.

`suggest` derives the replacement from the call's arguments (the mapping of fixpipe_compare.md
"Legacy fixpipe vs new FIXPIPE: differences", item 1):

======================  ========================================================================
legacy                  new FIXPIPE (``pto.mte_l0c_gm``, normal NZ layout)
======================  ========================================================================
``cburst_num``          ``%n = 16 * cburst_num`` (at most 255 blocks per op; more: one op per 255)
``burst_len``           ``%m = howo`` (rows of 16 channels)
``src_stride``          ``%src_stride = round_howo + 16 * src_stride`` (L0C rows between blocks)
``dst_stride``          ``%dst_stride = howo * 16 + dst_stride * 32 / sizeof(dst)`` (elements)
``fp322fp16``           ``pre_quant=(0.0, {"mode": "f32_f16"})``
``int322fp16`` float    ``pre_quant=(np.float16(s), {"mode": "deqf16_scalar"})`` (a Python float would be
                        used at FP19: differences item 2)
``int322fp16`` Scalar   ``pre_quant=(scalar, {"mode": "deqf16_scalar"})`` (the TIK Scalar itself)
``int322fp16`` Tensor   ``pre_quant=(fb.pto_ptr(), {"mode": "deqf16_vec"})``: one 64-bit word per output
                        channel (``make_word(scale[j % 16])``), loaded into a ``scope_fb0`` tensor
``relu``                ``pre_relu={"mode": "normal_relu"}``
f16 -> f16 copy         ``sat=False`` on a saturation-mode chip (differences item 8)
``bias``                no FIXPIPE stage: ``pto.mte_l1_bt`` + ``pto.mad_bias`` (item 6), not run here
``element-wise-add``    no FIXPIPE stage: a vector add before the conversion (item 7), not run here
======================  ========================================================================

`run_new` runs that call on a fresh machine of the call's chip (and overflow mode) with the captured L0C
bytes and the destination window as it was before the call; `NewFixpipeResult` accumulates, per call site,
how the result compares with the legacy model (`diff_values`) and why it differs (`NEW_DIFF_REASONS`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pto_core.errors import PtoError

#: ``%n`` of one FIXPIPE op is at most 4095 columns: 255 blocks of 16 channels (as the TIK lowering splits).
MAX_BLOCKS = 255

#: Why a new FIXPIPE result can differ from legacy fixpipe on a call's data (fixpipe_compare.md, differences).
NEW_DIFF_REASONS = {
    "relu_negative_zero": "an L0C -0 under relu: legacy max(x, +0) writes +0, FIXPIPE normal_relu keeps -0 "
                          "(differences item 4; 0 ulp)",
    "scale_not_positive_normal": "FIXPIPE scales must be positive normal FP19 numbers; legacy int322fp16 accepts "
                                 "negative, zero and infinite float16 scales (differences item 3). Fix: fold the "
                                 "sign into the weights, or keep a vector deq",
    "bias": "FIXPIPE has no bias stage: seed the accumulator with pto.mte_l1_bt + pto.mad_bias (differences "
            "item 6)",
    "element-wise-add": "FIXPIPE has no element-wise-add stage: add with a vector op before the conversion "
                        "(differences item 7)",
    "atomic": "set_atomic_add is in effect: add atomic={'type': <dst type>, 'op': 'add'} to the call "
              "(the atomic float sum's saturation is an open question, fixpipe_compare.md \"Choices\")",
}


@dataclass(frozen=True)
class Suggestion:
    """The new FIXPIPE call for one legacy call: ``text`` (Python, one ``pto.mte_l0c_gm`` per 255 blocks),
    the geometry, and ``absent``: a `NEW_DIFF_REASONS` key when FIXPIPE has no stage for the call.
    ``generic``: ``text`` with ``name[...]`` for every view that is not a whole tensor (what a call site
    traced with several offsets -- a Python loop of fixpipe calls -- prints)."""

    text: str
    m: int
    n: int
    src_stride: int
    dst_stride: int
    sat: Optional[bool] = None
    absent: Optional[str] = None
    generic: str = ""


def _view_text(t) -> tuple:
    """``(text, placeholder)``: the pointer to view ``t`` as Python -- ``name.pto_ptr()`` for the whole tensor,
    ``name[i, j, k].pto_ptr()`` for a view at a trace-time offset of a tensor of static shape (its first element's
    index), else ``name[...].pto_ptr()`` with ``placeholder`` True: a run-time offset (a loop variable) whose
    source text the trace does not keep."""
    name = t.name
    if getattr(t, "_whole", False) and t.offset == 0:
        return f"{name}.pto_ptr()", False
    st = getattr(t, "storage", None)
    shape = getattr(st, "shape", None)
    if isinstance(t.offset, int) and st is not None and st.name == name and t.dt == st.dtype and shape and \
            all(isinstance(d, int) for d in shape) and 0 <= t.offset < int(np.prod(shape)):
        index = ", ".join(str(int(i)) for i in np.unravel_index(t.offset, tuple(shape)))
        return f"{name}[{index}].pto_ptr()", False
    return f"{name}[...].pto_ptr()", True


def _payload_text(q) -> str:
    if q is None:
        return ""
    if q["mode"] == "fp322fp16":
        return ', pre_quant=(0.0, {"mode": "f32_f16"})'
    p = q["mode_param"]
    if isinstance(p, float):
        return f', pre_quant=(np.float16({p!r}), {{"mode": "deqf16_scalar"}})'
    from .tik.tensor import Tensor
    if isinstance(p, Tensor):
        return ', pre_quant=(fb.pto_ptr(), {"mode": "deqf16_vec"})'
    return f', pre_quant=({getattr(p, "name", None) or "scale"}, {{"mode": "deqf16_scalar"}})'


def suggest(call, overflow_mode: str) -> Suggestion:
    """The replacement of the traced `FixpipeCall` ``call`` on a chip in ``overflow_mode`` (module doc)."""
    ext = call.extend_params
    dsize = call.dst.dt.bits // 8
    m, n = call.howo, 16 * call.cburst_num
    src_stride = call.round_howo + 16 * call.src_stride
    dst_stride = call.howo * 16 + call.dst_stride * 32 // dsize
    absent = "bias" if ext.get("bias") is not None else \
        "element-wise-add" if ext.get("element-wise-add") is not None else None
    q = ext.get("quantize_params")
    sat = False if (q is None and call.src.dtype == "float16" and call.dst.dtype == "float16"
                    and overflow_mode == "saturation") else None
    clauses = _payload_text(q)
    if ext.get("relu"):
        clauses += ', pre_relu={"mode": "normal_relu"}'
    if sat is False:
        clauses += ", sat=False"
    fb = ""
    if q is not None and q["mode"] == "int322fp16" and not isinstance(q["mode_param"], float) \
            and hasattr(q["mode_param"], "space"):
        fb = (f"  # fb: a scope_fb0 tensor of {n} 64-bit words, word j = make_word(scale[j % 16]) "
              f"(pto_core.numerics.quant), loaded from L1 with pto.mte_l1_fb")

    def text_of(views) -> str:
        (src, src_open), (dst, dst_open) = views
        ops = []
        for c0 in range(0, call.cburst_num, MAX_BLOCKS):
            cnt = min(MAX_BLOCKS, call.cburst_num - c0)
            off = "" if c0 == 0 else f"  # blocks {c0}..{c0 + cnt - 1}: src + {c0 * src_stride * 16}, " \
                                     f"dst + {c0 * dst_stride} elements"
            ops.append(f"pto.mte_l0c_gm({src}, {dst}, {m}, {16 * cnt}, {src_stride}, {dst_stride}, 0, 0{clauses})"
                       f"{off}")
        if src_open or dst_open:
            # review462: a bare [...] read as part of the call (pasted, TIK refuses the Ellipsis with a generic
            # message), so it is said to be a placeholder where it is
            views = " and ".join(v.split(".pto_ptr()")[0] for v, o in ((src, src_open), (dst, dst_open)) if o)
            ops[0] += ("; " if "  # " in ops[0] else "  # ") + \
                f"{views}: [...] is a placeholder: write the index the fixpipe call gives this view"
        return "\n".join(ops) + fb

    views = (_view_text(call.src), _view_text(call.dst))
    generic = tuple((f"{t.name}[...].pto_ptr()", True) if v[0] != f"{t.name}.pto_ptr()" else v
                    for t, v in zip((call.src, call.dst), views))
    return Suggestion(text_of(views), m, n, src_stride, dst_stride, sat, absent, text_of(generic))


def run_new(call, s: Suggestion, snap: dict) -> np.ndarray:
    """The destination window (``snap["dst_before"]`` with the new op's writes) after `Suggestion` ``s`` ran
    on ``snap``'s L0C bytes, on a fresh machine of ``call.chip`` in the captured overflow mode. Raises the
    op's `PtoError` when the new op refuses the call (a non-positive scale, ...). Side-effect free: the
    machine that was active before (the kernel's, for eager ops without pointers) is active again after."""
    from pto_core.memory import keeping_active_context
    with keeping_active_context():
        return _run_new(call, s, snap)


def _run_new(call, s: Suggestion, snap: dict) -> np.ndarray:
    from pto_core import Machine, pto
    from pto_core.memory import MachineOptions
    from pto_core.numerics.quant import make_word
    mach = Machine(call.chip, options=MachineOptions(check_hazards=False, overflow_mode=snap["overflow_mode"]))
    src = mach.ptr("l0c", call.src.dt.name, 0)
    mach.write(src, snap["l0c"])
    dst = mach.gm_tensor(snap["dst_before"].copy(), name="dst")
    ext = call.extend_params
    q = ext.get("quantize_params")
    clauses: dict = {}
    if q is not None and q["mode"] == "fp322fp16":
        clauses["pre_quant"] = (0.0, {"mode": "f32_f16"})
    elif q is not None:
        sc = snap["scale"]
        if isinstance(sc, np.ndarray) and sc.ndim:
            fb = mach.ptr("fb", "f32", 0)
            words = np.array([make_word(float(v)) for v in np.tile(sc, min(call.cburst_num, MAX_BLOCKS))],
                             np.uint64)
            mach.write(mach.ptr("fb", "u8", 0), words.view(np.uint8))
            clauses["pre_quant"] = (fb, {"mode": "deqf16_vec"})
        else:
            clauses["pre_quant"] = (np.float16(sc), {"mode": "deqf16_scalar"})
    if ext.get("relu"):
        clauses["pre_relu"] = {"mode": "normal_relu"}
    if s.sat is not None:
        clauses["sat"] = s.sat
    for c0 in range(0, call.cburst_num, MAX_BLOCKS):
        cnt = min(MAX_BLOCKS, call.cburst_num - c0)
        pto.mte_l0c_gm(src + c0 * s.src_stride * 16, dst + c0 * s.dst_stride, s.m, 16 * cnt,
                       s.src_stride, s.dst_stride, 0, 0, **clauses)
    return mach.read(dst, snap["dst_count"])


@dataclass
class NewFixpipeResult:
    """The new FIXPIPE call of one call site and how it compares with the legacy model over every execution.

    ``status``: ``match`` (bit for bit on every execution), ``differs``, ``rejected`` (the new op refused the
    call: ``error``), ``not run`` (``reason`` says why: a stage FIXPIPE lacks, an atomic add).
    ``reasons``: the `NEW_DIFF_REASONS` keys that explain the differing elements, or ``UNEXPLAINED``."""

    call: str
    status: str = "match"
    #: `Suggestion.generic`: the call printed when the site's executions had different views (see `add`)
    generic: str = ""
    runs: int = 0
    elements: int = 0
    mismatches: int = 0
    max_ulp_diff: float = 0.0
    first: Optional[str] = None
    error: Optional[str] = None
    reasons: list = field(default_factory=list)

    def add(self, other: "NewFixpipeResult") -> None:
        """Merge another execution set of the same call site. A site traced with different trace-time views (a
        Python loop of fixpipe calls, ``c_gm[j, 0, 0]`` for j = 0, 1, ...) prints its calls' generic form, the
        views as ``name[...]`` placeholders: one of the indices would be wrong for the others."""
        if other.call != self.call:
            self.call = self.generic or self.call
        order = ("rejected", "differs", "not run", "match")
        self.status = min(self.status, other.status, key=order.index)
        self.runs += other.runs
        self.elements += other.elements
        self.mismatches += other.mismatches
        self.max_ulp_diff = max(self.max_ulp_diff, other.max_ulp_diff)
        self.first = self.first or other.first
        self.error = self.error or other.error
        self.reasons += [r for r in other.reasons if r not in self.reasons]

    def describe(self) -> str:
        """One line for the report."""
        if self.status == "match":
            return f"matches legacy bit for bit on this call's L0C data ({self.elements} elements, " \
                   f"{self.runs} execution{'' if self.runs == 1 else 's'})"
        if self.status == "rejected":
            return f"rejected by the new op: {self.error}; {NEW_DIFF_REASONS['scale_not_positive_normal']}" \
                if "scale_not_positive_normal" in self.reasons else f"rejected by the new op: {self.error}"
        if self.status == "not run":
            return "not run: " + "; ".join(NEW_DIFF_REASONS[r] for r in self.reasons)
        why = "; ".join(NEW_DIFF_REASONS.get(r, "UNEXPLAINED: not a documented difference; report it as a "
                                                 "simulator bug with --format json") for r in self.reasons)
        return f"differs from legacy on {self.mismatches}/{self.elements} elements (max {self.max_ulp_diff:g} ulp; " \
               f"first {self.first}): {why}"

    def to_dict(self) -> dict:
        ulp = self.max_ulp_diff if np.isfinite(self.max_ulp_diff) else str(self.max_ulp_diff)
        return {"call": self.call, "status": self.status, "runs": self.runs, "elements": self.elements,
                "mismatches": self.mismatches, "max_ulp_diff": ulp, "first_mismatch": self.first,
                "error": self.error, "reasons": list(self.reasons), "explanation": self.describe()}


def evaluate(call, s: Suggestion, snap: dict, expected: np.ndarray) -> NewFixpipeResult:
    """One execution: the new call on ``snap`` against ``expected`` (the legacy window)."""
    from .fixpipe_compare import diff_values
    r = NewFixpipeResult(s.text, runs=1, generic=s.generic)
    if s.absent or snap.get("atomic"):
        r.status, r.reasons = "not run", [s.absent or "atomic"]
        return r
    try:
        got = run_new(call, s, snap)
    except PtoError as e:
        r.status, r.error = "rejected", f"pto.mte_l0c_gm: {e.message}"     # not our machine's line
        if "positive normal FP19" in e.message:
            r.reasons = ["scale_not_positive_normal"]
        return r
    d = diff_values(expected, got)
    r.elements, r.mismatches, r.max_ulp_diff = d.elements, d.mismatches, d.max_ulp_diff
    if d.mismatches:
        r.status = "differs"
        e, g = expected[d.mask], got[d.mask]
        r.first = f"[{d.first}]: legacy {expected[d.first]!r} vs new {got[d.first]!r}"
        negzero = (e.dtype.kind == "f") and bool(call.extend_params.get("relu")) and bool(
            np.all((e == 0) & ~np.signbit(e) & (g == 0) & np.signbit(g)))
        r.reasons = ["relu_negative_zero" if negzero else "UNEXPLAINED"]
    return r
