"""``tik-migrate --format python``: the Python statements that replace each TIK call site inside its kernel.

For every TIK call site whose trace holds PTO ops (data moves, vector and cube ops, FIXPIPE), the
statements a migrator pastes in place of the call, *inside the same TIK kernel* (a mixed kernel,
tik_core.md §7; worked_migration.md step 3), written from the traced program itself -- not from the
PTO-AS text -- so they are what the call recorded:

* TIK tensors as the guide addresses them: ``t.pto_ptr()``, moved by the traced element offset
  (``xu.pto_ptr() + rep * 128``), ``.cast("f32")`` where the call read them as another dtype; the name is
  the Python variable the tensor's declaration assigned (``xu = tik_instance.Tensor(...)``, `NAME_RULE`) or, in a
  class-based kernel, the attribute (``self.x_gm = self.tik_instance.Tensor(...)``, `ATTR_RULE`);
* TIK Scalars, InputScalars and ``for_range`` variables by their Python names (the variable their
  declaration / ``with ... as`` assigned), immediates as Python literals, the arithmetic the trace holds
  in Python operators (``(count * 2 + 31) // 32``: TIK's ``//`` is the same C division the trace holds);
* clauses as keyword arguments exactly as the Python API takes them (`registry.clause_python`, the
  inverse of `registry.normalize_clause`: ``mask=128``, ``pre_quant=(0.0, {"mode": "f32_f16"})``,
  ``round="r"``, ``disable_gemv=True``);
* no synchronisation: in a mixed kernel auto-sync inserts, before a PTO op, the ``set_flag``/``wait_flag``
  pairs it placed before the TIK call (worked_migration.md); the output names the pairs it leaves out;
* the TIK call's own checks (``pto.assert_*``) and checker bookkeeping (``pto.mark_unwritten``) are left out,
  as the worked migration's checklist says (`LEFT_OUT`);
* loops and branches a call's lowering opened become ``with tik_instance.for_range(...)`` /
  ``if_scope(...)`` with the call's own ``tik_instance``; a register the lowering assigns becomes a TIK
  Scalar declared in the replacement.

What the trace cannot name is never guessed: a value with no Python name in scope at the call site (a
tensor declared in another function under another name, a scratch pointer TIK placed for itself, a
conversion TIK has no spelling for) becomes a ``FILL_IN_...`` placeholder (`PLACEHOLDER`; a ``NameError`` if run
as it stands) and the site says, in a ``# NOT RUNNABLE AS IS`` comment, what to fill in and why. A site the
script ran several times with different operands (a Python loop around the call) gets one replacement per
run and says so.
"""
from __future__ import annotations

import ast
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Optional

from pto_core import program as P
from pto_core.ops.registry import clause_python

#: The prefix of a placeholder name: a value the trace cannot name in Python at the call site. Not a name a
#: kernel defines, so generated code holding one stops with a ``NameError`` instead of running wrong.
PLACEHOLDER = "FILL_IN_"

#: The first statement of the replacement of a call the script ran several times with different operands (a Python
#: loop around it): the runs' statements follow one after the other, which pasted as they stand would all run at each
#: call -- a wrong value, not an error -- so the row starts with this placeholder (a ``NameError``) until they are
#: written as one (review466).
RUNS_GUARD = PLACEHOLDER + "one_replacement_per_run"

#: Ops of a TIK call's trace the Python replacement leaves out, and why (worked_migration.md, checklist).
LEFT_OUT = {
    "assert_in_bounds": "the TIK call's own extent checks (the PTO op is checked against its tensors when it runs)",
    "assert_in_range": "the TIK call's own extent checks (the PTO op is checked against its tensors when it runs)",
    "assert_multiple": "the TIK call's own extent checks (the PTO op is checked against its tensors when it runs)",
    "mark_unwritten": "checker bookkeeping (TIK frees the scratch the call used), no instruction",
}

#: The sync ops auto-sync records for a TIK call (and inserts again before a PTO op of a mixed kernel).
AUTO_SYNC_OPS = ("set_flag", "wait_flag", "pipe_barrier", "barrier")

#: TIK APIs whose traced ``for``/``if`` is the user's own control flow (its body holds other calls' statements).
CONTROL_APIS = frozenset(("tik.for_range", "tik.multi_for_range", "tik.if_scope", "tik.else_scope",
                          "tik.elif_scope", "tik.new_stmt_scope", "tik.for_range_dynamic"))

_BIN = {"add": ("+", 8), "sub": ("-", 8), "mul": ("*", 9), "div": ("//", 9), "rem": ("%", 9),
        "shl": ("<<", 7), "shr": (">>", 7), "and": ("&", 6), "or": ("|", 4), "xor": ("^", 5)}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_ATOM = 12


@dataclass
class PyRow:
    """One TIK call site and the Python statements that replace it (``code``; empty: keep the call)."""

    file: Optional[str]
    line: int
    api: str
    source: str
    code: list = field(default_factory=list)
    notes: list = field(default_factory=list)       # comments: what was left out, the sync auto-sync inserts
    problems: list = field(default_factory=list)    # why the code is not runnable as it stands (FILL_IN_...)

    @property
    def site(self) -> str:
        from .migrate import _short_path
        return f"{_short_path(self.file)}:{self.line}" if self.file else "(kernel)"

    @property
    def runnable(self) -> bool:
        return bool(self.code) and not self.problems


class _Unnamed(Exception):
    """A value the trace cannot write in Python at the call site."""


def _key(where) -> tuple:
    return (where.file, where.line, where.call or "")


# ============================================================================ Python names from the source

def _enclosing_function(src, node):
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                     ast.Module)):
        node = src.parents.get(node)
    return node


_BINDINGS: dict = {}      # id(function node) -> (node, {name: [line of each place binding it]}) (sources are cached)


def _binding_lines(func, name: str) -> list:
    """The lines of the places that bind ``name`` in ``func`` (nested functions' bindings count too: conservative)."""
    got = _BINDINGS.get(id(func))
    if got is None or got[0] is not func:
        names: dict = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.setdefault(node.id, []).append(node.lineno)
            elif isinstance(node, ast.arg):
                names.setdefault(node.arg, []).append(node.lineno)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for n in node.names:                # rebound elsewhere: never provably this object
                    names.setdefault(n, []).extend((node.lineno, node.lineno))
        got = _BINDINGS[id(func)] = (func, names)
    return got[1].get(name, [])


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _assigned_target(file: str, line: int, call_names: tuple, with_as: bool = False):
    """``(target, node)``: where the statement at ``file:line`` puts the result of a call named one of
    ``call_names`` -- a plain variable (``x = tik_instance.Tensor(...)``, an `ast.Name`) or an attribute of one
    (``self.x_gm = self.tik_instance.Tensor(...)``, an `ast.Attribute`); ``with_as``: the variable of
    ``with tik_instance.for_range(...) as i:``."""
    from .migrate import _parsed
    src = _parsed(file)
    if src is None:
        return None
    for node in src.calls.get(line, ()):
        f = node.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if fname not in call_names or node.lineno != line:
            continue
        parent = src.parents.get(node)
        if with_as and isinstance(parent, ast.withitem) and isinstance(parent.optional_vars, ast.Name):
            return parent.optional_vars, node
        if not with_as and isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if len(targets) == 1 and (isinstance(targets[0], ast.Name) or
                                      isinstance(targets[0], ast.Attribute) and isinstance(targets[0].value, ast.Name)):
                return targets[0], node
    return None


def _method_self(src, func) -> Optional[str]:
    """The name of ``func``'s first parameter when ``func`` is a method (a ``def`` right in a class body) that
    binds that name nowhere else (not even in a nested function), else None."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            not isinstance(src.parents.get(func), ast.ClassDef):
        return None
    params = func.args.posonlyargs + func.args.args
    if not params:
        return None
    name = params[0].arg
    return name if len(_binding_lines(func, name)) == 1 else None


#: Names that write an object's attributes where no ``obj.attr = ...`` statement shows it (`ATTR_RULE`): a file that
#: uses one of them gets no attribute names.
DYNAMIC_ATTRIBUTE_WRITES = frozenset(("setattr", "delattr", "vars", "exec", "eval", "__dict__", "__setattr__",
                                      "__delattr__", "__getattr__", "__getattribute__"))

_ATTR_WRITES: dict = {}   # id(module node) -> (node, {attr: [(line, None?) of each store / del]}, [(line, name)])


def _attribute_writes(module):
    """``({attr: [(line, to_none)]}, dynamic)``: every ``<expr>.attr = / += / del`` of the module by attribute name
    (any object: conservative; ``to_none``: a plain ``<expr>.attr = None``), and where the module uses one of
    `DYNAMIC_ATTRIBUTE_WRITES`."""
    got = _ATTR_WRITES.get(id(module))
    if got is None or got[0] is not module:
        to_none = {id(t) for node in ast.walk(module) if isinstance(node, ast.Assign) and
                   isinstance(node.value, ast.Constant) and node.value.value is None for t in node.targets}
        stores: dict = {}
        dynamic: list = []
        for node in ast.walk(module):
            if isinstance(node, ast.Attribute):
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    stores.setdefault(node.attr, []).append((node.lineno, id(node) in to_none))
                if node.attr in DYNAMIC_ATTRIBUTE_WRITES:
                    dynamic.append((node.lineno, node.attr))
            elif isinstance(node, ast.Name) and node.id in DYNAMIC_ATTRIBUTE_WRITES:
                dynamic.append((node.lineno, node.id))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DYNAMIC_ATTRIBUTE_WRITES:
                dynamic.append((node.lineno, node.name))
        got = _ATTR_WRITES[id(module)] = (module, stores, dynamic)
    return got[1], got[2]


class _Site:
    """The call site being written: its file's AST, the call node, the names its source uses."""

    def __init__(self, key):
        from .migrate import _parsed
        self.file, self.line, self.api = key
        self.src = _parsed(self.file) if self.file else None
        self.node = None
        self.names = set()
        if self.src is not None:
            tail = self.api.rsplit(".", 1)[-1]
            for node in self.src.calls.get(self.line, ()):
                f = node.func
                fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                if fname == tail and (self.node is None or node.lineno == self.line):
                    self.node = node
            if self.node is not None:
                self.names = {n.id for n in ast.walk(self.node) if isinstance(n, ast.Name)}

    def tik_receiver(self) -> Optional[str]:
        """The ``tik_instance`` expression of the call (``tik_instance.vec_add(...)`` -> ``tik_instance``)."""
        if self.node is not None and isinstance(self.node.func, ast.Attribute):
            from .migrate import _segment
            text = _segment(self.src, self.node.func.value)
            return text if text != "?" else None
        return None

    def visible(self, name: str, file: str, decl_node, runs: int) -> bool:
        """Whether ``name``, bound at ``decl_node`` of ``file`` by a declaration the trace ran ``runs`` times, is
        provably bound to that object at this call site (`NAME_RULE`): the declaration ran once, in the call's own
        function, and no other binding of the name can come between it and the call -- the name is bound once in
        the function, or bound again only before the declaration or after the call in source order, with no
        Python loop around the call that holds another of its bindings. That the call's source spells the name
        proves nothing: a helper's parameter, a swapped alias or a Python loop's previous tensor spell it too."""
        if self.src is None or self.node is None or file != self.file or runs != 1:
            return False
        func = _enclosing_function(self.src, decl_node)
        if func is not _enclosing_function(self.src, self.node):
            return False
        lines = _binding_lines(func, name)
        if len(lines) <= 1:
            return True
        decl, call = decl_node.lineno, self.node.lineno
        others = list(lines)
        if decl_node.lineno in others:
            others.remove(decl_node.lineno)       # the declaration's own target
        if decl >= call or any(decl <= ln <= call for ln in others):
            return False
        node = self.src.parents.get(self.node)
        while node is not None and node is not func:
            if isinstance(node, _LOOPS):
                lo, hi = node.lineno, node.end_lineno or node.lineno
                if any(lo <= ln <= hi for ln in others):
                    return False
            node = self.src.parents.get(node)
        return True

    def visible_attribute(self, target, file: str, decl_node, runs: int, decl_owners, call_owners,
                          traced) -> Optional[str]:
        """``self.x_gm`` (as this call's method spells its object) when ``target`` -- the ``self.x_gm`` of a
        declaration ``self.x_gm = self.tik_instance.Tensor(...)`` at ``decl_node`` of ``file``, which the trace ran
        ``runs`` times -- provably holds the traced object at this call, else None (`ATTR_RULE`, `NAME_RULE`
        adapted to the usual CANN class-based kernel):

        * the declaration ran once, in a method (a ``def`` right in a class body) whose first parameter is the
          target's object and is bound nowhere else in it; the call is in a method of the same file whose first
          parameter is bound nowhere else either (its name is the one written);
        * the object is the same: the trace records, per TIK call, the object whose method made it
          (``Tik._call_owners``, `errors.api_site_and_self`), and every run of this call was made by a method of the
          object the declaration's method ran on -- a second instance of the class, a classmethod, a helper
          function taking ``self`` are not;
        * nothing else writes the attribute: no other ``<anything>.x_gm = / += / del`` in the file (in a loop or
          not; a swap through a local is such a write) -- but the ``self.x_gm = None`` CANN kernels write in
          ``__init__`` before a method declares the tensor (`NONE_BEFORE_DECLARATION`) --,
          no `DYNAMIC_ATTRIBUTE_WRITES` (``setattr``,
          ``__dict__`` ...) in it, the object's class keeps Python's own ``__setattr__`` and defines no
          ``x_gm`` of its own (a property, a class attribute), and after the trace the object's ``__dict__``
          still holds the traced object there (``traced``: whether a value is it) -- a write from another
          file that stayed is seen; one undone before the trace ends is not."""
        if self.src is None or self.node is None or file != self.file or runs != 1 or len(decl_owners) != 1:
            return None
        name = target.value.id
        if _method_self(self.src, _enclosing_function(self.src, decl_node)) != name:
            return None
        here = _method_self(self.src, _enclosing_function(self.src, self.node))
        if here is None:
            return None
        module = decl_node
        while module in self.src.parents:
            module = self.src.parents[module]
        stores, dynamic = _attribute_writes(module)
        others = [(ln, none) for ln, none in stores.get(target.attr, []) if ln != target.lineno]
        if dynamic or len(others) + 1 != len(stores.get(target.attr, [])) or \
                any(not (none and NONE_BEFORE_DECLARATION) for _, none in others):
            return None
        obj = decl_owners[0]
        if obj is None or not call_owners or any(o is not obj for o in call_owners):
            return None
        cls = type(obj)
        if cls.__setattr__ is not object.__setattr__ or any(target.attr in vars(c) for c in cls.__mro__):
            return None
        held = getattr(obj, "__dict__", None)
        if not isinstance(held, dict) or not traced(held.get(target.attr)):
            return None
        return f"{here}.{target.attr}"


#: How the tool decides that a Python name at a call site is the tensor / Scalar / loop variable the trace holds
#: (`_Site.visible`): provably bound to it there, else a ``FILL_IN_`` placeholder. A name merely spelled in the
#: call's source is not proof (review466: ``combine(ti, b, a)`` into ``def combine(ti, a, b)``, ``prev`` of a
#: Python loop, ``old = cur; cur = ...`` all wrote the wrong tensor and ran).
NAME_RULE = "declared once, in the call's function, with no other binding of the name in between"

#: Whether ``self.x_gm = None`` elsewhere in the file (CANN kernels set every attribute to None in ``__init__`` and
#: declare the tensor or Scalar in a method, pylint's attribute-defined-outside-init) leaves the attribute name usable
#: (`ATTR_RULE`): True. With the declaration run once and every other write in the file a ``= None``, the attribute
#: holds the traced object or None at any moment, and once None it stays None (nothing in the file writes anything
#: else): a None written after the declaration is still there after the trace, where the rule's last check refuses it.
NONE_BEFORE_DECLARATION = True

#: How the tool names a loop variable used in a function the loop's body called with it (CANN's
#: ``with for_range(0, n, block_num=n) as core: self.compute_core(core)``; `_Writer.loop_parameter`): at every run of
#: the call, exactly one parameter of the user's frame held the very `Expr` ``for_range`` handed out for that loop
#: (identity, recorded with the call owners: `errors.api_site_and_self`), always the same parameter, and the function
#: binds that name nowhere else (no assignment, del, global/nonlocal, nested rebinding). ``core + 1`` or a rebound
#: parameter is another object or another binding: a ``FILL_IN_`` placeholder.
LOOP_PARAMETER_RULE = "a parameter of the call's function holding the handed-out loop variable itself, never rebound"

#: `NAME_RULE` for a tensor / Scalar / InputScalar a class-based kernel keeps in an attribute (`_Site.visible_attribute`):
#: ``self.x_gm = self.tik_instance.Tensor(...)`` in one method, ``self.x_gm`` in another is written as such only where it
#: is provably the traced object at the call, else a ``FILL_IN_`` placeholder.
ATTR_RULE = ("declared once as self.<attr> in a method, the call made by a method of that same object (recorded per "
             "call), no other write of <attr> in the file, the object still holding it after the trace")


# ============================================================================ rendering

class _Writer:
    """Writes the program values of one kernel as Python at one call site."""

    def __init__(self, tik, site: _Site):
        self.tik, self.site = tik, site
        self.problems: list = []
        self.decls: list = []           # TIK Scalars the replacement declares for the lowering's registers
        self.regs: dict = {}            # id(Reg) -> name of such a Scalar
        self.loops: dict = {}           # id(LoopVar) -> name of a loop the replacement opens
        self.call_owners: dict = {}     # (file, line) -> the objects whose methods made each run (`ATTR_RULE`)
        self.call_loop_params: dict = {}    # (file, line) -> per run, the parameters holding a loop variable
        self._fresh = 0

    # ---------------------------------------------------------------- placeholders and names
    def placeholder(self, what: str, why: str) -> str:
        name = PLACEHOLDER + "".join(c if c.isalnum() else "_" for c in what).strip("_")
        msg = f"{name}: {why}"
        if msg not in self.problems:
            self.problems.append(msg)
        return name

    def runs(self, file, line) -> int:
        """How many times the TIK call at ``file:line`` ran in the trace (a declaration in a Python loop: several)."""
        return self.call_runs.get((file, line), 0)

    def fresh(self, stem: str) -> str:
        self._fresh += 1
        return f"{stem}{self._fresh}"

    def _named(self, file, line, call_names, what, with_as=False, label=None, traced=None) -> str:
        """The Python name of the object declared at ``file:line`` (``label``: its TIK name, which tells apart two
        placeholders of one Python name, ``FILL_IN_t_t0`` / ``FILL_IN_t_t1``), else a placeholder; ``traced``:
        whether a value is the traced object (a declaration into an attribute, `ATTR_RULE`)."""
        got = _assigned_target(file, line, call_names, with_as) if file else None
        from .migrate import _short_path
        at = f"{_short_path(file)}:{line}" if file else "?"
        if got is None:
            return self.placeholder(what, f"{what} (declared at {at}) is not assigned to a plain Python "
                                          f"variable or an attribute of a method's self there: write the name it "
                                          f"has at this call")
        target, node = got
        if isinstance(target, ast.Attribute):
            spelled = f"{target.value.id}.{target.attr}"
            text = self.site.visible_attribute(target, file, node, self.runs(file, line),
                                               self.call_owners.get((file, line), ()),
                                               self.call_owners.get((self.site.file, self.site.line), ()),
                                               traced or (lambda v: False))
            if text is None:
                return self.placeholder(f"{target.value.id}_{target.attr}" if not label or label == target.attr
                                        else f"{target.value.id}_{target.attr}_{label}",
                                        f"{what} is '{spelled}' at {at}, which may not hold it at this call (not "
                                        f"a method of the same object, a declaration the script ran several "
                                        f"times, or the attribute is written elsewhere): write its name here")
            return text
        name = target.id
        if not self.site.visible(name, file, node, self.runs(file, line)):
            return self.placeholder(name if not label or label == name else f"{name}_{label}", f"{what} is '{name}' at {at}, which may not be the name it has at this "
                                          f"call (another function, a declaration the script ran several times, "
                                          f"or the name is bound again in between): write its name here")
        return name

    def tensor(self, st) -> str:
        where = st.where
        if where is not None and where.call and where.call != "tik.Tensor":
            return self.placeholder(f"{st.space}_{st.addr:#x}" if isinstance(st.addr, int) else st.name,
                                    f"{st.space} bytes {_bytes(st)} that {where.call} placed for itself (scratch "
                                    f"TIK placed for itself): declare a tensor in {st.space} and pass its pto_ptr() "
                                    f"(worked_migration.md, checklist)")
        return self._named(where.file if where else None, where.line if where else 0, ("Tensor",),
                           f"{st.space} tensor {st.name}", label=st.name, traced=lambda v: _whole_tensor(v, st))

    # ---------------------------------------------------------------- pointers
    def ptr(self, p) -> tuple:
        """``(text, precedence)`` of pointer expression ``p``."""
        st = self.tik_storages.get(id(p))
        if st is not None:
            text = self.tensor(st) + ".pto_ptr()"
            if p.dtype != st.dtype:
                text += f".cast({json.dumps(p.dtype.pto_name)})"
            return text, _ATOM
        if isinstance(p, P.PtrAdd):
            a, pa = self.ptr(p.p)
            n, pn = self.scalar(p.n)
            return f"{a if pa >= 8 else f'({a})'} + {n if pn > 8 else f'({n})'}", 8
        if isinstance(p, P.PtrCast):
            a, pa = self.ptr(p.p)
            return f"{a if pa >= _ATOM else f'({a})'}.cast({json.dumps(p.dtype.pto_name)})", _ATOM
        if isinstance(p, P.PtrFromInt):
            addr = p.a.value if isinstance(p.a, P.Const) else None
            at = f"{addr:#x}" if addr is not None else "a run-time address"
            return self.placeholder(f"{p.space}_{at}", f"a {p.type} pointer at {at} that no tensor of the kernel "
                                    f"holds (scratch TIK placed for itself): declare a tensor in {p.space} and "
                                    f"pass its pto_ptr() (worked_migration.md, checklist)"), _ATOM
        return self.placeholder("pointer", f"a pointer the trace cannot name ({p!r})"), _ATOM

    # ---------------------------------------------------------------- scalars
    def scalar(self, e) -> tuple:
        """``(text, precedence)`` of scalar expression ``e``."""
        if isinstance(e, P.Const):
            return _literal(e.value), _ATOM if not (isinstance(e.value, (int, float)) and e.value < 0) else 10
        if isinstance(e, P.Reg):
            return self.reg(e), _ATOM
        if isinstance(e, P.LoopVar):
            return self.loop_var(e), _ATOM
        if isinstance(e, P.BlockIdx):
            return self.block_var(), _ATOM
        if isinstance(e, P.ScalarArg):
            return self.input_scalar(e), _ATOM
        folded = _fold(e)
        if folded is not None:
            return self.scalar(folded)
        if isinstance(e, P.BinOp) and e.op in _BIN:
            sym, prec = _BIN[e.op]
            if sym == "//" and not _is_int(e.type):
                sym = "/"
            a, pa = self.scalar(e.a)
            b, pb = self.scalar(e.b)
            return f"{a if pa >= prec else f'({a})'} {sym} {b if pb > prec else f'({b})'}", prec
        if isinstance(e, P.Cmp) and e.pred in _CMP:
            a, pa = self.scalar(e.a)
            b, pb = self.scalar(e.b)
            return f"{a if pa > 3 else f'({a})'} {_CMP[e.pred]} {b if pb > 3 else f'({b})'}", 3
        if isinstance(e, P.UnOp) and e.op in ("neg", "not"):
            a, pa = self.scalar(e.a)
            return f"{'-' if e.op == 'neg' else '~'}{a if pa >= 10 else f'({a})'}", 10
        if isinstance(e, P.Cast):
            if _is_int(e.type) and _is_int(e.a.type):       # TIK's own index/i64 widening: the op converts
                return self.scalar(e.a)
            name = e.type.tik_name
            a, pa = self.scalar(e.a)
            if name is None:
                return self.placeholder("value", f"{a} converted to {e.type.pto_name}, which TIK cannot write: "
                                                 f"compute it with a Scalar of that type"), _ATOM
            return f"{a if pa >= _ATOM else f'({a})'}.astype({json.dumps(name)})", _ATOM
        return self.placeholder("value", f"a value the trace computes as {e!r}, which has no Python spelling "
                                         f"here: compute it with TIK Scalars"), _ATOM

    def reg(self, r) -> str:
        if id(r) in self.regs:
            return self.regs[id(r)]
        file, line = _split_site(r.declared)
        if file is not None and _assigned_target(file, line, ("Scalar",)) is not None:
            return self._named(file, line, ("Scalar",), f"Scalar {r.name}", traced=lambda v: getattr(v, "ir", None) is r)
        return self.placeholder(r.name or "register", f"a register the TIK call's lowering uses but another call "
                                                      f"assigns ({r!r}): keep that call, or name the value")

    def loop_parameter(self, match) -> Optional[str]:
        """The parameter of the call's function that holds the loop variable at every run of the call
        (`LOOP_PARAMETER_RULE`; ``match(ir)``: whether a handed-out loop variable's ``.ir`` is the one wanted), or
        None."""
        site = self.site
        if site.src is None or site.node is None:
            return None
        runs = self.call_loop_params.get((site.file, site.line))
        if not runs or len(runs) != self.runs(site.file, site.line):
            return None
        names = set()
        for params in runs:
            got = [n for n, val in params if match(val.ir)]
            if len(got) != 1:
                return None
            names.add(got[0])
        if len(names) != 1:
            return None
        name = names.pop()
        func = _enclosing_function(site.src, site.node)
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        a = func.args
        if name not in {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}:
            return None
        if len(_binding_lines(func, name)) != 1:        # bound again (or nonlocal/global, a nested def's) somewhere
            return None
        return name

    def loop_var(self, v) -> str:
        if id(v) in self.loops:
            return self.loops[id(v)]
        got = self.loop_parameter(lambda ir: ir is v)
        if got is not None:
            return got
        loop = self.tik_loops.get(id(v))
        if loop is None or loop.where is None:
            return self.placeholder(v.name or "i", f"a loop variable the trace cannot place ({v!r})")
        return self._named(loop.where.file, loop.where.line, ("for_range",), f"loop variable {v.name}",
                           with_as=True)

    def block_var(self) -> str:
        sites = [w for w in getattr(self.tik, "_calls", ()) if w.call == "tik.for_range" and
                 _assigned_target(w.file, w.line, ("for_range",), with_as=True) is not None and
                 _has_keyword(w.file, w.line, "block_num")]
        names = {(w.file, w.line) for w in sites}
        got = self.loop_parameter(_is_block_index)
        if got is not None:
            return got
        if len(names) != 1:
            return self.placeholder("core", "the core index (pto.get_block_idx): write the variable of the "
                                            "for_range(..., block_num=N) loop")
        w = sites[0]
        return self._named(w.file, w.line, ("for_range",), "the multi-core loop variable", with_as=True)

    def input_scalar(self, a) -> str:
        for w in getattr(self.tik, "_calls", ()):
            if w.call == "tik.InputScalar" and _keyword_value(w.file, w.line, "InputScalar", "name", 1) == a.name:
                return self._named(w.file, w.line, ("InputScalar",), f"InputScalar {a.name}",
                                   traced=lambda v: getattr(v, "ir", None) is a)
        return self.placeholder(a.name, f"the InputScalar {a.name!r}: write its Python name")

    # ---------------------------------------------------------------- values of any kind
    def value(self, v) -> str:
        if isinstance(v, P.PtrExpr):
            return self.ptr(v)[0]
        if isinstance(v, P.Expr):
            return self.scalar(v)[0]
        if isinstance(v, tuple):
            return "(" + ", ".join(self.value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        return _literal(v)

    def op(self, call) -> str:
        spec = call.spec
        args = [self.value(v) for v in call.operands]
        for c in spec.clauses:
            if c.name in call.clauses and call.clauses[c.name] is not None:
                text = clause_python(c, call.clauses[c.name], self.value)
                if text is not None:
                    args.append(f"{c.name}={text}")
        return f"pto.{spec.name}({', '.join(args)})"


def _is_block_index(ir) -> bool:
    """Whether ``ir`` is what ``for_range(0, n, block_num=n)`` hands out: the core index (``i32(block_idx)``)."""
    return isinstance(ir, P.BlockIdx) or (isinstance(ir, P.Cast) and isinstance(ir.a, P.BlockIdx))


def _bytes(st) -> str:
    if isinstance(st.addr, int) and isinstance(st.nbytes, int):
        return f"[{st.addr:#x}, {st.addr + st.nbytes:#x})"
    return "at a run-time address"


def _whole_tensor(v, st) -> bool:
    """Whether ``v`` is a TIK tensor of all of storage ``st`` as declared (its ``pto_ptr()`` is ``st``'s start)."""
    return getattr(v, "storage", None) is st and type(getattr(v, "offset", None)) is int and v.offset == 0 and \
        getattr(v, "dt", None) == st.dtype


def _has_keyword(file, line, kw) -> bool:
    from .migrate import _parsed
    src = _parsed(file)
    return src is not None and any(k.arg == kw for node in src.calls.get(line, ()) for k in node.keywords)


def _keyword_value(file, line, fname, kw, pos):
    from .migrate import _parsed
    src = _parsed(file)
    for node in (src.calls.get(line, ()) if src else ()):
        f = node.func
        if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) != fname:
            continue
        for k in node.keywords:
            if k.arg == kw and isinstance(k.value, ast.Constant):
                return k.value.value
        if len(node.args) > pos and isinstance(node.args[pos], ast.Constant):
            return node.args[pos].value
    return None


def _split_site(declared):
    if not declared or ":" not in declared:
        return None, 0
    file, _, line = declared.rpartition(":")
    return (file, int(line)) if line.isdigit() else (None, 0)


def _is_int(t) -> bool:
    from pto_core import scalars as S
    return S.is_int(t) and not S.is_bool(t)


def _literal(v) -> str:
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else f'float("{v}")'      # float("inf"), float("-inf"), float("nan")
    if isinstance(v, int):
        return str(v)
    if v is None:
        return "None"
    return repr(v)


def _fold(e):
    """An integer BinOp of constants as one `Const`, with the trace's C semantics (``div`` truncates), else None."""
    if not isinstance(e, P.BinOp) or not _is_int(e.type):
        return None
    a, b = _fold(e.a) or e.a, _fold(e.b) or e.b
    if not (isinstance(a, P.Const) and isinstance(b, P.Const)):
        return None
    x, y = int(a.value), int(b.value)
    if e.op in ("div", "rem") and y == 0:
        return None
    q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1) if e.op in ("div", "rem") else 0
    val = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: q,
           "rem": lambda: x - q * y}.get(e.op)
    return None if val is None else P.Const(val(), e.type)


# ============================================================================ per call site

def python_rows(tik) -> list:
    """The `PyRow` of every TIK call site of kernel ``tik`` whose trace holds PTO ops, in program order."""
    from .migrate import call_source
    occurrences: dict = {}          # key -> [[stmt, ...], ...]: one list per place the site's statements sit
    _collect(tik.program.body, occurrences, getattr(tik, "_call_starts", set()))
    storages = {}
    for st in list(tik._gm_tensors) + list(tik._placement.placed):
        if st.space == "gm" and st.gm is not None:
            storages[id(st.gm)] = st
        for p in getattr(st, "_base_ptrs", {}).values():
            storages[id(p)] = st
    loops = {id(s.var): s for s in P.walk_stmts(tik.program.body) if isinstance(s, P.For)}
    runs: dict = {}
    owners: dict = {}           # (file, line) -> the object whose method made each run of it (or None)
    for w, o in itertools.zip_longest(getattr(tik, "_calls", ()), getattr(tik, "_call_owners", None) or ()):
        runs[(w.file, w.line)] = runs.get((w.file, w.line), 0) + 1
        owners.setdefault((w.file, w.line), []).append(o)
    loop_params: dict = {}      # (file, line) -> per run, the parameters holding a loop variable (`LOOP_PARAMETER_RULE`)
    for w, ps in zip(getattr(tik, "_calls", ()), getattr(tik, "_call_loop_params", None) or ()):
        loop_params.setdefault((w.file, w.line), []).append(ps)
    rows = []
    for key, groups in occurrences.items():
        if key is None or not any(_replaced(s) for g in groups for s in g):
            continue        # declarations, Scalar assignments, scopes: the TIK call stays
        if key[2].startswith("pto."):     # already a PTO op of a mixed kernel
            continue
        file, line, api = key
        row = PyRow(file, line, api, call_source(file, line, api) if file else "")
        texts = []
        for g in groups:
            w = _Writer(tik, _Site(key))
            w.tik_storages, w.tik_loops, w.call_runs, w.call_owners = storages, loops, runs, owners
            w.call_loop_params = loop_params
            notes: list = []
            body = _stmts(w, g, 0, notes)
            if body or not any(_replaced(s) for s in g):
                texts.append((w.decls + body, w.problems, notes))
        if all(not code for code, _, _ in texts):     # only checks and sync here: notes of every place
            texts = [([], [], [n for _, _, ns in texts for n in ns])]
        else:                                         # the places with statements; every place's notes
            every = list(dict.fromkeys(n for _, _, ns in texts for n in ns))
            texts = [(c, p, every) for c, p, _ in texts if c]
        distinct = list(dict.fromkeys((tuple(c), tuple(p), tuple(n)) for c, p, n in texts))
        if len(distinct) == 1:
            code, problems, notes = distinct[0]
            row.code, row.problems, row.notes = list(code), list(problems), list(notes)
        else:                       # pasted as it stands, every run's statements would run at each call
            row.problems.append(f"{RUNS_GUARD}: the script ran this call {len(groups)} times with different operands "
                                f"(a Python loop around it?): one replacement per run follows; write them as one "
                                f"with your loop's variable, then delete the {RUNS_GUARD} line")
            row.code.append(f"{RUNS_GUARD}  # a NameError until the runs below are written as one")
            for k, (code, problems, notes) in enumerate(distinct):
                row.code.append(f"# run {k + 1} of {len(distinct)}:")
                row.code += list(code)
                row.problems += [p for p in problems if p not in row.problems]
                row.notes += [n for n in notes if n not in row.notes]
        if not row.code:
            row.notes.append("no statement to write: the call recorded only checks and sync")
        rows.append(row)
    return rows


def _replaced(s) -> bool:
    """Whether statement ``s`` of a call's trace is written in its replacement (an op other than checks and
    sync, or a loop / branch its lowering opened)."""
    if isinstance(s, P.OpStmt):
        return s.call.spec.name not in LEFT_OUT and s.call.spec.name not in AUTO_SYNC_OPS
    return isinstance(s, (P.For, P.If))


def _collect(body: list, out: dict, starts: set) -> None:
    """``out[key]``: the statements of each call of site ``key``, one list per call (``starts``: the ids of the
    first statement of each call, `Tik._call_starts`: two calls of one line in a Python loop follow each other
    with one interned provenance)."""
    prev = None
    for s in body:
        key = _key(s.where) if s.where is not None else None
        if isinstance(s, (P.For, P.If)) and (key is None or key[2] in CONTROL_APIS):
            prev = None
            for sub in ((s.body,) if isinstance(s, P.For) else (s.then, s.orelse or [])):
                _collect(sub, out, starts)
            continue
        groups = out.setdefault(key, [])
        if prev is not None and prev is s.where and groups and id(s) not in starts:
            groups[-1].append(s)
        else:
            groups.append([s])
        prev = s.where


def _stmts(w: _Writer, stmts: list, depth: int, notes: list) -> list:
    pad = "    " * depth
    out = []
    sync = []
    left: dict = {}
    for s in stmts:
        if isinstance(s, P.OpStmt):
            name = s.call.spec.name
            if name in LEFT_OUT:
                left.setdefault(LEFT_OUT[name], []).append(f"pto.{name}")
                continue
            if name in AUTO_SYNC_OPS:
                sync.append(_sync_text(s.call))
                continue
            out.append(pad + w.op(s.call))
        elif isinstance(s, P.For):
            tik = w.site.tik_receiver() or w.placeholder("tik_instance", "the Tik instance of this call")
            step = s.step.value if isinstance(s.step, P.Const) else None
            var = w.loops[id(s.var)] = w.fresh("i")
            if step != 1:               # a statement of its own: as the `with`'s target it would bind, not stop
                out.append(pad + w.placeholder("loop", f"a loop of step {s.step!r} the call's lowering runs: TIK's "
                                                       f"for_range steps by 1; write it with a Python loop or a "
                                                       f"Scalar"))
            out.append(f"{pad}with {tik}.for_range({w.value(s.lo)}, {w.value(s.hi)}) as {var}:")
            out += _stmts(w, s.body, depth + 1, notes) or [pad + "    pass"]
        elif isinstance(s, P.If):
            tik = w.site.tik_receiver() or w.placeholder("tik_instance", "the Tik instance of this call")
            out.append(f"{pad}with {tik}.if_scope({w.value(s.cond)}):")
            out += _stmts(w, s.then, depth + 1, notes) or [pad + "    pass"]
            if s.orelse:
                out.append(f"{pad}with {tik}.else_scope():")
                out += _stmts(w, s.orelse, depth + 1, notes) or [pad + "    pass"]
        elif isinstance(s, P.Assign) and isinstance(s.reg, P.Reg):
            target = _assigned_reg(w, s.reg)
            out.append(f"{pad}{target}.set_as({w.value(s.value)})")
        else:
            what = type(s).__name__.lower()
            out.append(f"{pad}{w.placeholder(what, f'a {what} statement of the trace ({s!r}): keep the TIK call')}")
    for why, names in left.items():
        note = f"left out: {', '.join(dict.fromkeys(names))} -- {why}"
        if note not in notes:
            notes.append(note)
    if sync:
        note = "sync: none to write -- in a mixed kernel auto-sync inserts " + ", ".join(dict.fromkeys(sync)) + \
               " here again"
        if note not in notes:
            notes.append(note)
    return out


def _sync_text(call) -> str:
    """``set_flag/wait_flag MTE2 -> V`` (one pair per flag; a barrier by its pipe)."""
    ops = [str(v) for v in call.operands]
    if call.spec.name in ("set_flag", "wait_flag") and len(ops) >= 2:
        return f"set_flag/wait_flag {ops[0]} -> {ops[1]}"
    return f"pto.{call.spec.name}({', '.join(ops)})"


def _assigned_reg(w: _Writer, r) -> str:
    """The Scalar an `Assign` of the call's lowering writes: the user's Scalar, else one the replacement declares."""
    if id(r) in w.regs:
        return w.regs[id(r)]
    file, line = _split_site(r.declared)
    if file is not None and _assigned_target(file, line, ("Scalar",)) is not None:
        return w.reg(r)
    tik = w.site.tik_receiver() or w.placeholder("tik_instance", "the Tik instance of this call")
    name = w.regs[id(r)] = w.fresh("s")
    dtype = r.type.tik_name if r.type.tik_name else "int64"
    w.decls.append(f"{name} = {tik}.Scalar({json.dumps(dtype)}, name={json.dumps(name)})")
    return name


# ============================================================================ text

def _not_runnable_header(problems: list) -> str:
    """The ``# NOT RUNNABLE AS IS`` line of a row: why it stops if pasted as it stands -- the call ran with
    different operands (`RUNS_GUARD`), an operand the trace cannot name (a ``FILL_IN_`` placeholder), or both."""
    why = []
    if any(p.startswith(RUNS_GUARD) for p in problems):
        why.append("the script ran this call several times with different operands, one replacement per run follows")
    if any(not p.startswith(RUNS_GUARD) for p in problems):
        why.append("the trace cannot name every operand")
    return f"# NOT RUNNABLE AS IS: {'; and '.join(why)}; fill in:"


def format_python(rows: list, kernel: str) -> str:
    """The replacement statements of every row, as commented Python (``tik-migrate --format python``)."""
    out = [f"# kernel {kernel}: the Python statements that replace each TIK call, in this TIK kernel",
           "# (needs `from pto_core import pto`; sync: auto-sync keeps inserting it in a mixed kernel)"]
    for r in rows:
        out.append("")
        out.append(f"# {r.site}  {r.api}")
        out += [f"#     {ln}" for ln in r.source.splitlines()]
        if r.problems:
            out.append(_not_runnable_header(r.problems))
            out += [f"#   {p}" for p in r.problems]
        out += [f"# {n}" for n in r.notes]
        out += r.code
    return "\n".join(out) + "\n"


__all__ = ["python_rows", "format_python", "PyRow", "PLACEHOLDER", "LEFT_OUT", "AUTO_SYNC_OPS", "NAME_RULE", "ATTR_RULE", "LOOP_PARAMETER_RULE",
           "NONE_BEFORE_DECLARATION", "RUNS_GUARD"]
