"""The op table: one `OpSpec` row per PTO op, plus the generic call machinery.

Adding an op = one execute function + one `register(OpSpec(...))` row.

Calling convention (Python API, one-to-one with PTO-AS text)::

    pto.<op>(operands in the spec's order, <clause>=<value>, ...)

Clause spelling (value in Python -> text in PTO-AS):

=================  ===============================  ==========================================
clause form        Python                           PTO-AS
=================  ===============================  ==========================================
``flag``           ``disable_gemv=True``            ``disable_gemv``
``word``           ``unit_flag="check_only"``       ``unit_flag(check_only)``
``args``           ``loop3=(2, 64, 128)``           ``loop3(%c2, %c64, %c128)``
                   (a list is read as the tuple:
                   ``mask=[hi, lo]``, TIK's spelling)
``args`` + keys    ``pre_quant=(x, {"mode": "q"})`` ``pre_quant(%x, mode = q)``
                   or a dict with the positional
                   params by name and the keys
``optarg``         ``nz2nz=True`` / ``nz2nz=s``     ``nz2nz`` / ``nz2nz(%s)``
``sat`` (special)  ``sat=True`` / ``sat=False`` /   ``sat`` / ``nosat`` / ``sat(preserve_nan)``
                   ``sat="preserve_nan"``
``attr``           ``transpose=True``               ``{transpose = true}``
                   ``fill_word_bits=16``            ``{fill_word_bits = 16 : i64}``
``args`` repeated  ``loop=[(2, 64, 128), (3, 8,``   ``loop(%c2, %c64, %c128) loop(%c3, ...)``
(``repeat=True``)  ``16)]`` (a list, one entry per
                   group, inner to outer)
``word_or_arg``    ``dst_mode="split_m"`` /         ``dst_mode(split_m)`` / ``dst_mode(%c1)``
                   ``dst_mode=1``
=================  ===============================  ==========================================

Clauses sharing a ``group`` are mutually exclusive; groups must appear in the
spec's canonical order (Python keyword order is checked too, so a call reads like
the PTO-AS text it prints as). ``None`` means "clause omitted". A ``word_or_arg``
clause takes either one of its ``values`` words or one operand (an int or IR value).
``OpSpec.clause_hints`` maps names that are not clauses of the op (``clip`` on a
FIXPIPE op, where it is a key of ``pre_relu``) to the fix shown in the error.

An op call either executes now (eager: some operand is a `Ptr` bound to a machine,
or a machine is active) or, inside a program builder, is recorded as an `OpCall`
(see ``pto_core.program``). Both go through `make_call`, so validation of arity,
clause names, clause values, order and exclusivity is identical.

Cost of an eager call (a few microseconds before the op runs): the clause-name checks
(unknown names, exclusivity, canonical order) depend only on the op and the sequence
of clause names given, so their verdict is cached per (op, names); values are checked
on every call. The user's call site is found by a frame walk that decides once per
file name whether a file is internal, and its `Provenance` is memoised per
(file, line, op). Compiled programs skip all of this: the interpreter calls
``ctx.begin_op`` and the op's execute function directly.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..errors import IllegalOperand, PtoError, Provenance, UnknownName, site_provenance  # noqa: F401 (re-exported)
from ..scalars import reject_undefined

# ----------------------------------------------------------------------------- table rows


@dataclass(frozen=True)
class Operand:
    """One positional operand.

    kind: ``"ptr"`` (a pointer; ``spaces`` lists the legal spaces), ``"int"`` (i64 value),
    ``"float"`` (f32 value), ``"scalar"`` (int or float), ``"pipe"``, ``"bufpipe"`` (a concrete
    pipe or a PTOAS sync op type such as ``TLOAD``, `pipes.sync_op_pipe`), ``"event"``,
    ``"ptrs"`` (a tuple of pointers, e.g. the 16 block addresses of ``pto.ub.vnchwconv``).
    """

    name: str
    kind: str
    spaces: tuple = ()
    doc: str = ""
    optional: bool = False


@dataclass(frozen=True)
class Clause:
    """One optional clause.

    form: ``"flag"``, ``"word"``, ``"args"``, ``"optarg"``, ``"sat"``, ``"attr"`` or ``"word_or_arg"``
        (see module doc).
    group: canonical-order slot; clauses of one group are mutually exclusive.
    values: legal words for ``"word"`` form, legal values of an ``"attr"`` (empty = any).
    repeat: ``"args"`` clause that may appear several times (``loop(...)*``); its Python
        value is a list of entries, normalised to a tuple of ``(args, kw)`` pairs.
    params: positional parameter names of ``"args"``/``"optarg"`` (``"%count"``).
    keys: keyword parameters of ``"args"``: name -> tuple of legal words (empty = any word).
    min_params: how many leading positional params are required (``args`` form).
    value_hints: a word that is not legal for a key (or for a ``"word"`` clause) -> the Fix the error gives
        instead of the list of legal words (legacy spellings a migrator writes, e.g. TIK fixpipe's
        ``int322fp16``, TIK vconv's ``round_mode='round'``).
    """

    name: str
    form: str
    group: str = ""
    values: tuple = ()
    params: tuple = ()
    keys: dict = field(default_factory=dict)
    min_params: Optional[int] = None
    repeat: bool = False
    doc: str = ""
    value_hints: dict = field(default_factory=dict)   # a refused key word -> the Fix for it (e.g. a legacy name)

    @property
    def slot(self) -> str:
        return self.group or self.name


@dataclass(frozen=True)
class OpSpec:
    """One PTO op.

    Attributes:
        name: op name without the ``pto.`` prefix (``"mad"``).
        family: ``"mte"``, ``"cube"``, ``"fixpipe"``, ``"sync"``, ``"vector"``, ``"scalar"``.
        pipe: the pipe the op runs on (``"M"``), or a function ``(operands, clauses) -> pipe``.
        operands: positional operands in spec order.
        clauses: optional clauses in canonical order.
        execute: ``fn(ctx, *operands, **clauses) -> None``; does value checks and the work.
        verify: optional ``fn(call, target) -> None`` for checks that need only operand
            types (pointer dtype/space) and clause values; runs at record time in programs
            and before execute in eager mode.
        doc: one-line summary.
        asm_form: how PTO-AS text spells the op (for the printer/parser):
            ``"generic"`` (default): ``pto.op %a, %b, ... clauses : types``;
            ``"bracket"``: ``pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]`` (operands in
            square brackets; ``pipe``/``event`` operands print as ``<PIPE_X>``/``<EVENT_IDn>``,
            ``int`` operands as SSA values, e.g. the ``_dyn`` event index);
            ``"angle"``: ``pto.barrier <PIPE_V>`` (one bare ``<...>`` attribute);
            ``"quoted"``: ``pto.pipe_barrier "PIPE_V"`` (the ISA-doc spelling).
        clause_hints: name -> fix, for names that are not clauses of this op but that users
            are likely to write as one (shown in the `UnknownName` error).
        asm_operands: optional ``fn(operands) -> operands`` the PTO-AS parser applies to the
            operands as written, to accept an alternative operand order of PTOAS text
            (``pto.get_buf %id, "PIPE_V"``); the printer always writes the spec's order.
        bind: optional ``fn(args, clauses) -> fn(ctx) or None``, called when a compiled program binds
            an op whose operands and clauses are all compile-time values (`interpreter._bound_op`): it
            may return ``execute`` specialised to them (work that does not depend on run-time state
            done once), which must do every check ``execute`` does, with the same errors; None keeps
            ``execute``. The returned function may carry an attribute ``whole_op(name, where) -> fn(ctx)``:
            the op with its own bracketing (the work of ``ctx.begin_op(name, pipe, where)``), which the
            interpreter then runs instead of ``begin_op`` + the function (the bound flag ops, `ops.sync.FLAG_BIND`).
        bind_hole: optional ``fn(args, index, clauses) -> fn(ctx, operand) or None``, the same for an op
            whose operands are all compile-time values but the one at ``index`` (``args[index]`` is None),
            computed at run time with no run-time clause (`interpreter._dyn_op`): the returned function
            gets that operand's value per run.
        bind_holes: optional ``fn(args, indices, clauses) -> fn(ctx, *operands) or None``, the same for an op
            whose operands at ``indices`` (one or more) are computed at run time, with no run-time clause and
            a fixed pipe (`interpreter._dyn_op`, tried before ``bind_hole``): the returned function gets those
            operands' values per run, in ``indices`` order; it must still do every check that depends on them.
        bind_dyn: optional ``fn(args, indices, clauses, dyn_keys) -> fn(ctx, *values) or None``, the same for an
            op with a fixed pipe whose clauses ``dyn_keys`` (one or more; ``clauses`` holds the others) and
            operands at ``indices`` (none or more) are computed at run time (`interpreter._dyn_op`): the returned
            function gets the operands' values in ``indices`` order, then the clauses' values in ``dyn_keys``
            order, per run; it must still do every check that depends on them.
    """

    name: str
    family: str
    pipe: Any
    operands: tuple
    execute: Callable
    clauses: tuple = ()
    verify: Optional[Callable] = None
    doc: str = ""
    asm_form: str = "generic"
    clause_hints: dict = field(default_factory=dict)
    asm_operands: Optional[Callable] = None
    bind: Optional[Callable] = None
    bind_hole: Optional[Callable] = None
    bind_holes: Optional[Callable] = None
    bind_dyn: Optional[Callable] = None

    @property
    def asm_name(self) -> str:
        return "pto." + self.name

    def pipe_of(self, operands, clauses) -> str:
        return self.pipe(operands, clauses) if callable(self.pipe) else self.pipe

    def clause(self, name: str) -> Clause:
        for c in self.clauses:
            if c.name == name:
                return c
        raise UnknownName(f"unknown clause {name!r}", op=self.asm_name, operand=name,
                          limit="one of " + (", ".join(c.name for c in self.clauses) or "(no clauses)"),
                          hint=self.clause_hints.get(name))

    def signature(self) -> str:
        ops = ", ".join(o.name for o in self.operands)
        cls = " ".join(f"[{c.name}]" for c in self.clauses)
        return f"{self.asm_name} {ops} {cls}".strip()


OPS: dict = {}


def register(spec: OpSpec) -> OpSpec:
    """Add a row to the op table (names must be unique)."""
    if spec.name in OPS:
        raise ValueError(f"op {spec.name!r} registered twice")
    OPS[spec.name] = spec
    return spec


#: PTO-AS statements a ``tik-migrate`` listing or ``to_asm()`` shows that are not ops of the ``pto.`` namespace:
#: name -> their Python spelling (in a program builder ``k``; in a mixed TIK kernel). ``pto.load_scalar`` was
#: refused with "see the API reference" only, although the listing prints it for every ``s.set_as(t[i])``
#: (h_user453).
ASM_STATEMENT_SPELLINGS = {
    "load_scalar": "is a one-element read, not an op: in a program k.load(ptr, i) (pto_programs.md §1); in a "
                   "TIK kernel keep the Scalar's s.set_as(t[i]) (tik_core.md §3)",
    "store_scalar": "is a one-element write, not an op: in a program k.store(ptr, i, value) (pto_programs.md "
                    "§1); in a TIK kernel keep t[i].set_as(value) (tik_core.md §3)",
    "castptr": "(a pointer to an address) is k.ptr(space, dtype, addr) in a program, tensor.pto_ptr() in a TIK "
               "kernel, Machine.ptr(space, dtype, addr) eagerly; between dtypes p.cast(dtype) (tik_core.md §7)",
    "addptr": "(pointer arithmetic) is p + n (elements) or p.byte_offset(b) (tik_core.md §7)",
    "get_block_idx": "(the core index) is k.block_idx in a program, the for_range(..., block_num=N) loop variable "
                     "in a TIK kernel (pto_programs.md §4)",
    "get_block_num": "(the core count) is k.block_num in a program (pto_programs.md §4)",
}


#: TIK API names a migrator writes after ``pto.`` (or ``pto.ub.``) -> the PTO ops they become (the ``vec_<op>``
#: family is the rule in `unknown_op_hint`: ``pto.ub.v<op>``); h_user453: ``pto.ub.vec_add`` was offered
#: ``pto.ub.vcadd`` (a reduction) by the closest-name match, ``pto.data_move`` nothing.
TIK_API_OPS = {
    "data_move": "the move between its two spaces: pto.mte_gm_ub, pto.mte_ub_gm, pto.mte_gm_l1, pto.mte_l1_ub in "
                 "bytes, pto.mte_ub_l1, pto.mte_l1_gm, pto.mte_ub_ub in 32-byte blocks as data_move (tik_core.md §5)",
    "fixpipe": "pto.mte_l0c_gm for a GM dst; a UB dst is pto.mte_l0c_ub on A5, elsewhere pto.mte_l0c_l1 into L1 then "
               "pto.mte_l1_ub (tik_cube.md, fixpipe)",
    "mmad": "pto.mad (is_bias 0) or pto.mad_acc (is_bias 1), with m, n, k (tik_cube.md, mmad)",
    "matmul": "per tile pto.mte_l1_l0a + pto.mte_l1_l0b + pto.mad / pto.mad_acc (tik_cube.md, matmul)",
    "conv2d": "per tile pto.img2col + pto.mte_l1_l0b + pto.mad / pto.mad_acc (tik_cube.md, conv2d)",
    "load2dv1": "pto.load2d (tik_cube.md)", "load2dv2": "pto.load2d (tik_cube.md)",
    "load3dv1": "pto.img2col (tik_cube.md)", "load3dv2": "pto.img2col (tik_cube.md)",
    "vec_dup": "pto.ub.vector_dup (tik_vector.md)", "vector_dup": "pto.ub.vector_dup (tik_vector.md)",
    "vec_sel": "pto.ub.mov_tensor_to_cmpmask + pto.ub.vsel (mode 0), pto.ub.vsel_scalar (mode 1), "
               "pto.ub.vsel_bits (mode 2) (tik_vector.md)",
    # review457: names whose closest-name match offered another op (vec_trans -> pto.ub.v4dtrans,
    # vrpsort16 -> pto.ub.vmrgsort / pto.ub.vrsqrt); what the facade lowers them to (tbe_compat/tik/vector_layout.py)
    "vec_trans": "pto.ub.vtranspose (tik_vector.md)",
    "vec_trans_scatter": "pto.ub.vnchwconv (tik_vector.md)",
    "scatter_vnchwconv": "pto.ub.vnchwconv (TIK's vnchwconv / vec_trans_scatter; tik_vector.md)",
    "vrpsort16": "pto.ub.vbitsort (tik_vector.md)",
    "vmrgch": "pto.ub.vmergech (tik_vector.md)",
    # k464: every API the TIK facade implements has an entry or a rule (test_every_tik_api_of_the_facade_...)
    "data_move_pad": "pto.mte_gm_ub / pto.mte_ub_gm with byte bursts and the pad clause (tik_core.md §5, "
                     "data_move_pad)",
    "data_move_quant": "pto.copy_matrix_cc_to_ubuf with deq (tik_cube.md)",
    "tensor_mov": "pto.copy_matrix_cc_to_ubuf / pto.copy_matrix_ubuf_to_cc for L0C operands, else the data_move "
                  "moves (tik_cube.md)",
    "broadcast_ub_to_l0c": "pto.broadcast_ub_to_cc (tik_cube.md)",
    "mmad_broadcast": "pto.broadcast_ub_to_cc with repeat for repeat_mode=1 (tik_cube.md)",
    "vreducev2": "pto.ub.vreduce (pattern 1..7) / pto.ub.vreduce_bits (pattern tensor) (tik_vector.md)",
    "vec_rec_high_preci": "pto.ub.vrec (correctly rounded; tik_vector.md)",
    "vec_rsqrt_high_preci": "pto.ub.vrsqrt (correctly rounded; tik_vector.md)",
    "vec_ln_high_preci": "pto.ub.vln (correctly rounded; tik_vector.md)",
    "vec_expm1_high_preci": "TIK's macro of ~30 vector ops on work_tensor (pto.ub.vexp, pto.ub.vadds, pto.ub.vsel, "
                            "...; tik_vector.md §4b): run the TIK kernel through tik-migrate to see them",
    "mov_atomic_add_to_scalar": "a read of the ATOMIC special register: k.read_spr(\"ATOMIC\") in a program "
                                "(pto.get_spr; tik_core.md §6)",
    "mov_vmrgsort4_sr_to_scalar": "a read of the VMS4_SR special register: k.read_spr(\"VMS4_SR\") in a program "
                                  "(pto.get_spr; tik_vector.md)",
    "block_barrier": "pto.sync_all (tik_core.md §6)",
    "printf": "pto.debug_print values(...) {fmt = ...} (tik_core.md §6b)",
}

#: TIK API names that are no PTO op -- kernel structure, scalars, control flow, build-time queries -- and what they
#: are in a PTO program (builder ``k``, pto_programs.md §1) or in a TIK kernel (k464: they got "see the API
#: reference" only; ``pto.ub.scalar_max`` was offered pto.ub.scatter_vmax).
TIK_API_NO_OP = {
    "BuildCCE": "the kernel's signature: `with program(name) as k` and k.gm_arg / k.scalar_arg (pto_programs.md "
                "§1); in a TIK kernel keep BuildCCE (tik_core.md §1)",
    "Tensor": "a buffer: k.gm_arg(...) for GM, k.ptr(space, dtype, addr) on chip (pto_programs.md §1); in a TIK "
              "kernel keep the Tensor and pass tensor.pto_ptr() to pto ops (tik_core.md §7)",
    "InputScalar": "a scalar argument: k.scalar_arg(name, dtype) (pto_programs.md §1; tik_core.md §1)",
    "Scalar": "a register: k.reg(dtype, init) (pto_programs.md §1); in a TIK kernel keep the Scalar (tik_core.md §3)",
    "ScalarArray": "one register per entry, k.reg(...) (tik_vector.md, ScalarArray)",
    "TensorAddrList": "GM addresses: k.gm_arg per buffer (tik_core.md §2)",
    "for_range": "a loop: k.for_(lo, hi) (scf.for; pto_programs.md §1); in a TIK kernel keep for_range (tik_core.md "
                 "§4)",
    "multi_for_range": "nested k.for_(...) loops (tik_core.md §4)",
    "if_scope": "k.if_(cond) (scf.if; tik_core.md §4)", "elif_scope": "k.elif_(cond) (tik_core.md §4)",
    "else_scope": "k.else_() (tik_core.md §4)",
    "new_scope": "nothing: a placement scope (tik_core.md §4)", "new_stmt_scope": "nothing: a placement scope "
                                                                                    "(tik_core.md §4)",
    "tik_break": "k.break_() (pto.break; tik_core.md §4)", "tik_continue": "k.continue_() (pto.continue; tik_core.md "
                                                                             "§4)",
    "tik_return": "k.return_() (pto.return; tik_core.md §4)",
    "set_printf_params": "nothing: {screen = false} on the later pto.debug_print ops (tik_core.md §6b)",
    "scalar_abs": "a scalar expression (math.absi / absf; tik_core.md §3)",
    "scalar_max": "a scalar expression (arith.maxsi / maxnumf; tik_core.md §3)",
    "scalar_min": "a scalar expression (arith.minsi / minnumf; tik_core.md §3)",
    "scalar_sqrt": "a scalar expression (math.sqrt; tik_core.md §3)",
    "scalar_conv": "a scalar conversion, expr.astype(dtype) with its rounding (tik_core.md §3)",
    "scalar_countbit0": "scalar statements (tik_vector.md)", "scalar_countbit1": "scalar statements (tik_vector.md)",
    "scalar_countleading0": "scalar statements (tik_vector.md)",
    "get_available_buffer_size": "a build-time query of the TIK allocator (tik_core.md §1)",
    "get_left_buffer_size": "a build-time query of the TIK allocator (tik_core.md §1)",
}

#: TIK API names (tik_api.md, CANN's API tables: `tbe_compat.tik.container.known_tik_apis`) that neither the
#: facade nor a PTO op models -- their results are not published, or they configure what the simulator has no
#: model of; ``tik.<name>`` in a TIK kernel says so too. (review457: ``set_l0a`` was offered pto.set_flag,
#: ``set_l1`` pto.ub.vsel, ``vec_dp`` pto.ub.vector_dup.)
TIK_APIS_NOT_MODELLED = (
    "tensor_padding_with_matrix", "set_l0_set_value", "set_l0a", "set_l0b", "set_l1", "set_scalar_to_cmpmask",
    "depthwise_conv", "winograd_conv", "load_cbuf_to_ca_winograd_v2", "load_cbuf_to_cb_winograd_v2",
    "load_winograd_fm", "load_winograd_weight", "winograd_feature_map_transform", "winograd_weight_transform",
    "load_image", "load_smask", "mmad_sp", "load2dv3", "load3dv2L12L0A", "load3dv2L12L0B", "instr_preload",
    "vdp", "vec_dp", "vector_filter1d", "vnchwtrans", "get_ub_virtual_address", "set_cond_task_id",
    "set_fp2int_mode", "mov_fp2int_mode_to_scalar", "set_overflow_status", "get_overflow_status",
    "set_small_channel", "mov_small_channel_to_scalar", "set_system_cache", "mov_system_cache_to_scalar",
    "mov_rpn_cor_ir_to_scalar", "vaddreluconv", "vsubreluconv", "vec_addreluconv", "vec_subreluconv", "vbrcb",
    "vec_brcb", "vcopy", "vec_copy", "vbitsort32", "vec_bitsort32", "vmrgsort4v2", "vec_mrgsort4v2",
    "vec_ector_filter1d",
)

#: Names of CANN's TIK intrinsic tables (`known_tik_apis`) by prefix -> what they are (k464): ``data_move_l12l0a``
#: & co. are data_move's per-path intrinsics, ``fix_pipe_*`` the chip's FIXPIPE-unit capabilities, ``v_<op>``
#: the v210 register-based vector family (tik_api.md §9.11), which the simulator does not model.
TIK_API_PREFIXES = (
    ("data_move_", "one path of data_move: " + TIK_API_OPS["data_move"]),
    ("fix_pipe_", "a FIXPIPE-unit capability of the chip: the FIXPIPE write-backs pto.mte_l0c_gm / _l1 / _ub and "
                  "their clauses (pto_fixpipe.md)"),
    ("v_", "the v210 register-based vector family (tik_api.md §9.11), which has no PTO op here and is not modelled; "
           "the UB vector ops are pto.ub.vadd, pto.ub.vmul, ... (tik_vector.md)"),
)

#: CANN's scalar intrinsic names (`known_tik_apis`) -> the scalar expression they are (tik_core.md §3).
TIK_SCALAR_INTRINSICS = {"abs": "math.absi / absf", "max": "arith.maxsi / maxnumf", "min": "arith.minsi / minnumf",
                         "sqrt": "math.sqrt", "bcnt0": "scalar_countbit0", "bcnt1": "scalar_countbit1",
                         "clz": "scalar_countleading0", "assign": "a register assignment, k.assign(reg, value)"}

#: TIK vector instructions the facade leaves out on purpose (``tbe_compat.tik.vector.UNMODELLED`` and
#: ``vector_scatter.UNMODELLED_SCATTER``; a test keeps the sets equal): no PTO op computes them, so the Fix says so.
#: review457: the closest-name match offered pto.ub.vci for vbi, pto.ub.vbcb for vcbd, pto.ub.vcpadd for vpadding
#: and pto.ub.scatter_vln for scatter_vconv.
TIK_UNMODELLED_INSTRUCTIONS = ("vbi", "vcbd", "vpadding", "scatter_vconv", "scatter_vmulconv")


def _tik_name_hint(key: str) -> Optional[str]:
    """The Fix for a TIK API name written as an op (``pto.ub.vec_add``, ``pto.data_move``), or None."""
    base = key[3:] if key.startswith("ub.") else key
    if base in TIK_API_OPS:
        return f"TIK's {base} is {TIK_API_OPS[base]}"
    if base in TIK_API_NO_OP:
        return f"TIK's {base} is no PTO op: it is {TIK_API_NO_OP[base]}"
    if base in TIK_APIS_NOT_MODELLED:
        return (f"TIK's {base} has no PTO op and is not modelled (its result is not published or configures what "
                f"the simulator does not model; tik_cube.md \"Not modelled\", tik_vector.md §7): keep "
                f"such a step outside the simulated kernel, or express it with modelled calls")
    if key.startswith("ub.") and base in OPS:                 # pto.ub.set_flag, pto.ub.col2img
        return f"TIK's {base} is pto.{base} (not under pto.ub: only the vector ops are)"
    if base in TIK_SCALAR_INTRINSICS:
        return f"TIK's scalar {base} is no PTO op: it is a scalar expression ({TIK_SCALAR_INTRINSICS[base]}; " \
               f"tik_core.md §3)"
    for prefix, text in TIK_API_PREFIXES:
        if base.startswith(prefix):
            return f"TIK's {base} is {text}"
    if base.startswith("vec_") and "v" + base[4:] in TIK_API_OPS:       # vec_reducev2 is vreducev2
        return f"TIK's {base} is {TIK_API_OPS['v' + base[4:]]}"
    if base in ("vcmp", "vec_cmp", "scatter_vcmp"):
        pre = "scatter_" if base.startswith("scatter") else ""
        return f"TIK's {base} is pto.ub.{pre}vcmp_<eq|ne|lt|gt|ge|le> (tik_vector.md)"
    instr = "v" + base[4:] if base.startswith("vec_") else base          # vec_bi is vbi, vec_padding vpadding
    if instr in TIK_UNMODELLED_INSTRUCTIONS:
        return (f"TIK's {base} has no PTO op: the simulator leaves its instruction {instr} out, as its result is "
                f"not public bit for bit (tik_vector.md §7; tik.{base} in a TIK kernel says what to use instead)")
    if base.startswith("h_"):
        return (f"TIK's {base} is a high-level API that becomes several PTO ops (tik_vector.md, the h_ APIs): "
                f"run the TIK kernel through tik-migrate to see them")
    if base.startswith("vec_"):
        for op in ("ub." + base[4:], "ub.v" + base[4:]):       # vec_reduce_max -> ub.reduce_max, vec_add -> ub.vadd
            if op in OPS:
                return f"TIK's {base} is pto.{op} (tik_vector.md)"
    if "ub." + base in OPS:
        return f"did you mean pto.ub.{base}? (the vector ops are under pto.ub)"
    return None


def unknown_op_hint(key: str) -> str:
    """The Fix for ``pto.<key>`` that names no op: the Python spelling of a PTO-AS statement that is not an op,
    the PTO op of a TIK API name, else the closest op names, else where the op list is."""
    import difflib
    spelled = ASM_STATEMENT_SPELLINGS.get(key)
    if spelled is not None:
        return f"pto.{key} {spelled}"
    tik = _tik_name_hint(key)
    if tik is not None:
        return tik
    close = difflib.get_close_matches(key, list(OPS), n=3, cutoff=0.75)
    if close:
        return "did you mean " + " or ".join("pto." + c for c in close) + "?"
    return "see the API reference in migration_guide/pto_api.md"


def get_op(name: str) -> OpSpec:
    key = name[4:] if name.startswith("pto.") else name
    spec = OPS.get(key)
    if spec is None:
        raise UnknownName(f"unknown op 'pto.{key}'", value=name,
                          limit=f"{len(OPS)} known ops, e.g. " + ", ".join(sorted(OPS)[:12]),
                          hint=unknown_op_hint(key))
    return spec


# ----------------------------------------------------------------------------- calls


@dataclass(slots=True)
class OpCall:
    """One op with its operands and clauses (canonical order) and provenance.

    Operands are concrete values (ints, floats, `Ptr`) or, inside programs, IR values.
    """

    spec: OpSpec
    operands: tuple
    clauses: dict
    where: Optional[Provenance] = None

    @property
    def pipe(self) -> str:
        return self.spec.pipe_of(self.operands, self.clauses)

    def operand(self, name: str):
        for o, v in zip(self.spec.operands, self.operands):
            if o.name == name:
                return v
        raise KeyError(name)


def check_constant_operand(op: Optional[str], o: Operand, v, ptr_type) -> None:
    """Raise `IllegalOperand` unless the constant ``v`` (not an IR value) has the kind of operand ``o`` of op
    ``op``: a pointer (``ptr_type``; its space is the op's own check), a list of them, an integer, or a
    number. Eager calls check every operand here and recorded calls their constants, so an op's execute
    function only sees operands of the kinds its row declares (a None or str length would otherwise fail
    inside it)."""
    kind = o.kind
    got = f"{type(v).__name__} {v!r:.60}"
    if kind == "ptr":
        where = " or ".join(o.spaces) or "memory"
        if not isinstance(v, ptr_type):
            raise IllegalOperand(f"expects a pointer into {where}, got {got}", op=op, operand=o.name, value=repr(v),
                                 hint="pass a pointer: Machine.ptr(space, dtype, addr), Machine.gm_tensor(...), "
                                      "or p + n")
    elif kind == "ptrs":
        if not isinstance(v, (tuple, list)) or not v:
            raise IllegalOperand(f"expects a list of pointers, got {got}", op=op, operand=o.name, value=repr(v),
                                 hint="pass a list/tuple of pointers")
        for x in v:
            check_constant_operand(op, Operand(o.name, "ptr", o.spaces), x, ptr_type)
    elif kind == "int":
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            reject_undefined(v)
            raise IllegalOperand(f"expects an integer, got {got}", op=op, operand=o.name, value=repr(v),
                                 hint="pass a Python int (or an integer register/expression in a program)")
    elif kind in ("float", "scalar"):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise IllegalOperand(f"expects a number, got {got}", op=op, operand=o.name, value=repr(v),
                                 hint="pass an int or float (or a register/expression in a program)")


def _bad(spec: OpSpec, operand: str, message: str, value=None, limit=None, hint=None):
    return IllegalOperand(message, op=spec.asm_name, operand=operand, value=value, limit=limit, hint=hint)


#: Python values that are never a clause parameter (parameters are numbers, pointers or IR values; a str
#: is left to the op, whose message for it is more specific)
_NOT_PARAMS = (list, tuple, dict, set, complex, type(None), np.ndarray)


def _check_params(spec: OpSpec, clause: Clause, args: tuple) -> None:
    for p, v in zip(clause.params, args):
        if isinstance(v, _NOT_PARAMS):
            raise _bad(spec, clause.name, f"parameter {p} must be a number, pointer or program value, got "
                                          f"{type(v).__name__} {v!r:.60}", repr(v),
                       hint=f"write {clause.name}=({', '.join(clause.params)}) with one value per parameter")


def normalize_clause(spec: OpSpec, clause: Clause, value):
    """Validate one clause value's *shape* and return it in canonical Python form."""
    name = clause.name
    form = clause.form
    if form == "args" and not clause.repeat and type(value) is list:
        value = tuple(value)     # TIK's list spelling (mask=[mask_h, mask_l]) is the tuple (h_user453)
    if form == "args" and not clause.repeat and type(value) is tuple and not (value and isinstance(value[-1], dict)):
        # the common spelling: all positional parameters as a tuple (same result as the general path below)
        need = len(clause.params) if clause.min_params is None else clause.min_params
        if need <= len(value) <= len(clause.params):
            _check_params(spec, clause, value)
            return (value, {})
    if clause.form == "flag":
        if value is not True:
            raise _bad(spec, name, f"flag clause takes True (or None to omit), got {value!r}", value,
                       hint=f"write {name}=True to set the flag, or leave it out")
        return True
    if clause.form == "sat":
        if value is True or value is False or value == "preserve_nan":
            return value
        raise _bad(spec, name, f"sat takes True (sat), False (nosat) or 'preserve_nan', got {value!r}", value,
                   hint="write sat=True, sat=False or sat=\"preserve_nan\"")
    if clause.form == "word":
        if value not in clause.values:
            raise _bad(spec, name, f"value {value!r} is not one of {', '.join(clause.values)}", value,
                       limit=", ".join(clause.values),
                       hint=clause.value_hints.get(value) if isinstance(value, str) else None)
        return value
    if clause.form == "optarg":
        return True if value is True else value
    if clause.form == "attr":
        if clause.values and (isinstance(value, bool) != isinstance(clause.values[0], bool)
                              or value not in clause.values):
            raise _bad(spec, name, f"attribute value {value!r} is not one of "
                                   f"{', '.join(str(v) for v in clause.values)}", value,
                       limit=", ".join(str(v) for v in clause.values),
                       hint=f"write {name}=" + " or ".join(repr(v) for v in clause.values))
        return value
    if clause.form == "args" and clause.repeat:
        if not isinstance(value, (list, tuple)) or (value and not all(isinstance(v, (tuple, dict)) for v in value)):
            raise _bad(spec, name, f"repeated clause takes a list of parameter tuples (one per {name}(...) group), "
                                   f"got {value!r}", value, hint=f"write {name}=[(...), (...)]")
        single = Clause(clause.name, "args", clause.group, clause.values, clause.params, clause.keys,
                        clause.min_params)
        return tuple(normalize_clause(spec, single, v) for v in value)
    if clause.form == "word_or_arg":
        if isinstance(value, str):
            if value not in clause.values:
                raise _bad(spec, name, f"value {value!r} is not one of {', '.join(clause.values)} "
                                       f"(or one {', '.join(clause.params)} operand)", value,
                           limit=", ".join(clause.values),
                           hint=f"write {name}=" + " or ".join(repr(v) for v in clause.values) +
                                f", or pass the {', '.join(clause.params)} operand")
            return value
        if value is True or value is False:
            raise _bad(spec, name, f"takes one of {', '.join(clause.values)} or one "
                                   f"{', '.join(clause.params)} operand, got {value!r}", value,
                                   hint=f"write {name}=\"{clause.values[0]}\" (one of {', '.join(clause.values)}) or "
                                        f"pass a {', '.join(clause.params)} value")
        return value
    if clause.form == "args":
        nparams = len(clause.params)
        need = nparams if clause.min_params is None else clause.min_params
        if isinstance(value, dict):
            pos = []
            kw = {}
            for k, v in value.items():
                key = k.lstrip("%")
                if key in clause.keys:
                    kw[key] = v
                elif "%" + key in clause.params or key in clause.params:
                    pos.append((clause.params.index("%" + key if "%" + key in clause.params else key), v))
                else:
                    raise _bad(spec, name, f"unknown parameter {k!r}", k,
                               limit=", ".join(list(clause.params) + list(clause.keys)),
                               hint="name the parameters as listed (or give them positionally in a tuple)")
            pos.sort()
            if [i for i, _ in pos] != list(range(len(pos))):
                raise _bad(spec, name, "positional parameters must be given without gaps", value,
                           limit=", ".join(clause.params),
                           hint=f"give {name}'s parameters {', '.join(clause.params)} in order from the first, "
                                f"or name them")
            args = tuple(v for _, v in pos)
        else:
            items = value if isinstance(value, tuple) else (value,)
            kw = {}
            if items and isinstance(items[-1], dict):
                kw = dict(items[-1])
                items = items[:-1]
            args = tuple(items)
        if not need <= len(args) <= nparams:
            raise _bad(spec, name, f"takes {need}..{nparams} parameters ({', '.join(clause.params)}), "
                                   f"got {len(args)}", value,
                       hint=f"write {name}=({', '.join(clause.params[:need])}"
                            f"{', ...' if nparams > need else ''}) with one value per parameter")
        _check_params(spec, clause, args)
        for k, v in kw.items():
            if k not in clause.keys:
                raise _bad(spec, name, f"unknown key {k!r}", k, limit=", ".join(clause.keys) or "(none)",
                           hint="use one of the listed keys" if clause.keys else f"{name} takes no keys")
            legal = clause.keys[k]
            if legal and v not in legal:
                raise _bad(spec, f"{name}({k})", f"value {v!r} is not one of {', '.join(legal)}", v,
                           limit=", ".join(legal),
                           hint=clause.value_hints.get(v) if isinstance(v, str) else None)
        return (args, kw)
    raise ValueError(f"bad clause form {clause.form!r} in {spec.name}")


def clause_python(clause: Clause, value, leaf: Callable) -> Optional[str]:
    """The Python keyword value (source text) that spells clause value ``value``, given in the canonical form
    `normalize_clause` returns -- its inverse: ``normalize_clause(spec, clause, eval(text)) == value``
    (``tik-migrate --format python``, `tbe_compat.migrate_python`). ``leaf(v)`` writes one parameter value
    (a number, or a program value a front end names). None: the clause is omitted.

    ``flag`` -> ``True``; ``sat`` -> ``True`` / ``False`` / ``"preserve_nan"``; ``word`` -> ``"check_only"``;
    ``args`` -> the one parameter bare (``mask=128``), several as a tuple (``rep_stride=(8, 8, 8)``), keys as a
    trailing dict (``pre_quant=(0.0, {"mode": "f32_f16"})``, keys only: ``pre_relu={"mode": "normal_relu"}``);
    a repeated ``args`` clause a list of tuples; ``optarg`` -> ``True`` or its parameter."""
    if value is None:
        return None
    form = clause.form
    if form == "flag":
        return "True"
    if form == "args" and clause.repeat:
        return "[" + ", ".join(_args_python(entry, leaf, bare=False) for entry in value) + "]"
    if form == "args":
        return _args_python(value, leaf, bare=True)
    if value is True or value is False:          # sat / optarg / attr
        return repr(value)
    if isinstance(value, str):                   # word / sat(preserve_nan) / word_or_arg / attr
        return json.dumps(value)
    return leaf(value)                           # optarg / word_or_arg parameter, attr number


def _args_python(value, leaf: Callable, *, bare: bool) -> str:
    args, kw = value
    keys = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v) if isinstance(v, str) else leaf(v)}"
                           for k, v in kw.items()) + "}"
    if not kw and bare and len(args) == 1:
        return leaf(args[0])
    if not args and kw:
        return keys
    items = [leaf(a) for a in args] + ([keys] if kw else [])
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def make_call(spec: OpSpec, args: tuple, kwargs: dict, where: Optional[Provenance] = None) -> OpCall:
    """Validate arity, clause names/values, canonical order and exclusivity; build an `OpCall`.

    The arity bounds and the clause lookup / order / exclusivity verdict depend only on the
    op and on which clause names are given, so they are computed once per (op, clause-name
    sequence) and cached (`_call_shape`); clause *values* are checked on every call.
    """
    info = _CALL_INFO.get(spec.name)
    if info is None or info[0] is not spec:
        info = _CALL_INFO[spec.name] = (spec, len([o for o in spec.operands if not o.optional]), len(spec.operands),
                                        {})
    if not info[1] <= len(args) <= info[2]:
        names = ", ".join(o.name for o in spec.operands)
        raise IllegalOperand(f"takes {info[1]} operands ({names}), got {len(args)}", op=spec.asm_name,
                             value=len(args), hint=f"signature: {spec.signature()}", where=where)
    if not kwargs:
        return OpCall(spec, tuple(args), {}, where)
    names = tuple([k for k, v in kwargs.items() if v is not None])
    shape = info[3].get(names)
    clauses: dict = {}
    try:
        if shape is None:       # first time: the full interleaved checks (same error order as ever), then cache
            shape = _call_shape(spec, names, kwargs, clauses, where)
            if len(info[3]) < 256:
                info[3][names] = shape
            return OpCall(spec, tuple(args), clauses, where)
        for key, clause in shape:
            clauses[key] = normalize_clause(spec, clause, kwargs[key])
    except PtoError as e:           # a clause error is reported at the user's call
        raise e.with_where(where)
    return OpCall(spec, tuple(args), clauses, where)


#: op name -> (spec, required operand count, operand count, {clause-name tuple: ((name, Clause), ...)})
_CALL_INFO: dict = {}


def _call_shape(spec: OpSpec, names: tuple, kwargs: dict, clauses: dict, where: Optional[Provenance]) -> tuple:
    """Check the clause names in order (known, not exclusive, canonical order) and normalise each value
    into ``clauses`` right after its name passed; return ``((name, Clause), ...)`` for the cache."""
    order = {c.slot: i for i, c in enumerate(_slots(spec))}
    seen_slots: dict = {}
    last = -1
    out = []
    for key in names:
        clause = spec.clause(key)
        slot = clause.slot
        if slot in seen_slots:
            raise IllegalOperand(f"clauses {seen_slots[slot]!r} and {key!r} are mutually exclusive",
                                 op=spec.asm_name, operand=key, where=where,
                                 hint="keep only one of them")
        idx = order[slot]
        if idx < last:
            canon = " -> ".join(dict.fromkeys(c.slot for c in spec.clauses))
            raise IllegalOperand(f"clause {key!r} is out of canonical order", op=spec.asm_name, operand=key,
                                 limit=canon, where=where, hint=f"write the clauses in the order {canon}")
        last = idx
        seen_slots[slot] = key
        clauses[key] = normalize_clause(spec, clause, kwargs[key])
        out.append((key, clause))
    return tuple(out)


def _slots(spec: OpSpec):
    seen = {}
    for c in spec.clauses:
        seen.setdefault(c.slot, c)
    return list(seen.values())


# ----------------------------------------------------------------------------- provenance

_INTERNAL = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]


#: file name -> whether it is under an internal package (cache of `user_frame`)
_IS_INTERNAL: dict = {}


def add_internal_package(path: str) -> None:
    """Frames from files under ``path`` are skipped when finding the user's call site (idempotent)."""
    path = os.path.abspath(path)
    if path not in _INTERNAL:
        _INTERNAL.append(path)
        _IS_INTERNAL.clear()


def is_internal_file(fn: str) -> bool:
    """Whether frames of the file ``fn`` (a code object's ``co_filename``) are not the user's: under an internal
    package (`add_internal_package`), or frozen. The name is compared as an absolute normalised path, as the
    packages are registered: a console script started as ``./venv/bin/tik-run`` runs as ``/cwd/./venv/bin/tik-run``
    (h_user453: its frame stayed in TIK call stacks)."""
    if fn.startswith("<"):
        return fn.startswith("<frozen")
    fn = os.path.abspath(fn)
    # whole path components: a registered launcher /venv/bin/tik-run does not cover the user's
    # /venv/bin/tik-run_kernel.py, nor the package /site/pto_core a folder /site/pto_core_kernels (review457)
    return any(fn == p or fn.startswith(p if p.endswith(os.sep) else p + os.sep) for p in _INTERNAL)


def user_frame(skip: int = 1) -> Optional[Provenance]:
    """``file:line`` of the innermost frame outside this package (and registered packages).

    Whether a file is internal is decided once per file name (`_IS_INTERNAL`), so the walk
    costs one dict look-up per frame.
    """
    site = _user_site(skip + 1)
    return None if site is None else Provenance(site[0], site[1])


def _user_site(skip: int):
    """``(file, line)`` of the innermost non-internal frame ``skip`` levels up, or None."""
    f = sys._getframe(skip)
    internal = _IS_INTERNAL
    while f is not None:
        fn = f.f_code.co_filename
        hit = internal.get(fn)
        if hit is None:
            hit = internal[fn] = is_internal_file(fn)
        if not hit:
            return fn, f.f_lineno
        f = f.f_back
    return None


def _call_site(skip: int, call: str) -> Optional[Provenance]:
    """Provenance of the user's call site ``skip`` frames up, tagged with ``call`` (shared per site)."""
    site = _user_site(skip + 1)
    return None if site is None else site_provenance(site[0], site[1], call)


# ----------------------------------------------------------------------------- dispatch

#: A recorder (program builder) receiving calls instead of executing them; see pto_core.program.
_recorders: list = []


def push_recorder(recorder) -> None:
    _recorders.append(recorder)


def pop_recorder(recorder) -> None:
    if not _recorders or _recorders[-1] is not recorder:
        raise RuntimeError("program builders must be closed in the order they were opened")
    _recorders.pop()


def current_recorder():
    return _recorders[-1] if _recorders else None


#: Functions ``route(call) -> recorder or None`` asked, in order, where a ``pto.<op>`` call goes when
#: no program builder is active and no operand is a machine-bound pointer. A facade that records
#: kernels its own way claims a call by returning its recorder (the TIK facade: ``pto.*`` calls made
#: inside a TIK kernel, see ``tbe_compat/tik/bridge.py``); None leaves it to eager execution.
_routers: list = []


def add_router(route) -> None:
    """Register a call router (see `_routers`); registering the same function twice is a no-op."""
    if route not in _routers:
        _routers.append(route)


#: Functions ``hook(error, args, kwargs) -> error`` asked, in order, when a ``pto.<op>`` call made outside
#: a program builder has operands `make_call` refuses (arity, clause names, clause shapes): a facade
#: whose kernel the call's pointers belong to returns the error as its own kind (the TIK facade: a TIK
#: error, which prints as the message and the user's call stack, like every other error of a TIK script);
#: any other call's error is returned unchanged.
_call_error_hooks: list = []


def add_call_error_hook(hook) -> None:
    """Register a call-error hook (see `_call_error_hooks`); registering the same function twice is a no-op."""
    if hook not in _call_error_hooks:
        _call_error_hooks.append(hook)


def swapped_pointers_hint(spec: OpSpec, operands: tuple) -> Optional[str]:
    """The fix for a space error whose cause is two pointer operands given in each other's places (TIK's
    ``data_move(dst, src, ...)`` order kept in ``pto.mte_gm_ub(src, dst, ...)``): each pointer is in a space
    the other operand accepts and at least one is in a space its own operand refuses; else None."""
    ptrs = [(o, getattr(v, "space", None)) for o, v in zip(spec.operands, operands) if o.kind == "ptr" and o.spaces]
    for i, (a, sa) in enumerate(ptrs):
        for b, sb in ptrs[i + 1:]:
            if sa is None or sb is None or (sa in a.spaces and sb in b.spaces):
                continue
            if sa in b.spaces and sb in a.spaces:
                na, nb = a.name.lstrip("%"), b.name.lstrip("%")
                order = ", ".join(o.name.lstrip("%") for o in spec.operands if o.kind == "ptr")
                return (f"%{na} and %{nb} look swapped: {spec.asm_name} takes them in the order ({order}) -- pass "
                        f"the {na} pointer (in {' / '.join(a.spaces)}) first; TIK's data_move, fixpipe and mmad name the "
                        f"destination first, PTO moves and cube ops last")
    return None


#: How many ops `move_op_hint` names at most (the first with its signature).
MOVE_OP_HINT_MAX_OPS = 3
#: The op names `move_op_hint` suggests from: the moves (MTE and FIXPIPE ``mte_*``, the legacy L0C paths
#: ``copy_matrix_*``); other two-pointer ops (img2col, load2d, vector ops) compute or re-lay data.
MOVE_OP_PREFIXES = ("mte_", "copy_matrix_")


#: Ops that exist on some targets only: op name -> ``fn(target) -> bool``, registered by the op's module
#: (`register_availability`: ``pto.mte_l0c_ub`` needs ``fixpipe_to_ub``, the legacy cube ops their chip
#: families). `move_op_hint` names only the moves the call's target has.
OP_AVAILABILITY: dict = {}
#: How many targets `op_targets_text` names (the rest are counted).
OP_TARGETS_SHOWN = 4


def register_availability(name: str, available) -> None:
    """Declare that op ``name`` exists only on the targets for which ``available(target)`` is true."""
    OP_AVAILABILITY[name] = available


def op_available(name: str, target) -> bool:
    """Whether op ``name`` exists on ``target`` (True for ops without an `OP_AVAILABILITY` entry, or no target)."""
    available = OP_AVAILABILITY.get(name)
    return available is None or target is None or bool(available(target))


def op_targets_text(name: str) -> str:
    """The targets that have op ``name``, for a message: ``"A5"``, ``"Ascend310, Ascend910A, ... (8 targets)"``."""
    from ..targets import profiles
    names = [p.name for p in profiles() if op_available(name, p)]
    shown = ", ".join(names[:OP_TARGETS_SHOWN])
    return shown + (f" and {len(names) - OP_TARGETS_SHOWN} more" if len(names) > OP_TARGETS_SHOWN else "")


def move_op_hint(spec: OpSpec, operands: tuple, target=None) -> Optional[str]:
    """The fix for a space error of a two-pointer move whose pointers lie in spaces another op moves
    between (``pto.mte_gm_l1(gm_ptr, ub_ptr, ...)``: GM -> UB is ``pto.mte_gm_ub``): names those ops, the
    first with its signature, since the operands differ between moves (``mte_gm_ub`` takes an
    ``l2_cache_ctl`` that ``mte_gm_l1`` does not). Only ops ``target`` has are named (`OP_AVAILABILITY`:
    L0C -> UB is ``pto.mte_l0c_ub`` on A5 only, ``pto.copy_matrix_cc_to_ubuf`` on v100/v200 only); when it
    has none, the hint says that and which targets have them. None when the op has not exactly two pointer
    operands, a pointer's space is unknown, the spaces are accepted, or no other move takes them (only
    `MOVE_OP_PREFIXES` ops are suggested). Only a move (a `MOVE_OP_PREFIXES` op: source pointer first) gets
    it: a vector op's pointers are dst first, so ``pto.ub.vabs(gm_dst, ub_src)`` was told "vabs moves ub -> ub;
    gm -> ub is pto.mte_gm_ub", backwards and about an op that moves nothing."""
    if not spec.name.startswith(MOVE_OP_PREFIXES):
        return None
    ptrs = [(o, getattr(v, "space", None)) for o, v in zip(spec.operands, operands) if o.kind == "ptr"]
    if (len(ptrs) != 2 or any(not o.spaces or s is None for o, s in ptrs)
            or all(s in o.spaces for o, s in ptrs)):
        return None
    spaces = [s for _, s in ptrs]
    found = []
    for name, other in OPS.items():
        if other is spec or not name.startswith(MOVE_OP_PREFIXES):
            continue
        optrs = [o for o in other.operands if o.kind == "ptr"]
        if len(optrs) == 2 and all(o.spaces and s in o.spaces for o, s in zip(optrs, spaces)):
            found.append(other)
    if not found:
        return None
    found.sort(key=lambda o: (not o.name.startswith("mte_"), len(o.name), o.name))
    takes = " -> ".join("/".join(o.spaces) for o, _ in ptrs)
    here = [o for o in found if op_available(o.name, target)]
    if not here:                        # the moves exist, but not on this chip
        elsewhere = "; ".join(f"{o.asm_name} exists on {op_targets_text(o.name)}" for o in found[:MOVE_OP_HINT_MAX_OPS])
        return (f"{spec.asm_name} moves {takes}; {target.label} has no move {spaces[0]} -> {spaces[1]} "
                f"({elsewhere}): pass pointers in the spaces {spec.asm_name} takes (e.g. through another space "
                f"this chip moves between), or pick a target that has the move")
    found = here[:MOVE_OP_HINT_MAX_OPS]
    names = " or ".join(o.asm_name for o in found)
    return (f"{spec.asm_name} moves {takes}; {spaces[0]} -> {spaces[1]} is {names} (signature: "
            f"{found[0].signature()}; its operands and units may differ from {spec.asm_name}'s), or pass "
            f"pointers in the spaces {spec.asm_name} takes")


def space_error_hint(spec: OpSpec, operands: tuple, target=None) -> Optional[str]:
    """The fix of an `IllegalOperand` of a call's pointers, if one applies: swapped pointers first
    (`swapped_pointers_hint`), else another move between the given spaces that ``target`` has (`move_op_hint`)."""
    return swapped_pointers_hint(spec, operands) or move_op_hint(spec, operands, target)


def execute_call(ctx, call: OpCall) -> None:
    """Run one validated call on ``ctx`` (an `ExecContext`), attaching provenance to errors."""
    spec = call.spec
    pipe = spec.pipe
    ctx.begin_op(spec.asm_name, pipe(call.operands, call.clauses) if callable(pipe) else pipe, call.where)
    try:
        spec.execute(ctx, *call.operands, **call.clauses)
    except PtoError as e:
        if e.op is None:
            e.op = spec.asm_name
        e.with_where(call.where)
        raise


_memory = None   # pto_core.memory, bound on first dispatch (it imports nothing from here)
#: operand kinds `check_constant_operand` checks (pipes and events have their own canonicalisation)
_CHECKED_KINDS = frozenset(("ptr", "ptrs", "int", "float", "scalar"))


def dispatch(name: str, args: tuple, kwargs: dict):
    """Entry point of ``pto.<name>(...)``: record into the active builder, or execute eagerly.

    Eager path: validate (`make_call`, cached per clause-name set), find the machine from
    the bound pointers, run ``verify`` then ``execute`` (`execute_call`).
    """
    global _memory
    if _memory is None:
        from .. import memory as _m
        _memory = _m
    spec = OPS.get(name)
    if spec is None:
        spec = get_op(name)
    asm_name = "pto." + spec.name
    where = _call_site(2, asm_name)
    try:
        call = make_call(spec, args, kwargs, where)
    except PtoError as e:
        if _recorders or not _call_error_hooks:
            raise
        err = e
        for hook in _call_error_hooks:
            err = hook(err, args, kwargs)
        if err is e:
            raise
        raise err from None
    if _recorders:
        return _recorders[-1].record(call)
    if _routers:  # a facade may claim calls none of whose pointers is bound to a machine
        ptr_type = _memory.Ptr
        flat = [x for v in call.operands for x in (v if isinstance(v, (tuple, list)) else (v,))]
        if not any(isinstance(v, ptr_type) and v.ctx is not None for v in flat):
            for route in _routers:
                rec = route(call)
                if rec is not None:
                    return rec.record(call)
    ctx = None
    ptr_type = _memory.Ptr
    try:
        for o, v in zip(spec.operands, call.operands):
            if o.kind in _CHECKED_KINDS:
                check_constant_operand(spec.asm_name, o, v, ptr_type)
    except PtoError as e:
        raise e.with_where(where) from None
    for v in call.operands:
        if isinstance(v, ptr_type):
            vctx = v.ctx
        elif isinstance(v, (tuple, list)):
            vctx = _bound_ctx(spec, v, ptr_type, where)
        else:
            continue
        if vctx is not None:
            if ctx is None:
                ctx = vctx
            elif vctx.machine is not ctx.machine:
                raise IllegalOperand("operands are bound to different machines", op=asm_name,
                                     where=where, hint="create all pointers from the same Machine")
    if ctx is None:
        ctx = _memory.current_context()
    else:
        _memory._current.ctx = ctx
    begun = False
    try:
        if spec.verify is not None:
            spec.verify(call, ctx.target)
        pipe = spec.pipe
        ctx.begin_op(asm_name, pipe(call.operands, call.clauses) if callable(pipe) else pipe, where)
        begun = True
        races = ctx.races
        if races is None:
            spec.execute(ctx, *call.operands, **call.clauses)
        else:                     # multi-core: the GM race checker journals the op's accesses (abort_op)
            races.begin_op()
            try:
                spec.execute(ctx, *call.operands, **call.clauses)
            except PtoError:
                raise             # refused: abort_op below forgets its accesses
            except BaseException:
                races.end_op()    # not refused (a Python error, KeyboardInterrupt): its accesses and races stand
                raise
            races.end_op()
    except PtoError as e:
        if begun:                 # a refused op leaves no accesses behind (a caller may catch and go on)
            ctx.abort_op()
        if e.op is None:
            e.op = asm_name
        if isinstance(e, IllegalOperand):
            e.hint = space_error_hint(spec, call.operands, ctx.target) or e.hint
        e.with_where(where)
        raise
    return None


def _bound_ctx(spec: OpSpec, values, ptr_type, where):
    """The context the pointers in a tuple/list operand are bound to (None if none is)."""
    ctx = None
    for v in values:
        if isinstance(v, ptr_type) and v.ctx is not None:
            if ctx is None:
                ctx = v.ctx
            elif v.ctx.machine is not ctx.machine:
                raise IllegalOperand("operands are bound to different machines", op=spec.asm_name,
                                     where=where, hint="create all pointers from the same Machine")
    return ctx
