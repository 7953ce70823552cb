"""``tik-migrate``: what every TIK call of a script became in PTO, side by side.

::

    tik-migrate [OPTIONS] SCRIPT.py [OPTIONS] [-- SCRIPT ARGS ...]

runs the script like ``tik-run`` (its ``__main__`` block included, so kernels that its
driver builds and runs are seen; ``start_debug`` runs too, and its feed and outputs are
kept for ``--check``/``--save-io``; the script's own output goes to stderr), then prints, for each kernel built, one row per
TIK call site: ``file:line``, the API, the call as written (the whole expression, also
when it spans lines) and the PTO-AS lines it produced -- the op(s), the auto-sync
``set_flag``/``wait_flag`` pairs placed before it, the ``scf.for``/``scf.if`` it opened
(with ``...`` where other calls' lines sit inside), and the values hoisted to the kernel
entry (marked ``// hoisted``). Calls that record no statement (tensor declarations,
scalar assignments folded into SSA values) say what they became.

Options:

* ``--kernel NAME``: only this kernel (the script may build several; ``-o``/``--check``
  need exactly one unless ``--save-io`` is used);
* ``--format text|markdown|python``: a text table (tabulate; ``--width N`` wraps the PTO column),
  Markdown (an HTML table that renders side by side on GitHub/GitLab), or Python: for each TIK call site
  that recorded PTO ops, the ``pto.*`` statements that replace it inside the same TIK kernel
  (`tbe_compat.migrate_python`; not with ``-o``, ``--expand``, ``--constants``, ``--width`` or
  ``--group sequence``: a usage error, `PYTHON_FORMAT_CONFLICTS`);
* ``--group site|sequence``: one row per call site (default; a site's lines from every
  place it occurs, in trace order of first use) or one row per run of consecutive
  program lines (program order: a site inside an unrolled Python loop appears once per
  iteration);
* ``--expand``: also print each ``pto.ub.*`` vector macro op as its
  ``pto.vlds``/``pto.v<op>``/``pto.vsts`` loop (`pto_core.ops.vector.expand`);
* ``--constants``: also list the ``arith.constant`` lines (a ``(kernel entry)`` row);
* ``-o kernel.pto``: write the whole kernel as PTO-AS (``program.to_asm()``, with
  ``loc(...)`` provenance unless ``--no-locations``); ``pto-run kernel.pto --in ... --out
  ...`` runs it;
* ``--check``: run the PTO-AS text (parsed back, as ``pto-run`` does) on the inputs of
  every ``start_debug`` run of each kernel (a dynamic-shape kernel's text with that run's
  shapes; a kernel name the script built more than once: each run with the text of the build
  it ran) and compare every output bit for bit (exit status 1 on a difference);
* ``--save-io DIR``: write ``DIR/<kernel>.pto``, the fed inputs (``<kernel>.<arg>.npy``),
  the ``start_debug`` outputs (``<kernel>.<arg>.expected.npy``) and print the ``pto-run``
  command that reproduces them;
* ``--soc SOC[:CORE_TYPE]``: select the chip before the script runs.

Kernels with dynamic GM shapes (dimensions from InputScalars): PTO-AS argument shapes
are concrete, so ``-o``/``--check``/``--save-io`` use the shapes of the script's last
``start_debug`` of that kernel (and fail with a clear message when it never ran).

Exit status: 0; 1 when the script failed, a check found a difference or a kernel error
occurred; 2 for usage errors.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import html
import os
import re
import shutil
import stat
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pto_core.errors import ConfigError, PtoError, UnknownName

#: TIK calls that record no statement, and what they become (shown in their row).
_NO_STATEMENT = {
    "tik.Scalar": "a scalar register: SSA values where it is used (no statement of its own)",
    "tik.Scalar.set_as": "a register assignment, folded into the SSA values that use it",
    "tik.Tensor.__getitem__": "a view: the tensor's pointer plus the element offset, used by later calls",
    "tik.Tensor.reshape": "a view: changes the pointer arithmetic of later calls only",
    "tik.Tensor.flatten": "a view: changes the pointer arithmetic of later calls only",
    "tik.Tensor.change_shape": "a view (this tensor object takes it): changes the pointer arithmetic of later "
                               "calls only",
    "tik.Tensor.reinterpret_cast_to": "a view: later pointers use the new element type",
    "tik.Tik": "the kernel: func.func (see BuildCCE)",
    "tik.InputScalar": "a scalar argument of func.func, named by its name=",
    "tik.for_range": "the multi-core launch: pto.block_num on func.func, the loop variable is pto.get_block_idx",
    "tik.else_scope": "the else branch of the scf.if above",
    "tik.elif_scope": "an scf.if in the else branch of the scf.if above",
    "tik.new_stmt_scope": "a scope only: tensors declared inside are freed at its end",
    "tik.set_flag": "hand-written sync: checked, nothing recorded (TIK_USER_FLAGS_NO_EFFECT); auto-sync's "
                    "pto.set_flag/wait_flag pairs order the ops",
    "tik.wait_flag": "hand-written sync: checked, nothing recorded (TIK_USER_FLAGS_NO_EFFECT); auto-sync's "
                     "pto.set_flag/wait_flag pairs order the ops",
    "tikdb.start_debug": "runs the program: pto-run KERNEL.pto --in NAME=FILE.npy ... --out NAME=FILE.npy",
}


@dataclass
class Row:
    """One row of the listing: a TIK call site (or a run of program lines) and its PTO-AS lines."""

    file: Optional[str]
    line: int
    api: str
    source: str
    pto: list = field(default_factory=list)
    note: str = ""

    @property
    def site(self) -> str:
        return f"{_short_path(self.file)}:{self.line}" if self.file else "(kernel)"


@dataclass
class Trace:
    """What running a script produced: exit status, kernels built, start_debug runs per kernel."""

    status: int
    kernels: dict          # name -> Tik
    runs: dict             # name -> [DebugRun, ...] of the last build of that name (the one `kernels` holds)
    all_runs: dict = field(default_factory=dict)   # name -> runs of every build of that name in the script


# ============================================================================ running a script

def trace_script(script: str, args=(), *, soc: Optional[str] = None, owners: bool = False) -> Trace:
    """Run ``script`` like ``tik-run`` and collect the kernels it built and its ``start_debug`` runs.
    ``owners``: the kernels record the object whose method made each TIK call (``--format python``;
    `tbe_compat.tik.registry.recording_call_owners`)."""
    from .aliases import install
    from .cli import _select_soc, run_script
    from .tik import debug, registry
    install()
    if soc is not None:             # --soc "" is an unknown chip, not "no --soc"
        _select_soc(soc)
    before = registry.kernels()
    runs: dict = {}

    def observe(run):
        runs.setdefault(run.tik.build.kernel_name, []).append(run)

    debug.RUN_OBSERVERS.append(observe)
    try:
        with registry.recording_call_owners(owners):
            status = run_script(script, args)
    finally:
        debug.RUN_OBSERVERS.remove(observe)
    kernels = {name: tik for name, tik in registry.kernels().items() if before.get(name) is not tik}
    # a script may build a kernel name more than once (one tik.Tik per shape, as op wrappers do): --check
    # replays each run against the build it ran (`all_runs`); -o and --save-io use the last build's runs
    all_runs = {name: [r for r in rs if r.tik is not before.get(name)] for name, rs in runs.items() if name in kernels}
    runs = {name: [r for r in rs if kernels.get(name) is r.tik] for name, rs in runs.items()}
    return Trace(status, kernels, {k: v for k, v in runs.items() if v}, {k: v for k, v in all_runs.items() if v})


# ============================================================================ the listing

def listing(tik, *, group: str = "site", expand: bool = False, constants: bool = False) -> list:
    """The rows of kernel ``tik`` (see module doc for ``group``/``expand``/``constants``)."""
    from pto_core.asm import program_lines
    if group not in ("site", "sequence"):
        raise ConfigError(f"group={group!r} is not 'site' or 'sequence'", operand="--group", value=group,
                          hint="pass group=\"site\" or group=\"sequence\" (tik-migrate: --group)")
    lines = program_lines(tik.program)
    build_where = tik.build.where if tik.build is not None else None
    texts = [_line_text(ln, expand) for ln in lines]
    if not constants:
        _annotate_constants(lines, texts)
    keys = []
    for k, ln in enumerate(lines):
        if ln.where is not None:
            keys.append(_key(ln.where))
        elif ln.hoisted:                                   # constants
            keys.append("entry" if constants else None)
        else:                                              # module / func frame / return
            keys.append(_key(build_where) if build_where is not None else "frame")
    if group == "sequence":
        return _sequence_rows(lines, texts, keys)
    return _site_rows(tik, lines, texts, keys)


_CONSTANT = re.compile(r"^\s*(%[\w.]+) = arith\.constant (.+)$")
_SELF_DESCRIBING = re.compile(r"^%(c-?\d+(_\w+)?|true|false)$")     # %c8_i64 says its value; %cst does not
_NAME = re.compile(r"%[\w.]+")
_RESULT = re.compile(r"^\s*%[\w.]+(, %[\w.]+)* = ")                   # the names a line defines


def _annotate_constants(lines, texts) -> None:
    """Hidden constants (the listing leaves out ``arith.constant`` lines) whose SSA name does not say their
    value (``%cst``, ``%cst_0``: floats) get it as a comment on the lines that use them, so the PTO op
    can be written from the listing: ``pre_quant(%cst, ...)    // %cst = 0.300048828125 : f32``."""
    values = {}
    for ln in lines:
        m = _CONSTANT.match(ln.text) if ln.hoisted and ln.where is None else None
        if m and not _SELF_DESCRIBING.match(m.group(1)):
            values[m.group(1)] = m.group(2)
    if not values:
        return
    for ln, text in zip(lines, texts):
        if ln.hoisted and ln.where is None:
            continue
        used = [n for n in dict.fromkeys(_NAME.findall(_RESULT.sub("", ln.text))) if n in values]
        if used:
            text[0] += "    // " + ", ".join(f"{n} = {values[n]}" for n in used)


def _key(where) -> tuple:
    return (where.file, where.line, where.call or "")


def _line_text(ln, expand: bool) -> list:
    text = ln.text + ("    // hoisted to the kernel entry" if ln.hoisted and ln.where is not None else "")
    out = [text]
    if expand and ln.op is not None:
        from pto_core.ops.vector import EXPANDERS, expand as expand_op
        spec = ln.op.call.spec
        if spec.name in EXPANDERS:
            pad = " " * (len(ln.text) - len(ln.text.lstrip()) + 2)
            names = _operand_values(ln.text, spec)
            if names:
                out.append(pad + "// " + ", ".join(f"%{o.name.lstrip('%')} = {v}" for o, v in
                                                   zip(spec.operands, names)))
            out += [pad + x for x in expand_op(ln.op.call)]
    return out


def _operand_values(text: str, spec) -> list:
    """The printed operand values of op line ``text`` (``pto.ub.vadd %3, %5, %5, %c1_i64 mask(...)``)."""
    rest = text.strip()[len(spec.asm_name):]
    vals = []
    for part in rest.split(" : ")[0].split(", "):
        part = part.strip()
        if not part.startswith(("%", "[")) or (vals and " " in part):
            if part.startswith(("%", "[")):
                vals.append(part.split(" ")[0])
            break
        vals.append(part.split(" ")[0])
    return vals


def _site_rows(tik, lines, texts, keys) -> list:
    by_key: dict = {}
    first_line: dict = {}
    for k, key in enumerate(keys):
        if key is None:
            continue
        by_key.setdefault(key, []).append(k)
        first_line.setdefault(key, k)
    order = {}
    for k, w in enumerate(getattr(tik, "_calls", ())):
        order.setdefault(_key(w), k)
    # calls that recorded nothing: shown when nothing else on their line has a row
    lines_with_rows = {(key[0], key[1]) for key in by_key if isinstance(key, tuple)}
    quiet = []
    for key in order:
        if key not in by_key and (key[0], key[1]) not in lines_with_rows:
            quiet.append(key)
            lines_with_rows.add((key[0], key[1]))
    storages = {}
    for st in list(tik._gm_tensors) + list(tik._placement.placed):
        if st.where is not None:
            storages.setdefault(_key(st.where), st)
    big = len(lines) + 1

    def rank(key):
        if key == "entry":
            return (-2, 0)
        if key == "frame":
            return (-1, 0)
        return (order.get(key, big), first_line.get(key, big))

    rows = []
    for key in sorted(list(by_key) + quiet, key=rank):
        idx = by_key.get(key, [])
        pto = []
        body = [k for k in idx if not lines[k].hoisted] or idx
        base = min(_indent(lines[k].text) for k in body) if body else 0
        prev = None
        for k in idx:
            if prev is not None and k != prev + 1 and not (lines[k].hoisted and lines[prev].hoisted):
                ind = _indent(lines[k].text) if lines[prev].hoisted else \
                    max(_indent(lines[k].text), _indent(lines[prev].text))
                pto.append(" " * max(ind - base, 0) + "...")
            if lines[k].hoisted:                   # shown at the row's left edge, marked
                pto += [t.lstrip() for t in texts[k]]
            else:
                pto += [t[base:] if not t[:base].strip() else t.lstrip() for t in texts[k]]
            prev = k
        rows.append(_row(key, pto, storages, tik))
    return rows


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _sequence_rows(lines, texts, keys) -> list:
    rows = []
    last = object()
    for k, key in enumerate(keys):
        if key is None:
            continue
        if key != last:
            rows.append(_row(key, [], {}, None))
            last = key
        rows[-1].pto += texts[k]
    for r in rows:
        base = min((len(t) - len(t.lstrip()) for t in r.pto if t.strip()), default=0)
        r.pto = [t[base:] for t in r.pto]
    return rows


def _row(key, pto, storages, tik) -> Row:
    if key == "entry":
        return Row(None, 0, "(kernel entry)", "constants", pto)
    if key == "frame":
        return Row(None, 0, "(kernel)", "", pto)
    file, line, api = key
    row = Row(file, line, api, call_source(file, line, api), pto)
    if not pto:
        st = storages.get(key)
        if st is not None:
            row.note = _storage_note(st)
        else:
            row.note = _NO_STATEMENT.get(api, "records no PTO statement")
    return row


def _storage_note(st) -> str:
    if st.space == "gm":
        io = st.gm.io if st.gm is not None else "?"
        kind = {"in": "input", "out": "output", "inout": "input/output", "workspace": "workspace"}.get(io, io)
        return f"kernel argument %{st.gm.name}: !pto.ptr<{st.dtype.pto_name}, gm> ({kind})"
    if not isinstance(st.addr, int):
        lo, hi = st.static_bounds()
        return (f"{st.space} bytes from a run-time address inside [{lo:#x}, {hi:#x}) (DYNAMIC_TENSOR_RUNTIME_CHAIN): "
                f"pointers are pto.castptr of that register as !pto.ptr<{st.dtype.pto_name}, {st.space}>")
    return (f"{st.space} bytes [{st.addr:#x}, {st.addr + st.nbytes:#x}): pointers are "
            f"pto.castptr of {st.addr:#x} (+ element offsets) as !pto.ptr<{st.dtype.pto_name}, {st.space}>")


# ============================================================================ the call as written

_SOURCES: dict = {}


@dataclass(frozen=True)
class _Source:
    """One parsed script, indexed once so each listing row costs a dictionary look-up (a kernel
    has hundreds of rows; walking the whole tree per row made big listings take minutes)."""
    text: str
    lines: tuple          # lines with their ends, split as ast.get_source_segment splits them
    parents: dict         # node -> parent node
    calls: dict           # line -> ast.Call nodes whose span covers it, in ast.walk order
    stmts: dict           # line -> ast.stmt nodes whose span covers it, in ast.walk order


def _parsed(file: str):
    got = _SOURCES.get(file, False)
    if got is False:
        try:
            with open(file, encoding="utf-8") as f:
                text = f.read()
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            got = None
        else:
            parents, calls, stmts = {}, {}, {}
            for node in ast.walk(tree):
                for child in ast.iter_child_nodes(node):
                    parents[child] = node
                index = calls if isinstance(node, ast.Call) else stmts if isinstance(node, ast.stmt) else None
                if index is not None:
                    for ln in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                        index.setdefault(ln, []).append(node)
            lines = tuple(m.group(0) for m in _LINE.finditer(text) if m.group(0))
            got = _Source(text, lines, parents, calls, stmts)
        _SOURCES[file] = got
    return got


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def call_source(file: str, line: int, api: str) -> str:
    """The source text of the call at ``file:line`` made through ``api`` (``"tik.data_move"``): the
    whole call expression as written (``with ... as x:`` for a ``with`` item); the statement
    (header) on that line when no call by that name is found; ``"?"`` if the file is unreadable."""
    src = _parsed(file)
    if src is None:
        return "?"
    name = api.rsplit(".", 1)[-1]
    best = None
    for node in src.calls.get(line, ()):
        f = node.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if fname == name and (best is None or _span(node) < _span(best)):
            best = node
    if best is not None:
        seg = _segment(src, best)
        parent = src.parents.get(best)
        if isinstance(parent, ast.withitem) and parent.context_expr is best:
            target = f" as {_segment(src, parent.optional_vars)}" if parent.optional_vars is not None else ""
            seg = f"with {seg}{target}:"
        return seg
    stmt = None
    for node in src.stmts.get(line, ()):
        if stmt is None or _span(node) < _span(stmt):
            stmt = node
    if stmt is None:
        return "?"
    body = getattr(stmt, "body", None)
    if body and isinstance(body, list):           # compound statement: its header
        head = src.lines[stmt.lineno - 1:body[0].lineno - 1]
        return textwrap.dedent("\n".join(x.rstrip("\r\n") for x in head)).strip()
    return _segment(src, stmt)


def _span(node) -> tuple:
    return ((node.end_lineno or node.lineno) - node.lineno, (node.end_col_offset or 0) - node.col_offset)


def _segment(src: "_Source", node) -> str:
    """``ast.get_source_segment`` on the pre-split lines (column offsets are UTF-8 byte offsets)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if node.end_col_offset is None or last >= len(src.lines):
        return "?"
    if first == last:
        seg = src.lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    else:
        seg = "".join([src.lines[first].encode()[node.col_offset:].decode(), *src.lines[first + 1:last],
                       src.lines[last].encode()[:node.end_col_offset].decode()])
    return textwrap.dedent(" " * node.col_offset + seg).strip() or "?"


def _short_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# ============================================================================ formats

def format_rows(rows: list, fmt: str = "text", *, width: int = 0) -> str:
    """The listing as a text table (``width`` > 0 wraps the PTO column) or Markdown."""
    if fmt == "markdown":
        return _markdown(rows)
    if fmt != "text":
        raise ConfigError(f"format {fmt!r} is not 'text' or 'markdown'", operand="--format", value=fmt,
                          hint="pass fmt=\"text\" or fmt=\"markdown\" (tik-migrate: --format)")
    import tabulate
    table = []
    for r in rows:
        left = f"{r.site}  {r.api}" + (f"\n{r.source}" if r.source else "")
        right = r.pto if r.pto else [f"({r.note})"]
        if width > 0:
            right = [w for ln in right for w in _wrap(ln, width)]
        table.append([left, "\n".join(right)])
    # keep the PTO-AS indentation of a cell's first line: tabulate 0.10 takes preserve_whitespace=True,
    # 0.9 reads the module-level PRESERVE_WHITESPACE
    saved = tabulate.PRESERVE_WHITESPACE
    tabulate.PRESERVE_WHITESPACE = True
    args = dict(headers=["TIK call", "PTO-AS"], tablefmt="grid", disable_numparse=True)
    try:
        try:
            return tabulate.tabulate(table, preserve_whitespace=True, **args)
        except TypeError:
            return tabulate.tabulate(table, **args)
    finally:
        tabulate.PRESERVE_WHITESPACE = saved


def _wrap(line: str, width: int) -> list:
    if len(line) <= width:
        return [line]
    ind = len(line) - len(line.lstrip())
    return textwrap.wrap(line, width, initial_indent="", subsequent_indent=" " * (ind + 4),
                         break_on_hyphens=False, drop_whitespace=True) if line.strip() else [line]


def _markdown(rows: list) -> str:
    out = ["<table>", "<tr><th>TIK call</th><th>PTO-AS</th></tr>"]
    for r in rows:
        head = f"<code>{html.escape(r.site)}</code> <code>{html.escape(r.api)}</code>"
        src = f"<pre>{html.escape(r.source)}</pre>" if r.source else ""
        pto = "\n".join(r.pto) if r.pto else f"({r.note})"
        out.append(f"<tr><td>{head}{src}</td><td><pre>{html.escape(pto)}</pre></td></tr>")
    out.append("</table>")
    return "\n".join(out) + "\n"


# ============================================================================ PTO-AS round trip

def kernel_asm(tik, *, locations: bool = True, runs: Optional[list] = None) -> str:
    """``tik.program.to_asm()`` after checking that GM shapes are concrete (see module doc)."""
    if tik.build is None:
        raise ConfigError("the kernel is not built (no BuildCCE)", operand="kernel",
                          hint="call tik_instance.BuildCCE(...) on the kernel before migrating it")
    dynamic = [st.name for st in tik._gm_tensors if st.size_expr is not None]
    if dynamic and not runs:
        raise ConfigError(f"kernel {tik.build.kernel_name!r} has GM tensors whose shape depends on InputScalars "
                          f"({', '.join(dynamic)}); PTO-AS needs concrete shapes", operand="kernel",
                          value=tik.build.kernel_name,
                          hint="let the script run tikdb.start_debug once (tik-migrate uses that run's shapes)")
    if not dynamic:
        return tik.program.to_asm(locations=locations)
    shapes = runs[-1].shapes or {}
    saved = [(st, st.gm.shape, st.nbytes) for st in tik._gm_tensors if st.name in shapes]
    try:                            # the PTO-AS of that run: its shapes (another run may have had others)
        for st, _, _ in saved:
            st.gm.shape = tuple(shapes[st.name])
            st.nbytes = st.dtype.nbytes(int(np.prod(st.gm.shape)))
        return tik.program.to_asm(locations=locations)
    finally:
        for st, shape, nbytes in saved:
            st.gm.shape, st.nbytes = shape, nbytes


def check_round_trip(tik, run, *, locations: bool = True) -> list:
    """Run the kernel's PTO-AS text (parsed back) on ``run``'s inputs; returns the mismatch reports
    (empty: every output equals the ``start_debug`` output bit for bit)."""
    from pto_core.asm import parse
    from .compare import compare_arrays
    from .tik.debug import tik_machine_options
    text = kernel_asm(tik, locations=locations, runs=[run])
    prog = parse(text, source_name=f"{tik.build.kernel_name}.pto", allow_debug_eval=True)   # the user's own script
    got = prog.compile().run(dict(run.inputs), options=tik_machine_options(), alias=run.alias,
                             block_dim=run.block_dim)
    reports = []
    for name, expected in run.results.items():
        if name not in got:
            reports.append(f"{name}: not an output of the PTO-AS kernel")
            continue
        msg = compare_arrays(name, expected, got[name])
        if msg:
            reports.append(msg)
    return reports


def _has_debug_eval(program) -> bool:
    """Whether ``program`` holds a ``pto.debug_eval`` (``tikdb.debug_print``): its text parses only when allowed."""
    from pto_core.program import OpStmt, walk_stmts
    return any(isinstance(s, OpStmt) and s.call.spec.name == "debug_eval" for s in walk_stmts(program.body))


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` all or nothing: into a temporary file in the same folder, then
    ``os.replace`` (atomic on one file system). On any failure (a full disk, an encoding error, an
    interrupted write) the temporary file is removed and an existing ``path`` keeps its old contents:
    ``tik-migrate -o`` left a partial file behind when the write failed half way.

    What is replaced is the file ``path`` names (review423): a symbolic link keeps pointing at its target, whose
    contents are replaced (the link itself was replaced by a regular file); a path that is not a regular file
    (``/dev/null``, ``/dev/stdout``, a named pipe) is written as ``open(path, "w")`` does, there being no file to
    replace (``-o /dev/null`` failed without write access to ``/dev``, and replaced the device node by a regular
    file with it). When the folder takes no new file but the existing file is writable, the file is overwritten in
    place, as it was before k419, not refused; the text is encoded first, so only an I/O error (a full disk) can
    leave it partial then."""
    data = text.encode("utf-8")                   # an encoding error changes nothing
    try:
        st = os.stat(path)                        # (through symbolic links)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "wb") as f:               # a device or a pipe: nothing to replace
            f.write(data)
        return
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
    except PermissionError:
        if st is None or not os.access(target, os.W_OK):
            raise
        with open(target, "wb") as f:             # the folder takes no new file: in place
            f.write(data)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if st is not None:
            shutil.copymode(target, tmp)          # keep the existing file's permissions
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)         # what open(path, "w") would have created
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_io(tik, run, directory: str, *, locations: bool = True) -> list:
    """Write ``<kernel>.pto``, the inputs and the expected outputs of ``run`` to ``directory``; returns the
    ``pto-run`` argument list that reproduces the outputs (``--out NAME=<kernel>.NAME.out.npy``)."""
    name = tik.build.kernel_name
    os.makedirs(directory, exist_ok=True)
    pto_path = os.path.join(directory, f"{name}.pto")
    write_text_atomic(pto_path, kernel_asm(tik, locations=locations, runs=[run]))
    argv = [pto_path]
    if _has_debug_eval(tik.program):         # the user's own script (DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED)
        argv.append("--allow-debug-eval")
    for arg, value in run.inputs.items():
        if isinstance(value, np.ndarray):
            path = os.path.join(directory, f"{name}.{arg}.npy")
            np.save(path, value, allow_pickle=False)
            argv += ["--in", f"{arg}={path}"]
        else:
            argv += ["--in", f"{arg}={value!r}"]
    for out, inp in run.alias.items():
        argv += ["--alias", f"{out}={inp}"]
    if run.block_dim is not None:
        argv += ["--block-dim", str(run.block_dim)]
    for arg, value in run.results.items():
        np.save(os.path.join(directory, f"{name}.{arg}.expected.npy"), value, allow_pickle=False)
        argv += ["--out", f"{arg}={os.path.join(directory, f'{name}.{arg}.out.npy')}"]
    return argv


# ============================================================================ command line

def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tik-migrate", description="Show the PTO ops every TIK call of a script "
                                 "became; write the kernel as PTO-AS.",
                                 epilog="Arguments for the script go after `--`.")
    ap.add_argument("script", help="the TIK script (.py)")
    ap.add_argument("args", nargs="*", help="arguments passed to the script (after --)")
    ap.add_argument("--kernel", help="only this kernel (by BuildCCE kernel_name)")
    ap.add_argument("--format", choices=("text", "markdown", "python"), default="text",
                    help="text / markdown: the PTO-AS table; python: the Python statements that replace each TIK "
                         "call in its kernel (tbe_compat.migrate_python)")
    ap.add_argument("--group", choices=("site", "sequence"), default="site",
                    help="site: one row per TIK call site (default); sequence: the program in order, one row "
                         "per run of consecutive lines of one call")
    ap.add_argument("--expand", action="store_true", help="expand pto.ub.* vector ops into vlds/v<op>/vsts loops")
    ap.add_argument("--constants", action="store_true", help="also list arith.constant lines")
    ap.add_argument("--width", type=int, default=None, help="wrap PTO-AS lines at this width (text format; "
                    "default: the terminal width on a terminal, no wrapping otherwise)")
    ap.add_argument("-o", "--output", metavar="KERNEL.pto", help="write the kernel as PTO-AS")
    ap.add_argument("--no-locations", action="store_true", help="-o/--save-io: no loc(...) provenance")
    ap.add_argument("--check", action="store_true", help="run the PTO-AS on the script's start_debug inputs and "
                    "compare the outputs bit for bit")
    ap.add_argument("--save-io", metavar="DIR", help="write <kernel>.pto, inputs and expected outputs to DIR")
    ap.add_argument("--soc", help="select this chip before the script runs (SOC or SOC:CORE_TYPE)")
    return ap


def _output_path_error(path: Optional[str], script: Optional[str] = None) -> Optional[ConfigError]:
    """``-o PATH`` that cannot be written because it is a folder or its folder does not exist, checked
    before the script runs (as pto-run checks ``--out``): the error only came after the script's whole run
    and listing (user404). Refused too: ``-o -`` (it wrote a file named ``-``, not stdout) and the script
    itself (``tik-migrate -o k.py k.py`` replaced the TIK source by the PTO-AS; review414). Other write
    failures (permissions) are still reported when writing."""
    if path is None:
        return None
    if not path.strip():                       # `-o ""` wrote nothing and said nothing
        return ConfigError(f"-o {path!r} names no file", operand="-o", value=path,
                           hint="give a file path after -o (e.g. -o kernel.pto), or leave -o out to list only")
    if path == "-":
        return ConfigError("-o - would write a file named '-': tik-migrate -o writes a file, not stdout",
                           operand="-o", value=path,
                           hint="give a file path (e.g. -o kernel.pto); the listing on stdout shows each call's "
                                "PTO-AS")
    if script is not None and os.path.exists(path) and os.path.exists(script) and os.path.samefile(path, script):
        return ConfigError(f"-o {path!r} is the script itself: writing the PTO-AS there would replace the TIK "
                           f"source", operand="-o", value=path,
                           hint="give another file, e.g. -o " + os.path.splitext(path)[0] + ".pto")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder):
        what = "it is a folder" if os.path.isdir(path) else f"folder {folder!r} does not exist"
        return ConfigError(f"cannot write {path!r}: {what}", operand="-o", value=path,
                           hint="give a file path in an existing folder")
    return None


#: Options that shape the PTO-AS table or write PTO-AS, refused with ``--format python`` (which prints Python
#: statements on stdout): option -> what to do instead.
PYTHON_FORMAT_CONFLICTS = {
    "output": ("-o", "-o writes the kernel as PTO-AS text, --format python prints Python on stdout: to keep the "
                     "Python, redirect stdout (tik-migrate --format python SCRIPT.py > replacements.py); for the "
                     "PTO-AS file run -o without --format python"),
    "expand": ("--expand", "--expand adds vlds/vsts loops to the PTO-AS listing, which have no Python spelling: "
                           "drop --expand"),
    "constants": ("--constants", "--constants lists arith.constant lines of the PTO-AS; the Python has the "
                                 "values inline: drop --constants"),
    "width": ("--width", "--width wraps the PTO-AS table; the Python is not wrapped: drop --width"),
}


def _python_format_error(ns) -> Optional[ConfigError]:
    """``--format python`` with an option it cannot honour (`PYTHON_FORMAT_CONFLICTS`, ``--group sequence``)."""
    if ns.format != "python":
        return None
    for attr, (flag, hint) in PYTHON_FORMAT_CONFLICTS.items():
        if getattr(ns, attr) not in (None, False):
            return ConfigError(f"{flag} cannot be combined with --format python", operand=flag,
                               value=getattr(ns, attr), hint=hint)
    if ns.group != "site":
        return ConfigError("--group sequence cannot be combined with --format python (it prints one replacement "
                           "per TIK call site)", operand="--group", value=ns.group,
                           hint="drop --group sequence (or use it with --format text)")
    return None


def main(argv: Optional[list] = None) -> int:
    """Entry point of ``tik-migrate``; returns the exit status."""
    ns = _parser().parse_intermixed_args(argv)
    err = sys.stderr
    from .cli import script_path_error
    problem = script_path_error(ns.script) or _python_format_error(ns) or _output_path_error(ns.output, ns.script)
    if problem:
        print(f"tik-migrate: error: {problem}", file=err)
        return 2
    cwd = os.getcwd()
    try:
        with contextlib.redirect_stdout(err):        # the script's own output: stdout is the listing's
            trace = trace_script(ns.script, ns.args, soc=ns.soc, owners=ns.format == "python")
    except PtoError as e:
        print(f"tik-migrate: error: {e}", file=err)
        return 2
    finally:        # -o / --save-io are the user's paths, checked here: a script's os.chdir does not move them
        os.chdir(cwd)
    status = 0
    if trace.status != 0:
        print(f"tik-migrate: the script exited with status {trace.status}", file=err)
        status = 1
    kernels = trace.kernels
    try:
        if ns.kernel is not None:
            if ns.kernel not in kernels:
                raise UnknownName(f"the script built no kernel named {ns.kernel!r}", operand="--kernel",
                                  value=ns.kernel, limit=", ".join(kernels) or "(no kernel built)",
                                  hint="pass the kernel_name= of one of the script's BuildCCE calls (listed as "
                                       "the limit), or omit --kernel")
            kernels = {ns.kernel: kernels[ns.kernel]}
        if not kernels:
            print("tik-migrate: the script built no kernel (no BuildCCE call)", file=err)
            return status or 1
        if ns.output and len(kernels) > 1:
            raise ConfigError(f"-o writes one kernel; the script built {len(kernels)}: {', '.join(kernels)}",
                              operand="-o", hint="choose one with --kernel NAME (or use --save-io DIR)")
        width = ns.width if ns.width is not None else (shutil.get_terminal_size().columns // 2
                                                       if sys.stdout.isatty() else 0)
        locations = not ns.no_locations
        for name, tik in kernels.items():
            runs = trace.runs.get(name, [])
            if ns.format == "python":
                from .migrate_python import format_python, python_rows
                print(format_python(python_rows(tik), name))
            else:
                if len(kernels) > 1 or ns.format == "markdown":
                    print(f"## kernel {name}\n" if ns.format == "markdown" else f"kernel {name}:")
                rows = listing(tik, group=ns.group, expand=ns.expand, constants=ns.constants)
                print(format_rows(rows, ns.format, width=width))
            if ns.output:
                text = kernel_asm(tik, locations=locations, runs=runs)
                try:
                    write_text_atomic(ns.output, text)
                except (OSError, UnicodeError) as e:
                    raise ConfigError(f"cannot write {ns.output!r}: {getattr(e, 'strerror', None) or e} (the file "
                                      f"was left as it was)", operand="-o", value=ns.output,
                                      hint="give a file path in an existing folder") from None
                print(f"tik-migrate: wrote {ns.output}", file=err)
            if ns.save_io:
                if not runs:
                    print(f"tik-migrate: kernel {name}: no start_debug run to save", file=err)
                else:
                    try:
                        argv_run = save_io(tik, runs[-1], ns.save_io, locations=locations)
                    except OSError as e:
                        raise ConfigError(f"cannot write the run's files to {ns.save_io!r}: {e.strerror or e}",
                                          operand="--save-io", value=ns.save_io,
                                          hint="give a folder path that can be created (or an existing folder)") \
                            from None
                    print("tik-migrate: pto-run " + " ".join(argv_run), file=err)
            if ns.check:
                runs = trace.all_runs.get(name) or runs
                builds = len({id(r.tik) for r in runs})
                if not runs:
                    print(f"tik-migrate: kernel {name}: no start_debug run to check against", file=err)
                    status = 1
                    continue
                failed = False
                for k, run in enumerate(runs):         # every run: other branches, shapes, block counts
                    which = f"run {k + 1} of {len(runs)}"
                    try:
                        reports = check_round_trip(run.tik, run, locations=locations)
                    except PtoError as e:      # this kernel's text did not parse or run: check the others
                        print(f"tik-migrate: kernel {name}: the PTO-AS round trip failed ({which}): {e}", file=err)
                        failed = True
                        break
                    if reports:
                        failed = True
                        print(f"tik-migrate: kernel {name}: PTO-AS outputs differ from start_debug ({which}):",
                              file=err)
                        for r in reports:
                            print(f"  {r}", file=err)
                if failed:
                    status = 1
                elif not any(r.tik is tik for r in runs):
                    # the last build (the listing above, the -o text) never ran: its text is not checked
                    print(f"tik-migrate: kernel {name}: its last build (the text listed / written) has no "
                          f"start_debug run to check against; the {len(runs)} run(s) of its earlier build(s) "
                          f"equal their PTO-AS bit for bit", file=err)
                    status = 1
                else:
                    runs_text = "its start_debug run" if len(runs) == 1 else f"all {len(runs)} start_debug runs"
                    if builds > 1:
                        runs_text += f" (of {builds} builds)"
                    print(f"tik-migrate: kernel {name}: PTO-AS outputs equal {runs_text} bit for bit "
                          f"({', '.join(runs[-1].results)})", file=err)
    except (ConfigError, UnknownName) as e:
        print(f"tik-migrate: error: {e}", file=err)
        return 2
    except PtoError as e:
        print(f"tik-migrate: error: {e}", file=err)
        return 1
    sys.stdout.flush()
    return status


__all__ = ["main", "PYTHON_FORMAT_CONFLICTS", "trace_script", "listing", "format_rows", "call_source", "kernel_asm", "check_round_trip",
           "save_io", "Row", "Trace"]
