"""pytest plugin: a folder of TIK kernel scripts as a test suite.

::

    pytest --tik-kernels kernels/                 # every kernel with a reference or a golden file
    pytest --tik-kernels kernels/ -n auto         # spread over local processes (pytest-xdist)
    pytest --tik-kernels kernels/ --tik-record-golden   # record <script>.golden.npz files

Registered through the ``pytest11`` entry point when the package is installed; from a
source checkout load it with ``-p tbe_compat.pytest_plugin`` (or put
``pytest_plugins = ["tbe_compat.pytest_plugin"]`` in a ``conftest.py``). It does nothing
unless ``--tik-kernels`` (or the ``tik_kernels`` ini option) names a folder. Without
explicit test paths on the command line only those folders are collected; with paths,
the kernels are collected in addition.

**Which scripts** (every ``*.py`` below the folders, found without importing them):

* *reference scripts* define a module-level ``reference`` returning the expected outputs --
  one array, or a list/tuple in BuildCCE ``outputs=`` order -- of a ``start_debug`` feed
  dict: ``reference(inputs)`` (or ``reference(inputs, kernel_name)``) receives the dict;
  a function whose parameters are all named like kernel inputs (``reference(x, y)``,
  optionally with ``kernel_name``) receives them by name;
* *golden scripts* have a sibling ``<script>.golden.npz`` (recorded by
  ``--tik-record-golden``): the inputs and outputs of each recorded ``start_debug``;
* with ``--tik-record-golden``, every script that imports ``tik`` is collected, to record.

**Items**: one per kernel, ``path/script.py::kernel_name``. Kernel names come from the
golden file, else from the script's text (literal ``kernel_name="..."`` arguments and
``kernel_name=`` parameter defaults); a script whose kernel names are not literals gets
one item named after the script that checks every kernel it builds.

**Running an item**: the script runs as ``python script.py`` would (its ``__main__``
block included; ``tik-run`` semantics), once per process, from a fresh state (default
chip selected, kernel registry empty). Then, for the item's kernel:

* reference: every ``start_debug`` the script made on it is checked: ``reference(inputs)``
  against the outputs. A kernel the script built but never ran is run on
  ``make_inputs()`` (or ``make_inputs(kernel_name)``) when the script defines it;
* golden: the kernel runs again on each recorded input set (so scripts need not seed
  their random inputs) and must reproduce the recorded outputs;
* a script that exits with a non-zero status fails its items.

Expected arrays are converted to the output's dtype (``astype``), then outputs compare
**bit-exact** by default. Tolerances: ``--tik-atol``, ``--tik-rtol``
(`numpy.isclose` semantics), ``--tik-ulp`` (units in the last place), or per script a
module-level ``TOLERANCE = {"atol": ..., "rtol": ..., "ulp": ...}``; NaNs must match in
position either way. A mismatch reports the output, the number of differing elements,
the first one (index, both values and bits) and the largest absolute and ULP difference
(`tbe_compat.compare`).

**pytest-xdist**: collection is static and identical on every worker, so ``-n auto`` and
``--tx`` work; items of one script carry an ``xdist_group`` mark (use ``--dist
loadgroup`` to run each script once in total rather than once per worker that gets one
of its kernels). Remote hosts (``--tx ssh=host//python=python3``) need this package
installed and the kernel folder at the same relative path (``--rsyncdir`` or a shared
filesystem).
"""
from __future__ import annotations

import ast
import inspect
import io
import json
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from typing import Optional

import numpy as np
import pytest

GOLDEN_SUFFIX = ".golden.npz"
_SEP = "::"


# ============================================================================ options

def pytest_addoption(parser):
    group = parser.getgroup("tik-kernels", "TIK kernel scripts as tests (tbe_compat)")
    group.addoption("--tik-kernels", action="append", default=[], metavar="DIR",
                    help="collect the TIK kernel scripts below DIR (repeatable)")
    group.addoption("--tik-record-golden", action="store_true",
                    help="run every TIK script below the --tik-kernels folders and record <script>.golden.npz")
    group.addoption("--tik-atol", type=float, default=0.0, help="absolute tolerance (default: bit-exact)")
    group.addoption("--tik-rtol", type=float, default=0.0, help="relative tolerance (default: bit-exact)")
    group.addoption("--tik-ulp", type=int, default=0, help="tolerance in units in the last place")
    parser.addini("tik_kernels", "folders of TIK kernel scripts to collect", type="paths", default=[])


def _kernel_dirs(config) -> list:
    dirs = [os.path.abspath(d) for d in config.getoption("tik_kernels")]
    dirs += [os.path.abspath(str(p)) for p in config.getini("tik_kernels")]
    return list(dict.fromkeys(dirs))


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): run items of one group on one pytest-xdist worker")
    dirs = _kernel_dirs(config)
    if not dirs:
        return
    for d in dirs:
        if not os.path.isdir(d):
            raise pytest.UsageError(f"--tik-kernels: {d} is not a folder")
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    args = list(config.args) if explicit else []
    for d in dirs:
        if not any(os.path.abspath(a.split("::")[0]) == d for a in args):
            args.append(d)
    config.args[:] = args


def pytest_sessionstart(session):
    _RUNS.clear()


# ============================================================================ collection

def pytest_collect_file(file_path, parent):
    dirs = _kernel_dirs(parent.config)
    if not dirs or file_path.suffix != ".py" or file_path.name == "conftest.py":
        return None
    path = os.path.abspath(str(file_path))
    if not any(path.startswith(d + os.sep) for d in dirs):
        return None
    kind = script_kind(path, record=parent.config.getoption("tik_record_golden"))
    if kind is None:
        return None
    return TikScript.from_parent(parent, path=file_path, kind=kind)


def script_kind(path: str, *, record: bool = False) -> Optional[str]:
    """``"record"``, ``"golden"``, ``"reference"`` or None (not a kernel test), from the text alone."""
    tree = _parse(path)
    if tree is None:
        return None
    if record:
        return "record" if _imports_tik(tree) else None
    has_ref = any(isinstance(n, ast.FunctionDef) and n.name == "reference" for n in tree.body)
    if os.path.exists(path[:-3] + GOLDEN_SUFFIX):
        return "golden" if not has_ref else "golden+reference"
    return "reference" if has_ref else None


def _parse(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None


def _imports_tik(tree) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("tbe", "te", "tbe.tik", "te.tik") and \
                (node.module.endswith("tik") or any(a.name == "tik" for a in node.names)):
            return True
        if isinstance(node, ast.Import) and any(a.name in ("tbe.tik", "te.tik") for a in node.names):
            return True
    return False


def static_kernel_names(path: str) -> list:
    """Literal kernel names in a script: ``kernel_name="..."`` keywords and parameter defaults."""
    tree = _parse(path)
    names = []
    if tree is None:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "kernel_name" and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            names.append(node.value.value)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(node.args.defaults) + \
                list(node.args.kw_defaults)
            for a, d in zip(args, defaults):
                if a.arg == "kernel_name" and isinstance(d, ast.Constant) and isinstance(d.value, str):
                    names.append(d.value)
    return list(dict.fromkeys(names))


def golden_kernel_names(golden: str) -> list:
    with np.load(golden, allow_pickle=False) as z:
        return list(dict.fromkeys(k.split(_SEP)[0] for k in z.files))


class TikScript(pytest.File):
    """A TIK kernel script: one `TikKernelItem` per kernel."""

    def __init__(self, *, kind: str, **kw):
        super().__init__(**kw)
        self.kind = kind

    def collect(self):
        path = str(self.path)
        golden = path[:-3] + GOLDEN_SUFFIX
        names = golden_kernel_names(golden) if "golden" in self.kind else static_kernel_names(path)
        group = pytest.mark.xdist_group(os.path.relpath(path, str(self.config.rootpath)))
        if not names:
            item = TikKernelItem.from_parent(self, name=self.path.stem, kernel=None)
            item.add_marker(group)
            yield item
            return
        for name in names:
            item = TikKernelItem.from_parent(self, name=name, kernel=name)
            item.add_marker(group)
            yield item


# ============================================================================ running

class ScriptRun:
    """One run of a script: exit status, printed output, globals, kernels built, start_debug runs."""

    def __init__(self, status, output, namespace, kernels, runs):
        self.status, self.output, self.namespace, self.kernels, self.runs = status, output, namespace, kernels, runs


_RUNS: dict = {}


def run_script_once(path: str) -> ScriptRun:
    """Run ``path`` (fresh chip selection and kernel registry) and remember the result for this process."""
    got = _RUNS.get(path)
    if got is not None:
        return got
    from . import platform
    from .aliases import install
    from .cli import run_script
    from .tik import debug, registry
    install()
    platform.reset_platform()
    registry.clear()
    runs: list = []
    debug.RUN_OBSERVERS.append(runs.append)
    namespace: dict = {}
    out = io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(out):
            status = run_script(path, (), namespace=namespace)
    finally:
        debug.RUN_OBSERVERS.remove(runs.append)
        kernels = registry.kernels()
        registry.clear()
        platform.reset_platform()
    got = _RUNS[path] = ScriptRun(status, out.getvalue(), namespace, kernels, runs)
    return got


class KernelMismatch(Exception):
    """A kernel's outputs differ from its reference / golden (the message is the report)."""


class TikKernelItem(pytest.Item):
    def __init__(self, *, kernel: Optional[str], **kw):
        super().__init__(**kw)
        self.kernel = kernel

    def runtest(self):
        path = str(self.path)
        sr = run_script_once(path)
        if sr.status != 0:
            tail = "\n".join(sr.output.rstrip().splitlines()[-20:])
            raise KernelMismatch(f"the script exited with status {sr.status}:\n{tail}")
        names = [self.kernel] if self.kernel is not None else list(sr.kernels)
        if not names:
            raise KernelMismatch("the script built no kernel (no BuildCCE call)")
        missing = [n for n in names if n not in sr.kernels]
        if missing:
            pytest.skip(f"kernel {missing[0]!r} was not built by this run of the script")
        kind = self.parent.kind
        reports = []
        for name in names:
            if kind == "record":
                self._record(sr, name)
                continue
            if "golden" in kind:
                reports += self._check_golden(sr, name)
            if "reference" in kind:
                reports += self._check_reference(sr, name)
        if reports:
            raise KernelMismatch("\n".join(reports))

    # -- tolerance
    def _tolerance(self, sr) -> dict:
        tol = {"atol": self.config.getoption("tik_atol"), "rtol": self.config.getoption("tik_rtol"),
               "ulp": self.config.getoption("tik_ulp")}
        own = sr.namespace.get("TOLERANCE")
        if isinstance(own, dict):
            unknown = set(own) - set(tol)
            if unknown:
                raise KernelMismatch(f"TOLERANCE has unknown keys {sorted(unknown)}; use atol, rtol, ulp")
            tol.update(own)
        return tol

    def _runs_of(self, sr, name) -> list:
        tik = sr.kernels[name]
        runs = [r for r in sr.runs if r.tik is tik]
        if runs:
            return runs
        make = sr.namespace.get("make_inputs")
        if make is None:
            raise KernelMismatch(f"kernel {name!r} was built but never run: call tikdb.start_debug in the script's "
                                 f"__main__ block or define make_inputs() returning its feed dict")
        feed = make(name) if _arity(make) >= 1 else make()
        from .tik import debug
        captured: list = []
        debug.RUN_OBSERVERS.append(captured.append)
        try:
            tik.tikdb.start_debug(feed, interactive=False)
        finally:
            debug.RUN_OBSERVERS.remove(captured.append)
        sr.runs.extend(captured)
        return captured

    def _check_reference(self, sr, name) -> list:
        ref = sr.namespace.get("reference")
        if not callable(ref):
            raise KernelMismatch("the script defines no callable reference(inputs)")
        tol = self._tolerance(sr)
        reports = []
        runs = self._runs_of(sr, name)
        for k, run in enumerate(runs):
            inputs = {key: (v.copy() if isinstance(v, np.ndarray) else v) for key, v in run.inputs.items()}
            try:
                expected = call_reference(ref, inputs, name)
            except Exception as e:  # noqa: BLE001 - reported as the item's failure
                raise KernelMismatch(f"reference() raised {type(e).__name__}: {e}\n(the convention: "
                                     f"reference(inputs) with the feed dict, or reference(x, y, ...) with "
                                     f"parameters named like the kernel inputs)") from e
            reports += _compare(name, f"run {k + 1} of {len(runs)} against reference()", run, expected, tol)
        return reports

    def _check_golden(self, sr, name) -> list:
        cases = load_golden(str(self.path)[:-3] + GOLDEN_SUFFIX).get(name, [])
        tol = self._tolerance(sr)
        tik = sr.kernels[name]
        reports = []
        for k, case in enumerate(cases):
            inputs, outputs = case
            opts = getattr(case, "options", {})
            got = tik.tikdb.start_debug({key: (v.copy() if isinstance(v, np.ndarray) else v)
                                         for key, v in inputs.items()}, interactive=False,
                                        inplace=opts.get("inplace") or None, block_dim=opts.get("block_dim"))
            run = _Run(tik, got)
            reports += _compare(name, f"golden case {k + 1} of {len(cases)}", run, outputs, tol)
        return reports

    def _record(self, sr, name) -> None:
        runs = self._runs_of(sr, name)
        golden = str(self.path)[:-3] + GOLDEN_SUFFIX
        cases = {n: [GoldenCase.of(r) for r in sr.runs if r.tik is sr.kernels.get(n)] for n in sr.kernels}
        cases[name] = [GoldenCase.of(r) for r in runs]
        save_golden(golden, {n: c for n, c in cases.items() if c})

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, KernelMismatch):
            return f"{self.nodeid}\n{excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"TIK kernel {self.kernel or self.path.stem}"


class _Run:
    def __init__(self, tik, outputs):
        self.tik, self.outputs = tik, outputs


def call_reference(ref, inputs: dict, kernel_name: str):
    """``ref``'s expected outputs for feed dict ``inputs``: ``ref(x=..., y=...)`` when its parameters are
    named like the kernel inputs (and possibly ``kernel_name``), else ``ref(inputs)`` /
    ``ref(inputs, kernel_name)``."""
    try:
        params = [p for p in inspect.signature(ref).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if names and names != ["inputs"] and all(n in inputs or n == "kernel_name" for n in names):
        return ref(**{n: kernel_name if n == "kernel_name" and n not in inputs else inputs[n] for n in names})
    return ref(inputs, kernel_name) if len(names) >= 2 else ref(inputs)


def _arity(fn) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _compare(kernel: str, what: str, run, expected, tol: dict) -> list:
    from .compare import compare_arrays
    outs = list(run.outputs)
    exp = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    names = [x.name for x in run.tik.build.outputs]
    head = f"kernel {kernel}, {what}:"
    if len(exp) != len(outs):
        return [f"{head} {len(exp)} expected outputs for {len(outs)} kernel outputs ({', '.join(names)})"]
    lines = []
    for k, (e, a) in enumerate(zip(exp, outs)):
        e = np.asarray(e)
        if e.dtype != a.dtype:                 # a float64 / int64 reference: in the output's dtype
            e = e.astype(a.dtype)
        msg = compare_arrays(f"output {k} ({names[k]})", e, a, **tol)
        if msg:
            lines.append("  " + msg)
    return [head] + lines if lines else []


# ============================================================================ golden files

class GoldenCase(tuple):
    """One recorded run: unpacks as ``(inputs, outputs)``; ``options`` holds the ``start_debug`` keywords
    a replay needs to give the same outputs (``inplace``, ``block_dim``; empty when the run used none)."""

    def __new__(cls, inputs: dict, outputs: list, options: Optional[dict] = None):
        case = super().__new__(cls, (inputs, outputs))
        case.options = {k: v for k, v in (options or {}).items() if v}
        return case

    @classmethod
    def of(cls, run) -> "GoldenCase":
        """The case of a `DebugRun`."""
        return cls(run.inputs, run.outputs, {"inplace": run.inplace, "block_dim": run.block_dim})


#: Suffix of the part of a golden-file key that records an ml_dtypes dtype (bfloat16, int4, float8_*): numpy's
#: .npz format stores such arrays as untyped bytes (``|V2``) that cannot be cast back, so `save_golden` stores
#: the bits as an unsigned integer array plus the dtype's name, and `load_golden` views them as that dtype again.
_ML_DTYPE_PART = "-dtype"


def _is_ml_dtype(dt: np.dtype) -> bool:
    """An ml_dtypes dtype. Not only the ``kind == "V"`` ones: ``float8_e5m2`` has kind ``"f"`` (str ``<f1``),
    which .npz writes but `np.load` refuses ("descr is not a valid dtype descriptor")."""
    return dt.names is None and dt.type.__module__.split(".")[0] == "ml_dtypes"


def _put_array(arrays: dict, key: str, v) -> None:
    a = np.asarray(v)
    if _is_ml_dtype(a.dtype):                                 # bfloat16, int4, float8_*
        name, k, part, arg = key.split(_SEP)
        arrays[f"{name}{_SEP}{k}{_SEP}{part}{_ML_DTYPE_PART}{_SEP}{arg}"] = np.asarray(a.dtype.name)
        a = a.view(f"u{a.dtype.itemsize}")
    arrays[key] = a


def _ml_dtype(name: str) -> np.dtype:
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))


def save_golden(path: str, cases: dict) -> None:
    """Write ``{kernel: [(inputs dict, outputs list), ...]}`` to ``path`` (atomically); a `GoldenCase`'s
    ``options`` are kept too (as JSON text)."""
    arrays = {}
    for name, runs in cases.items():
        for k, case in enumerate(runs):
            inputs, outputs = case
            for arg, v in inputs.items():
                _put_array(arrays, f"{name}{_SEP}{k}{_SEP}in{_SEP}{arg}", v)
            for i, v in enumerate(outputs):
                _put_array(arrays, f"{name}{_SEP}{k}{_SEP}out{_SEP}{i}", v)
            options = getattr(case, "options", None)
            if options:
                arrays[f"{name}{_SEP}{k}{_SEP}opt{_SEP}json"] = np.asarray(json.dumps(options, sort_keys=True))
    fd, tmp = tempfile.mkstemp(suffix=".npz", dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_golden(path: str) -> dict:
    """``{kernel: [GoldenCase (inputs dict, outputs list; .options), ...]}`` from a golden file."""
    out: dict = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            name, k, part, arg = key.split(_SEP)
            if part.endswith(_ML_DTYPE_PART):           # the dtype of another member (`_put_array`)
                continue
            runs = out.setdefault(name, {})
            inputs, outputs, options = runs.setdefault(int(k), ({}, {}, {}))
            v = z[key]
            dt_key = f"{name}{_SEP}{k}{_SEP}{part}{_ML_DTYPE_PART}{_SEP}{arg}"
            if dt_key in z.files:
                v = v.view(_ml_dtype(str(z[dt_key])))
            if part == "in":
                inputs[arg] = v.item() if v.shape == () else v
            elif part == "opt":
                options.update(json.loads(str(v)))
            else:
                outputs[int(arg)] = v
    return {name: [GoldenCase(inp, [outs[i] for i in sorted(outs)], opts)
                   for _, (inp, outs, opts) in sorted(runs.items())]
            for name, runs in out.items()}


__all__ = ["pytest_addoption", "pytest_configure", "pytest_collect_file", "TikScript", "TikKernelItem",
           "GoldenCase", "save_golden", "load_golden", "static_kernel_names", "script_kind", "run_script_once"]
