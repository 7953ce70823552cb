"""``BuildCCE``: fix the kernel signature and freeze the chip.

Signature (what ``tikdb.start_debug`` feeds and returns):

* ``inputs`` -- GM tensors (feed arrays) and InputScalars (feed numbers), in order;
  ``flowtable`` entries are inputs too, appended: InputScalars, or the GM tiling tensor of
  CANN's dynamic-shape operators (``flowtable=[self.tiling_gm]``, filled by host tiling);
* ``outputs`` -- GM tensors (or views of them), returned in order;
* a tensor in both lists is an in/out argument; GM tensors in neither list are internal
  (``is_workspace`` tensors, ``init_value`` tensors, and tensors a script declared but did
  not list) -- they start with the fill pattern (or their ``init_value``).

GM arguments get the TIK names (feed keys); internal tensors keep unique internal
names. Output GM tensors start with the recognisable GM pattern, except
``is_atomic_add=True`` ones, which start at zero (the framework clears atomic outputs
before launch; multi-core reductions rely on it), or at their one ``init_value`` when they
have one (`ATOMIC_INIT_VALUE_OUTPUTS`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from pto_core.errors import CapacityExceeded, UnsupportedOp
from pto_core.program import OpStmt, walk_stmts

from .. import platform
from .scalar import InputScalar
from .tensor import SPACE_TIK_NAMES, Tensor

#: BuildCCE's kernel_name format (TIK BuildCCE page: "digits, letters and underscores, not starting with a
#: digit"; the name becomes the C kernel function ``<name>__kernel0``). ASCII only: TIK's own check is the
#: regex ``^[0-9A-Za-z_]+$``, so dots and non-ASCII letters are rejected as well.
_KERNEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Named choice ATOMIC_INIT_VALUE_OUTPUTS: a GM tensor declared ``is_atomic_add=True`` with one immediate
#: ``init_value=v`` (`INIT_VALUE_SCALAR_FILL`) may be listed in BuildCCE's outputs; it then starts as ``v`` in every
#: element at launch (instead of the zero of other atomic outputs) and is returned like any output. CANN's dynamic
#: ``roi_pooling_with_arg_max`` lists such an argmax output (``init_value=-1``); the framework's atomic clean of
#: an output is a memset to one value before the op runs (Ascend C InitValue + SetNeedAtomic pages,
#: atlasascendc_api_07_0972). Still refused (tik_api.md §3.2: init_value tensors are internal): any init_value
#: tensor in inputs, and in outputs a list-form init_value or one without is_atomic_add.
#: migration_guide/tik_core.md (init_value row).
ATOMIC_INIT_VALUE_OUTPUTS = True

#: BuildCCE argument count limit (CANN 8.1; inputs + flowtable + outputs + workspace + global tensors).
MAX_ARGS = 192
#: Named choice GLOBAL_TENSORS_ARE_ARGUMENTS: a ``Tensor(..., scope_gm, is_global_tensor=True)`` is a kernel
#: argument the framework allocates (CANN 8.1.RC1 tik_build.py: ``_set_global_tensor_list`` hands each one's name
#: and size to ``TIK_GLOBAL_TENSOR_LIST``), like a workspace: it counts in BuildCCE's 192-argument limit
#: (``_check_in_and_out_num``), it may not be listed in inputs / outputs / flowtable ("global tensor's name is used
#: in input or output!", ``_check_non_inputs_outputs_tensor``) and it cannot have an init_value. In the debugger
#: it is an internal GM buffer, as a workspace (it was accepted and ignored: not counted, listable as an input).
GLOBAL_TENSORS_ARE_ARGUMENTS = True
#: Named choice **INTERNAL_GM_NAMES_APART**: a workspace (``is_workspace=True``) or global tensor
#: (``is_global_tensor=True``) named like a BuildCCE input, output or flowtable entry, or an ``init_value`` tensor
#: named like an input or output, is refused at BuildCCE, as CANN 8.1.RC1 ``Tik._check_non_inputs_outputs_tensor``
#: (tbe/tik/api/tik_build.py) refuses it ("Workspace's name is used in input or output!", "global tensor's name is
#: used in input or output!", "init value tensor's name is used in input or output!"; te.tik 2019's BuildCCE the
#: same for workspaces). Until fix451 the simulator built such a kernel (the workspace's messages named it
#: '<name>_ws', its internal argument name), which CANN does not. A GM tensor that is none of these, not listed and
#: named like another GM tensor (no TIK check is known) is shown in messages as ``'name@file:line'`` (its
#: declaration), so the two stay apart. False: accepted (the workspace shown by its argument name, as before).
#: migration_guide/tik_core.md (Names and GM tensors).
INTERNAL_GM_NAMES_APART = True


def _check_arg_count(tik, ins, flow, outs) -> None:
    """CANN 8.1 ``Tik._check_in_and_out_num``: ``len(inputs) + len(flowtable) + len(outputs) + workspaces +
    global tensors <= 192`` (each list counted as given; empty outputs count the one fake output TIK adds).
    Workspaces (``is_workspace=True`` GM tensors) are kernel arguments the framework allocates, so they count
    although BuildCCE does not list them (tik_api.md §3.2)."""
    workspaces = sum(1 for st in tik._gm_tensors if st.is_workspace)
    glob = sum(1 for st in tik._gm_tensors if st.is_global) if GLOBAL_TENSORS_ARE_ARGUMENTS else 0
    n = len(ins) + len(flow) + max(len(outs), 1) + workspaces + glob
    if n > MAX_ARGS:
        outputs = f"{len(outs)} outputs" if outs else "1 output (the one TIK adds to an empty outputs list)"
        parts = f"{len(ins)} inputs + {len(flow)} flowtable + {outputs} + {workspaces} workspaces"
        parts += f" + {glob} global tensors" if glob else ""
        raise tik._error(f"{n} kernel arguments ({parts}) exceed the limit {MAX_ARGS}", operand="inputs", value=n,
                         limit=MAX_ARGS,
                         hint=f"pass at most {MAX_ARGS} kernel arguments: pack several small inputs or outputs into "
                              f"one GM tensor (index it by offset), or share one workspace (or global tensor) "
                              f"between uses")


@dataclass
class BuildInfo:
    """What BuildCCE fixed: the kernel name, the signature and the frozen chip."""

    kernel_name: str
    inputs: list                  # Tensor | InputScalar, in order (flowtable appended)
    outputs: list                 # Tensor views, in order
    soc: object                   # platform.SocState at BuildCCE
    config: dict = field(default_factory=dict)
    where: object = None          # Provenance of the BuildCCE call

    @property
    def feed_names(self) -> list:
        return [x.name for x in self.inputs]


#: Named choice: ``None`` in BuildCCE ``inputs`` is an absent optional input and is dropped (no
#: kernel argument, no feed_dict key). CANN ops list optional inputs that way (attention_ln_qkv
#: extends its inputs with ``None`` biases when the op has none); the BuildCCE reference page lists
#: only Tensors and InputScalars, and TIK 2019's build refused anything else. ``None`` in ``outputs``
#: stays an error.
ABSENT_OPTIONAL_INPUT = None


def _as_list(tik, value, what: str) -> list:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (Tensor, InputScalar)):
        return [value]
    raise tik._error(f"{what} must be a list or tuple of tensors (or one tensor), got {type(value).__name__}",
                     operand=what, value=repr(value), hint=f"pass {what}=[t0, t1, ...] (a list of GM tensors)")


def build(tik, kernel_name, inputs, outputs, config, flowtable) -> None:
    if kernel_name is None:
        raise tik._error("kernel_name is required", operand="kernel_name",
                         hint="BuildCCE(kernel_name='my_kernel', inputs=[...], outputs=[...])")
    if not isinstance(kernel_name, str) or not _KERNEL_NAME.fullmatch(kernel_name):
        raise tik._error(f"kernel_name {kernel_name!r} must be an identifier-like string", operand="kernel_name",
                         value=kernel_name, limit="[A-Za-z_][A-Za-z0-9_]*",
                         hint="use letters, digits and _ only, not starting with a digit (e.g. 'add_kernel')")
    if config is not None and (not isinstance(config, dict) or not all(isinstance(k, str) for k in config)):
        raise tik._error("config must be a dict with str keys", operand="config", value=repr(config),
                         hint="pass config={'key': value, ...} or omit it")
    if tik._builder._blocks[-1] is not tik._builder.program.body or len(tik._builder._blocks) != 1:
        raise tik._error("BuildCCE is called inside a for_range/if_scope body", operand="kernel_name",
                         hint="call BuildCCE after every `with` block of the kernel is closed")
    ins = [x for x in _as_list(tik, inputs, "inputs") if x is not ABSENT_OPTIONAL_INPUT]
    outs = _as_list(tik, outputs, "outputs")
    flow = _as_list(tik, flowtable, "flowtable")
    for i, x in enumerate(ins):
        if isinstance(x, InputScalar):
            continue
        _check_gm(tik, x, f"inputs[{i}]")
    for i, x in enumerate(flow):
        if not isinstance(x, InputScalar):
            _check_gm(tik, x, f"flowtable[{i}]")
    for i, x in enumerate(outs):
        if isinstance(x, InputScalar):
            raise tik._error(f"outputs[{i}] is an InputScalar; outputs are GM tensors", operand=f"outputs[{i}]",
                             value=x.name,
                             hint="list InputScalars in BuildCCE(inputs=[...]); outputs holds GM tensors only")
        _check_gm(tik, x, f"outputs[{i}]")
        first = next((j for j, o in enumerate(outs[:i]) if o is x), None)    # views of one tensor: distinct outputs
        if first is not None:       # start_debug returns one array per entry: the user's unpacking shifts
            raise tik._error(f"outputs[{i}] (tensor {x.name!r}) is outputs[{first}] again: an output is listed once",
                             operand=f"outputs[{i}]", value=x.name,
                             hint="list each output tensor once (BuildCCE argument names are unique, tik_api.md "
                                  "§3.2); start_debug returns one array per listed output, so a repeated one "
                                  "hands the next output's place to a copy of it")
    feed = ins + [s for s in flow if all(s is not x for x in ins)]
    _check_arg_count(tik, ins, flow, outs)
    _check_names(tik, feed, outs)
    if INTERNAL_GM_NAMES_APART:
        _check_internal_names(tik, ins, flow, outs)
    used = {id(s) for s in feed if isinstance(s, InputScalar)}
    for s in tik._input_scalars:
        if id(s) not in used:
            raise tik._error(f"InputScalar {s.name!r} is not listed in BuildCCE inputs (or flowtable)",
                             operand="inputs", value=s.name,
                             hint="every InputScalar is a kernel argument: add it to inputs=[...]")
    _freeze_chip(tik)
    _signature(tik, kernel_name, feed, outs)
    prog = tik._builder.program
    printf_params = getattr(tik, "_printf_params", None)
    if printf_params is not None and (prog.block_num is None or isinstance(prog.block_num, int)):
        tik._check_printf_cores(printf_params, prog.block_num or 1)     # a run-time block_num: at start_debug
    prog.name = kernel_name
    prog._executable = None
    tik.build = BuildInfo(kernel_name, feed, outs, platform.current_soc(), dict(config or {}), tik._where)


def _check_gm(tik, x, what: str) -> None:
    if not isinstance(x, Tensor):
        raise tik._error(f"{what} must be a GM tensor or InputScalar, got {type(x).__name__} {x!r}", operand=what,
                         value=repr(x),
                         hint="list the kernel's GM tensors (scope_gm) and InputScalars; Scalars and on-chip "
                              "tensors are not arguments")
    if x.tik is not tik:
        raise tik._error(f"{what} (tensor {x.name!r}) belongs to another Tik instance", operand=what, value=x.name,
                         hint="list tensors created by this tik.Tik() instance")
    if x.space != "gm":
        raise tik._error(f"{what} (tensor {x.name!r}) is in {SPACE_TIK_NAMES[x.space]}; kernel arguments are GM "
                         f"tensors", operand=what, value=x.scope, limit="scope_gm",
                         hint="list GM tensors (scope_gm) only; on-chip tensors are filled from GM inside the kernel")
    st = x.storage
    if st.is_workspace:
        raise tik._error(f"{what} (tensor {x.name!r}) is a workspace (is_workspace=True); workspaces are internal",
                         operand=what, value=x.name, hint="drop it from inputs/outputs")
    if st.is_global and GLOBAL_TENSORS_ARE_ARGUMENTS:
        raise tik._error(f"{what} (tensor {x.name!r}) is a global tensor (is_global_tensor=True); the framework "
                         f"passes global tensors itself", operand=what, value=x.name,
                         hint="drop it from inputs/outputs/flowtable (CANN TIK: \"global tensor's name is used in "
                              "input or output!\"), or declare it without is_global_tensor to pass it yourself")
    if st.init_value is not None and not (what.startswith("outputs") and _atomic_init_output(st)):
        hint = "drop it from inputs/outputs"
        if what.startswith("outputs"):
            hint += ("; an output that must start at one value is declared is_atomic_add=True with one immediate "
                     "init_value=v (ATOMIC_INIT_VALUE_OUTPUTS)")
        raise tik._error(f"{what} (tensor {x.name!r}) has init_value; such tensors are internal", operand=what,
                         value=x.name, hint=hint)


def _atomic_init_output(st) -> bool:
    """`ATOMIC_INIT_VALUE_OUTPUTS`: ``st`` (with an init_value) may be a BuildCCE output."""
    return ATOMIC_INIT_VALUE_OUTPUTS and st.is_atomic_add and st.init_value.size == 1


def _check_names(tik, feed: list, outs: list) -> None:
    seen = {}
    for x in feed + outs:
        key = x.storage if isinstance(x, Tensor) else x
        prev = seen.get(x.name)
        if prev is not None and prev is not key:
            raise tik._error(f"two different kernel arguments are named {x.name!r}", operand="inputs", value=x.name,
                             hint="give every BuildCCE input/output a unique name= (it is the feed_dict key)")
        seen[x.name] = key
        if not x.name.isidentifier():
            raise tik._error(f"kernel argument name {x.name!r} must be an identifier", operand="inputs",
                             value=x.name,
                             hint="give the tensor a name= made of letters, digits and _ (it is the feed_dict key)")


#: (kind of internal GM tensor, its Storage test, CANN 8.1's words, whether flowtable names count) for
#: `_check_internal_names`, in CANN's order of checks
_INTERNAL_KINDS = (
    ("workspace (is_workspace=True)", lambda st: st.is_workspace, "Workspace's name is used in input or output!",
     True),
    ("global tensor (is_global_tensor=True)", lambda st: st.is_global, "global tensor's name is used in input or "
     "output!", True),
    ("init_value tensor", lambda st: st.init_value is not None, "init value tensor's name is used in input or "
     "output!", False),
)


def _check_internal_names(tik, ins: list, flow: list, outs: list) -> None:
    """INTERNAL_GM_NAMES_APART: no workspace / global / init_value tensor that is not itself listed shares its name
    with a BuildCCE argument (CANN 8.1 ``Tik._check_non_inputs_outputs_tensor``)."""
    listed = {id(x.storage) for x in ins + flow + outs if isinstance(x, Tensor)}
    for kind, test, words, with_flow in _INTERNAL_KINDS:
        args = {}
        for what, xs in (("inputs", ins), ("outputs", outs)) + ((("flowtable", flow),) if with_flow else ()):
            for i, x in enumerate(xs):
                args.setdefault(x.name, f"{what}[{i}]")
        for st in tik._gm_tensors:
            if id(st) in listed or not test(st) or st.name not in args:
                continue
            where = f" (declared at {st.where.file}:{st.where.line})" if st.where is not None else ""
            raise tik._error(f"{kind} {st.name!r}{where} has the name of BuildCCE's {args[st.name]} (TIK: "
                             f"\"{words}\")", operand=args[st.name].split("[")[0], value=st.name,
                             limit="a name no input or output has",
                             hint=f"rename one of the two: e.g. name='{st.name}_{'ws' if st.is_workspace else 'buf'}' "
                                  f"for the {kind.split(' (')[0]} (an input's name is also its feed_dict key)")


def _freeze_chip(tik) -> None:
    soc = platform.current_soc()
    target = soc.profile
    prog = tik._builder.program
    prog.target = target
    from .placement import buffer_capacity
    for space, (hi, st) in tik._placement.high_water().items():
        cap = buffer_capacity(space)
        if hi > cap:
            booked = f"{st.nbytes} B" if st.copies == 1 else \
                f"{st.copies} x {st.nbytes} B (one copy per buffer of its thread_num={st.copies} for_range)"
            raise tik._error(f"tensors placed in {SPACE_TIK_NAMES[space]} reach {hi} B, but {soc.soc_version} has "
                             f"{cap} B (the chip changed after they were declared; the highest is {st.name!r} "
                             f"{booked} at {st.reserved_bounds()[0]:#x})", operand="kernel_name",
                             value=hi, limit=f"{cap} B", cls=CapacityExceeded,
                             hint="select the chip before declaring tensors, or shrink them")
    if tik._targets_seen != {target.name}:
        for api, dtype, where in tik._support_checks:
            if not platform.api_check_support(api, dtype):
                raise tik._error(f"{api}{f' with {dtype}' if dtype else ''} (at {where.file}:{where.line}) is not "
                                 f"supported on {soc.soc_version} {soc.core_type}, the chip selected at BuildCCE",
                                 operand="kernel_name", value=api, cls=UnsupportedOp,
                                 hint="select at BuildCCE the chip the kernel was written for "
                                      "(tbe_platform.set_current_compile_soc_info), or replace that call")
        for s in walk_stmts(prog.body):
            if isinstance(s, OpStmt) and s.call.spec.verify is not None:
                s.call.spec.verify(s.call, target)
        tik._targets_seen = {target.name}


def _signature(tik, kernel_name: str, feed: list, outs: list) -> None:
    prog = tik._builder.program
    in_storages = [x.storage for x in feed if isinstance(x, Tensor)]
    out_storages = [x.storage for x in outs]
    io_names = {x.name for x in feed} | {x.name for x in outs}
    ordered = []
    for st in tik._gm_tensors:
        a = st.gm
        if st in in_storages and st in out_storages:
            a.io = "inout"
        elif st in in_storages:
            a.io = "in"
        elif st in out_storages:
            a.io = "out"
        else:
            a.io = "workspace"
        a.fill = "zero" if st.is_atomic_add and a.io in ("out", "workspace") and st.init_value is None else None
        a.init = None
        if st.init_value is not None:
            a.init = tuple(float(v) if st.dtype.kind == "f" else int(v) for v in st.init_value.tolist())
    taken = set(io_names)
    k = 0
    for st in tik._gm_tensors:
        if st.gm.io == "workspace":
            base = st.name if st.name.isidentifier() else "gm"
            name = f"{base}_ws"
            while name in taken:
                k += 1
                name = f"{base}_ws{k}"
            st.gm.name = name
            taken.add(name)
            # messages name the region as the user did; one named like another GM tensor (INTERNAL_GM_NAMES_APART:
            # not a workspace named like an argument, which BuildCCE refused) by its declaration too
            same = sum(o.name == st.name for o in tik._gm_tensors) > 1
            if same and INTERNAL_GM_NAMES_APART and st.where is not None:
                # several declared at one line (a Python loop) are numbered in declaration order (review462:
                # they were all 'w@k.py:12')
                twins = [o for o in tik._gm_tensors if o.name == st.name and o.where is not None
                         and (o.where.file, o.where.line) == (st.where.file, st.where.line)]
                nth = f"#{next(i for i, o in enumerate(twins, 1) if o is st)}" if len(twins) > 1 else ""
                st.gm.shown = f"{st.name}@{os.path.basename(st.where.file)}:{st.where.line}{nth}"
            else:
                st.gm.shown = st.name if st.name not in io_names else ""
        else:
            st.gm.name = st.name
    seen = set()
    for x in feed:
        a = x.ir if isinstance(x, InputScalar) else x.storage.gm
        if id(a) not in seen:
            ordered.append(a)
            seen.add(id(a))
    for x in outs:
        a = x.storage.gm
        if id(a) not in seen:
            ordered.append(a)
            seen.add(id(a))
    for st in tik._gm_tensors:
        if id(st.gm) not in seen:
            ordered.append(st.gm)
            seen.add(id(st.gm))
    ordered += [st.runtime_size for st in tik._gm_tensors if st.runtime_size is not None]
    prog.args = ordered
