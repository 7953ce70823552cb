"""PTO-AS text: print any `Program`, parse it back (a real tokenizer and parser, no ``eval``).

The text follows the whole-kernel form of the public PTO ISA / PTOAS material (MLIR
syntax)::

    module attributes {pto.target_arch = "a2a3"} {
      func.func @kernel(%x: !pto.ptr<f16, gm> {pto.shape = [16, 16]},
                        %y: !pto.ptr<f32, gm> {pto.io = "out", pto.shape = [16, 16]}, %n: i32)
          attributes {pto.block_num = 4 : i64} {
        %c0 = arith.constant 0 : index
        %0 = pto.castptr %c1024_i64 : i64 -> !pto.ptr<f16, l0a>
        %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc_1 = %c0_i32) -> (i32) {
          %acc_2 = arith.addi %acc_1, %c1_i32 : i32
          pto.mad %0, %1, %2, %c16_i64, %c16_i64, %c16_i64 unit_flag(check_and_set)
            : !pto.ptr<f16, l0a>, !pto.ptr<f16, l0b>, !pto.ptr<f32, l0c>, i64, i64, i64
          pto.set_flag["PIPE_M", "PIPE_FIX", "EVENT_ID0"]
          scf.yield %acc_2 : i32
        }
        return
      }
    }

* Registers become SSA values: a register assigned in a loop and used afterwards (or in
  the next iteration) is an ``iter_args`` value of that ``scf.for``; one assigned in an
  ``if`` and used afterwards is a result of that ``scf.if`` (liveness decides).
* Scalars use ``arith`` (``addi``/``divsi``/``cmpi slt``/``extsi``/``sitofp`` ...) and
  ``math`` (``absi``, ``absf``, ``sqrt``); integer types are spelled with their
  signedness (``i32``, ``ui32``): ops must match it (``divsi`` on ``i32``, ``divui`` on
  ``ui32``). ``index`` is a 64-bit signed integer.
* Pointers: ``pto.castptr`` (address -> pointer, pointer -> pointer, pointer -> i64),
  ``pto.addptr`` (element offset), ``pto.load_scalar %p[%i]``, ``pto.store_scalar``,
  ``pto.get_block_idx``, ``pto.get_block_num``.
* ``%r = pto.get_spr "RSVD_CNT"[0] : i64`` reads a special register an op wrote (a statement:
  it stays in program order between the ops).
* Every registered op prints generically: ``pto.<name> operands clauses : types`` with
  the clause spellings of `pto_core.ops.registry`; sync ops whose operands are all pipes
  and events use the bracket form ``pto.set_flag["PIPE_M", "PIPE_FIX", "EVENT_ID0"]``
  (an `OpSpec` may choose with an ``asm_form`` attribute: ``"bracket"`` or ``"plain"``).
  The FIXPIPE write-backs and ``pto.mte_gm_l1_frac`` separate their clauses with commas as
  their docs do (``..., %c0_i64, nz2nd, sat``, `COMMA_CLAUSE_OPS`); the parser reads a clause
  after a comma or a space for every op.
* ``pto.break``, ``pto.continue`` (with the loop's carried values) and ``pto.return``
  are simulator extensions for TIK's ``tik_break``/``tik_continue``/``tik_return``.
* Constants and values that depend only on constants, kernel arguments and the block
  index are hoisted to the top of the function (named ``%c16_i64``, ``%cst`` ...).
* ``print_program(p, locations=True)`` appends MLIR locations
  ``loc("tik.matmul"("kernel.py":42:0))`` carrying each statement's provenance.

Printing then parsing then printing gives the same text.
"""
from __future__ import annotations

import codecs
import difflib
import re
from typing import NamedTuple, Optional

from . import scalars as S
from .dtypes import dtype as _dtype
from .errors import AsmParseError, ConfigError, PtoError, Provenance
from .ops import registry
from .pipes import asm_pipe, event_id, pipe_name, sync_op_pipe
from .program import (BOOL, F32, I64, INDEX, REGS, SPR_WORDS, Assign, BinOp, Bitcast, BlockIdx, BlockNum, Break,
                      Cast, Cmp, Const, Continue, Expr, For, GmArg, If, Load, LoopVar, OpStmt, Program, PtrAdd,
                      PtrCast, PtrFromInt, PtrReg, PtrToInt, PtrType, ReadSpr, Reg, Return, ScalarArg, Select, Store,
                      UnOp, Undef,
                      _coerce_clause, _coerce_operand, clause_exprs, stmt_exprs, walk)
from .scalars import scalar_type
from .targets import get_target, space_name

U64 = scalar_type("u64")
_I64_MAX = 2 ** 63 - 1

__all__ = ["print_program", "program_lines", "AsmLine", "parse", "parse_file"]


# ============================================================================= scalar op tables

def _int_op(op, t) -> str:
    """arith op name of integer/bool binary ``op`` on type ``t``."""
    signed = t.kind == "s"
    names = {"add": "addi", "sub": "subi", "mul": "muli", "div": "divsi" if signed else "divui",
             "rem": "remsi" if signed else "remui", "shl": "shli", "shr": "shrsi" if signed else "shrui",
             "and": "andi", "or": "ori", "xor": "xori", "min": "minsi" if signed else "minui",
             "max": "maxsi" if signed else "maxui"}
    return "arith." + names[op]


_FLOAT_OPS = {"add": "addf", "sub": "subf", "mul": "mulf", "div": "divf", "rem": "remf", "min": "minnumf",
              "max": "maxnumf"}
#: arith binary op -> (IR op, operand class: "i" any int/bool, "s" signed, "u" unsigned/bool, "f" float)
_PARSE_BINOPS = {
    "addi": ("add", "i"), "subi": ("sub", "i"), "muli": ("mul", "i"), "divsi": ("div", "s"), "divui": ("div", "u"),
    "remsi": ("rem", "s"), "remui": ("rem", "u"), "shli": ("shl", "i"), "shrsi": ("shr", "s"),
    "shrui": ("shr", "u"), "andi": ("and", "i"), "ori": ("or", "i"), "xori": ("xor", "i"), "minsi": ("min", "s"),
    "minui": ("min", "u"), "maxsi": ("max", "s"), "maxui": ("max", "u"), "addf": ("add", "f"),
    "subf": ("sub", "f"), "mulf": ("mul", "f"), "divf": ("div", "f"), "remf": ("rem", "f"),
    "minnumf": ("min", "f"), "maxnumf": ("max", "f"),
}
_CMPI = {"eq": "eq", "ne": "ne", "lt": ("slt", "ult"), "le": ("sle", "ule"), "gt": ("sgt", "ugt"),
         "ge": ("sge", "uge")}
_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_PARSE_CMPI = {"eq": ("eq", ""), "ne": ("ne", ""), "slt": ("lt", "s"), "sle": ("le", "s"), "sgt": ("gt", "s"),
               "sge": ("ge", "s"), "ult": ("lt", "u"), "ule": ("le", "u"), "ugt": ("gt", "u"), "uge": ("ge", "u")}
_PARSE_CMPF = {v: k for k, v in _CMPF.items()}


def _cmp_pred(pred, t) -> str:
    if S.is_float(t):
        return _CMPF[pred]
    p = _CMPI[pred]
    return p if isinstance(p, str) else p[0 if t.kind == "s" else 1]


def _cast_op(src, dst) -> str:
    """The single arith op converting ``src`` to ``dst``, or "" if it needs two steps."""
    if S.is_float(dst):
        if S.is_float(src):
            if src.bits == dst.bits:
                return ""                       # f16 <-> bf16 goes through f32
            return "arith.extf" if dst.bits > src.bits else "arith.truncf"
        if src is INDEX:
            return ""                           # index -> i64 -> float
        return "arith.sitofp" if src.kind == "s" else "arith.uitofp"
    if S.is_float(src):
        if dst is INDEX:
            return ""
        return "arith.fptosi" if dst.kind == "s" else "arith.fptoui"
    if src is INDEX or dst is INDEX:
        return "arith.index_cast" if src.kind == "s" else "arith.index_castui"
    sb, db = _bits(src), _bits(dst)
    if sb < db:
        return "arith.extsi" if src.kind == "s" else "arith.extui"
    if sb > db:
        return "arith.trunci"
    return "arith.bitcast"


def _bits(t) -> int:
    """Width of a register type in the text (i1 is one bit wide)."""
    return 1 if S.is_bool(t) else t.bits


def _cast_via(src, dst):
    """Intermediate type of a two-step conversion."""
    return F32 if S.is_float(src) and S.is_float(dst) else I64


# ============================================================================= liveness

_ALL = object()   # "kills everything": a path that does not fall through


class _Liveness:
    """Register liveness over the structured IR.

    A loop body's live-in is ``UE(body) | (live_out - KILL(body))`` in closed form (no fixpoint).
    Register copies ``r = s`` print no text (``r`` just names ``s``'s value), so a copy whose
    target is dead must not keep ``s`` alive: `analyze` drops dead copies and repeats until
    none is left (``dead`` holds them; the printer skips them too).
    """

    def __init__(self):
        self._uses: dict = {}
        self.dead: set = set()
        self._reset()

    def _reset(self):
        self._summary: dict = {}
        self._flow: dict = {}
        self.live_out: dict = {}
        self._new_dead: set = set()

    def analyze(self, body: list):
        while True:
            self._reset()
            self.run(body, frozenset())
            if not self._new_dead:
                return
            self.dead |= self._new_dead

    def uses(self, e) -> frozenset:
        got = self._uses.get(id(e))
        if got is None:
            got = self._uses[id(e)] = (frozenset(x for x in walk(e) if isinstance(x, REGS)), e)
        return got[0]

    def stmt_uses(self, s) -> frozenset:
        out = frozenset()
        for e in stmt_exprs(s):
            out |= self.uses(e)
        return out

    def flow(self, block: list):
        """``(falls_through, assigned_on_fallthrough, exits, assigned_before_exits)`` of a block.

        The sets hold registers assigned (within the block) on some path that reaches the block's
        end, resp. a ``break``/``continue`` of the enclosing loop; paths ending in ``return`` carry
        nothing out, so assignments only they see do not make loop-carried values or if results.
        """
        got = self._flow.get(id(block))
        if got is not None:
            return got[0]
        cur, exits, has_exit, alive = set(), set(), False, True
        for s in block:
            if id(s) in self.dead:
                continue
            if isinstance(s, (Assign, Load, ReadSpr)):
                cur.add(s.reg)
            elif isinstance(s, (Break, Continue)):
                has_exit = True
                exits |= cur
                alive = False
                break
            elif isinstance(s, Return):
                alive = False
                break
            elif isinstance(s, If):
                branches = [self.flow(s.then), self.flow(s.orelse) if s.orelse is not None else (True, set(), False,
                                                                                                set())]
                new = set()
                for b_alive, b_ft, b_exit, b_ex in branches:
                    if b_exit:
                        has_exit = True
                        exits |= cur | b_ex
                    if b_alive:
                        new |= b_ft
                cur |= new
                if not any(b[0] for b in branches):
                    alive = False
                    break
            elif isinstance(s, For):
                cur |= self.carried(s.body)
        res = (alive, frozenset(cur), has_exit, frozenset(exits))
        self._flow[id(block)] = (res, block)
        return res

    def carried(self, body: list) -> frozenset:
        """Registers a loop body may assign on paths that reach the next iteration or the loop's exit."""
        alive, ft, has_exit, ex = self.flow(body)
        return (ft if alive else frozenset()) | (ex if has_exit else frozenset())

    def summary(self, block: list):
        """``(UE, KILL)``: registers read before written from the block's entry; registers always written."""
        got = self._summary.get(id(block))
        if got is not None:
            return got[0]
        ue, kill = set(), set()
        for s in block:
            if id(s) in self.dead:
                continue
            su, sk = self._stmt_summary(s)
            ue |= (su - kill)
            if sk is _ALL:
                kill = _ALL
                break
            kill |= sk
        res = (frozenset(ue), kill if kill is _ALL else frozenset(kill))
        self._summary[id(block)] = (res, block)
        return res

    def _stmt_summary(self, s):
        if isinstance(s, (Assign, Load, ReadSpr)):
            return self.stmt_uses(s), {s.reg}
        if isinstance(s, For):
            return self.stmt_uses(s) | self.summary(s.body)[0], set()
        if isinstance(s, If):
            tu, tk = self.summary(s.then)
            eu, ek = self.summary(s.orelse) if s.orelse is not None else (frozenset(), frozenset())
            if tk is _ALL:
                kill = ek
            elif ek is _ALL:
                kill = tk
            else:
                kill = tk & ek
            return self.stmt_uses(s) | tu | eu, set(kill) if kill is not _ALL else _ALL
        if isinstance(s, (Break, Continue, Return)):
            return set(), _ALL
        return self.stmt_uses(s), set()

    def run(self, block: list, live_out: frozenset, loop=None) -> frozenset:
        live = live_out
        for s in reversed(block):
            live = self._stmt_live(s, live, loop)
        return live

    def _stmt_live(self, s, live, loop):
        if id(s) in self.dead:
            return live
        if isinstance(s, Assign) and isinstance(s.value, REGS) and s.reg not in live:
            self._new_dead.add(id(s))
        if isinstance(s, (Assign, Load, ReadSpr)):
            return (live - {s.reg}) | self.stmt_uses(s)
        if isinstance(s, If):
            self.live_out[id(s)] = live
            t = self.run(s.then, live, loop)
            e = self.run(s.orelse, live, loop) if s.orelse is not None else live
            return self.stmt_uses(s) | t | e
        if isinstance(s, For):
            self.live_out[id(s)] = live
            ue = self.summary(s.body)[0]
            body_out = live | ue
            self.run(s.body, body_out, (live, body_out))
            return self.stmt_uses(s) | live | ue
        if isinstance(s, Break):
            return loop[0] if loop else frozenset()
        if isinstance(s, Continue):
            return loop[1] if loop else frozenset()
        if isinstance(s, Return):
            return frozenset()
        return live | self.stmt_uses(s)


# ============================================================================= printer

class _V:
    """An SSA value of the printed text (named at the end, in textual order).

    ``inv``: defined at the top of the function (constants, arguments, values computed
    only from those); such values are hoisted and shared everywhere.
    """

    __slots__ = ("base", "name", "type", "inv")

    def __init__(self, base: Optional[str], t, inv: bool = False):
        self.base, self.type, self.name, self.inv = base, t, None, inv


class _VLeaf(Expr):
    """An already printed invariant value inside a deferred expression."""

    __slots__ = ("v",)

    def __init__(self, v: _V):
        self.v, self.type, self.name = v, v.type, None


_NAME_BAD = re.compile(r"[^A-Za-z0-9_$.]")
_NAME_SUFFIX = re.compile(r"_\d+$")


def _base_name(name) -> Optional[str]:
    """A printable SSA name base (None for numbered values)."""
    if not name:
        return None
    b = _NAME_BAD.sub("_", str(name))
    b = _NAME_SUFFIX.sub("", b) or "v"
    if b.isdigit():
        return None
    if b[0].isdigit():
        b = "v" + b
    return b


def _float_text(x: float, t) -> str:
    if x != x or x in (S.INF, -S.INF):
        return f"0x{S.float_bits(x, t):0{t.bits // 4}X}"
    s = repr(float(x))
    if "e" in s and "." not in s.split("e")[0]:
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    return s


def _const_base(value, t) -> str:
    if S.is_bool(t):
        return "true" if value else "false"
    if S.is_float(t):
        return "cst"
    if t is INDEX:
        return f"c{value}"
    return f"c{value}_{t.pto_name}"


#: Characters a string literal prints as byte escapes ``\HH`` (MLIR's form: two hex digits per UTF-8 byte): the
#: control characters other than newline and tab, and the Unicode line breaks an editor counts as lines (CR, VT,
#: FF, NEL, U+2028 ...), so a printed ``.pto`` file has one line per line of the program and the line numbers of
#: its errors are the editor's (review414). Newline and tab keep their short escapes.
_BYTE_ESCAPED = frozenset([chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f", "\x85", "\u2028", "\u2029"])


def _lone_surrogate(c: str) -> bool:
    return "\ud800" <= c <= "\udfff"


def _literal_bytes(c: str, surrogateescape: bool = True) -> bytes:
    """The bytes a byte-escaped character prints as: its UTF-8; a lone surrogate has none, so it prints as the byte
    it stands for when it is one of Python's ``surrogateescape`` characters U+DC80..U+DCFF (the undecodable byte of
    a file name: a kernel script in a non-UTF-8 directory), else (or without ``surrogateescape``) as its
    ``surrogatepass`` bytes (review416: printed raw, they made the text unwritable, ``tik-migrate -o`` failed with a
    UnicodeEncodeError)."""
    if _lone_surrogate(c):
        return c.encode("utf-8", "surrogateescape" if surrogateescape and "\udc80" <= c <= "\udcff"
                        else "surrogatepass")
    return c.encode()


def _q(s: str) -> str:
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    if not any(c in _BYTE_ESCAPED or _lone_surrogate(c) for c in s):
        return '"' + s + '"'
    lit = ""
    for surrogateescape in (True, False):   # escaped bytes that happen to form UTF-8 (U+DCC3 U+DCA9): all passed
        lit = '"' + "".join("".join(f"\\{b:02X}" for b in _literal_bytes(c, surrogateescape))
                            if c in _BYTE_ESCAPED or _lone_surrogate(c) else c for c in s) + '"'
        if not any(_lone_surrogate(c) for c in s) or _unquote(lit) == _unquote('"' + s + '"'):
            break
    return lit


def _word(w) -> str:
    w = str(w)
    return w if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", w) else _q(w)


def _loc(where: Optional[Provenance]) -> str:
    if where is None:
        return ""
    fl = f"{_q(where.file)}:{where.line}:0"
    return f" loc({_q(where.call)}({fl}))" if where.call else f" loc({fl})"


def _op_form(spec) -> str:
    """``generic`` | ``bracket`` | ``angle`` | ``quoted`` (`OpSpec.asm_form`; sync ops default to bracket)."""
    form = getattr(spec, "asm_form", None)
    if form:
        return form
    if spec.family == "sync" and len(spec.operands) >= 2 and not spec.clauses and \
            all(o.kind in ("pipe", "event", "int") for o in spec.operands):
        return "bracket"
    return "generic"


#: Ops whose public syntax separates the clauses from the operands and from each other with
#: commas: the FIXPIPE write-backs (hw-native-sys/pto-isa docs/isa/cube/ops/data-movement/mte-l0c-*.md,
#: "pto.mte_l0c_gm %src, ..., %l2_cache_ctrl [, unit_flag(...)]? [, pre_quant(...)]? ... [, sat | nosat]?",
#: pto_spec.md §5.1; PTOAS prints ``..., %c0_i64, nz2nd {...}``) and the ND/DN -> NZ load
#: (``pto.mte_gm_l1_frac %src, %dst, nd2nz, shape(%n, %d), src_layout(...), ...``, pto_spec.md §3.2).
#: Every other op's clauses follow with a space, as their docs write them (``pto.mad ... %k
#: unit_flag(check_only) disable_gemv sat``, ``pto.mte_gm_l1 ... %len_burst nburst(...) loop(...)``).
#: The parser reads either separator for every op, so text printed before this choice still loads (named choice:
#: pto_programs.md).
COMMA_CLAUSE_OPS = frozenset({"mte_l0c_l1", "mte_l0c_gm", "mte_l0c_ub", "mte_gm_l1_frac"})


def clause_separator(spec) -> str:
    """What the printer writes before each clause of ``spec`` (`COMMA_CLAUSE_OPS`)."""
    return ", " if spec.name in COMMA_CLAUSE_OPS else " "


def _attr_text(x) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return f"{x} : i64"
    if isinstance(x, float):
        return f"{_float_text(x, F32)} : f32"
    return _q(str(x))


class _Printer:
    def __init__(self, prog: Program, locations: bool):
        self.prog = prog
        self.locations = locations
        self.lines: list = []           # (indent, parts, defs)
        self.entry: list = []
        self.const_table: dict = {}
        self.inv_table: dict = {}
        self.cse: list = [{}]
        self.env: dict = {}
        self.named: dict = {}           # args and loop vars -> _V
        self.loops: list = []
        self.live = _Liveness()
        self.live.analyze(prog.body)
        self.indent = 2
        # id(node) -> (node, value): a shared subexpression (expressions are DAGs: a TIK expression built
        # in a Python loop can reach one node by 2**n paths) is walked once; valid while the register
        # bindings and the CSE scope stay the same, so `fresh` empties them at each statement and scope
        self.val_memo: dict = {}
        self.inv_memo: dict = {}
        self.subst_memo: dict = {}

    def fresh(self):
        """Forget the memoised values of `val`/`invariant`/`subst` (the bindings or the scope change)."""
        self.val_memo.clear()
        self.inv_memo.clear()
        self.subst_memo.clear()

    # -- helpers
    def emit(self, parts: list, defs: list, where=None, entry=False, loc=True, op=None):
        """Append a line; ``where`` is the provenance of the statement it belongs to (printed as a
        location only when ``loc``: an ``scf.for``/``scf.if`` carries it on its closing brace);
        ``op`` the `OpStmt` of a PTO op line."""
        if self.locations and loc and where is not None and not entry:
            parts = parts + [_loc(where)]
        (self.entry if entry else self.lines).append((2 if entry else self.indent, parts, defs, where, op))

    def invariant(self, e) -> bool:
        """Whether ``e``'s value (with the current register bindings) is a function-entry value."""
        if isinstance(e, (Const, Undef, ScalarArg, BlockIdx, BlockNum, GmArg, _VLeaf)):
            return True
        if isinstance(e, LoopVar):
            return False
        if isinstance(e, REGS):
            v = self.env.get(e)
            return v is None or not isinstance(v, _V) or v.inv
        m = self.inv_memo.get(id(e))
        if m is not None and m[0] is e:
            return m[1]
        r = all(self.invariant(c) for c in e.children())
        self.inv_memo[id(e)] = (e, r)
        return r

    def subst(self, e):
        """``e`` with registers replaced by their (invariant) bindings: a deferrable expression."""
        if isinstance(e, REGS):
            v = self.env.get(e)
            if v is None:
                return Undef(e.type) if not isinstance(e.type, PtrType) else _VLeaf(self.undef_v(e.type))
            return _VLeaf(v) if isinstance(v, _V) else v
        kids = e.children()
        if not kids:
            return e
        m = self.subst_memo.get(id(e))
        if m is not None and m[0] is e:
            return m[1]
        new = [self.subst(c) for c in kids]
        r = e if all(a is b for a, b in zip(new, kids)) else _rebuild(e, new)
        self.subst_memo[id(e)] = (e, r)
        return r

    def const_v(self, value, t) -> _V:
        c = value if isinstance(value, Const) else Const(value, t)
        t = c.type
        key = ("const", t.name, S.float_bits(c.value, t) if S.is_float(t) else c.value)
        v = self.const_table.get(key)
        if v is None:
            v = _V(_const_base(c.value, t), t, True)
            if S.is_bool(t):
                text = "true" if c.value else "false"
                self.emit([v, " = arith.constant ", text], [v], entry=True)
            else:
                lit = _float_text(c.value, t) if S.is_float(t) else str(c.value)
                self.emit([v, f" = arith.constant {lit} : {t.pto_name}"], [v], entry=True)
            self.const_table[key] = v
        return v

    def undef_v(self, t, why: Optional[str] = None) -> _V:
        """``ub.poison``; ``why`` (`Undef.why`, the error where the value is used) prints as ``{pto.why = "..."}``."""
        key = ("undef", str(t), why)
        v = self.const_table.get(key)
        if v is None:
            v = _V("poison", t, True)
            attr = "" if why is None else f" {{pto.why = {_q(why)}}}"
            self.emit([v, f" = ub.poison{attr} : {_tstr(t)}"], [v], entry=True)
            self.const_table[key] = v
        return v

    def reg_v(self, r) -> _V:
        v = self.env.get(r)
        if v is None:
            return self.undef_v(r.type)
        if not isinstance(v, _V):          # a deferred invariant value: emitted at its first use
            v = self.env[r] = self.val(v)
        return v

    def val(self, e, where=None) -> _V:
        if isinstance(e, (GmArg, ScalarArg)):
            return self.named[e]
        if isinstance(e, LoopVar):
            v = self.named.get(e)
            if v is None:
                raise PtoError(f"loop variable %{e.name} is used outside its loop")
            return v
        if isinstance(e, REGS):
            return self.reg_v(e)
        if isinstance(e, Const):
            return self.const_v(e, e.type)
        if isinstance(e, Undef):
            return self.undef_v(e.type, e.why)
        if isinstance(e, _VLeaf):
            return e.v
        m = self.val_memo.get(id(e))
        if m is not None and m[0] is e:
            return m[1]
        v = self.node_v(e, e.name, where)
        self.val_memo[id(e)] = (e, v)
        return v

    def prelower(self, exprs, where=None):
        """Print the non-invariant operands first: the parsed text defines them as earlier lines, so
        their lines (and the hoisted values they need) come before this statement's hoisted operands."""
        for e in exprs:
            if isinstance(e, Expr) and not isinstance(e, (REGS, LoopVar)) and not self.invariant(e):
                self.val(e, where)

    def vals(self, exprs, where=None) -> list:
        self.prelower(exprs, where)
        return [self.val(e, where) for e in exprs]

    def node_v(self, e, base, where) -> _V:
        """Emit (or reuse) the value of node ``e``; ``base`` names a new value."""
        inv = self.invariant(e)
        e, rhs, key, t = self._lower(e, base, where)
        if isinstance(e, _V):
            return e
        tables = [self.inv_table] if inv else self.cse
        for tab in reversed(tables):
            v = tab.get(key)
            if v is not None:
                return v
        v = _V(_base_name(base), t, inv)
        self.emit([v, " = "] + rhs, [v], where, entry=inv)
        (self.inv_table if inv else self.cse[-1])[key] = v
        return v

    def _lower(self, e, base, where):
        """``(e, rhs parts, cse key, type)``; ``e`` may come back as an already-emitted `_V`."""
        t = e.type
        ts = _tstr(t)
        if isinstance(e, BlockIdx):
            return e, ["pto.get_block_idx"], ("bidx",), t
        if isinstance(e, BlockNum):
            return e, ["pto.get_block_num"], ("bnum",), t
        if isinstance(e, BinOp):
            a, b = self.vals((e.a, e.b), where)
            name = "arith." + _FLOAT_OPS[e.op] if S.is_float(t) else _int_op(e.op, t)
            return e, [f"{name} ", a, ", ", b, f" : {ts}"], (name, a, b, ts), t
        if isinstance(e, UnOp):
            if e.op == "neg" and not S.is_float(t):
                return self.node_v(BinOp("sub", Const(0, t), e.a), base, where), None, None, t
            if e.op == "not":
                return self.node_v(BinOp("xor", e.a, Const(True if S.is_bool(t) else -1, t)), base, where), \
                    None, None, t
            a = self.val(e.a, where)
            name = {"neg": "arith.negf", "abs": "math.absf" if S.is_float(t) else "math.absi",
                    "sqrt": "math.sqrt"}.get(e.op) or "math." + e.op
            return e, [f"{name} ", a, f" : {ts}"], (name, a, ts), t
        if isinstance(e, Cmp):
            a, b = self.vals((e.a, e.b), where)
            at = e.a.type
            name = "arith.cmpf" if S.is_float(at) else "arith.cmpi"
            pred = _cmp_pred(e.pred, at)
            return e, [f"{name} {pred}, ", a, ", ", b, f" : {_tstr(at)}"], (name, pred, a, b), t
        if isinstance(e, Cast):
            op = _cast_op(e.a.type, t)
            if not op:
                return self.node_v(Cast(Cast(e.a, _cast_via(e.a.type, t)), t), base, where), None, None, t
            a = self.val(e.a, where)
            return e, [f"{op} ", a, f" : {_tstr(e.a.type)} to {ts}"], (op, a, ts), t
        if isinstance(e, Bitcast):
            a = self.val(e.a, where)
            return e, ["arith.bitcast ", a, f" : {_tstr(e.a.type)} to {ts}"], ("arith.bitcast", a, ts), t
        if isinstance(e, Select):
            c, a, b = self.vals((e.c, e.a, e.b), where)
            return e, ["arith.select ", c, ", ", a, ", ", b, f" : {ts}"], ("select", c, a, b), t
        if isinstance(e, PtrFromInt):
            a = self.val(e.a, where)
            return e, ["pto.castptr ", a, f" : {_tstr(e.a.type)} -> {ts}"], ("castptr", a, ts), t
        if isinstance(e, PtrCast):
            a = self.val(e.p, where)
            return e, ["pto.castptr ", a, f" : {_tstr(e.p.type)} -> {ts}"], ("castptr", a, ts), t
        if isinstance(e, PtrToInt):
            a = self.val(e.p, where)
            return e, ["pto.castptr ", a, f" : {_tstr(e.p.type)} -> {ts}"], ("castptr", a, ts), t
        if isinstance(e, PtrAdd):
            p, n = self.vals((e.p, e.n), where)
            return e, ["pto.addptr ", p, ", ", n, f" : {ts} -> {ts}"], ("addptr", p, n), t
        raise TypeError(f"cannot print expression {e!r}")

    # -- statements
    def block(self, stmts: list) -> bool:
        """Print a block; True if it ends in a terminator (no fall-through)."""
        for s in stmts:
            if self.stmt(s):
                return True
        return False

    def stmt(self, s) -> bool:
        w = s.where
        if id(s) in self.live.dead:
            return False
        self.fresh()
        if isinstance(s, OpStmt):
            self.op(s)
        elif isinstance(s, Assign):
            value = s.value
            if isinstance(value, REGS):
                if value in self.env:
                    self.env[s.reg] = self.env[value]
                else:
                    self.env.pop(s.reg, None)
            elif isinstance(value, LoopVar):
                self.env[s.reg] = self.val(value, w)
            elif self.invariant(value):
                self.env[s.reg] = self.subst(value)    # deferred: printed (hoisted) where first used
            else:
                self.env[s.reg] = self.node_v(value, s.reg.name, w)
        elif isinstance(s, Load):
            p, o = self.vals((s.ptr, s.offset), w)
            v = _V(_base_name(s.reg.name), s.reg.type)
            self.emit([v, " = pto.load_scalar ", p, "[", o, f"] : {_tstr(s.ptr.type)} -> {_tstr(s.reg.type)}"],
                      [v], w)
            self.env[s.reg] = v
        elif isinstance(s, ReadSpr):
            v = _V(_base_name(s.reg.name), s.reg.type)
            self.emit([v, f' = pto.get_spr "{s.spr}"[{s.index}] : {_tstr(s.reg.type)}'], [v], w)
            self.env[s.reg] = v
        elif isinstance(s, Store):
            p, o, x = self.vals((s.ptr, s.offset, s.value), w)
            self.emit(["pto.store_scalar ", x, ", ", p, "[", o, f"] : {_tstr(s.ptr.type)}, {_tstr(s.value.type)}"],
                      [], w)
        elif isinstance(s, For):
            self.for_(s)
        elif isinstance(s, If):
            return self.if_(s)
        elif isinstance(s, (Break, Continue)):
            regs, args, live_after = self.loops[-1] if self.loops else ([], [], frozenset())
            # a value not used after the loop is dead at a break: print the loop's own block argument
            vs = [self.reg_v(r) if isinstance(s, Continue) or r in live_after else a for r, a in zip(regs, args)]
            parts = ["pto.break" if isinstance(s, Break) else "pto.continue"]
            if vs:
                parts += [" "] + _join(vs) + [" : " + ", ".join(_tstr(r.type) for r in regs)]
            self.emit(parts, [], w)
            return True
        elif isinstance(s, Return):
            self.emit(["pto.return"], [], w)
            return True
        else:
            raise TypeError(f"cannot print statement {s!r}")
        return False

    def _sorted(self, regs) -> list:
        return sorted(regs, key=lambda r: r.id)

    def for_(self, s: For):
        w = s.where
        live_out = self.live.live_out.get(id(s), frozenset())
        ue = self.live.summary(s.body)[0]
        iters = self._sorted(r for r in self.live.carried(s.body) if r in ue or r in live_out)
        self.prelower((s.lo, s.hi, s.step), w)
        inits = [self.reg_v(r) for r in iters]
        lo, hi, st = self.val(s.lo, w), self.val(s.hi, w), self.val(s.step, w)
        var_v = _V(_base_name(s.var.name) or "i", s.var.type)
        args = [_V(_base_name(r.name), r.type) for r in iters]
        res = [_V(_base_name(r.name), r.type) for r in iters]
        parts = []
        if res:
            parts += _join(res) + [" = "]
        parts += ["scf.for ", var_v, " = ", lo, " to ", hi, " step ", st]
        if iters:
            parts.append(" iter_args(")
            for k, (a, i) in enumerate(zip(args, inits)):
                parts += ([", "] if k else []) + [a, " = ", i]
            parts.append(") -> (" + ", ".join(_tstr(r.type) for r in iters) + ")")
        if s.var.type is not INDEX:
            parts.append(f" : {_tstr(s.var.type)}")
        parts.append(" {")
        self.emit(parts, res + [var_v] + args, w, loc=False)
        saved = dict(self.env)
        self.env.update(zip(iters, args))
        self.named[s.var] = var_v
        self.cse.append({})
        self.fresh()
        self.loops.append((iters, args, live_out))
        self.indent += 1
        term = self.block(s.body)
        if not term and iters:
            self.emit(["scf.yield "] + _join([self.reg_v(r) for r in iters]) +
                      [" : " + ", ".join(_tstr(r.type) for r in iters)], [], w, loc=False)
        self.indent -= 1
        self.loops.pop()
        self.cse.pop()
        self.fresh()
        del self.named[s.var]
        self.env = saved
        self.env.update(zip(iters, res))
        self.fresh()
        self.emit(["}"], [], w)

    def if_(self, s: If) -> bool:
        w = s.where
        live_out = self.live.live_out.get(id(s), frozenset())
        assigned = set()
        for branch in (s.then, s.orelse or []):
            alive, ft, _, _ = self.live.flow(branch)
            if alive:
                assigned |= ft
        results = self._sorted(r for r in assigned if r in live_out)
        c = self.val(s.cond, w)
        res = [_V(_base_name(r.name), r.type) for r in results]
        parts = (_join(res) + [" = "] if res else []) + ["scf.if ", c]
        if results:
            parts.append(" -> (" + ", ".join(_tstr(r.type) for r in results) + ")")
        parts.append(" {")
        self.emit(parts, res, w, loc=False)
        terms = []
        for k, branch in enumerate((s.then, s.orelse)):
            if k == 1:
                if branch is None and not results:
                    terms.append(False)
                    break
                self.emit(["} else {"], [], w, loc=False)
            saved = dict(self.env)
            self.cse.append({})
            self.fresh()
            self.indent += 1
            term = self.block(branch or [])
            if not term and results:
                self.emit(["scf.yield "] + _join([self.reg_v(r) for r in results]) +
                          [" : " + ", ".join(_tstr(r.type) for r in results)], [], w, loc=False)
            self.indent -= 1
            self.cse.pop()
            self.fresh()
            self.env = saved
            terms.append(term)
        self.env.update(zip(results, res))
        self.fresh()
        self.emit(["}"], [], w)
        return all(terms)

    # -- ops
    def op(self, s: OpStmt):
        call, w = s.call, s.where
        spec = call.spec
        form = _op_form(spec)
        ssa = []

        def literal(x, kind) -> str:
            word = asm_pipe(pipe_name(x, allow_all=True)) if kind == "pipe" else \
                asm_pipe(sync_op_pipe(x)) if kind == "bufpipe" else f"EVENT_ID{event_id(x)}"
            return f"<{word}>" if form in ("bracket", "angle") else _q(word)

        def value(x, kind=None) -> list:
            if isinstance(x, (tuple, list)):          # a list operand ("ptrs"): [%a, %b, ...]
                out = ["["]
                for k, e in enumerate(x):
                    out += ([", "] if k else []) + value(e)
                return out + ["]"]
            if kind in ("pipe", "bufpipe") or (kind == "event" and not isinstance(x, Expr)):
                return [literal(x, kind)]
            if isinstance(x, str):
                return [_q(x)]
            if isinstance(x, Expr):
                v = self.val(x, w)
            elif isinstance(x, bool):
                v = self.const_v(x, BOOL)
            elif isinstance(x, int):
                v = self.const_v(x, U64 if x > _I64_MAX else I64)     # 64-bit words with bit 63 (masks)
            elif isinstance(x, float):
                v = self.const_v(x, F32)
            else:
                raise PtoError(f"cannot print operand {x!r} of {spec.asm_name}")
            ssa.append(v)
            return [v]

        def group(name, entry) -> list:
            args, kw = entry
            items = [value(a) for a in args]
            for key, kv in kw.items():
                items.append([f"{key} = "] + ([_word(kv)] if isinstance(kv, str) else value(kv)))
            out = [f"{name}("]
            for k, p in enumerate(items):
                out += ([", "] if k else []) + p
            return out + [")"]

        self.prelower([x for v in call.operands for x in clause_exprs(v)] +
                      [x for v in call.clauses.values() for x in clause_exprs(v)], w)
        ops = [value(x, o.kind) for o, x in zip(spec.operands, call.operands)]
        parts = [spec.asm_name]
        if form == "bracket":
            parts.append("[")
        elif ops:
            parts.append(" ")
        for k, p in enumerate(ops):
            parts += ([", "] if k else []) + p
        if form == "bracket":
            parts.append("]")
        attrs = []
        sep = clause_separator(spec) if ops else " "
        for name, x in call.clauses.items():
            c = spec.clause(name)
            if c.form == "attr":
                attrs.append(f"{name} = {_attr_text(x)}")
                continue
            if c.form == "args" and getattr(c, "repeat", False):
                for entry in x:
                    parts += [sep] + group(name, entry)
                continue
            parts.append(sep)
            if c.form == "flag":
                parts.append(name)
            elif c.form == "word":
                parts.append(f"{name}({_word(x)})")
            elif c.form == "sat":
                parts.append(name if x is True else f"no{name}" if x is False else f"{name}({_word(x)})")
            elif c.form == "optarg":
                parts += [name] if x is True else [f"{name}("] + value(x) + [")"]
            elif c.form == "word_or_arg":
                parts += [f"{name}({_word(x)})"] if isinstance(x, str) else [f"{name}("] + value(x) + [")"]
            else:
                parts += group(name, x)
        if attrs:
            parts.append(" {" + ", ".join(attrs) + "}")
        if ssa:
            parts.append(" : " + ", ".join(_tstr(v.type) for v in ssa))
        self.emit(parts, [], w, op=s)

    # -- whole program
    def rows(self) -> list:
        """Every line of the text as ``(text, where, hoisted, op)`` (see `AsmLine`)."""
        prog = self.prog
        head = []
        defs = []
        for a in prog.args:
            v = _V(a.name, a.type, True)
            v.name = a.name
            self.named[a] = v
            attrs = []
            if isinstance(a, GmArg):
                if a.io != "in":
                    attrs.append(f"pto.io = {_q(a.io)}")
                if a.fill is not None:
                    attrs.append(f"pto.fill = {_q(a.fill)}")
                if a.init is not None:
                    attrs.append("pto.init = [" + ", ".join(_init_text(x, a.dtype) for x in a.init) + "]")
                if a.shape is not None:
                    attrs.append("pto.shape = [" + ", ".join(str(d) for d in a.shape) + "]")
            head.append(f"%{a.name}: {_tstr(a.type)}" + (" {" + ", ".join(attrs) + "}" if attrs else ""))
            defs.append(v)
        self.block(prog.body)
        fattrs = ""
        if prog.block_num is not None:
            bn = prog.block_num
            fattrs = f" attributes {{pto.block_num = {bn} : i64}}" if isinstance(bn, int) else \
                f" attributes {{pto.block_num = {_q(bn.name)}}}"
        out = [(f"module attributes {{pto.target_arch = {_q(prog.target.name.lower())}}} {{", None, False, None),
               (f"  func.func @{_sym(prog.name)}({', '.join(head)}){fattrs} {{", None, False, None)]
        body = [row + (True,) for row in self.entry] + [row + (False,) for row in self.lines]
        body.append((2, ["return"], [], None, None, False))
        used = set(a.name for a in prog.args)
        counter = {}
        for _, parts, dvs, _, _, _ in body:
            for v in dvs:
                v.name = _fresh(v.base, used, counter)
        for ind, parts, _, where, op, hoisted in body:
            text = "  " * ind + "".join(p if isinstance(p, str) else "%" + p.name for p in parts)
            out.append((text, where, hoisted, op))
        out += [("  }", None, False, None), ("}", None, False, None)]
        return out

    def render(self) -> str:
        return "\n".join(row[0] for row in self.rows()) + "\n"


def _rebuild(e, kids: list):
    """A copy of node ``e`` with new children."""
    if isinstance(e, BinOp):
        return BinOp(e.op, *kids)
    if isinstance(e, UnOp):
        return UnOp(e.op, kids[0])
    if isinstance(e, Cmp):
        return Cmp(e.pred, *kids)
    if isinstance(e, Cast):
        return Cast(kids[0], e.type)
    if isinstance(e, Bitcast):
        return Bitcast(kids[0], e.type)
    if isinstance(e, Select):
        return Select(*kids)
    if isinstance(e, PtrFromInt):
        return PtrFromInt(kids[0], e.type)
    if isinstance(e, PtrCast):
        return PtrCast(kids[0], e.dtype)
    if isinstance(e, PtrToInt):
        return PtrToInt(kids[0])
    if isinstance(e, PtrAdd):
        return PtrAdd(*kids)
    raise TypeError(f"cannot rebuild {e!r}")


def _fresh(base, used: set, counter: dict) -> str:
    """The next free name for ``base`` (``base``, ``base_1``, ...; numbered ``0, 1, ...`` for None)."""
    if base is None:
        k = counter.get(None, 0)
        while str(k) in used:
            k += 1
        counter[None] = k + 1
        name = str(k)
    else:
        k = counter.get(base, 0)
        name = base if k == 0 else f"{base}_{k}"
        while name in used:
            k += 1
            name = f"{base}_{k}"
        counter[base] = k + 1
    used.add(name)
    return name


def _join(vs: list) -> list:
    out = []
    for k, v in enumerate(vs):
        out += ([", "] if k else []) + [v]
    return out


def _tstr(t) -> str:
    return str(t) if isinstance(t, PtrType) else t.pto_name


def _sym(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name) else _q(name)


def _init_text(x, d) -> str:
    return _float_text(float(x), _dtype("f32")) if d.kind == "f" else str(int(x))


def print_program(prog: Program, *, locations: bool = False) -> str:
    """The PTO-AS text of ``prog``; ``locations=True`` adds ``loc(...)`` provenance to statements."""
    return _Printer(prog, locations).render()


class AsmLine(NamedTuple):
    """One line of `print_program`'s text (without locations) and where it came from.

    ``where``: the provenance of the statement the line belongs to -- for an ``scf.for`` /
    ``scf.if`` its opening line, ``} else {``, ``scf.yield`` and closing brace too; for a
    hoisted value the statement that first used it; None for the module and function frame
    and for constants. ``hoisted``: the line sits at the function entry (constants and
    values that depend only on constants, arguments and the block index). ``op``: the
    `OpStmt` of a PTO op line, else None.
    """

    text: str
    where: Optional[Provenance]
    hoisted: bool
    op: Optional[OpStmt] = None


def program_lines(prog: Program) -> list:
    """`print_program(prog)` as a list of `AsmLine` (the migration listing groups them by provenance)."""
    return [AsmLine(*row) for row in _Printer(prog, False).rows()]


# ============================================================================= tokenizer

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>//[^\n]*)
  | (?P<value>%[A-Za-z0-9_$.\-]+(?:\#\d+)?)
  | (?P<sym>@[A-Za-z_][A-Za-z0-9_$.]*|@"(?:\\.|[^"\\])*")
  | (?P<bang>![A-Za-z_][A-Za-z0-9_.]*)
  | (?P<hash>\#[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<arrow>->)
  | (?P<float>-?\d+\.\d*(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+)
  | (?P<int>-?0x[0-9a-fA-F]+|-?\d+)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<punct>[(){}\[\]<>,:=?*+])
  | (?P<bad>.)
""", re.VERBOSE)


class _Tok:
    __slots__ = ("kind", "text", "line", "col")

    def __init__(self, kind, text, line, col):
        self.kind, self.text, self.line, self.col = kind, text, line, col

    def __repr__(self):
        return "end of input" if self.kind == "eof" else repr(self.text)


def _tokenize(text: str, source: str) -> list:
    toks = []
    append = toks.append
    line, line_start = 1, 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "ws" or kind == "comment":
            continue
        if kind == "nl":
            line += 1
            line_start = m.end()
            continue
        if kind == "bad":
            raise AsmParseError(f"unexpected character {m.group()!r}", line=line,
                                column=m.start() - line_start + 1, source_name=source,
                                hint="remove it (or put it inside a \"string\"); PTO-AS is ASCII outside strings "
                                     "and comments")
        append(_Tok(kind, m.group(), line, m.start() - line_start + 1))
    toks.append(_Tok("eof", "", line, len(text) - line_start + 1))
    return toks


def _int_text(text: str) -> int:
    """The value of an ``int`` token: hex after ``0x``, else decimal (MLIR allows leading zeros: ``007`` is 7;
    Python's ``int(text, 0)`` rejects them)."""
    return int(text, 16) if text.lstrip("-")[:2].lower() == "0x" else int(text, 10)


_HEX = frozenset("0123456789abcdefABCDEF")


def _undecodable(e: UnicodeDecodeError):
    """Decoding error handler of byte-escape runs (`_literal_bytes` backwards): a lone surrogate's ``surrogatepass``
    bytes (ED A0..BF 80..BF) are that surrogate; any other byte that is not UTF-8 is U+DC00 + byte
    (``surrogateescape``), so the string prints back as bytes that read the same (they read as U+FFFD until
    review416)."""
    b = e.object[e.start:e.start + 3]
    if len(b) == 3 and b[0] == 0xED and 0xA0 <= b[1] <= 0xBF and 0x80 <= b[2] <= 0xBF:
        return bytes(b).decode("utf-8", "surrogatepass"), e.start + 3
    return chr(0xDC00 + e.object[e.start]), e.start + 1


codecs.register_error("pto_asm_bytes", _undecodable)


def _unquote(s: str) -> str:
    r"""A string token's text: ``\n``, ``\t``, ``\HH`` (a byte, MLIR's escape; runs of them are decoded as UTF-8,
    bytes that are not UTF-8 as `_undecodable`), else ``\x`` is ``x`` (``\"``, ``\\``)."""
    out, i, raw = [], 1, bytearray()
    while i < len(s) - 1:
        ch = s[i]
        if ch == "\\" and s[i + 1] in _HEX and i + 2 < len(s) - 1 and s[i + 2] in _HEX:
            raw.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        if raw:
            out.append(raw.decode("utf-8", "pto_asm_bytes"))
            raw.clear()
        if ch == "\\":
            nxt = s[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    if raw:
        out.append(raw.decode("utf-8", "pto_asm_bytes"))
    return "".join(out)


# ============================================================================= parser


#: PTOAS spellings outside the parsed subset: (test on the op name, why, what to write instead).
#: Checked only for names that are not ops of the registry (pto_programs.md §8).
_NOT_PARSED = (
    (lambda n: n in ("pto.ub.set_mask", "pto.ub.set_mask_count", "pto.ub.set_mask_norm"),
     "is PTOAS's A2/A3 mask-register form (the MASK/CTRL state a later positional pto.ub.* op reads); the "
     "simulator keeps no such state: its only public description (a lowering design note) is inconsistent "
     "about when the mask is set",
     "give each pto.ub.* op its own mask(...) or counter(...) clause (pto_vector.md §1-2)"),
    (lambda n: n in ("pto.alloc_tile", "pto.tile_buf_addr", "pto.make_tensor_view", "pto.partition_view",
                     "pto.declare_tile", "pto.subview", "pto.pointer_cast", "pto.bind_tile")
     or (n.startswith("pto.t") and not n.startswith("pto.tassign")),
     "is PTOAS tile-level IR (!pto.tile_buf / tensor views), which the simulator does not parse",
     "lower it with ptoas (--enable-tile-op-expand --pto-backend=vpto) to the micro ops (pto.mte_*, pto.mad*, "
     "pto.mte_l0c_*) or write those"),
    (lambda n: n in ("pto.vecscope", "pto.vlds", "pto.vsts", "pto.mem_bar") or n.startswith(("pto.plt_", "pto.pset_",
                                                                                             "pto.pge_", "pto.v")),
     "is PTOAS register-level vector IR (!pto.vreg / !pto.mask values), which the simulator does not parse",
     "write the repeat-level pto.ub.* op of the same computation (pto_vector.md)"),
    (lambda n: n.startswith("pto.section."),
     "is a PTOAS kernel section (cube / vector parts of a mixed kernel), which the simulator does not parse",
     "write a single-section kernel without the section wrapper; mixed cube/vector kernels (C2V/V2C "
     "transfers with cross-core sync) are not modelled"),
    (lambda n: n in ("pto.record_event", "pto.wait_event", "pto.barrier_sync"),
     "is PTOAS's tile-level sync on op types, which ptoas lowers to set_flag/wait_flag/barrier",
     "write pto.set_flag/pto.wait_flag with the pipes (TLOAD -> PIPE_MTE2, TMATMUL -> PIPE_M, ...)"),
    (lambda n: n.startswith(("pto.copy_gm_to_", "pto.copy_ubuf_to_", "pto.copy_cbuf_to_", "pto.load_cbuf_to_",
                             "pto.copy_matrix_cc_to_", "pto.set_loop", "pto.set_mte2_nz_para", "pto.set_channel_para",
                             "pto.set_quant_pre", "pto.set_fpc", "pto.set_pad_val")),
     "is PTOAS's raw, register-configured cube/DMA layer (packed configuration words)",
     "write the structured op it comes from: pto.mte_gm_l1(_frac), pto.mte_gm_ub, pto.mte_ub_gm, "
     "pto.mte_l1_l0a/l0b, pto.mte_l0c_gm/l1/ub"),
)


#: the attributes of a kernel argument the simulator reads (pto_programs.md §5)
_ARG_ATTRS = ("pto.shape", "pto.io", "pto.fill", "pto.init")


def _op_hint(name: str) -> str:
    """The fix for an unknown op name: the closest registered names, else where the op list is."""
    known = ["pto." + k for k in registry.OPS] + ["arith.constant", "arith.addi", "arith.muli", "arith.index_cast",
                                                   "pto.castptr", "pto.addptr", "scf.for", "scf.if", "scf.yield"]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    if close:
        return "did you mean " + " or ".join(close) + "?"
    return "see the op list in migration_guide/pto_api.md (pto.*) and pto_programs.md (arith/scf/func)"


def _not_parsed(name: str) -> Optional[str]:
    """Why a PTOAS op name outside the registry is not parsed, and the way out (or None)."""
    for test, why, fix in _NOT_PARSED:
        if test(name):
            return f"{name} {why}; {fix}"
    return None


class _FuncDef(NamedTuple):
    """A ``func.func`` of the module, found by the first scan (its body is parsed on demand)."""

    name: str
    pos: int            # token index of ``func.func``
    private: bool       # ``func.func private``: a helper, never a kernel
    entry: bool         # ``attributes {pto.entry}``: the kernel(s) of a multi-function module (PTOAS)
    target: object      # the enclosing module's pto.target_arch (or None)
    tok: object


#: Named choice LOC_NAMES_TEXT_LINE: an op of a PTO-AS *file* that carries a ``loc("script.py":38)`` (what
#: ``tik-migrate -o`` writes) is reported at the script's line, as written, and also at its own line of the
#: file, ``script.py:38 in `pto.mte_l0c_gm` (kernel.pto:41)``: a user who edits the file (drops a flag pair,
#: changes an operand) was sent to the Python line only (user404). Text parsed from a string (`parse`, e.g.
#: ``tik-migrate --check``) has no file to point into and keeps the loc alone.
LOC_NAMES_TEXT_LINE = True


class _Parser:
    loc_text_lines = False      # `parse(loc_text_lines=)`: see LOC_NAMES_TEXT_LINE
    _op_line = None             # line of the op whose loc is being read (`statement`), for LOC_NAMES_TEXT_LINE

    def __init__(self, text: str, source: str, target=None, kernel: Optional[str] = None,
                 allow_debug_eval: bool = False):
        self.allow_debug_eval = allow_debug_eval
        self.toks = _tokenize(text, source)
        self.pos = 0
        self.source = source
        self.target_override = target
        self.kernel = kernel
        self.scopes: list = [{}]
        self.loops: list = []           # iter registers of the enclosing scf.for
        self.target = None
        self.funcs: dict = {}           # name -> _FuncDef of every func.func of the module
        self.inlining: list = []        # helpers being inlined (func.call), innermost last
        self.returned: list = []        # (value, token) of the last top-level `return %v : T`

    # -- token helpers
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.toks[self.pos]
        if t.kind != "eof":
            self.pos += 1
        return t

    def error(self, msg: str, tok: Optional[_Tok] = None, hint: Optional[str] = None) -> AsmParseError:
        tok = tok or self.peek()
        return AsmParseError(msg, line=tok.line, column=tok.col, source_name=self.source, hint=hint)

    def expected(self, what: str, tok: Optional[_Tok] = None) -> AsmParseError:
        tok = tok or self.peek()
        if tok.kind == "ident" and tok.text == "loc" and "loc" not in what:
            return self.error(f"expected {what}, found a location", tok,
                              hint=f"write {what} first: a loc(...) comes last in an operation, after its types "
                                   "(%a = arith.addi %x, %y : i32 loc(\"k.py\":3:1))")
        return self.error(f"expected {what}, found {tok!r}", tok,
                          hint=f"write {what} here" + (" (the text ends too early)" if tok.kind == "eof" else ""))

    def at(self, text: str) -> bool:
        t = self.peek()
        return t.text == text and t.kind in ("punct", "ident", "arrow")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.pos += 1
            return True
        return False

    def expect(self, text: str, what: Optional[str] = None) -> _Tok:
        if not self.at(text):
            raise self.expected(what or repr(text))
        return self.next()

    def expect_kind(self, kind: str, what: str) -> _Tok:
        t = self.peek()
        if t.kind != kind:
            raise self.expected(what)
        return self.next()

    # -- values
    def define(self, tok: _Tok, value):
        name = tok.text[1:]
        if "#" in name:
            raise self.error(f"cannot define {tok.text}: result numbers are only for uses", tok,
                             hint=f"name the result without #: %{name.split('#')[0]} (write %x#0, %x#1 only where "
                                  f"you use the results of a multi-result op)")
        for sc in self.scopes:
            if name in sc:
                raise self.error(f"redefinition of %{name}", tok,
                                 hint=f"give the new value another name (SSA values are defined once), e.g. "
                                      f"%{name}_1")
        self.scopes[-1][name] = value

    def value(self):
        t = self.peek()
        if t.kind != "value":
            raise self.expected("an SSA value (%name)")
        self.next()
        return self.use(t), t

    def typed(self, v, t, tok):
        vt = v.type
        if (isinstance(vt, PtrType) != isinstance(t, PtrType)) or vt != t:
            raise self.error(f"type mismatch: {tok.text} has type {_tstr(vt)}, expected {_tstr(t)}", tok,
                             hint=f"write the type {_tstr(vt)} {tok.text} was defined with, or pass a value of type "
                                  f"{_tstr(t)}")

    # -- types
    def parse_type(self):
        t = self.peek()
        if t.kind == "bang":
            if t.text != "!pto.ptr":
                kind = {"!pto.tile_buf": "tile-level", "!pto.tensor_view": "tile-level",
                        "!pto.partition_tensor_view": "tile-level", "!pto.vreg": "register-level vector",
                        "!pto.mask": "register-level vector", "!pto.align": "register-level vector"}.get(t.text)
                more = f" ({t.text} is PTOAS {kind} IR, which the simulator does not parse; pto_programs.md §8)" \
                    if kind else ""
                raise self.error(f"unsupported type {t.text}; expected a scalar type or !pto.ptr<T, space>{more}", t,
                                 hint="write a scalar type (i64, f32 ...) or !pto.ptr<dtype, space>")
            self.next()
            return self.ptr_body()
        if t.kind == "punct" and t.text == "<":
            return self.ptr_body()
        if t.kind != "ident":
            raise self.expected("a type (i32, f16, index, !pto.ptr<T, space> ...)")
        self.next()
        try:
            return scalar_type(t.text)
        except PtoError as e:
            raise self.error(f"unknown scalar type {t.text!r} ({e.message})", t,
                             hint="write a scalar type such as i1, i32, i64, f16, f32 or index") from None

    def ptr_body(self) -> PtrType:
        self.expect("<", "'<'")
        et = self.next()
        try:
            d = _dtype(et.text)
        except PtoError:
            raise self.error(f"unknown element type {et.text!r}", et,
                             hint="write a dtype such as f16, f32, bf16, i8, i32, u8, u16 (pto_api.md)") from None
        space = "gm"
        if self.accept(","):
            st = self.next()
            try:
                space = space_name(st.text)
            except PtoError:
                raise self.error(f"unknown memory space {st.text!r}", st,
                                 hint="write gm, ub, l1, l0a, l0b, l0c, bt or fb (or an alias such as vec, mat, "
                                      "left, right, acc)") from None
        self.expect(">", "'>'")
        return PtrType(d, space)

    def type_list(self) -> list:
        out = [self.parse_type()]
        while self.accept(","):
            out.append(self.parse_type())
        return out

    # -- attributes
    def attr_dict(self) -> dict:
        self.expect("{", "'{'")
        out = {}
        if self.accept("}"):
            return out
        while True:
            k = self.next()
            if k.kind not in ("ident", "string"):
                raise self.expected("an attribute name", k)
            key = _unquote(k.text) if k.kind == "string" else k.text
            val = True
            if self.accept("="):
                val = self.attr_value()
            out[key] = val
            if self.accept("}"):
                return out
            self.expect(",", "',' or '}'")

    def attr_value(self):
        t = self.next()
        if t.kind == "string":
            v = _unquote(t.text)
        elif t.kind == "int":
            v = _int_text(t.text)
        elif t.kind == "float":
            v = float(t.text)
        elif t.kind == "ident" and t.text in ("true", "false"):
            v = t.text == "true"
        elif t.kind == "ident" or t.kind == "sym":
            v = t.text
            if t.kind == "ident" and self.at("<"):          # array<i32: 1, 0>, dense<...>, affine_map<...>
                v += self.skip_balanced("<", ">")
        elif t.kind == "punct" and t.text == "[":
            v = []
            if not self.accept("]"):
                while True:
                    v.append(self.attr_value())
                    if self.accept("]"):
                        break
                    self.expect(",", "',' or ']'")
        elif t.kind == "hash":
            v = t.text
            if self.at("<"):
                v += self.skip_balanced("<", ">")
        else:
            raise self.expected("an attribute value", t)
        if self.at(":") and not isinstance(v, list):
            self.next()
            self.parse_type()
        return v

    def skip_balanced(self, open_, close) -> str:
        depth, parts = 0, []
        while True:
            t = self.next()
            if t.kind == "eof":
                raise self.expected(f"'{close}'", t)
            parts.append(t.text)
            if t.text == open_:
                depth += 1
            elif t.text == close:
                depth -= 1
                if depth == 0:
                    return "".join(parts)

    # -- locations
    def loc(self) -> Optional[Provenance]:
        if not (self.peek().kind == "ident" and self.peek().text == "loc" and self.peek(1).text == "("):
            return None
        self.next()
        self.next()
        where = None
        t = self.next()
        if t.kind == "ident" and t.text == "unknown":
            pass
        elif t.kind == "string":
            if self.at("("):
                self.next()
                f = self.expect_kind("string", "a file name string")
                where = self._file_line(f, _unquote(t.text))
                self.expect(")", "')'")
            else:
                where = self._file_line(t, "")
        else:
            raise self.expected("a location (\"file\":line:col)", t)
        self.expect(")", "')'")
        return where

    def _file_line(self, f: _Tok, call: str) -> Provenance:
        self.expect(":", "':'")
        line = _int_text(self.expect_kind("int", "a line number").text)
        if self.accept(":"):
            self.expect_kind("int", "a column number")
        # the op's own line (where it starts), as an op without a loc is reported: its loc may be on a later line
        detail = f"{self.source}:{self._op_line or f.line}" if self.loc_text_lines else ""
        return Provenance(_unquote(f.text), line, call, detail)

    # -- top level
    def parse(self) -> Program:
        defs = self.module()
        if self.peek().kind != "eof":
            raise self.expected("end of input")
        for d in defs:
            if d.name in self.funcs:
                raise self.error(f"redefinition of function @{d.name}", d.tok,
                                 hint=f"rename one of the two functions (@{d.name}_1) and its func.call uses")
            self.funcs[d.name] = d
        # kernels: the `pto.entry` functions if any (PTOAS), else every public function; private
        # functions are helpers that `func.call` inlines
        kernels = [d for d in defs if d.entry] or [d for d in defs if not d.private]
        if self.kernel is not None:
            pick = [d for d in kernels if d.name == self.kernel]
            if not pick:
                what = "a helper (private or not pto.entry), not a kernel" if self.kernel in self.funcs else \
                    "not defined"
                raise self.error(f"no kernel named {self.kernel!r} ({what}); kernels: " +
                                 ", ".join(d.name for d in kernels),
                                 self.funcs[self.kernel].tok if self.kernel in self.funcs else self.toks[0],
                                 hint="pass one of the listed kernel names (pto-run --kernel-name NAME, or "
                                      "parse(text, kernel=NAME))")
            kernels = pick
        if not kernels:
            raise self.error("the module defines no kernel: every function is private", self.toks[0],
                             hint="make the kernel public (func.func @name without private) or mark it `attributes "
                                  "{pto.entry}`")
        progs = [self.func(d) for d in kernels]
        if len(progs) != 1:
            raise self.error(f"the module defines {len(progs)} kernels (" + ", ".join(p.name for p in progs) +
                             "); choose one with kernel= (or mark the kernel `attributes {pto.entry}` and make "
                             "the others helpers)", self.toks[0],
                             hint="pass kernel=NAME (pto-run --kernel-name NAME)")
        return progs[0]

    def module(self) -> list:
        """Scan a module: one `_FuncDef` per ``func.func`` (bodies are parsed later, on demand)."""
        self.expect("module", "'module'")
        if self.peek().kind == "sym":
            self.next()
        attrs = {}
        if self.accept("attributes"):
            at = self.peek()
            attrs = self.attr_dict()
            self.check_attr_names(attrs, ("pto.target_arch",), at)
        arch = attrs.get("pto.target_arch")
        saved = self.target
        if arch is not None and self.target_override is None:
            try:
                self.target = get_target(arch)
            except PtoError as e:
                raise self.error(f"pto.target_arch: {e.message}", self.toks[0],
                                 hint=e.hint or "write a target name such as \"a2a3\" or a TIK SoC name "
                                      "(targets.md)") from None
        self.expect("{", "'{'")
        defs = []
        while not self.accept("}"):
            if self.at("module"):
                defs += self.module()
            elif self.at("func.func"):
                defs.append(self.scan_func())
            else:
                raise self.expected("'func.func', 'module' or '}'")
        self.target = saved if saved is not None else self.target
        return defs

    def func_header(self):
        """``func.func [private] @name``: returns (name token, name, private)."""
        self.expect("func.func")
        private = False
        if self.peek().kind == "ident" and self.peek().text in ("private", "public", "nested"):
            private = self.next().text != "public"
        nt = self.expect_kind("sym", "a function name (@name)")
        name = nt.text[1:]
        return nt, (_unquote(name) if name.startswith('"') else name), private

    def result_types(self) -> list:
        """Optional ``-> T`` / ``-> (T, ...)`` of a function."""
        if not self.accept("->"):
            return []
        if self.accept("("):
            if self.accept(")"):
                return []
            out = self.type_list()
            self.expect(")", "')'")
            return out
        return [self.parse_type()]

    def scan_func(self) -> "_FuncDef":
        start = self.pos
        nt, name, private = self.func_header()
        self.expect("(", "'('")
        depth = 1
        while depth:
            t = self.next()
            if t.kind == "eof":
                raise self.expected("')' closing the arguments", t)
            depth += (t.text == "(" and t.kind == "punct") - (t.text == ")" and t.kind == "punct")
        self.result_types()
        fattrs = self.attr_dict() if self.accept("attributes") else {}
        if not self.at("{"):
            raise self.expected("'{' (a function body)")
        self.skip_balanced("{", "}")
        return _FuncDef(name, start, private, "pto.entry" in fattrs, self.target, nt)

    def func(self, d: "_FuncDef") -> Program:
        self.pos = d.pos
        self.target = d.target
        nt, name, _ = self.func_header()
        target = self.target_override or self.target or get_target("A2A3")
        self.scopes = [{}]
        args = []
        self.expect("(", "'('")
        if not self.accept(")"):
            while True:
                args.append(self.func_arg())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        if self.result_types():
            raise self.error(f"kernel @{name} declares results; a kernel returns nothing (only helper functions "
                             f"called with func.call return values)", nt,
                             hint="remove the -> (...) result types from the kernel; write outputs into GM pointer "
                                  "arguments")
        fattrs = {}
        if self.accept("attributes"):
            fattrs = self.attr_dict()
        prog = Program(name, target, args)
        bn = fattrs.get("pto.block_num")
        if bn is not None:
            if isinstance(bn, str):
                prog.block_num = next((a for a in args if isinstance(a, ScalarArg) and a.name == bn), None)
                if prog.block_num is None:
                    raise self.error(f"pto.block_num names {bn!r}, which is not a scalar argument", nt,
                                     hint="name a scalar (i32/i64/index) argument of this kernel, or write a "
                                          "constant: pto.block_num = 8 : i64")
            elif isinstance(bn, int) and not isinstance(bn, bool) and bn >= 1:
                prog.block_num = bn
            else:
                raise self.error(f"pto.block_num = {bn!r}: the core count must be an int >= 1 or the name of a "
                                 f"scalar argument", nt,
                                 hint="write pto.block_num = 8 : i64 (or = \"n\" for a scalar argument %n)")
        self.target = target
        self.expect("{", "'{'")
        self.scopes.append({})
        prog.body = self.block(top=True)
        if self.returned:
            raise self.error(f"kernel @{name} returns values; a kernel returns nothing", self.returned[0][1],
                             hint="write `return` with no values; store outputs into GM pointer arguments")
        self.expect("}", "'}' after return")
        self.scopes.pop()
        return prog

    # -- func.call: helpers are inlined
    def func_call(self, results, out, op):
        ct = self.expect_kind("sym", "the callee (@name)")
        name = ct.text[1:]
        name = _unquote(name) if name.startswith('"') else name
        self.expect("(", "'('")
        args = []
        if not self.accept(")"):
            while True:
                args.append(self.value())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        self.expect(":", "':' and the callee's function type")
        self.expect("(", "'(' (argument types)")
        arg_types = []
        if not self.accept(")"):
            arg_types = self.type_list()
            self.expect(")", "')'")
        self.expect("->", "'->' (result types)")
        if self.accept("("):
            res_types = []
            if not self.accept(")"):
                res_types = self.type_list()
                self.expect(")", "')'")
        else:
            res_types = [self.parse_type()]
        if len(arg_types) != len(args):
            raise self.error(f"func.call @{name} passes {len(args)} arguments but its type lists {len(arg_types)}", ct,
                             hint="list one type per argument in the call's (...) -> (...) type")
        for (v, tok), ty in zip(args, arg_types):
            self.typed(v, ty, tok)
        d = self.funcs.get(name)
        if d is None:
            raise self.error(f"func.call of unknown function @{name}; this module defines " +
                             (", ".join("@" + f for f in self.funcs) or "no function"), ct,
                             hint="call a function this module defines (check the spelling), or add a func.func "
                                  "with that name")
        if name in self.inlining:
            raise self.error(f"recursive func.call of @{name} (" + " -> ".join("@" + f for f in self.inlining) +
                             f" -> @{name}): helpers are inlined, so recursion is not supported", ct,
                             hint="rewrite the recursion as an scf.for loop")
        body, values = self.inline(d, args, res_types, ct)
        out.extend(body)
        if results:
            self.bind_results(results, values, op)
        return values

    def inline(self, d: "_FuncDef", args: list, res_types: list, call_tok) -> tuple:
        """Parse helper ``d``'s body with its parameters bound to ``args``: its statements and the values
        its ``return`` yields."""
        saved = (self.pos, self.scopes, self.loops, self.target, self.returned)
        self.inlining.append(d.name)
        try:
            self.pos = d.pos
            if self.target_override is None and d.target is not None:
                self.target = d.target
            self.func_header()
            self.scopes = [{}]
            self.loops = []
            self.expect("(", "'('")
            params = []
            if not self.accept(")"):
                while True:
                    t = self.expect_kind("value", "a parameter (%name: type)")
                    self.expect(":", "':'")
                    ty = self.parse_type()
                    if self.at("{"):
                        self.attr_dict()
                    params.append((t, ty))
                    if self.accept(")"):
                        break
                    self.expect(",", "',' or ')'")
            if len(params) != len(args):
                raise self.error(f"func.call @{d.name} passes {len(args)} arguments; @{d.name} takes {len(params)}",
                                 call_tok,
                                 hint=f"pass exactly {len(params)} arguments, in the order @{d.name} declares them")
            for (pt, ty), (v, tok) in zip(params, args):
                if (isinstance(v.type, PtrType) != isinstance(ty, PtrType)) or v.type != ty:
                    raise self.error(f"func.call @{d.name}: argument {tok.text} has type {_tstr(v.type)}, parameter "
                                     f"{pt.text} is {_tstr(ty)}", tok,
                                     hint=f"pass a value of type {_tstr(ty)} (convert it with an arith cast or "
                                          f"pto.castptr), or change the parameter's type")
                self.define(pt, v)
            declared = self.result_types()
            if [_tstr(t) for t in declared] != [_tstr(t) for t in res_types]:
                raise self.error(f"func.call @{d.name} expects results ({', '.join(_tstr(t) for t in res_types)}); "
                                 f"@{d.name} returns ({', '.join(_tstr(t) for t in declared)})", call_tok,
                                 hint=f"make the call's result types match @{d.name}'s -> (...) declaration")
            if self.accept("attributes"):
                self.attr_dict()
            self.expect("{", "'{'")
            self.scopes.append({})
            body = self.block(top=True)
            got = self.returned
            if len(got) != len(declared):
                raise self.error(f"@{d.name} returns {len(got)} values but declares {len(declared)} results",
                                 got[0][1] if got else call_tok,
                                 hint="make the return values match the declared result types, one value per type")
            for (v, tok), ty in zip(got, declared):
                self.typed(v, ty, tok)
            return_values = [v for v, _ in got]
        finally:
            self.pos, self.scopes, self.loops, self.target, self.returned = saved
            self.inlining.pop()
        return body, return_values

    def func_arg(self):
        t = self.expect_kind("value", "an argument (%name: type)")
        name = t.text[1:]
        if not name.isidentifier():
            raise self.error(f"argument name %{name} must be an identifier", t,
                             hint="name it with letters, digits and _ (%x, %len_0)")
        self.expect(":", "':'")
        ty = self.parse_type()
        at = self.peek()
        attrs = self.attr_dict() if self.at("{") else {}
        self.check_attr_names(attrs, _ARG_ATTRS, at)
        if isinstance(ty, PtrType):
            if ty.space != "gm":
                raise self.error(f"kernel argument %{name} points into {ty.space}; arguments must be GM pointers "
                                 f"or scalars", t,
                                 hint="declare it !pto.ptr<T, gm> and move data on chip inside the kernel, or pass "
                                      "a scalar")
            shape = attrs.get("pto.shape")          # none: a host buffer (PTOAS), sized by the caller's array
            try:
                a = GmArg(name, ty.dtype, shape, attrs.get("pto.io", "in" if shape is not None else "inout"),
                          attrs.get("pto.fill"), attrs.get("pto.init"))
            except PtoError as e:
                raise self.error(e.message, t, hint=e.hint) from None
        else:
            a = ScalarArg(name, ty)
        self.define(t, a)
        return a

    # -- blocks and statements
    def block(self, top=False) -> list:
        """Statements up to the closing '}' or an ``scf.yield`` (both left for the caller).

        The caller opens and closes the value scope (yield operands are looked up in it).
        """
        stmts = []
        while True:
            t = self.peek()
            if t.kind == "punct" and t.text == "}":
                if top:
                    raise self.expected("'return' before the end of the function")
                return stmts
            if t.kind == "ident" and t.text == "return" and top:
                self.next()
                self.returned = []
                if self.peek().kind == "value" and self.peek().line == t.line:
                    vals = [self.value()]
                    while self.accept(","):
                        vals.append(self.value())
                    self.expect(":", "':' and the returned types")
                    for (v, tok), ty in zip(vals, self.type_list()):
                        self.typed(v, ty, tok)
                    self.returned = vals
                self._op_line = t.line
                self.loc()
                return stmts
            if t.kind == "ident" and t.text == "scf.yield":
                if top:
                    raise self.error("scf.yield outside a loop or if", t,
                                     hint="use scf.yield only as the last op of an scf.for or scf.if body; end a "
                                          "function with return")
                return stmts
            self.statement(stmts)

    def statement(self, out: list):
        results = []
        start = self.peek()
        if start.kind == "value":
            results = self.result_list()
            self.expect("=", "'='")
        op = self.peek()
        if op.kind != "ident":
            raise self.expected("an operation name")
        name = op.text
        where = Provenance(self.source, op.line, name)
        self._op_loc = None     # set by `generic` when it reads the op's loc
        self._op_line = op.line
        n_before = len(out)
        if name == "scf.for":
            self.next()
            self.scf_for(results, out, where)
        elif name == "scf.if":
            self.next()
            self.scf_if(results, out, where)
        elif name in ("pto.break", "pto.continue"):
            self.next()
            self.no_results(results, op)
            self.loop_exit(name, out, op, where)
        elif name == "func.call":
            self.next()
            self.func_call(results, out, op)
        elif name == "pto.return":
            self.next()
            self.no_results(results, op)
            out.append(Return(where))
        elif name in ("pto.load_scalar",):
            self.next()
            self.load(results, out, op, where)
        elif name == "pto.get_spr":
            self.next()
            self.read_spr(results, out, op, where)
        elif name == "pto.store_scalar":
            self.next()
            self.no_results(results, op)
            self.store(out, where)
        elif name.startswith(("arith.", "math.", "ub.")) or name in ("pto.castptr", "pto.addptr",
                                                                  "pto.get_block_idx", "pto.get_block_num"):
            self.next()
            self.pure(name, results, out, op, where)
        elif name.startswith("pto."):
            self.next()
            if name[4:] not in registry.OPS:
                raise self.error(_not_parsed(name) or f"unknown operation {name!r}", op, hint=_op_hint(name))
            self.no_results(results, op)
            self.generic(name, op, out, where)
        else:
            raise self.error(f"unknown operation {name!r}", op, hint=_op_hint(name))
        self._op_line = op.line         # (an scf.for / scf.if body's ops set it to theirs)
        loc = self.loc() or self._op_loc
        self._op_loc = None
        if loc is not None:
            for s in out[n_before:]:
                s.where = loc
                if isinstance(s, OpStmt):
                    s.call.where = loc

    def result_list(self) -> list:
        toks = [self.next()]
        if self.at(":") and self.peek(1).kind == "int":
            self.next()
            n = _int_text(self.next().text)
            return [(toks[0], n)]
        while self.accept(","):
            toks.append(self.expect_kind("value", "a result name"))
        return [(t, None) for t in toks]

    def no_results(self, results, op):
        if results:
            raise self.error(f"{op.text} has no results", results[0][0],
                             hint=f"write {op.text} without a result name (drop \"%name = \")")

    def bind_results(self, results, values: list, op, op_name: Optional[str] = None):
        """``op_name``: the op's name where ``op`` is another token (scf.for / scf.if pass their loop variable /
        condition token, which the count errors named: "%i has 2 results")."""
        label = op_name or op.text
        if len(results) == 1 and results[0][1] is not None:
            tok, n = results[0]
            if n != len(values):
                raise self.error(f"{label} has {len(values)} results, not {n}", tok,
                                 hint=f"write %name:{len(values)} (or {len(values)} names separated by commas)")
            self.define(tok, list(values))
            return
        if len(results) != len(values):
            raise self.error(f"{label} has {len(values)} results, {len(results)} names given",
                             results[0][0] if results else op,
                             hint=f"give {len(values)} result names, separated by commas")
        for (tok, _), v in zip(results, values):
            self.define(tok, v)

    def use(self, tok):
        name = tok.text[1:]
        idx = None
        if "#" in name:
            name, i = name.split("#")
            idx = int(i)
        for sc in reversed(self.scopes):
            if name in sc:
                v = sc[name]
                if isinstance(v, list):
                    if idx is None or not 0 <= idx < len(v):
                        raise self.error(f"%{name} has {len(v)} results; use %{name}#0 .. %{name}#{len(v) - 1}", tok,
                                         hint=f"pick one result: %{name}#0 .. %{name}#{len(v) - 1}")
                    return v[idx]
                if idx is not None:
                    raise self.error(f"%{name} has one result; write %{name}", tok,
                                     hint=f"drop the #index: %{name}")
                return v
        raise self.error(f"use of undefined value %{tok.text[1:]}", tok,
                         hint="define it before this use (arith.constant, a function argument or an op result "
                              "in this or an enclosing block)")

    # -- pure value ops
    def pure(self, name, results, out, op, where):
        if len(results) != 1 or results[0][1] is not None:
            raise self.error(f"{name} defines exactly one value", op,
                             hint="write one result name: %r = ...")
        tok = results[0][0]
        node = self.pure_node(name, op)
        if isinstance(node, Const):
            self.define(tok, node)
            return
        if self._invariant(node):
            base = _base_name(tok.text[1:])
            if base and not isinstance(node, (Undef,)):
                node.name = base
            self.define(tok, node)
            return
        t = node.type
        reg = PtrReg(t, _base_name(tok.text[1:])) if isinstance(t, PtrType) else Reg(t, _base_name(tok.text[1:]))
        out.append(Assign(reg, node, where))
        self.define(tok, reg)

    def _invariant(self, e) -> bool:
        """Whether ``e`` reads no register or loop variable (each shared node of the DAG looked at once)."""
        return not any(isinstance(x, (Reg, PtrReg, LoopVar)) for x in walk(e))

    def pure_node(self, name, op):
        short = name.split(".", 1)[1]
        if name == "arith.constant":
            return self.constant(op)
        if name == "ub.poison":
            attrs = self.attr_dict() if self.at("{") else {}
            why = attrs.get("pto.why")
            if why is not None and not isinstance(why, str):
                raise self.error("ub.poison's pto.why is the message of the error where the value is used: a "
                                 "\"string\"", op, hint='write {pto.why = "..."} or leave it out')
            self.expect(":", "':'")
            return Undef(self.parse_type(), why)
        if name == "pto.get_block_idx" or name == "pto.get_block_num":
            if self.accept(":"):
                t = self.parse_type()
                if t is not I64:
                    raise self.error(f"{name} returns i64", op,
                                     hint="write : i64 (or leave the type out)")
            return BlockIdx() if name.endswith("idx") else BlockNum()
        if name.startswith("arith.") and short in _PARSE_BINOPS:
            irop, cls = _PARSE_BINOPS[short]
            (a, ta), _, (b, tb) = self.value(), self.expect(","), self.value()
            self.skip_flags()
            t = self.colon_type()
            self.typed(a, t, ta)
            self.typed(b, t, tb)
            self.check_class(name, cls, t, op)
            return BinOp(irop, a, b)
        if name in _PARSE_UNOPS:
            a, ta = self.value()
            t = self.colon_type()
            self.typed(a, t, ta)
            self.check_class(name, "i" if name == "math.absi" else "f", t, op)
            return UnOp(_PARSE_UNOPS[name], a)
        if name in ("arith.cmpi", "arith.cmpf"):
            pt = self.expect_kind("ident", "a comparison predicate")
            table = _PARSE_CMPI if name == "arith.cmpi" else _PARSE_CMPF
            if pt.text not in table:
                raise self.error(f"unsupported predicate {pt.text!r} for {name}; expected one of " +
                                 ", ".join(table), pt,
                                 hint="use one of the listed predicates")
            self.expect(",", "','")
            (a, ta), _, (b, tb) = self.value(), self.expect(","), self.value()
            t = self.colon_type()
            self.typed(a, t, ta)
            self.typed(b, t, tb)
            if name == "arith.cmpi":
                pred, cls = table[pt.text]
                self.check_class(f"{name} {pt.text}", cls or "i", t, pt)
            else:
                pred = table[pt.text]
                self.check_class(name, "f", t, op)
            return Cmp(pred, a, b)
        if name == "arith.select":
            (c, tc), _, (a, ta), _, (b, tb) = self.value(), self.expect(","), self.value(), self.expect(","), \
                self.value()
            t = self.colon_type()
            self.typed(c, BOOL, tc)
            self.typed(a, t, ta)
            self.typed(b, t, tb)
            return Select(c, a, b)
        if name == "arith.bitcast" or (name.startswith("arith.") and short in _CAST_OPS):
            a, ta = self.value()
            self.discardable_attrs()
            self.expect(":", "':'")
            src = self.parse_type()
            self.expect("to", "'to'")
            dst = self.parse_type()
            self.typed(a, src, ta)
            if isinstance(src, PtrType) or isinstance(dst, PtrType):
                raise self.error(f"{name} converts scalars; use pto.castptr for pointers", op,
                                 hint="use pto.castptr %p : !pto.ptr<...> -> i64 (or the reverse) for pointers")
            if name == "arith.bitcast":
                if src.bits != dst.bits or S.is_bool(src) or S.is_bool(dst):
                    raise self.error(f"arith.bitcast needs equal widths ({_tstr(src)} -> {_tstr(dst)})", op,
                                     hint="bitcast between types of the same width (f16 <-> i16, f32 <-> i32); "
                                          "change widths with an arith cast (extf, truncf, extsi, trunci, ...)")
                return Bitcast(a, dst)
            want = _cast_op(src, dst)
            if want != name:
                raise self.error(f"{name} does not convert {_tstr(src)} to {_tstr(dst)}; expected " +
                                 (want or "two steps through " + _tstr(_cast_via(src, dst))), op,
                                 hint="use the op named here (MLIR arith: one op per kind of conversion)")
            return Cast(a, dst)
        if name == "pto.castptr":
            a, ta = self.value()
            self.discardable_attrs()
            self.expect(":", "':'")
            src = self.parse_type()
            self.expect("->", "'->'")
            dst = self.parse_type()
            self.typed(a, src, ta)
            if isinstance(src, PtrType) and isinstance(dst, PtrType):
                if src.space != dst.space:
                    raise self.error(f"pto.castptr cannot change the memory space ({src.space} -> {dst.space})", op,
                                     hint="address the other memory space with a pointer of that space (a kernel "
                                          "argument, or pto.castptr of an integer address)")
                return PtrCast(a, dst.dtype)
            if isinstance(dst, PtrType):
                if not S.is_int(src):
                    raise self.error("pto.castptr needs an integer address", ta,
                                     hint="pass an integer (i64/index) byte address")
                return PtrFromInt(a, dst)
            if isinstance(src, PtrType):
                if dst is not I64:
                    raise self.error("pto.castptr of a pointer gives i64", op,
                                     hint="write -> i64 and convert the integer further with an arith cast if needed")
                return PtrToInt(a)
            raise self.error("pto.castptr converts between pointers and integers", op,
                             hint="cast a pointer to i64, an integer to a pointer, or a pointer to another dtype of "
                                  "the same space")
        if name == "pto.addptr":
            (p, tp), _, (n, tn) = self.value(), self.expect(","), self.value()
            if not isinstance(p.type, PtrType):
                raise self.error(f"{tp.text} is not a pointer", tp,
                                 hint="pass a !pto.ptr<...> value as the first operand of pto.addptr")
            if isinstance(n.type, PtrType) or not S.is_int(n.type):
                raise self.error(f"{tn.text} must be an integer offset", tn,
                                 hint="pass an integer SSA value (i64 or index) as the element offset")
            self.discardable_attrs()
            if self.accept(":"):
                t1 = self.parse_type()
                self.expect("->", "'->'")
                t2 = self.parse_type()
                self.typed(p, t1, tp)
                if t2 != t1:
                    raise self.error("pto.addptr keeps the pointer type", op,
                                     hint="give the result the pointer type of the operand (pto.castptr reinterprets)")
            return PtrAdd(p, n)
        raise self.error(f"unknown operation {name!r}", op, hint=_op_hint(name))

    def skip_flags(self):
        while self.peek().kind == "ident" and self.peek().text in ("overflow", "fastmath") and self.peek(1).text == "<":
            self.next()
            self.skip_balanced("<", ">")
        self.discardable_attrs()

    def check_attr_names(self, attrs: dict, known: tuple, tok) -> None:
        """Dialect attributes other than ``known`` are discardable (ignored), except near-misses of a known
        ``pto.`` name (``pto.shpe``): a typo there would silently drop the shape, io or target (other
        dialects' attributes are never taken for one)."""
        for key in attrs:
            if key not in known and key.startswith("pto."):
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
                if close:
                    raise self.error(f"unknown attribute {key!r}", tok, hint=f"did you mean {close[0]!r}?")

    def discardable_attrs(self, allowed=(), op_name: str = "") -> dict:
        """An optional ``{...}`` of discardable attributes, which the simulator ignores.

        PTOAS attaches dialect-prefixed attributes to any op (``{pto.tilelib.candidate =
        "template_tmatmul", pto.vmi.fusion.boundary = "hard"}``) and prints the generic-form
        ``operandSegmentSizes`` of ops with optional groups; neither changes what an op computes.
        Names in ``allowed`` (the op's ``attr`` clauses) are returned; any other name without a
        dialect prefix is an error.
        """
        if not self.at("{"):
            return {}
        at = self.peek()
        kept = {}
        for key, val in self.attr_dict().items():
            if key in allowed:
                kept[key] = val
            elif "." not in key and key != "operandSegmentSizes":
                raise self.error(f"{op_name or 'this operation'} has no attribute {key!r} (attributes: "
                                 + ", ".join(allowed + ("dialect attributes such as pto.x = ..., which are ignored",))
                                 + ")", at,
                                 hint="use one of the listed attributes (check the spelling); dialect attributes "
                                      "carry a prefix such as pto.")
        return kept

    def colon_type(self):
        self.discardable_attrs()
        self.expect(":", "':' and a type")
        return self.parse_type()

    def check_class(self, name, cls, t, tok):
        if isinstance(t, PtrType):
            raise self.error(f"{name} does not take pointers", tok,
                             hint="compute on integers: convert the pointer with pto.castptr %p : !pto.ptr<...> -> "
                                  "i64, or offset it with pto.addptr")
        ok = {"i": S.is_int(t) or S.is_bool(t), "s": t.kind == "s", "u": t.kind in ("u", "b"),
              "f": S.is_float(t)}[cls]
        if not ok:
            need = {"i": "integer", "s": "signed integer (i8..i64, index)", "u": "unsigned integer (ui8..ui64)",
                    "f": "float"}[cls]
            raise self.error(f"{name} needs {need} operands, got {_tstr(t)}", tok,
                             hint=f"give the op {need} operands (convert with an arith cast), or use the op for "
                                  f"{_tstr(t)} (e.g. addf for floats, addi for integers)")

    def constant(self, op):
        t = self.next()
        if t.kind == "ident" and t.text in ("true", "false"):
            if self.accept(":"):
                ty = self.parse_type()
                if ty is not BOOL:
                    raise self.error("true/false constants have type i1", t,
                                     hint="write : i1, or use 1 / 0 for integer constants")
            return Const(t.text == "true", BOOL)
        if t.kind not in ("int", "float"):
            raise self.expected("a constant value", t)
        self.expect(":", "':' and the constant's type")
        ty = self.parse_type()
        if isinstance(ty, PtrType):
            raise self.error("arith.constant makes scalars; use pto.castptr for pointers", t,
                             hint="make an i64 constant and turn it into a pointer with pto.castptr %c : i64 -> "
                                  "!pto.ptr<...>")
        try:
            if S.is_float(ty):
                if t.kind == "int" and t.text.lower().lstrip("-").startswith("0x"):
                    return Const(S.bits_float(int(t.text, 16), ty), ty)
                return Const(float(t.text), ty)
            if t.kind == "float":
                raise self.error(f"integer type {_tstr(ty)} needs an integer constant", t,
                                 hint="write an integer literal, or give the constant a float type (f32)")
            v = _int_text(t.text)
            if not S.is_bool(ty):
                lo, hi = S.int_bounds(ty)
                if not (lo <= v <= hi or (ty.name.startswith("s") and 0 <= v < 1 << ty.bits)):
                    # a signless iN literal may be written signed or unsigned (MLIR's rule); anything wider is an error
                    raise self.error(f"constant {t.text} does not fit {_tstr(ty)}", t,
                                     hint=f"write a value in [{lo}, {hi}] (or a wider type such as i64)")
            return Const(v, ty)
        except PtoError as e:
            raise self.error(e.message, t, hint=e.hint) from None

    # -- memory
    def load(self, results, out, op, where):
        if len(results) != 1 or results[0][1] is not None:
            raise self.error("pto.load_scalar defines exactly one value", op,
                             hint="write one result name: %v = pto.load_scalar ...")
        p, tp = self.value()
        self.expect("[", "'['")
        o, to = self.value()
        self.expect("]", "']'")
        self.expect(":", "':'")
        pt = self.parse_type()
        self.expect("->", "'->'")
        vt = self.parse_type()
        self.typed(p, pt, tp)
        self.check_offset(o, to)
        if not isinstance(pt, PtrType) or isinstance(vt, PtrType) or scalar_type(pt.dtype) is not vt:
            raise self.error(f"pto.load_scalar of {_tstr(pt)} gives {_tstr(getattr(pt, 'dtype', pt))}", op,
                             hint="load through a pointer and write -> the scalar type of its dtype (f16 for "
                                  "!pto.ptr<f16, ub>)")
        tok = results[0][0]
        reg = Reg(vt, _base_name(tok.text[1:]))
        out.append(Load(reg, p, o, where))
        self.define(tok, reg)

    def read_spr(self, results, out, op, where):
        if len(results) != 1 or results[0][1] is not None:
            raise self.error("pto.get_spr defines exactly one value", op,
                             hint="write one result name: %v = pto.get_spr ...")
        name = self.expect_kind("string", 'a special register name string such as "RSVD_CNT"')
        spr = _unquote(name.text)
        self.expect("[", "'['")
        idx = self.expect_kind("int", "a constant word index")
        self.expect("]", "']'")
        self.expect(":", "':'")
        t = self.parse_type()
        if t is not I64:
            raise self.error("pto.get_spr returns i64", op,
                             hint="write : i64")
        words = SPR_WORDS.get(spr)
        index = _int_text(idx.text)
        if words is None or not 0 <= index < words:
            raise self.error(f"no special register word {spr}[{idx.text}] (readable: "
                             f"{', '.join(f'{k}[0..{v - 1}]' for k, v in SPR_WORDS.items())})", name,
                             hint="read one of the listed registers and word indices")
        tok = results[0][0]
        reg = Reg(t, _base_name(tok.text[1:]))
        out.append(ReadSpr(reg, spr, index, where))
        self.define(tok, reg)

    def check_offset(self, o, tok):
        if isinstance(o.type, PtrType) or not S.is_int(o.type):
            raise self.error(f"{tok.text} must be an integer (index) offset", tok,
                             hint="pass an integer offset (index, i32 or i64; an element count)")

    def store(self, out, where):
        (x, tx), _, (p, tp) = self.value(), self.expect(","), self.value()
        self.expect("[", "'['")
        o, to = self.value()
        self.expect("]", "']'")
        self.expect(":", "':'")
        pt = self.parse_type()
        self.expect(",", "','")
        vt = self.parse_type()
        self.typed(p, pt, tp)
        self.typed(x, vt, tx)
        self.check_offset(o, to)
        if scalar_type(pt.dtype) is not vt:
            raise self.error(f"pto.store_scalar into {_tstr(pt)} needs a {_tstr(scalar_type(pt.dtype))} value", tx,
                             hint=f"store a {_tstr(scalar_type(pt.dtype))} value (convert it with an arith cast "
                                  f"first), or use a pointer of the value's dtype")
        out.append(Store(p, o, x, where))

    # -- control flow
    def scf_for(self, results, out, where):
        vt = self.expect_kind("value", "the loop variable (%i)")
        self.expect("=", "'='")
        (lo, tlo) = self.value()
        self.expect("to", "'to'")
        (hi, thi) = self.value()
        self.expect("step", "'step'")
        (st, tst) = self.value()
        inits = []
        if self.accept("iter_args"):
            self.expect("(", "'('")
            while True:
                at = self.expect_kind("value", "an iter_args name")
                self.expect("=", "'='")
                inits.append((at,) + self.value())
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
            self.expect("->", "'->' and the result types")
            self.expect("(", "'('")
            types = self.type_list()
            self.expect(")", "')'")
            if len(types) != len(inits):
                raise self.error(f"{len(inits)} iter_args but {len(types)} result types", vt,
                                 hint="list one result type per iter_args value")
        else:
            types = []
        t = self.colon_type() if self.at(":") else INDEX
        if not S.is_int(t):
            raise self.error(f"loop variables are integers, got {_tstr(t)}", vt,
                             hint="give the loop an integer type (index, i32, i64)")
        for v, tok in ((lo, tlo), (hi, thi), (st, tst)):
            self.typed(v, t, tok)
        regs = []
        for (at, init, itok), ty in zip(inits, types):
            self.typed(init, ty, itok)
            r = PtrReg(ty, _base_name(at.text[1:])) if isinstance(ty, PtrType) else Reg(ty, _base_name(at.text[1:]))
            out.append(Assign(r, init, where, carry=True))
            regs.append(r)
        self.expect("{", "'{'")
        var = LoopVar(t, _base_name(vt.text[1:]) or "i")
        self.scopes.append({})
        self.define(vt, var)
        for (at, _, _), r in zip(inits, regs):
            self.define(at, r)
        self.loops.append(regs)
        body = self.block()
        if self.peek().text == "scf.yield":
            ytok = self.next()
            vals = self.yield_values(types, ytok)
            body += _parallel_assign(regs, vals, where)
        elif regs and not (body and isinstance(body[-1], (Break, Continue, Return))):
            raise self.error(f"the loop body must end with scf.yield of {len(regs)} values", self.peek(),
                             hint=f"end the body with scf.yield of the next {len(regs)} iter_args values and their "
                                  f"types")
        self.expect("}", "'}' at the end of the loop body")
        self.loops.pop()
        self.scopes.pop()
        if isinstance(st, Const) and st.value <= 0:        # MLIR's scf.for verifier, after the body
            raise self.error(f"scf.for step {tst.text} is {st.value}; loops count up", tst,
                             hint="use a step constant >= 1")
        out.append(For(var, lo, hi, st, body, where))
        self.bind_results(results, regs, vt, "scf.for")

    def yield_values(self, types, ytok) -> list:
        vals = []
        if types:
            vals.append(self.value())
            while self.accept(","):
                vals.append(self.value())
            ytypes = self.colon_type_list()
            if len(vals) != len(types) or len(ytypes) != len(types):
                raise self.error(f"scf.yield needs {len(types)} values", ytok,
                                 hint=f"yield exactly {len(types)} values with their types (scf.yield %a, %b : t1, t2)")
            for (v, tok), ty, yt in zip(vals, types, ytypes):
                self.typed(v, ty, tok)
        elif self.peek().kind == "value":
            raise self.error("scf.yield takes no values here", self.peek(),
                             hint="write scf.yield without values, or declare iter_args / result types for the loop "
                                  "or if")
        return [v for v, _ in vals]

    def colon_type_list(self):
        self.expect(":", "':' and the types")
        return self.type_list()

    def loop_exit(self, name, out, op, where):
        if not self.loops:
            raise self.error(f"{name} outside a loop", op,
                             hint="use it inside an scf.for body (to leave a kernel early, use return)")
        regs = self.loops[-1]
        vals = []
        if self.peek().kind == "value":
            vals.append(self.value())
            while self.accept(","):
                vals.append(self.value())
            types = self.colon_type_list()
            if len(types) != len(vals):
                raise self.error(f"{len(vals)} values but {len(types)} types", op,
                                 hint="write one type per value")
        if len(vals) != len(regs):
            raise self.error(f"{name} must carry the loop's {len(regs)} iter_args values", op,
                             hint=f"pass the loop's {len(regs)} iter_args values (their values at the exit) with "
                                  f"their types")
        for (v, tok), r in zip(vals, regs):
            self.typed(v, r.type, tok)
        out += _parallel_assign(regs, [v for v, _ in vals], where)
        out.append(Break(where) if name == "pto.break" else Continue(where))

    def scf_if(self, results, out, where):
        c, tc = self.value()
        self.typed(c, BOOL, tc)
        types = []
        if self.accept("->"):
            self.expect("(", "'('")
            types = self.type_list()
            self.expect(")", "')'")
        regs = [PtrReg(t, None) if isinstance(t, PtrType) else Reg(t, None) for t in types]
        if results:
            names = [r[0] for r in results] if results[0][1] is None else [results[0][0]] * len(regs)
            for r, tok in zip(regs, names):
                r.name = _base_name(tok.text[1:].split("#")[0])
        branches = []
        for k in range(2):
            if k == 1 and not self.accept("else"):
                break
            self.expect("{", "'{'")
            self.scopes.append({})
            body = self.block()
            if self.peek().text == "scf.yield":
                ytok = self.next()
                body += _parallel_assign(regs, self.yield_values(types, ytok), where)
            elif regs and not (body and isinstance(body[-1], (Break, Continue, Return))):
                raise self.error(f"each branch must end with scf.yield of {len(regs)} values", self.peek(),
                                 hint=f"end each branch with scf.yield of {len(regs)} values and their types")
            self.expect("}", "'}' at the end of the branch")
            self.scopes.pop()
            branches.append(body)
        if regs and len(branches) == 1:
            raise self.error("an scf.if with results needs an else branch", tc,
                             hint="add an else branch that yields values of the same types")
        out.append(If(c, branches[0], branches[1] if len(branches) == 2 else None, where))
        self.bind_results(results, regs, tc, "scf.if")

    # -- registry ops
    def generic(self, name, op, out, where):
        try:
            spec = registry.get_op(name)
        except PtoError:
            raise self.error(_not_parsed(name) or f"unknown operation {name!r}", op,
                             hint=_op_hint(name)) from None
        if name == "pto.debug_eval" and not self.allow_debug_eval:
            raise self.error("pto.debug_eval evaluates a Python expression when the program runs, and this text "
                             "was not marked as trusted (DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED)", op,
                             hint="parse a file you trust with allow_debug_eval=True (pto-run --allow-debug-eval); "
                                  "tik-migrate's own round trips allow it")
        ssa = []
        operands = []
        list_first = bool(spec.operands) and spec.operands[0].kind == "ptrs"
        # an op without operands (pto.set_atomic_f16) ends its line: a value on the next line is the
        # next statement's result (`%2 = pto.get_spr ...`), not an operand of this op
        ends_here = not spec.operands and self.peek().line != op.line
        bracket = not list_first and not ends_here and self.accept("[")
        if ends_here:
            pass
        elif bracket:
            if not self.accept("]"):
                while True:
                    operands.append(self.operand(ssa, spec, len(operands)))
                    if self.accept("]"):
                        break
                    self.expect(",", "',' or ']'")
        elif self.is_operand_start():
            operands.append(self.operand(ssa, spec, 0))
            while self.at(",") and self.is_operand_start(1):
                self.next()
                operands.append(self.operand(ssa, spec, len(operands)))
        if spec.asm_operands is not None:
            operands = list(spec.asm_operands(tuple(operands)))
        items = []          # (name, value) in text order; attrs merged at their canonical place
        repeated = {}
        while True:
            k = 1 if self.at(",") else 0
            t = self.peek(k)
            if t.kind != "ident":
                break
            c = self.clause_for(spec, t.text)
            if c is None and k and "." in t.text:        # `..., %x,` then the next line's op
                raise self._stray_comma(spec, name)
            # after a comma, or a word without a dot (no statement starts with one but `return`:
            # op names are dotted), an unknown word is a misspelt clause (UNKNOWN_BARE_CLAUSE)
            if c is None and t.text not in ("loc", "return") and (k or "." not in t.text):
                names = ", ".join(x.name for x in spec.clauses if x.form != "attr") or "none"
                hint = spec.clause_hints.get(t.text)
                close = difflib.get_close_matches(t.text, [x.name for x in spec.clauses], n=1, cutoff=0.7)
                raise self.error(f"{name} has no clause {t.text!r} (its clauses: {names})" +
                                 (f"; {hint}" if hint else ""), t,
                                 hint=(f"did you mean {close[0]!r}? " if close else "") +
                                 f"write one of its clauses ({names}), or end the op here")
            if c is None or c.form == "attr":
                break
            self.pos += k + 1
            if getattr(c, "repeat", False) and c.form == "args":
                if c.name not in repeated:
                    repeated[c.name] = []
                    items.append((c.name, repeated[c.name]))
                repeated[c.name].append(self.clause_value(c, t, ssa))
                continue
            if any(n == c.name for n, _ in items):
                raise self.error(f"clause {c.name!r} given twice", t,
                                 hint="give each clause once")
            items.append((c.name, self.clause_value(c, t, ssa)))
        if self.at("{"):
            own = tuple(c.name for c in spec.clauses if c.form == "attr")
            for key, val in self.discardable_attrs(own, name).items():
                order = [x.name for x in spec.clauses]
                pos = next((i for i, (n, _) in enumerate(items) if order.index(n) > order.index(key)), len(items))
                items.insert(pos, (key, val))
        if self.at(","):                    # a comma not followed by a clause: `..., %l2, : types`
            raise self._stray_comma(spec, name)
        clauses = dict(items)
        if self.accept(":"):
            types = self.op_type_list(spec)
            if len(types) != len(ssa):
                raise self.error(f"{name} has {len(ssa)} SSA operands but {len(types)} types", op,
                                 hint="list one type after ':' per SSA operand, in order")
            for (v, tok), ty in zip(ssa, types):
                self.typed(v, ty, tok)
        if name.startswith("pto.ub.") and len(operands) > len(spec.operands) and \
                any(c.name == "rep_stride" for c in spec.clauses):
            raise self.error(f"{name} takes {len(spec.operands)} operands ({', '.join(o.name for o in spec.operands)}), "
                             f"got {len(operands)}: PTOAS's A2/A3 positional form (%repeat, block strides, repeat "
                             f"strides, mask from pto.ub.set_mask) is not parsed; write the strides as "
                             f"blk_stride(...) rep_stride(...) and the mask as mask(...) (pto_vector.md §1-2)", op,
                             hint=f"write {name} %dst, %src..., %repeat with blk_stride/rep_stride/mask clauses")
        loc = self.loc()        # the op's own loc, read before `verify`: a front end's lowering (loc "tik.data_move")
        if loc is not None:     # is checked as what it is (no BurstTailWarning for it, mte.BURST_TAIL_WARNS)
            where = self._op_loc = loc
        try:
            call = registry.make_call(spec, tuple(operands), clauses, where)
            ops = tuple(_coerce_operand(o, v) for o, v in zip(spec.operands, call.operands))
            rec = registry.OpCall(spec, ops, {k: _coerce_clause(v) for k, v in call.clauses.items()}, where)
            if spec.verify is not None:
                spec.verify(rec, self.target)
        except PtoError as e:
            msg = e.message if e.operand is None else f"operand {e.operand}: {e.message}"
            shown = e.limit is None or "limit" in msg or str(e.limit) in msg      # as PtoError.__str__ does
            raise self.error(f"{name}: {msg}" + ("" if shown else f" (limit: {e.limit})"), op,
                             hint=e.hint or f"the op's form: {spec.signature()}") from None
        out.append(OpStmt(rec))

    def op_type_list(self, spec) -> list:
        """The types after ``:``, also in PTOAS's annotated spelling.

        PTOAS prints the types of clause groups after the clause's keyword, and a bare mode
        keyword in its place: ``: !pto.ptr<bf16, gm>, !pto.ptr<bf16, l1>, nd2nz, shape i64, i64,
        src_layout(i64), dst_group i64, i64, i64, i64, ctrl i64, i1`` or ``..., i64, i64, loop
        i64, i64, i64, pad f16``. Keywords that name a clause of this op (or the ``no`` form of
        a saturation clause) and the parentheses of a group are skipped; only the types count.
        """
        out = []
        depth = 0
        while True:
            t = self.peek()
            if t.kind == "ident" and self.clause_for(spec, t.text) is not None:
                self.next()
                if self.accept("("):
                    depth += 1
                if self.at(","):                  # a bare keyword entry: nd2nz,
                    self.next()
                    continue
                if not self.is_type_start():      # the list ends with a keyword
                    break
            out.append(self.parse_type())
            while depth and self.accept(")"):
                depth -= 1
            if not self.accept(","):
                break
        if depth:
            raise self.expected("')' closing the clause's types")
        return out

    def is_type_start(self) -> bool:
        t = self.peek()
        return t.kind == "bang" or (t.kind == "punct" and t.text == "<") or \
            (t.kind == "ident" and self._is_scalar_type_word(t.text))

    @staticmethod
    def _is_scalar_type_word(word: str) -> bool:
        try:
            scalar_type(word)
            return True
        except PtoError:
            return False

    def is_operand_start(self, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind in ("value", "string", "int", "float", "hash") or (t.kind == "punct" and t.text in "<[")

    def operand(self, ssa: list, spec, index: int):
        t = self.peek()
        kind = spec.operands[index].kind if index < len(spec.operands) else None
        if t.kind == "punct" and t.text == "[":
            self.next()
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.operand(ssa, spec, -1))
                    if self.accept("]"):
                        break
                    self.expect(",", "',' or ']'")
            return tuple(items)
        if t.kind == "value":
            v, tok = self.value()
            ssa.append((v, tok))
            return _py_const(v)
        self.next()
        if t.kind == "string":
            s = _unquote(t.text)
        elif t.kind == "punct" and t.text == "<":
            s = self.next().text
            self.expect(">", "'>'")
        elif t.kind == "hash":
            inner = self.skip_balanced("<", ">") if self.at("<") else ""
            s = inner[1:-1]
        elif t.kind == "int":
            return _int_text(t.text)
        elif t.kind == "float":
            return float(t.text)
        else:
            raise self.expected("an operand (%value, a number, \"PIPE_X\" or <EVENT_IDn>)", t)
        try:
            if kind == "pipe":
                return pipe_name(s, allow_all=True)
            if kind == "bufpipe":
                return sync_op_pipe(s)
            if kind == "event":
                return event_id(s)
        except PtoError as e:
            raise self.error(e.message, t, hint=e.hint) from None
        return s

    def _stray_comma(self, spec, name) -> AsmParseError:
        """A ``,`` after an op's operands or clauses that no operand or clause follows (a trailing comma).
        Before, the op ended at the comma and the error named the comma as a missing *operation name*
        (``expected an operation name, found ','``) or the next line's op as a misspelt clause."""
        names = ", ".join(x.name for x in spec.clauses if x.form != "attr") or "none"
        return self.error(f"{name}: ',' not followed by an operand or a clause (its clauses: {names})", self.peek(),
                          hint=f"remove the trailing ',' or write one of {name}'s clauses after it")

    def clause_for(self, spec, word):
        for c in spec.clauses:
            if c.name == word or (c.form == "sat" and word == "no" + c.name):
                return c
        return None

    def clause_value(self, c, tok, ssa):
        if c.form == "flag":
            return True
        if c.form == "sat":
            if tok.text != c.name:
                return False
            if self.accept("("):
                w = self.next()
                self.expect(")", "')'")
                return _unquote(w.text) if w.kind == "string" else w.text
            return True
        if c.form == "optarg":
            if not self.accept("("):
                return True
            v = self.clause_arg(ssa)
            self.expect(")", "')'")
            return v
        self.expect("(", f"'(' after {c.name}")
        if c.form == "word_or_arg":
            v = self.clause_arg(ssa)
            self.expect(")", "')'")
            return v
        if c.form == "word":
            w = self.next()
            self.expect(")", "')'")
            return _unquote(w.text) if w.kind == "string" else w.text
        args, kw = [], {}
        if not self.accept(")"):
            while True:
                t = self.peek()
                if t.kind == "ident" and self.peek(1).text == "=":
                    self.next()
                    self.next()
                    w = self.peek()
                    if w.kind == "value":
                        kw[t.text] = self.clause_arg(ssa)
                    else:
                        self.next()
                        kw[t.text] = _unquote(w.text) if w.kind == "string" else w.text
                else:
                    args.append(self.clause_arg(ssa))
                if self.accept(")"):
                    break
                self.expect(",", "',' or ')'")
        return tuple(args) + ((kw,) if kw else ())

    def clause_arg(self, ssa):
        t = self.peek()
        if t.kind == "value":
            v, tok = self.value()
            ssa.append((v, tok))
            return _py_const(v)
        if t.kind == "punct" and t.text == "[":
            self.next()
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.clause_arg(ssa))
                    if self.accept("]"):
                        break
                    self.expect(",", "',' or ']'")
            return items
        self.next()
        if t.kind == "int":
            return _int_text(t.text)
        if t.kind == "float":
            return float(t.text)
        if t.kind in ("string", "ident"):
            return _unquote(t.text) if t.kind == "string" else t.text
        raise self.expected("a clause parameter", t)


_PARSE_UNOPS = {"arith.negf": "neg", "math.absf": "abs", "math.absi": "abs", "math.sqrt": "sqrt",
                "math.floor": "floor", "math.ceil": "ceil", "math.trunc": "trunc", "math.roundeven": "roundeven",
                "math.round": "round"}
_CAST_OPS = {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf", "index_cast",
             "index_castui"}


def _py_const(v):
    """Constants of the default operand types become Python values (as the builder records them): i64, f32,
    i1, and the ui64 constants the printer writes for Python ints above the i64 range (mask words with bit
    63 set, which an i64 literal would turn negative)."""
    if isinstance(v, Const) and (v.type in (I64, F32, BOOL) or (v.type is U64 and v.value > _I64_MAX)):
        return v.value
    return v



def _parallel_assign(regs: list, values: list, where) -> list:
    """Assignments ``regs[i] = values[i]`` done simultaneously (through temporaries if needed); they carry
    values (``Assign.carry``): an undefined source register leaves its target as it is."""
    pairs = list(zip(regs, values))
    targets = {r for r, v in pairs if v is not r}
    if any(v in targets and v is not r for r, v in pairs if isinstance(v, (Reg, PtrReg))):
        temps = []
        out = []
        for r, v in pairs:
            t = PtrReg(r.type) if isinstance(r, PtrReg) else Reg(r.type)
            out.append(Assign(t, v, where, carry=True))
            temps.append((r, t))
        return out + [Assign(r, t, where, carry=True) for r, t in temps]
    # identity pairs stay: an assignment in the loop keeps the value loop-carried when printed again
    return [Assign(r, v, where, carry=True) for r, v in pairs]


#: Named choice DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED: ``pto.debug_eval`` (TIK ``tikdb.debug_print``) evaluates a
#: Python expression when the program runs. Its expressions are restricted (`pto_core.ops.debug`
#: ``eval_expression_problem``), but a restricted ``eval`` is not a proven sandbox, so text holding one parses only
#: when the caller says it trusts the text (``allow_debug_eval=True``; ``pto-run --allow-debug-eval``; tik-migrate's
#: round trips of the user's own script do). Without it the op is an `AsmParseError` at its line.
DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED = True


def parse(text: str, *, source_name: str = "<pto>", target=None, kernel: Optional[str] = None,
          allow_debug_eval: bool = not DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED, loc_text_lines: bool = False) -> Program:
    """Parse PTO-AS text into a `Program`.

    Args:
        text: the module text.
        source_name: file name used in error messages and statement provenance.
        target: override the module's ``pto.target_arch``.
        kernel: which ``func.func`` to take when the module has several.
        allow_debug_eval: accept ``pto.debug_eval`` ops (Python expressions run by the program): only for
            text you trust (DEBUG_EVAL_PARSED_ONLY_WHEN_ALLOWED).
        loc_text_lines: an op with a ``loc("file":line)`` also names its line of this text in its provenance's
            ``detail`` (`parse_file` sets it: LOC_NAMES_TEXT_LINE).

    Raises:
        AsmParseError: with ``line``/``column`` and what was expected.
    """
    p = _Parser(text, source_name, get_target(target) if target is not None else None, kernel, allow_debug_eval)
    p.loc_text_lines = loc_text_lines
    try:
        return p.parse()
    except RecursionError:
        # brackets nested thousands deep (an unclosed '[' repeated, a pasted run of '(') exhaust the recursive
        # descent before any other error shows; the token reached is where the nesting got too deep
        raise p.error("brackets, types or regions are nested too deeply to parse", p.peek(),
                      hint="check for unclosed or repeated '[', '(', '<' or '{' near here") from None


def parse_file(path: str, **kw) -> Program:
    """`parse` of the text in file ``path`` (UTF-8). A file that cannot be read (a directory, no permission)
    is a `ConfigError`; bytes that are not UTF-8 (a binary file, a Latin-1 comment) an `AsmParseError` at the
    first such byte's line and column."""
    source_name = kw.pop("source_name", str(path))
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read PTO-AS file {str(path)!r}: {e.strerror or e}", operand="kernel",
                          value=str(path), hint="give the path of a PTO-AS text file (.pto)") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line, column = before.count(b"\n") + 1, e.start - (before.rfind(b"\n") + 1) + 1
        raise AsmParseError(f"byte {data[e.start]:#04x} is not UTF-8 text (a binary file, or text in another "
                            f"encoding)", line=line, column=column, source_name=source_name,
                            hint="PTO-AS files are UTF-8 text: re-save the file as UTF-8 (or pass the .pto file "
                                 "tik-migrate -o wrote)") from None
    kw.setdefault("loc_text_lines", LOC_NAMES_TEXT_LINE)
    return parse(text, source_name=source_name, **kw)
