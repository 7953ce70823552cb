"""Compare legacy TIK ``fixpipe`` with the PTO FIXPIPE lowering, call by call (``tik-compare-fixpipe``).

Importable as `tbe_compat.compare` too (that module re-exports this API next to its
`compare_arrays` output comparison).

For every ``fixpipe`` call a TIK kernel executes, the comparison takes the L0C bytes the
call read and the destination bytes its PTO statements wrote (captured at run time by
interpreter probes placed around the call's statements, `tik_instance.fixpipe_calls`),
runs the independent reference model `tbe_compat.legacy_fixpipe` on those L0C bytes with
the call's arguments, and compares the two destinations element by element::

    expected = dst before the call, with the legacy model's values at the elements it writes
               (dst_stride gaps keep their old contents; under set_atomic_add: old + value)
    got      = dst after the call's last PTO statement
    compared = the dst window from the call's start element to its last written element

Metrics (`diff_values`), in the destination format:

* an element *mismatches* when the bit patterns differ, except that two NaNs are equal
  whatever their payloads (NaN payloads after a conversion are not specified); ``+0`` and
  ``-0`` differ;
* ``abs diff`` = ``|expected - got|`` (inf when exactly one side is NaN, or for inf vs a
  finite value);
* ``ulp diff`` = distance of the two values on the format's ordered code line (f16/bf16/f32:
  the sign-magnitude code mapped to a signed integer, so ``+0``/``-0`` are 0 apart, adjacent
  floats 1 apart and the largest finite value is 1 away from inf; integers: ``|a - b|``);
  inf when exactly one side is NaN (`tbe_compat.compare.ulp_distance` on the differing elements).

Two entry points, both returning structured results:

* `compare_kernel(tik_instance, feed)` -- run one built kernel and compare its calls;
* `compare_script(path, feed=..., kernel=...)` -- run a TIK script as ``python SCRIPT`` would
  (kernels it runs itself with ``start_debug`` are compared on those runs; kernels it only
  builds are run afterwards with ``feed`` or with generated inputs, see `generated_feed`).

Formatters: `format_comparisons` (``table`` / ``md`` / ``csv`` / ``json``). The sweep
(``--sweep``: `sweep`, `format_sweep`) is implemented in `tbe_compat.fixpipe_sweep`.
Guide: migration_guide/fixpipe_compare.md.
"""
from __future__ import annotations

import copy
import csv
import io
import json
import lzma
import os
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from pto_core.errors import ConfigError, IllegalOperand, PtoError, UnknownName
from pto_core.interpreter import Probe
from pto_core.memory import Ptr

from . import legacy_fixpipe as LF
from .compare import _UINT, is_float, ulp_distance
from .tik.tensor import Tensor

#: seed of generated kernel inputs (``--seed``)
DEFAULT_SEED = 0
FORMATS = ("table", "md", "csv", "json")
#: flag ops auto-sync records around a call (the probes skip them)
_FLAG_OPS = frozenset({"set_flag", "wait_flag"})


# ============================================================================= element-wise metrics


@dataclass(frozen=True, eq=False)
class ValueDiff:
    """Result of `diff_values` (see the module doc for the definitions).

    Attributes:
        elements: elements compared; mismatches: elements that differ;
        nan_mismatches: mismatches where exactly one side is NaN;
        max_abs_diff / max_ulp_diff: over the mismatching elements (0 when none; inf with a NaN);
        first: flat position of the first mismatch in the compared arrays, or None;
        mask: bool array, True where the elements differ.
    """

    elements: int
    mismatches: int
    nan_mismatches: int
    max_abs_diff: float
    max_ulp_diff: float
    first: Optional[int]
    mask: np.ndarray


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(_UINT[a.dtype.itemsize])


def _is_float(a: np.ndarray) -> bool:
    return is_float(a.dtype)


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if _is_float(a) else np.zeros(a.shape, bool)


def diff_values(expected: np.ndarray, got: np.ndarray) -> ValueDiff:
    """Compare two arrays of one destination format element by element (module doc)."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.shape != got.shape or expected.dtype != got.dtype:
        raise ValueError(f"diff_values needs equal shapes and dtypes, got {expected.shape} {expected.dtype} "
                         f"and {got.shape} {got.dtype}")
    e, g = expected.reshape(-1), got.reshape(-1)
    mask = _bits(e) != _bits(g)
    idx = np.flatnonzero(mask)
    if idx.size:                                       # NaN checks only where the bits differ
        ne, ng = _isnan(e[idx]), _isnan(g[idx])
        both = ne & ng
        mask[idx[both]] = False
        idx, ne, ng = idx[~both], ne[~both], ng[~both]
    n = int(idx.size)
    if n == 0:
        return ValueDiff(e.size, 0, 0, 0.0, 0.0, None, mask)
    ee, gg = e[idx], g[idx]
    with np.errstate(invalid="ignore", over="ignore"):
        absd = np.abs(ee.astype(np.float64) - gg.astype(np.float64))
    one_nan = ne != ng
    absd[one_nan] = np.inf
    absd[np.isnan(absd)] = np.inf                     # inf - inf of equal sign cannot mismatch; -inf vs inf: inf
    ulp = ulp_distance(ee, gg) if _is_float(ee) else absd.copy()
    ulp[one_nan] = np.inf
    return ValueDiff(e.size, n, int(one_nan.sum()), float(absd.max()), float(ulp.max()), int(idx[0]), mask)


def _scalar(x) -> Any:
    v = x.item() if hasattr(x, "item") else x
    return float(v) if isinstance(v, float) or _is_float(np.asarray(x)) else int(v)


def _hex(x: np.ndarray) -> str:
    return f"0x{int(_bits(np.asarray(x).reshape(1))[0]):0{np.asarray(x).dtype.itemsize * 2}x}"


# ============================================================================= results


@dataclass(frozen=True)
class Mismatch:
    """The first differing element of a call site.

    Attributes:
        index: flat element index in the destination tensor as declared (its storage).
        multi_index: that index in the declared shape (empty when the shape is not static).
        legacy, new: the legacy model's and the PTO lowering's values (Python numbers).
        legacy_bits, new_bits: their bit patterns (hex).
        run: which execution of the call site (0-based); core: the core; loops: ``((var, value), ...)``.
    """

    index: int
    multi_index: tuple
    legacy: Any
    new: Any
    legacy_bits: str
    new_bits: str
    run: int = 0
    core: int = 0
    loops: tuple = ()

    def describe(self) -> str:
        where = f"[{', '.join(map(str, self.multi_index))}]" if self.multi_index else f"[{self.index}]"
        ctx = [f"flat {self.index}", f"run {self.run}", f"core {self.core}"]
        ctx += [f"{k}={v}" for k, v in _loop_dict(self.loops).items()]
        return f"{where} ({', '.join(ctx)}): legacy {_fmt_num(self.legacy)} ({self.legacy_bits}) " \
               f"vs new {_fmt_num(self.new)} ({self.new_bits})"

    def to_dict(self) -> dict:
        return {"index": self.index, "multi_index": list(self.multi_index), "legacy": _json_num(self.legacy),
                "new": _json_num(self.new), "legacy_bits": self.legacy_bits, "new_bits": self.new_bits,
                "run": self.run, "core": self.core, "loops": _loop_dict(self.loops)}


@dataclass
class FixpipeComparison:
    """One ``fixpipe`` call site of one kernel: every execution, compared (module doc).

    Attributes:
        kernel: kernel name; site: ``file:line`` of the call; chip: the SoC it ran on.
        lowering: the PTO lowering (``fixpipe`` / ``fixpipe_l1_ub`` / ``vector``).
        shape: ``(cburst_num, howo, 16)`` written per execution.
        src_dtype, dst_dtype: TIK dtype names; quant: quantize mode and scale kind (or ``none``).
        relu: ReLU on; add: ``bias`` / ``element-wise-add`` / ``none``.
        runs: executions compared; elements: elements compared over all runs.
        mismatches, nan_mismatches, max_abs_diff, max_ulp_diff: see `ValueDiff`.
        first_mismatch: the first differing element (`Mismatch`) or None.
        notes: caveats (legacy model notes, atomic add, uninitialised L0C, ...).
        errors: executions the legacy model refused (message each), or comparison failures.
    """

    kernel: str
    site: str
    chip: str
    lowering: str
    shape: tuple
    src_dtype: str
    dst_dtype: str
    quant: str
    relu: bool
    add: str
    runs: int = 0
    elements: int = 0
    mismatches: int = 0
    nan_mismatches: int = 0
    max_abs_diff: float = 0.0
    max_ulp_diff: float = 0.0
    first_mismatch: Optional[Mismatch] = None
    notes: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    #: with ``new_fixpipe=True`` (``--new-fixpipe``): the replacing ``pto.mte_l0c_gm`` call and how it
    #: compares with the legacy model on the same L0C data (`tbe_compat.fixpipe_new.NewFixpipeResult`)
    new_fixpipe: Any = None

    @property
    def equal(self) -> bool:
        """Every execution matched bit for bit (and at least one ran)."""
        return self.runs > 0 and self.mismatches == 0 and not self.errors

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "site": self.site, "chip": self.chip, "lowering": self.lowering,
                "shape": list(self.shape), "src_dtype": self.src_dtype, "dst_dtype": self.dst_dtype,
                "quant": self.quant, "relu": self.relu, "add": self.add, "runs": self.runs,
                "elements": self.elements, "mismatches": self.mismatches, "nan_mismatches": self.nan_mismatches,
                "max_abs_diff": _json_num(self.max_abs_diff), "max_ulp_diff": _json_num(self.max_ulp_diff),
                "first_mismatch": self.first_mismatch.to_dict() if self.first_mismatch else None,
                "equal": self.equal, "notes": list(self.notes), "errors": list(self.errors),
                **({"new_fixpipe": self.new_fixpipe.to_dict()} if self.new_fixpipe is not None else {})}


def _loop_dict(loops: tuple) -> dict:
    """``{var: value}``, outermost first; a repeated name gets primes (``i``, ``i'``), as in error contexts."""
    out = {}
    for k, v in loops:
        while k in out:
            k += "'"
        out[k] = v
    return out


def _fmt_num(v) -> str:
    if isinstance(v, float):
        return repr(v) if np.isfinite(v) else str(v)
    return str(v)


def _json_num(v):
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)                       # "inf" / "nan": valid JSON, stable
    return v


# ============================================================================= run-time capture


def _site(where) -> str:
    return f"{where.file}:{where.line}" if where is not None else "?"


def _quant_label(ext: dict) -> str:
    q = ext.get("quantize_params")
    if not q:
        return "none"
    if q["mode"] == "fp322fp16":
        return "fp322fp16"
    p = q["mode_param"]
    if isinstance(p, float):
        return f"int322fp16 (immediate {p!r})"
    if isinstance(p, Tensor):
        return "int322fp16 (tensor [16])"
    return "int322fp16 (scalar)"


class _CallWatch:
    """Probes around one traced `FixpipeCall`; compares every execution when it ends."""

    def __init__(self, kernel: str, call, keep: bool, new_fixpipe: bool = False):
        self.call = call
        self.keep = keep
        self.new_fixpipe = new_fixpipe
        self.pending: dict = {}
        self.snapshots: list = []                 # (snapshot dict) per execution when ``keep``
        ext = call.extend_params
        add = "bias" if ext.get("bias") is not None else \
            "element-wise-add" if ext.get("element-wise-add") is not None else "none"
        self.result = FixpipeComparison(
            kernel=kernel, site=_site(call.where), chip=call.chip, lowering=call.lowering,
            shape=(call.cburst_num, call.howo, 16), src_dtype=call.src.dtype, dst_dtype=call.dst.dtype,
            quant=_quant_label(ext), relu=bool(ext.get("relu")), add=add)
        self.atomic_clause = any(getattr(s, "call", None) is not None and s.call.clauses.get("atomic")
                                 for s in call.statements)

    # -- what the probes evaluate
    def _before_exprs(self) -> tuple:
        ext = self.call.extend_params
        exprs = [self.call.src.ptr(), self.call.dst.ptr()]
        for key in ("bias", "element-wise-add"):
            if ext.get(key) is not None:
                exprs.append(ext[key].ptr())
        q = ext.get("quantize_params")
        if q and q["mode"] == "int322fp16" and not isinstance(q["mode_param"], float):
            p = q["mode_param"]
            exprs.append(p.ptr() if isinstance(p, Tensor) else p.ir)
        return tuple(exprs)

    def probes(self) -> list:
        st = self.call.statements
        if not st:
            return []
        # the before-probe sits on the call's first statement that is not a flag op: auto-sync may have
        # moved the call's set/wait pair out of an enclosing loop (HOIST_LOOP_INVARIANT_PAIRS)
        first = next((s for s in st if getattr(getattr(s, "call", None), "spec", None) is None
                      or s.call.spec.name not in _FLAG_OPS), st[0])
        return [Probe(first, self._before, self._before_exprs(), "before"),
                Probe(st[-1], self._after, (self.call.dst.ptr(),), "after")]

    # -- probes
    def _before(self, ctx, values, loops):
        try:
            self.pending[ctx.core.index] = self._snapshot(ctx, values, loops)
        except Exception as e:  # noqa: BLE001 - a tool failure is reported, never aborts the kernel
            self.result.errors.append(f"snapshot failed: {type(e).__name__}: {e}")

    def _after(self, ctx, values, loops):
        snap = self.pending.pop(ctx.core.index, None)
        if snap is None:
            return
        try:
            dst = self.call.dst
            snap["dst_after"] = ctx.machine.read(Ptr(dst.space, dst.dt, values[0], 0, ctx), snap["dst_count"])
            self._compare(snap, ctx)
            if self.keep:
                self.snapshots.append(snap)
        except Exception as e:  # noqa: BLE001
            self.result.errors.append(f"comparison failed: {type(e).__name__}: {e}")

    def _snapshot(self, ctx, values, loops) -> dict:
        call, m = self.call, ctx.machine
        src, dst = call.src, call.dst
        ssize, dsize = src.dt.bits // 8, dst.dt.bits // 8
        src_count, dst_count = call.src_bytes[2] // ssize, call.dst_bytes[2] // dsize
        src_ptr = Ptr(src.space, src.dt, values[0], 0, ctx)
        buf, off = m.resolve(src_ptr, call.src_bytes[2], core=ctx.core.index)
        snap = {"l0c": m.read(src_ptr, src_count),
                "l0c_written": buf.written[off:off + call.src_bytes[2]].reshape(-1, ssize).all(axis=1),
                "dst_addr": values[1], "dst_count": dst_count,
                "dst_before": m.read(Ptr(dst.space, dst.dt, values[1], 0, ctx), dst_count),
                "core": ctx.core.index, "loops": tuple(loops), "overflow_mode": m.overflow_mode}
        from pto_core.ops.ctrl import atomic_mode
        snap["atomic"] = atomic_mode(ctx) is not None or self.atomic_clause
        i = 2
        ext = call.extend_params
        rh = call.round_howo
        for key, count in (("bias", call.cburst_num * 16), ("element-wise-add", call.cburst_num * rh * 16)):
            t = ext.get(key)
            if t is not None:
                snap[key] = m.read(Ptr(t.space, t.dt, values[i], 0, ctx), count)
                i += 1
        q = ext.get("quantize_params")
        if q and q["mode"] == "int322fp16":
            p = q["mode_param"]
            if isinstance(p, float):
                snap["scale"] = p
            elif isinstance(p, Tensor):
                snap["scale"] = m.read(Ptr(p.space, p.dt, values[i], 0, ctx), 16)
            else:
                snap["scale"] = np.float16(values[i])
        return snap

    # -- the comparison of one execution
    def legacy_args(self, snap: dict) -> dict:
        """Keyword arguments of `legacy_fixpipe` for one captured execution."""
        call = self.call
        ext = call.extend_params
        params = {}
        for key in ("bias", "element-wise-add"):
            if key in snap:
                params[key] = LF.LegacyTensor(snap[key], scope="l1")
        q = ext.get("quantize_params")
        if q:
            mp = None
            if q["mode"] == "int322fp16":
                s = snap["scale"]
                mp = LF.LegacyTensor(s, scope="l1") if isinstance(s, np.ndarray) and s.ndim else s
            params["quantize_params"] = {"mode": q["mode"], "mode_param": mp}
        if ext.get("relu"):
            params["relu"] = True
        return dict(dst_dtype=call.dst.dtype, cburst_num=call.cburst_num, burst_len=call.burst_len,
                    dst_stride=call.dst_stride, src_stride=call.src_stride, extend_params=params or None,
                    chip=call.chip, dst_scope=call.dst.space, overflow_mode=snap["overflow_mode"])

    def _compare(self, snap: dict, ctx) -> None:
        r = self.result
        run = r.runs
        r.runs += 1
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                legacy = LF.legacy_fixpipe(LF.LegacyTensor(snap["l0c"], scope="l0c"), **self.legacy_args(snap))
        except PtoError as e:
            msg = f"the legacy model rejects this call: {e}"
            if msg not in r.errors:
                r.errors.append(msg)
            return
        for note in legacy.plan.notes:
            _note(r, note)
        for w in caught:                     # the plan's notes already state a reserved src_stride
            if not issubclass(w.category, LF.ReservedArgumentWarning):
                _note(r, str(w.message))
        geo = legacy.geometry
        if not geo.src_blocks(snap["l0c_written"]).all():
            _note(r, "the call read L0C elements that were never written (initial fill pattern); "
                     "both sides saw the same bytes")
        expected = snap["dst_before"].copy()
        values = legacy.values
        if snap["atomic"]:
            values = _atomic_add(snap["dst_before"], values)
            _note(r, "set_atomic_add: expected = dst before + legacy value (IEEE add, rounded once in the dst type)")
        expected[legacy.written] = values[legacy.written]
        got = snap["dst_after"]
        snap["expected"] = expected
        if self.new_fixpipe:
            self._new_fixpipe(snap, expected)
        d = diff_values(expected, got)
        r.elements += d.elements
        r.mismatches += d.mismatches
        r.nan_mismatches += d.nan_mismatches
        r.max_abs_diff = max(r.max_abs_diff, d.max_abs_diff)
        r.max_ulp_diff = max(r.max_ulp_diff, d.max_ulp_diff)
        if d.first is not None and r.first_mismatch is None:
            r.first_mismatch = self._mismatch(snap, d.first, expected, got, run, ctx)

    def _new_fixpipe(self, snap: dict, expected: np.ndarray) -> None:
        from . import fixpipe_new as NF
        s = NF.suggest(self.call, snap["overflow_mode"])
        r = NF.evaluate(self.call, s, snap, expected)
        if self.result.new_fixpipe is None:
            self.result.new_fixpipe = r
        else:
            self.result.new_fixpipe.add(r)

    def _mismatch(self, snap, pos, expected, got, run, ctx) -> Mismatch:
        dst = self.call.dst
        st = dst.storage
        size = dst.dt.bits // 8
        if st.space == "gm":
            region, off = ctx.machine.gm.find(snap["dst_addr"], 1)
            base = off // size
        elif isinstance(st.addr, int):
            base = (snap["dst_addr"] - st.addr) // size
        else:       # a tensor placed at run time (DYNAMIC_TENSOR_RUNTIME_CHAIN): the index from the write's start
            base = None
        index = (base or 0) + pos
        shape = tuple(st.shape)
        multi = tuple(int(i) for i in np.unravel_index(index, shape)) \
            if base is not None and all(isinstance(d, int) for d in shape) and index < int(np.prod(shape)) else ()
        return Mismatch(int(index), multi, _scalar(expected[pos]), _scalar(got[pos]), _hex(expected[pos]),
                        _hex(got[pos]), run, snap["core"], snap["loops"])


def _note(r: FixpipeComparison, text: str) -> None:
    if text not in r.notes:
        r.notes.append(text)


def _atomic_add(before: np.ndarray, add: np.ndarray) -> np.ndarray:
    """``before + add`` rounded once in the dst type (f16: exact f64 sum; f32: IEEE single; ints wrap)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if before.dtype == np.float16:
            return (before.astype(np.float64) + add.astype(np.float64)).astype(np.float16)
        if before.dtype == np.float32:
            return before + add
        return (before.astype(np.int64) + add.astype(np.int64)).astype(before.dtype)


class KernelWatch:
    """The probes of one built kernel (every traced ``fixpipe`` call) and their results.

    Created by `watch_kernel`; ``comparisons()`` lists one `FixpipeComparison` per call site
    and configuration (calls traced several times at one ``file:line`` with the same
    configuration are merged: their executions add up)."""

    def __init__(self, tik, keep_snapshots: bool = False, new_fixpipe: bool = False):
        self.tik = tik
        self.name = tik.build.kernel_name
        self.calls = [_CallWatch(self.name, c, keep_snapshots, new_fixpipe) for c in tik.fixpipe_calls]
        #: ``file:line`` and op of every FIXPIPE op the kernel writes directly (a mixed kernel's
        #: ``pto.mte_l0c_*``): not compared, said in a note (`direct_fixpipe_notes`)
        self.direct = direct_fixpipe_sites(tik.program)
        probes = [p for c in self.calls for p in c.probes()]
        tik.program.compile(probes=probes)

    def comparisons(self) -> list:
        merged: dict = {}
        for c in self.calls:
            r = c.result
            key = (r.site, r.lowering, r.shape, r.src_dtype, r.dst_dtype, r.quant, r.relu, r.add)
            if key not in merged:
                merged[key] = FixpipeComparison(**{**r.__dict__, "notes": list(r.notes), "errors": list(r.errors),
                                                   "new_fixpipe": copy.deepcopy(r.new_fixpipe)})
                continue
            m = merged[key]
            if r.new_fixpipe is not None:
                if m.new_fixpipe is None:
                    m.new_fixpipe = copy.deepcopy(r.new_fixpipe)
                else:
                    m.new_fixpipe.add(r.new_fixpipe)
            if r.first_mismatch is not None and m.first_mismatch is None:
                m.first_mismatch = Mismatch(**{**r.first_mismatch.__dict__, "run": r.first_mismatch.run + m.runs})
            m.runs += r.runs
            m.elements += r.elements
            m.mismatches += r.mismatches
            m.nan_mismatches += r.nan_mismatches
            m.max_abs_diff = max(m.max_abs_diff, r.max_abs_diff)
            m.max_ulp_diff = max(m.max_ulp_diff, r.max_ulp_diff)
            for n in r.notes:
                _note(m, n)
            m.errors.extend(e for e in r.errors if e not in m.errors)
        return list(merged.values())


#: The FIXPIPE ops a kernel may write directly (a mixed kernel, worked_migration.md): the legacy model takes
#: ``tik.fixpipe``'s arguments, so these are not compared; the report says so (user440: a kernel whose fixpipe
#: had been replaced by ``pto.mte_l0c_gm`` got only "no fixpipe call traced" / "nothing compared").
DIRECT_FIXPIPE_OPS = ("pto.mte_l0c_gm", "pto.mte_l0c_l1", "pto.mte_l0c_ub")
DIRECT_FIXPIPE_NOTE = ("{sites}: a FIXPIPE op written directly, not compared (the legacy model takes tik.fixpipe's "
                       "arguments): to see how it differs from legacy fixpipe on the same L0C data, keep the "
                       "tik.fixpipe call next to it, writing a second output, and compare the two outputs with "
                       "tbe_compat.compare.diff_values (fixpipe_compare.md, \"A FIXPIPE op written directly\"); "
                       "tik-compare-fixpipe --new-fixpipe on the kernel before the change prints each fixpipe's "
                       "replacing call and how it differs on that call's data; tik-compare-fixpipe --sweep lists "
                       "where the new options differ and why")


def direct_fixpipe_sites(program) -> list:
    """``(file, line, op)`` of every `DIRECT_FIXPIPE_OPS` op of ``program`` written by the user (not by a TIK
    call's lowering), once per site, in program order."""
    from pto_core.program import OpStmt, walk_stmts
    sites: dict = {}
    for st in walk_stmts(program.body):
        w = st.where
        if isinstance(st, OpStmt) and w is not None and w.call in DIRECT_FIXPIPE_OPS:
            sites.setdefault((w.file, w.line, w.call), None)
    return list(sites)


def direct_fixpipe_notes(watch: "KernelWatch") -> list:
    """The report's note on ``watch``'s directly written FIXPIPE ops (none when it has none)."""
    if not watch.direct:
        return []
    sites = ", ".join(f"{os.path.basename(f)}:{line} {op}" for f, line, op in watch.direct)
    return [f"kernel {watch.name}: " + DIRECT_FIXPIPE_NOTE.format(sites=sites)]


def watch_kernel(tik, keep_snapshots: bool = False, new_fixpipe: bool = False) -> KernelWatch:
    """Instrument a built kernel: every later ``start_debug`` compares its ``fixpipe`` calls (with
    ``new_fixpipe``, also the new FIXPIPE call that replaces each one, `tbe_compat.fixpipe_new`)."""
    if tik.build is None:
        raise UnknownName("the kernel is not built yet", operand="tik_instance",
                          hint="call BuildCCE(kernel_name=..., inputs=[...], outputs=[...]) first")
    return KernelWatch(tik, keep_snapshots, new_fixpipe)


# ============================================================================= inputs


def check_seed(seed) -> int:
    """``seed`` as an int, or `IllegalOperand`: ``numpy.random.default_rng`` takes non-negative integers only
    (h_author298: ``--seed -1`` ended in numpy's ValueError traceback with exit status 1, the status of a
    difference, after the script had run)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise IllegalOperand(f"seed {seed!r} is not a non-negative integer", operand="--seed", value=seed,
                             limit=">= 0", hint="give --seed a whole number 0 or larger (default 0)")
    return int(seed)


def generated_feed(tik, seed: int = DEFAULT_SEED, given: Optional[dict] = None) -> tuple:
    """``(feed_dict, generated names)`` for a built kernel: the ``given`` arrays, and deterministic
    random values (``numpy.random.default_rng(seed)``, in input order) for every other input tensor:
    float types standard normal, int8/uint8 their whole range, wider integers in [-1000, 1000]
    ([0, 1000] unsigned), bool 0/1. InputScalars must be given (they usually fix shapes)."""
    from .tik.scalar import InputScalar
    given = dict(given or {})
    rng = np.random.default_rng(check_seed(seed))
    feed, made = {}, []
    for x in tik.build.inputs:
        if x.name in feed:
            continue
        if x.name in given:
            feed[x.name] = given[x.name]
            continue
        if isinstance(x, InputScalar):
            raise UnknownName(f"kernel {tik.build.kernel_name!r} has the InputScalar {x.name!r}; its value cannot "
                              f"be generated", operand=x.name, hint=f"pass it in the feed: --feed inputs.npz with "
                                                                  f"a key {x.name!r} (a 0-d array)")
        shape = tuple(x.shape)
        if not all(isinstance(d, int) for d in shape):
            raise UnknownName(f"input {x.name!r} has a dynamic shape; its values cannot be generated",
                              operand=x.name, hint="pass it (and the InputScalars) in the feed file")
        dt = np.dtype(x.storage.dtype.storage)
        if dt.kind == "f" or dt.name == "bfloat16":
            arr = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            arr = rng.integers(0, 2, shape).astype(dt)
        elif dt.itemsize == 1:
            info = np.iinfo(dt)
            arr = rng.integers(info.min, info.max + 1, shape).astype(dt)
        else:
            arr = rng.integers(0 if dt.kind == "u" else -1000, 1001, shape).astype(dt)
        feed[x.name] = arr
        made.append(x.name)
    return feed, made


def _not_numbers(dt: np.dtype) -> Optional[str]:
    """Why a feed array of dtype ``dt`` cannot feed a kernel input (None if it can): a structured dtype (named
    fields: a record per element, not one number) or an object / text / date array. Plain ``V2`` bytes pass (what
    ``numpy.save`` writes for a bfloat16 array; start_debug checks the dtype against the tensor's)."""
    if dt.fields is not None:
        return (f"has the structured dtype {dt} (named fields, not one number per element); save the field you "
                f"mean, e.g. numpy.savez(path, name=arr[{dt.names[0]!r}])")
    if dt.kind in "OUSMm":
        return f"has dtype {dt} ({'an object array' if dt.kind == 'O' else 'text or dates'}), not numbers"
    return None


def load_feed(path: str) -> dict:
    """The arrays of an ``.npz`` file by key (0-d arrays become numbers, for InputScalars)."""
    key = None
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):       # one .npy array: no names to feed by
            raise ValueError("it holds one array (a .npy file), not arrays by kernel input name (an .npz file)")
        out = {}
        with z:
            for key in z.files:
                a = z[key]
                if not isinstance(a, np.ndarray):        # a zip member not written by numpy.save
                    raise ValueError(f"its member {key!r} is not a numpy array (.npy)")
                problem = _not_numbers(a.dtype)
                if problem:
                    raise ValueError(f"array {key!r} {problem}")
                out[key] = a.item() if a.ndim == 0 else a
        return out
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, lzma.LZMAError) as e:
        if isinstance(e, (zipfile.BadZipFile, zlib.error, lzma.LZMAError)):   # truncated or damaged (a savez_compressed
            # member's deflate stream: zlib.error): numpy lets zipfile's / the decompressor's error out
            e = f"it is a damaged .npz archive ({e})"
        elif isinstance(e, ValueError) and "allow_pickle" in str(e):   # numpy's words for pickled data
            # an archive's member: an object array (saved with pickle); else the bytes are no .npz at all
            e = (f"array {key!r} is an object array (pickled Python objects), not numbers" if key is not None
                 else "it is not an .npz archive of arrays (numpy.savez output)")
        raise UnknownName(f"cannot read the feed file {path!r}: {e}", operand="--feed", value=path,
                          hint="write it with numpy.savez(path, name=array, ...)") from None


# ============================================================================= scripts and kernels


@dataclass
class KernelRun:
    """How one kernel was run for the comparison."""

    kernel: str
    chip: str
    how: str                  # "by the script" / "feed file" / "generated inputs (seed N)" / "not run"
    fixpipe_sites: int
    error: Optional[str] = None
    #: start_debug refused an array of the caller's feed for this run (`error` says which; exit status 2, not 3)
    feed_refused: bool = False

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ScriptComparison:
    """Result of `compare_script` / `compare_kernel`.

    ``exit_status``: 0 every compared call matched, 1 a difference (or a call the legacy model
    refused; with `strict_new` also a new FIXPIPE replacement that is not an exact match, `STRICT_NEW_OK`),
    2 a kernel run refused an array of the caller's feed (its shape, dtype or an InputScalar's
    value: a usage error, `feed_errors`), 3 the script or a kernel run failed, 4 no ``fixpipe`` call ran."""

    script: str
    comparisons: list
    kernels: list
    notes: list = field(default_factory=list)
    script_status: int = 0
    script_error: Optional[str] = None
    #: kernels whose run start_debug refused for an array of the caller's feed (not in `to_dict`: the report's
    #: kernel errors say it; `exit_status` is 2)
    feed_errors: list = field(default_factory=list)
    #: ``--strict`` (with ``--new-fixpipe``): a replacement whose status is not in `STRICT_NEW_OK` counts as a
    #: difference (exit status 1), so CI fails on it
    strict_new: bool = False

    @property
    def differences(self) -> list:
        return [c for c in self.comparisons if not c.equal and c.runs]

    @property
    def strict_failures(self) -> list:
        """With `strict_new`: the comparisons whose new FIXPIPE replacement is not an exact match (its status
        ``differs``, ``rejected`` or ``not run``); empty otherwise."""
        if not self.strict_new:
            return []
        return [c for c in self.comparisons if c.new_fixpipe is not None and c.new_fixpipe.status not in STRICT_NEW_OK]

    @property
    def failures(self) -> list:
        """The kernel runs that failed (status 3), not counting those whose feed was refused (status 2)."""
        return [k for k in self.kernels if k.error and not k.feed_refused]

    def outcomes(self) -> list:
        """Every exit status that applies to this report, the most serious first (`EXIT_PRECEDENCE`).

        3 the script or a kernel run failed, 1 a difference or a call the legacy model refused, 2 a kernel's run
        refused an array of the caller's feed, 0 compared calls matched; 4 (no ``fixpipe`` call ran) only when
        nothing else applies. One kernel's outcome never hides another's: `exit_status` is the first of these,
        `verdict` names them all."""
        found = set()
        if self.script_error is not None or self.failures:
            found.add(3)
        if self.differences or any(c.errors for c in self.comparisons) or self.strict_failures:
            found.add(1)
        if any(k.feed_refused for k in self.kernels):
            found.add(FEED_ERROR_EXIT)
        if any(c.runs for c in self.comparisons) and 1 not in found:
            found.add(0)
        return [s for s in EXIT_PRECEDENCE if s in found] or [4]

    @property
    def exit_status(self) -> int:
        return self.outcomes()[0]

    def to_dict(self) -> dict:
        return {"script": self.script, "exit_status": self.exit_status, "outcomes": self.outcomes(),
                "strict_new": self.strict_new,
                "script_status": self.script_status,
                "script_error": self.script_error, "notes": list(self.notes),
                "kernels": [k.to_dict() for k in self.kernels],
                "comparisons": [c.to_dict() for c in self.comparisons]}


#: The ``--new-fixpipe`` statuses ``--strict`` accepts: only ``match`` (bit for bit on every execution of the
#: call). ``differs`` (also a documented reason such as relu_negative_zero, or UNEXPLAINED), ``rejected`` (the
#: new op refuses the call: a non-positive scale) and ``not run`` (bias / element-wise-add / atomic: FIXPIPE has
#: no such stage, so nothing replaces the call as it is) fail the run (fixpipe_compare.md, "--strict").
STRICT_NEW_OK = ("match",)


def _check_strict(strict: bool, new_fixpipe: bool) -> None:
    if strict and not new_fixpipe:
        raise ConfigError("strict=True judges the new FIXPIPE replacements, which only new_fixpipe=True computes",
                          operand="--strict", value=True,
                          hint="add --new-fixpipe (Python: new_fixpipe=True), or drop --strict")


def compare_kernel(tik, feed: Optional[dict] = None, *, seed: int = DEFAULT_SEED,
                   new_fixpipe: bool = False, strict: bool = False) -> ScriptComparison:
    """Run one built kernel (``feed`` completed by `generated_feed`) and compare its ``fixpipe`` calls.

    The caller's ``feed`` arrays are left as they are (the run gets copies): a kernel that stores to a
    GM input (an atomic-add accumulator listed in ``inputs``) would otherwise change them, as
    ``start_debug`` does, and a second comparison or run on the same feed would start from other data."""
    seed = check_seed(seed)
    _check_strict(strict, new_fixpipe)
    watch = watch_kernel(tik, new_fixpipe=new_fixpipe)
    res = ScriptComparison(script="", comparisons=[], kernels=[], strict_new=strict)
    _run_watched(watch, feed, seed, res, explicit=feed is not None)
    res.comparisons = watch.comparisons()
    res.notes.extend(direct_fixpipe_notes(watch))
    return res


def _run_watched(watch: KernelWatch, feed: Optional[dict], seed: int, res: ScriptComparison,
                 explicit: bool, feed_name: Optional[str] = None) -> None:
    tik = watch.tik
    run = KernelRun(watch.name, tik.build.soc.soc_version, "", len(watch.calls))
    res.kernels.append(run)
    try:
        full, made = generated_feed(tik, seed, _inputs_of(tik, feed or {}))
    except PtoError as e:
        run.how, run.error = "not run", str(e)
        return
    if made:
        run.how = f"generated inputs (seed {seed})" if not explicit or len(made) == len(full) else \
            f"feed file + generated inputs (seed {seed}) for {', '.join(made)}"
        res.notes.append(f"kernel {watch.name}: inputs {', '.join(made)} are deterministic random values "
                         f"(numpy default_rng({seed}); pass --feed inputs.npz to choose them)")
    else:
        run.how = "feed file"
    full = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in full.items()}   # never the caller's arrays
    try:
        tik.tikdb.start_debug(feed_dict=full, interactive=False)
    except (PtoError, SystemExit, RuntimeError) as e:
        if explicit and _feed_check_error(e):
            res.feed_errors.append(watch.name)
            run.feed_refused = True
        run.error = _run_error(e, feed_name)


#: Exit status of a run whose kernel start_debug refused for an array of the given feed (a shape, dtype or
#: InputScalar value that does not fit the kernel): a usage error, like an unreadable --feed file or an unknown
#: --kernel -- the input given to the command is wrong and the kernel never started -- not 3 ("the script or a
#: kernel run failed"). The report is still written (fixpipe_compare.md, exit status).
FEED_ERROR_EXIT = 2

#: The exit statuses from the most serious to the least. A report whose kernels end differently (one kernel's
#: --feed array refused, another's call differing from the legacy model, the script failing) exits with the
#: first that applies, and its verdict names every outcome in this order: a difference or a failure is never
#: hidden behind another kernel's feed error (fixpipe_compare.md, exit status). 4 (no fixpipe call ran) applies
#: only alone.
EXIT_PRECEDENCE = (3, 1, FEED_ERROR_EXIT, 0)

#: The call an error of the run's own feed checks names (`start_debug`'s shape/dtype/name checks); errors of
#: the kernel's ops name the kernel's lines instead.
FEED_CHECK_CALL = "tikdb.start_debug"


def _feed_check_error(e: BaseException) -> bool:
    """Whether ``e`` is one of start_debug's own checks of the feed (a shape, dtype or InputScalar value), not an
    error of the kernel's ops (those name the kernel's lines)."""
    where = getattr(e, "where", None)
    return isinstance(e, PtoError) and where is not None and where.call == FEED_CHECK_CALL


def _run_error(e: BaseException, feed_name: Optional[str]) -> str:
    """The report text of a failed comparison run. When the tool ran a kernel on a ``--feed`` file
    (``feed_name``), an error of start_debug's feed checks names that file: the site the error would
    name is not the user's (``<unknown>:0`` from the console command, the caller of ``main`` in-process)."""
    if feed_name and _feed_check_error(e):
        e.where = None                          # e.op still names tikdb.start_debug
        return f"{feed_name}: {e}"
    return str(e)


def _inputs_of(tik, feed: dict) -> dict:
    names = {x.name for x in tik.build.inputs}
    return {k: v for k, v in feed.items() if k in names}


def compare_script(path: str, feed: Optional[dict] = None, kernel: Optional[str] = None, *, args=(),
                   soc: Optional[str] = None, seed: int = DEFAULT_SEED,
                   feed_name: Optional[str] = None, new_fixpipe: bool = False,
                   strict: bool = False) -> ScriptComparison:
    """Run the TIK script ``path`` (as ``python path args`` would) and compare every ``fixpipe``
    call of the kernels it builds (only kernel ``kernel`` when given).

    Kernels the script runs itself (``start_debug``) are compared on those runs; kernels it
    only builds are run afterwards with ``feed`` (arrays by input name, e.g. `load_feed`),
    completed by `generated_feed`. Errors of the script are captured in the result; ``feed_name``
    (the CLI: ``--feed FILE``) is how a run error caused by the feed names it. ``strict`` (needs
    ``new_fixpipe``): a new FIXPIPE replacement that is not an exact match is a difference (`STRICT_NEW_OK`)."""
    from .aliases import install
    from .cli import _select_soc, run_script
    from .tik import registry
    watches: list = []

    def on_build(tik):
        if kernel is None or tik.build.kernel_name == kernel:
            watches.append(watch_kernel(tik, new_fixpipe=new_fixpipe))

    seed = check_seed(seed)                 # before the script runs
    _check_strict(strict, new_fixpipe)
    res = ScriptComparison(script=os.path.abspath(path), comparisons=[], kernels=[], strict_new=strict)
    install()
    if soc is not None:             # --soc "" is an unknown chip, not "no --soc"
        _select_soc(soc)
    errors: list = []
    registry.add_build_listener(on_build)
    try:
        status = run_script(path, list(args), display_name=path, errors=errors)
    finally:
        registry.remove_build_listener(on_build)
    error = errors[0] if errors else None
    res.script_status, res.script_error = status, error
    if status and error is None:
        res.notes.append(f"the script exited with status {status} (its own result; the comparison goes on)")
    if kernel is not None and not watches:
        built = ", ".join(registry.kernels()) or "(none)"
        raise UnknownName(f"the script built no kernel named {kernel!r}", operand="--kernel", value=kernel,
                          limit=f"built: {built}", hint="list them with tik-run --kernels SCRIPT")
    used = set()
    for w in watches:
        if w.tik.tikdb.executable is not None:
            res.kernels.append(KernelRun(w.name, w.tik.build.soc.soc_version, "by the script", len(w.calls)))
        elif w.calls:
            _run_watched(w, feed, seed, res, explicit=feed is not None, feed_name=feed_name)
        else:
            res.kernels.append(KernelRun(w.name, w.tik.build.soc.soc_version, "not run (no fixpipe call)", 0))
        used |= {x.name for x in w.tik.build.inputs}
        res.comparisons.extend(w.comparisons())
        res.notes.extend(direct_fixpipe_notes(w))
    if feed:
        unused = sorted(set(feed) - used)
        if unused:
            res.notes.append(f"feed keys not used by any kernel: {', '.join(unused)}")
    if not watches:
        res.notes.append("the script failed before it built a kernel (its error is below)" if error is not None
                         else "the script built no kernel (no BuildCCE call)")
    return res


# ============================================================================= formatting

COLUMNS = ("call site", "kernel", "runs", "shape", "dtypes", "quant", "relu/bias", "lowering", "max abs diff",
           "max ulp diff", "mismatches", "first mismatch")
#: Inserted after "kernel" when the compared calls ran on more than one chip (a script that runs its kernel
#: on several SoCs): without it their rows cannot be told apart (the lowering differs per chip).
CHIP_COLUMN = "chip"


def report_columns(res: "ScriptComparison") -> tuple:
    """The table / csv columns of ``res``: `COLUMNS`, plus `CHIP_COLUMN` when the calls ran on several chips."""
    if not _multi_chip(res):
        return COLUMNS
    at = COLUMNS.index("kernel") + 1
    return COLUMNS[:at] + (CHIP_COLUMN,) + COLUMNS[at:]


def _multi_chip(res: "ScriptComparison") -> bool:
    return len({c.chip for c in res.comparisons}) > 1


def comparison_row(c: FixpipeComparison, base: Optional[str] = None, chip: bool = False) -> list:
    """One table row (`COLUMNS`; with ``chip`` the chip after the kernel, as `report_columns` says)."""
    site = c.site
    if base and site.startswith(base + os.sep):
        site = site[len(base) + 1:]
    extras = [x for x in (("relu" if c.relu else ""), ("" if c.add == "none" else c.add)) if x]
    if c.errors:
        first = c.errors[0]
    elif c.first_mismatch is not None:
        first = c.first_mismatch.describe()
    else:
        first = "-" if c.runs else "not executed"
    return [site, c.kernel, *([c.chip] if chip else []), c.runs, "x".join(map(str, c.shape)),
            f"{c.src_dtype}->{c.dst_dtype}", c.quant,
            "/".join(extras) or "-", c.lowering, fmt_metric(c.max_abs_diff), fmt_metric(c.max_ulp_diff),
            f"{c.mismatches}/{c.elements}", first]


def fmt_metric(v: float) -> str:
    """A diff metric for tables: integers without a decimal point, ``inf`` as is, else 6 digits."""
    if not np.isfinite(v):
        return str(v)
    return str(int(v)) if v == int(v) else f"{v:.6g}"


#: Printed under a report with mismatching elements: which side is the reference and what to do.
DIFFERENCE_HELP = ("meaning: 'legacy' is what TIK fixpipe writes according to its documentation (the independent "
                   "reference model, migration_guide/legacy_fixpipe.md); 'new' is what this simulator's PTO lowering "
                   "wrote. They must agree bit for bit, so the legacy value is the expected one. Fix: report the call "
                   "site as a simulator bug, with this report in --format json")
#: Printed under a report with a call the legacy model refused.
REJECTION_HELP = ("meaning: the legacy reference model refuses a call that the simulator ran; the message names the "
                  "documented fixpipe rule it breaks. Fix: check that call against the rule (the kernel may not run "
                  "on hardware), or report it if the call is legal TIK")


def verdict(res: ScriptComparison) -> str:
    """The last lines of a report: one block per outcome (`ScriptComparison.outcomes`), the most serious first.
    With several outcomes a first line says so and names the exit status."""
    outcomes = res.outcomes()
    blocks = [_verdict_block(res, status) for status in outcomes]
    if len(blocks) > 1:
        blocks.insert(0, f"{len(blocks)} outcomes, the most serious first (exit status {outcomes[0]}; "
                         f"order: {', '.join(OUTCOME_NAMES[s] for s in EXIT_PRECEDENCE)}):")
    return "\n".join(blocks)


#: How the first verdict line of a report with several outcomes names each exit status.
OUTCOME_NAMES = {3: "3 failed", 1: "1 differs", FEED_ERROR_EXIT: "2 feed refused", 0: "0 matches",
                 4: "4 nothing compared"}


def _verdict_block(res: ScriptComparison, status: int) -> str:
    ran = [c for c in res.comparisons if c.runs]
    several = len(res.kernels) > 1

    def error_line(what: str, kernel: Optional[str] = None) -> str:
        text = what.strip().splitlines()[-1] if what.strip() else "failed"
        return f"ERROR: {f'kernel {kernel}: ' if kernel and several else ''}{text}"
    if status == FEED_ERROR_EXIT:       # a --feed array did not fit a kernel: that kernel never ran
        return "\n".join(error_line(k.error, k.kernel) for k in res.kernels if k.feed_refused)
    if status == 3:
        lines = [error_line(res.script_error)] if res.script_error is not None else []
        return "\n".join(lines + [error_line(k.error, k.kernel) for k in res.failures])
    if status == 4:
        return "no fixpipe call ran: nothing compared"
    if status == 1:
        n = len([c for c in ran if not c.equal])
        strict = res.strict_failures
        lines = []
        if n or not strict:
            lines.append(f"DIFFERENCES: {n} of {_sites(res, ran)} {'differs' if n == 1 else 'differ'} "
                         f"from the legacy model")
        if any(c.mismatches for c in ran):
            lines.append(DIFFERENCE_HELP)
        if any(c.errors for c in ran):
            lines.append(REJECTION_HELP)
        if strict:
            counts = {}
            for c in strict:
                counts[c.new_fixpipe.status] = counts.get(c.new_fixpipe.status, 0) + 1
            how = ", ".join(f"{k} {v}" for k, v in counts.items())
            lines.append(f"STRICT: {len(strict)} of {_count(len(res.comparisons), 'new FIXPIPE replacement')} "
                         f"{'is' if len(strict) == 1 else 'are'} not an exact match ({how}; --strict: see the "
                         f"\"new FIXPIPE for\" lines)")
        return "\n".join(lines)
    runs = sum(c.runs for c in ran)
    return f"OK: {'' if len(ran) == 1 else 'all '}{_sites(res, ran)} " \
           f"({_count(runs, 'execution')}) {'matches' if len(ran) == 1 else 'match'} the legacy model bit for bit"


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _sites(res: "ScriptComparison", ran: list) -> str:
    """What the verdict counts: call sites, or (call site, chip) rows when the calls ran on several chips."""
    if not _multi_chip(res):
        return _count(len(ran), "fixpipe call site")
    chips = len({c.chip for c in ran})
    return f"{len(ran)} fixpipe (call site, chip) row{'' if len(ran) == 1 else 's'} " \
           f"[{_count(len({(c.kernel, c.site) for c in ran}), 'call site')} on {_count(chips, 'chip')}]"


def format_comparisons(res: ScriptComparison, fmt: str = "table") -> str:
    """The report of a script/kernel comparison as ``table`` (tabulate, github), ``md``, ``csv`` or ``json``."""
    if fmt not in FORMATS:
        raise UnknownName(f"unknown format {fmt!r}", operand="--format", value=fmt, limit=", ".join(FORMATS),
                          hint="pass --format " + " | ".join(FORMATS))
    if fmt == "json":
        return json.dumps(res.to_dict(), indent=2, sort_keys=False) + "\n"
    base = os.path.dirname(res.script) if res.script else None
    columns = report_columns(res)
    rows = [comparison_row(c, base, chip=CHIP_COLUMN in columns) for c in res.comparisons]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
        return out.getvalue()
    from tabulate import tabulate
    head = []
    if res.script:
        head.append(f"script: {res.script}")
    for k in res.kernels:
        line = f"kernel {k.kernel} on {k.chip}: {k.how}, {k.fixpipe_sites} fixpipe call(s) traced"
        head.append(line + (f" -- ERROR: {k.error.strip().splitlines()[-1]}" if k.error else ""))
    head += [f"note: {n}" for n in res.notes]
    notes = sorted({n for c in res.comparisons for n in c.notes})
    head += [f"note ({_sites_with(res, n)}): {n}" for n in notes]
    if res.script_error:
        head.append("script error:\n" + res.script_error.rstrip())
    table = tabulate(rows, headers=columns, tablefmt="github" if fmt == "table" else "pipe",
                     disable_numparse=True) if rows else "(no fixpipe call traced)"
    sep = "\n\n" if fmt == "md" else "\n"
    if fmt == "md":
        head = [f"* {h}" for h in head]
    parts = ["\n".join(head), table]
    new = new_fixpipe_lines(res, base, fmt)
    if new:
        parts.append(new)
    return sep.join(parts + [verdict(res)]).lstrip("\n") + "\n"


def new_fixpipe_lines(res: ScriptComparison, base: Optional[str] = None, fmt: str = "table") -> str:
    """The ``--new-fixpipe`` block of a table / md report: per call site the replacing ``pto.mte_l0c_gm``
    call (indented, copy-pasteable) and how it compares with the legacy model (empty without the option)."""
    lines = []
    for c in res.comparisons:
        if c.new_fixpipe is None:
            continue
        site = c.site[len(base) + 1:] if base and c.site.startswith(base + os.sep) else c.site
        lines.append(f"new FIXPIPE for {site} ({c.kernel}): {c.new_fixpipe.describe()}")
        lines += ["    " + t for t in c.new_fixpipe.call.splitlines()]
    if not lines:
        return ""
    head = "new FIXPIPE (pto.mte_l0c_gm) in place of each fixpipe call, run on the call's own L0C data " \
           "(fixpipe_compare.md, \"--new-fixpipe\"):"
    return "\n".join([head, *lines]) if fmt != "md" else "\n".join([head, "", "```text", *lines, "```"])


def _sites_with(res: ScriptComparison, note: str) -> str:
    return ", ".join(dict.fromkeys(os.path.basename(c.site) for c in res.comparisons if note in c.notes))


def sweep(full: bool = False, chips=None) -> list:
    """The legacy-vs-new-FIXPIPE sweep (`tbe_compat.fixpipe_sweep.sweep`): a list of ``SweepRow``."""
    from .fixpipe_sweep import sweep as run
    return run(full=full, chips=chips)


def format_sweep(rows: list, fmt: str = "table", summarize: bool = False) -> str:
    """The sweep report (`tbe_compat.fixpipe_sweep.format_sweep`)."""
    from .fixpipe_sweep import format_sweep as fmt_rows
    return fmt_rows(rows, fmt, summarize)


__all__ = ["ValueDiff", "Mismatch", "FixpipeComparison", "KernelWatch", "KernelRun", "ScriptComparison",
           "diff_values", "watch_kernel", "compare_kernel", "compare_script", "generated_feed",
           "load_feed", "format_comparisons", "verdict", "sweep", "format_sweep", "fmt_metric", "FORMATS",
           "DEFAULT_SEED", "EXIT_PRECEDENCE", "STRICT_NEW_OK"]


if __name__ == "__main__":  # pragma: no cover - python -m tbe_compat.fixpipe_compare (= tik-compare-fixpipe)
    import sys

    from .cli import tik_compare_fixpipe_main
    sys.exit(tik_compare_fixpipe_main())
