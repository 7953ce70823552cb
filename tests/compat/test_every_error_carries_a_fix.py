"""Every user error the TIK facade (and the other tbe_compat modules) and the PTO core raise states a Fix.

A static scan (AST) of every call that builds a `PtoError`: a `PtoError` subclass called directly, or a helper
that builds one from a ``hint`` argument (``self._error``, ``tik_error``, ``bad``, ...). Each must pass its
``hint`` -- by keyword, in the helper's ``hint`` position, or through ``**kw``. A ``limit=`` alone does not count:
`pto_core.errors.limit_hint` turns only some limits into a Fix, and a generic "pass a value in [0, 8)" does not
say which argument or API to write instead. Sites where no Fix can be given are in the commented allow-lists.

k461 found 14 vector-facade errors without a Fix (its scan covered tbe_compat/tik/vector*.py only); k467 the 19
more of the rest of the facade and 48 of tbe_compat's other modules (para_check, topi_util, the reshape/slice
errors of tensor views, ...); this scan replaces k461's. tests/compat/tik/test_error_fixes_k467.py and
tests/core/test_error_fixes_core.py trigger some of them from kernels and check the Fix text.
"""
from __future__ import annotations

import ast
import importlib
import pathlib

import pto_core.errors as errors_mod
from pto_core.errors import PtoError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _error_classes() -> set:
    """Names of every `PtoError` subclass the packages define (imported so their classes exist)."""
    for mod in ("cann_impl", "legacy_fixpipe", "missing_modules", "para_check", "platform", "tik"):
        importlib.import_module(f"tbe_compat.{mod}")
    names, todo = set(), [PtoError]
    while todo:
        c = todo.pop()
        names.add(c.__name__)
        todo.extend(c.__subclasses__())
    return names


#: Helpers that build a PtoError from a ``hint`` argument: name -> index of ``hint`` among the call's positional
#: arguments (None: keyword-only). Per package, as some names mean different helpers there.
HELPERS = {
    "tbe_compat": {
        "_error": None, "tik_error": None, "_fail": None,          # Tik._error, tik.errors.tik_error, para_check
        "bad": 5,                   # cube_common.bad(tik, message, operand, value, limit, hint, cls)
        "_IndexError": 4,           # tensor._IndexError(message, operand, limit, value, hint)
        "_no_python_value": 2, "_no_python_op": 1,      # scalar.py / tensor.py (what, hint)
        "_unmodelled": 2, "_refused": 2,                # vector.py / vector_scatter.py (name, why, hint)
        "missing_name": 1,          # cann_impl.missing_name(module, hint)
        "_check_int": 4,            # legacy_fixpipe._check_int(value, name, lo, hi, hint)
    },
    "pto_core": {
        "_err": 4,                  # ops/fixpipe._err(message, operand, value, limit, hint)
        "_bad": 5,                  # ops/registry._bad(spec, operand, message, value, limit, hint)
        "error": 2,                 # asm._Parser.error(msg, tok, hint)
    },
}

#: Helpers whose ``hint`` has a default Fix are not scanned: the range helpers (`expect_range`, `Tik._int_arg`,
#: `_cube_imm`, `mte.check_int`, `vector_engine.check_range`, `fixpipe.need_int`) state "pass <name> between lo
#: and hi", `_bool_arg` / `check_extent` / the run-time assertions their own. (`_IndexError` has a default for
#: some operands but is scanned: that default is generic.)
#: Sites where no Fix can be given, as "<path>:<the error's first words>" (the line number moves):
#: Empty: every tbe_compat site found a Fix (k467). Add "<path>:<first words>" only with a comment saying why
#: no Fix can be given there.
ALLOWED: set = set()

#: pto_core sites without a Fix that k467 did not change (it found 42 of 368 and gave the moves, MAD, FIXPIPE,
#: legacy cube moves, vector masks, clause values and pto-run's usage errors theirs): program building, PTO-AS
#: parsing, the interpreter's inputs, debug formats, proposal/sort list shapes, TASSIGN. Listed as
#: "<path>:<the message's constant words>" so a new site without a Fix fails the scan; shrink it, never grow it.
PTO_CORE_WITHOUT_FIX = {
    "pto_core/asm.py:cannot print operand  of ",
    "pto_core/asm.py:loop variable % is used outside its loop",
    "pto_core/interpreter.py:alias  -> : the output needs  B, the inp",
    "pto_core/interpreter.py:init of  has  values, the tensor has ",
    "pto_core/interpreter.py:scalar argument  =  does not fit ",
    "pto_core/layout.py:unknown layout ",
    "pto_core/memory.py:GM allocation of  bytes",
    "pto_core/memory.py:core  does not exist (machine has )",
    "pto_core/memory.py:initial data has  bytes, region  has ",
    "pto_core/memory.py:no GM region named ",
    "pto_core/numerics/packing.py:cannot unpack  nibbles from  bytes",
    "pto_core/numerics/rounding.py:unknown rounding mode ",
    "pto_core/ops/debug.py:format  has more conversions than the  v",
    "pto_core/ops/debug.py:format  uses  of the  value(s) given",
    "pto_core/ops/vector_proposal.py:expects a list of 1..4 UB pointers",
    "pto_core/ops/vector_proposal.py:needs one length per source list",
    "pto_core/ops/vector_proposal.py:valid_bit  must select lists 0..k contig",
    "pto_core/ops/vector_sort2.py:expects a list of 1..4 UB pointers",
    "pto_core/ops/vector_sort2.py:needs one length per source list",
    "pto_core/program.py: has  word(s); index  is outside [0, )",
    "pto_core/program.py:no readable special register ",
    "pto_core/program.py:pointer in  is not allowed",
    "pto_core/program.py:program blocks closed out of order",
    "pto_core/tassign.py:allocation of  bytes",
    "pto_core/tassign.py:unknown tile type ",
}


def _name(func) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _first_words(call: ast.Call) -> str:
    """The error's message start (its first positional str or f-string's first constant part) for the allow-lists."""
    for a in call.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            return a.value[:40]
        if isinstance(a, ast.JoinedStr):
            return "".join(v.value for v in a.values if isinstance(v, ast.Constant))[:40]
    return ""


def sites_without_fix(package: str) -> list:
    """``<path>:<line>:<first words>`` of every PtoError-building call under ``package`` that passes no hint."""
    classes = _error_classes()
    helpers = HELPERS[package]
    missing = []
    for f in sorted((ROOT / package).rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        for n in ast.walk(ast.parse(f.read_text(), rel)):
            if not isinstance(n, ast.Call):
                continue
            name = _name(n.func)
            if name in classes and name not in helpers:
                pos = None
            elif name in helpers and (name != "error" or rel.endswith("asm.py")):
                pos = helpers[name]
            else:
                continue
            hinted = any(k.arg is None or (k.arg == "hint" and not (isinstance(k.value, ast.Constant)
                                                                     and k.value.value is None))
                         for k in n.keywords)
            if pos is not None and len(n.args) > pos:
                hinted = True
            if not hinted and not any(isinstance(a, ast.Starred) for a in n.args):
                missing.append(f"{rel}:{n.lineno}:{_first_words(n)}")
    return missing


def _unlisted(missing: list, allowed: set) -> list:
    return [m for m in missing if "{}:{}".format(m.split(":")[0], m.split(":", 2)[2]) not in allowed]


def test_every_tbe_compat_error_carries_a_fix():
    """Every PtoError the TIK facade, its CANN helper modules and its CLIs raise passes a hint (the "Fix:")."""
    assert _unlisted(sites_without_fix("tbe_compat"), ALLOWED) == []


def test_pto_core_errors_without_a_fix_only_the_listed_ones():
    """pto_core: no site without a Fix beyond the listed ones (which only shrinks)."""
    assert _unlisted(sites_without_fix("pto_core"), ALLOWED | PTO_CORE_WITHOUT_FIX) == []


#: The command-line tools: their usage errors are printed as "<prog>: error: <text>" (or argparse's ``ap.error``)
CLIS = ("tbe_compat/cli.py", "tbe_compat/migrate.py", "pto_core/cli.py")


def _text(node) -> str:
    """The constant text of a str or f-string (placeholders dropped)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return ""


def cli_usage_errors_without_fix() -> list:
    """Usage errors of the CLIs written out in the CLI itself (not a PtoError's text, which the scans above
    cover: ``f"{prog}: error: {e}"``) that state no "Fix:"."""
    missing = []
    for rel in CLIS:
        tree = ast.parse((ROOT / rel).read_text(), rel)
        parts = {id(v) for j in ast.walk(tree) if isinstance(j, ast.JoinedStr) for v in j.values}   # an f-string's
        for n in ast.walk(tree):                                                      # pieces: read as a whole
            own = None
            if isinstance(n, (ast.Constant, ast.JoinedStr)) and id(n) not in parts and "error: " in _text(n):
                own = _text(n).split("error: ", 1)[1].strip()
            elif isinstance(n, ast.Call) and _name(n.func) == "error" and isinstance(n.func, ast.Attribute) \
                    and getattr(n.func.value, "id", "") in ("ap", "parser"):
                own = _text(n.args[0]) if n.args else "?"
            if own and "Fix:" not in own:
                missing.append(f"{rel}:{n.lineno}:{own[:40]}")
    return missing


def test_every_cli_usage_error_carries_a_fix():
    """tik-run / tik-compare-fixpipe / tik-migrate / pto-run: a usage error says what to type instead."""
    assert cli_usage_errors_without_fix() == []


def test_the_scan_finds_a_site_without_a_hint(tmp_path, monkeypatch):
    """The scan sees each way of building an error (a class, a helper by keyword and by position), not a no-op."""
    pkg = tmp_path / "tbe_compat"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "def f(self, tik):\n"
        "    raise IllegalOperand('no fix here', limit='[0, 8)')\n"
        "    raise self._error('none either', operand='x')\n"
        "    raise bad(tik, 'positional', 'x', 1, '[0, 1]')\n"
        "    raise bad(tik, 'fixed', 'x', 1, '[0, 1]', 'pass x=0')\n"
        "    raise self._error('fixed', hint='pass x=0')\n"
        "    raise self._error('still none', hint=None)\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)      # the module's ROOT, restored after
    got = [m.split(":")[1] for m in sites_without_fix("tbe_compat")]
    assert got == ["2", "3", "4", "7"]


def test_limit_alone_is_not_always_a_fix():
    """Why the scan wants ``hint=``: a limit such as "1 element" gives no Fix at all."""
    assert errors_mod.limit_hint("1 element") is None
    assert errors_mod.limit_hint("dimensions >= 0") is None
