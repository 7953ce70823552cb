"""Mixed kernels: PTO ops on TIK tensors inside a TIK kernel.

A TIK kernel may issue ``pto.<op>(...)`` calls between ``tik.Tik()`` and ``BuildCCE``, so a
kernel can be migrated one TIK call at a time and run after every step::

    ub = tik_instance.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    # was: tik_instance.data_move(ub, x, 0, 1, 8, 0, 0)
    pto.mte_gm_ub(x.pto_ptr(), ub.pto_ptr(), 0, 256, nburst=(1, 256, 256))

**The bridge** -- ``tensor.pto_ptr()`` (or ``tik_instance.pto_ptr(tensor)``) returns the
PTO pointer expression of a TIK tensor view:

* type ``!pto.ptr<dtype, space>`` with the *view's* dtype (after ``reinterpret_cast_to``)
  and the tensor's space (``scope_gm`` -> ``gm``, ``scope_ubuf`` -> ``ub``, ``scope_cbuf``
  -> ``l1``, ``scope_ca``/``scope_cb``/``scope_cc`` -> ``l0a``/``l0b``/``l0c``);
* it points at the view's first element: GM tensors are the kernel argument plus the
  view's element offset; on-chip tensors are ``pto.castptr`` of the address TIK's
  placement gave the tensor, plus the element offset. Offsets may be dynamic (Scalar or
  ``for_range`` indices): the pointer is then an expression evaluated where the op runs;
* ``p + n`` moves ``n`` elements, ``p.cast("f32")`` reinterprets, ``p.byte_offset(b)`` moves
  ``b`` bytes -- derived pointers keep the link to their tensor;
* it is valid only inside this kernel (and the tensor's scope, like the tensor itself);
* the op may touch on-chip bytes only inside the tensors of its pointer operands
  (`PTO_OPS_STAY_IN_TENSORS`): the recorded op carries them as a `FencedProvenance`, checked
  when it runs.

**Recording** -- a ``pto.*`` call whose pointer operands come from ``pto_ptr()`` is recorded
into that kernel's program at the call's ``file:line`` (provenance ``pto.<op>``), in the
current ``for_range``/``if_scope`` body, like a TIK call: ``tik-migrate`` lists it, errors
are TIK-style errors naming the line. Calls without pointer operands
(``pto.set_atomic_f32()``, ``pto.pipe_barrier("ALL")``) go to the kernel being traced
(`registry.tracing_kernel`). Other TIK values work as operands: Scalars, InputScalars,
``for_range`` indices and expressions of them.

**Synchronisation** (the choice, and why) -- auto-sync stays on and covers the PTO ops
too: every pointer operand contributes a footprint covering its *whole tensor* (the
conservative choice: the bridge cannot know which bytes an op with arbitrary strides,
repeats and masks touches without running it), written if the operand is a destination
(``dst``, ``dst_list``, ``work``), read otherwise, on the op's pipe. Auto-sync then
inserts exactly the ``set_flag``/``wait_flag`` pairs a TIK call with that footprint
would get, so a mixed kernel is correct at every migration step without hand-written
synchronisation, and the hazard verifier checks it as usual; the cost is occasional
redundant pairs where an op touches only part of a tensor another pipe uses. User
sync ops are recorded as written, on top: ``pto.barrier("ALL")``/
``pto.pipe_barrier("ALL")`` and ``pto.sync_all()`` also tell auto-sync that everything
before has completed. Auto-sync uses ``EVENT_ID0`` (as the TIK compiler owns the events
of a TIK kernel), so hand-written ``set_flag``/``wait_flag`` in a TIK kernel must use
event ids 1..7; EVENT_ID0 is an error with that hint. (The alternative -- trusting user
flags and skipping auto-sync for PTO ops -- would make every intermediate step of a
migration fail the verifier until the last flag is written.)
"""
from __future__ import annotations

import weakref

from pto_core import program as P
from pto_core.errors import FencedProvenance, IllegalOperand
from pto_core.ops import registry as _ops
from pto_core.pipes import event_id, pipe_name

from . import registry as _registry
from .api import Operand, TikBase, tik_api
from .errors import convert, tik_error
from .scalar import Expr

#: Operand names of PTO ops that the op writes (every other pointer operand is read).
WRITTEN_OPERANDS = frozenset({"dst", "%dst", "dst_list", "work"})
#: Sync ops after which every pipe has completed everything before (auto-sync forgets its state).
FULL_BARRIERS = ("sync_all",)

#: Ops whose addresses depend on data (offset tensors): not confined to their operands' tensors
#: (`PTO_OPS_STAY_IN_TENSORS`), since TIK cannot check those addresses either.
DATA_ADDRESSED_OPS = frozenset({"ub.vgather", "ub.vgatherb", "ub.vscatter"})
#: Named choice PTO_OPS_STAY_IN_TENSORS: a PTO op in a TIK kernel may touch on-chip bytes only inside
#: the TIK tensors its pointer operands come from (per space; GM has its own regions), else
#: `OutOfBounds` naming the line and the tensors. TIK refuses an instruction that runs past its
#: tensor ("tensor overflow"), and auto-sync orders whole tensors: an op reaching into a neighbouring
#: tensor would get no synchronisation for it (a HazardError asking for EVENT_ID0 flags, or silently
#: changed data). Sources are silent on raw PTO pointers in TIK kernels (the hardware would write).
PTO_OPS_STAY_IN_TENSORS = True

#: Tik instances that handed out pointers (weak: a garbage-collected kernel drops out).
_OWNERS: "weakref.WeakSet" = weakref.WeakSet()


class BridgeAPI(TikBase):
    """``pto_ptr`` and the recorder side of ``pto.*`` calls inside a TIK kernel (see module doc)."""

    @tik_api("pto_ptr")
    def pto_ptr(self, tensor):
        """The PTO pointer expression of TIK tensor view ``tensor`` (see module doc)."""
        op = self._operand(tensor, "tensor")
        if self.build is not None:
            raise self._error("the kernel is already built (BuildCCE); PTO pointers of its tensors can only be "
                              "used before", operand="tensor", value=tensor.name,
                              hint="call tik_instance.pto_ptr(...) (and the pto.* calls using it) before BuildCCE")
        ptr = op.ptr
        self._bridged[id(ptr)] = (ptr, tensor)
        _OWNERS.add(self)
        return ptr

    # ------------------------------------------------------------------ recorder protocol (registry routing)
    def record(self, call: _ops.OpCall) -> None:
        """Record a routed ``pto.<op>`` call into this kernel, with auto-sync (see module doc)."""
        spec = call.spec
        with self._api(spec.asm_name):
            if self.build is not None:
                raise self._error(f"{spec.asm_name} after BuildCCE: the kernel is already built", operand="kernel",
                                  hint="issue the PTO ops of a TIK kernel before BuildCCE")
            operands = tuple(_ir(v) for v in call.operands)
            clauses = {k: _ir(v) for k, v in call.clauses.items()}
            footprint = []
            for o, v in zip(spec.operands, operands):
                for ptr in _pointers(v):
                    footprint.append(self._footprint(ptr, o.name))
            for name, v in clauses.items():
                for x in P.clause_exprs(v):
                    if isinstance(x, P.PtrExpr):
                        footprint.append(self._footprint(x, name))
            if spec.family == "sync":
                self._check_user_event(spec, operands)
            rec = _ops.OpCall(spec, operands, clauses, _fenced(self._where, spec, [t for _, t in footprint]))
            self._sync.op(rec.pipe, [a for a, _ in footprint])
            self._builder.record(rec)
            if spec.name in FULL_BARRIERS or (spec.name in ("barrier", "pipe_barrier") and
                                              pipe_name(operands[0], allow_all=True) == "ALL"):
                self._sync.clear()

    def _footprint(self, ptr, name: str):
        tensor = self._bridged_tensor(ptr)
        if tensor is None:
            raise self._error(f"operand {name} is not a pointer to a tensor of this TIK kernel: {ptr!r}",
                              operand=name, value=repr(ptr),
                              hint="get pointers with tensor.pto_ptr() (derived pointers p + n, p.cast(dtype) "
                                   "are fine)")
        self._check_alive(tensor, name)
        op = Operand(self, tensor, name)
        return (op.write(None) if name in WRITTEN_OPERANDS else op.read(None)), tensor

    def _bridged_tensor(self, ptr):
        for node in P.walk(ptr):
            hit = self._bridged.get(id(node))
            if hit is not None and hit[0] is node:
                return hit[1]
        return None

    def _check_user_event(self, spec, operands) -> None:
        names = [o.name for o in spec.operands]
        if "event" in names and spec.name in ("set_flag", "wait_flag"):
            ev = operands[names.index("event")]
            if not isinstance(ev, P.Expr) and event_id(ev) == 0:
                raise self._error(f"{spec.asm_name} with EVENT_ID0 in a TIK kernel: EVENT_ID0 belongs to the "
                                  f"kernel's automatic synchronisation", operand="event", value=ev,
                                  limit="EVENT_ID1..EVENT_ID7",
                                  hint="auto-sync already orders the PTO ops of a TIK kernel; if you keep your own "
                                       "flags, use event ids 1..7")


def _fenced(where, spec, tensors):
    """``where`` as a `FencedProvenance` confining the op to ``tensors``' on-chip bytes
    (`PTO_OPS_STAY_IN_TENSORS`); ``where`` itself when nothing is confined."""
    if not PTO_OPS_STAY_IN_TENSORS or where is None or spec.name in DATA_ADDRESSED_OPS:
        return where
    fences = []
    for t in tensors:
        st = t.storage
        if st.space == "gm" or not isinstance(st.addr, int) or not isinstance(st.nbytes, int):
            continue
        fence = (st.space, st.addr, st.addr + st.nbytes, f"tensor {st.name!r}")
        if fence not in fences:
            fences.append(fence)
    if not fences:
        return where
    return FencedProvenance(where.file, where.line, where.call, where.detail, tuple(fences))


def _pointers(v):
    if isinstance(v, (tuple, list)):
        for x in v:
            yield from _pointers(x)
    elif isinstance(v, P.PtrExpr):
        yield v


def _ir(v):
    """TIK values (Scalar, InputScalar, Expr, loop index) as IR values; containers element-wise."""
    if isinstance(v, Expr):
        return v.ir
    if isinstance(v, tuple):
        return tuple(_ir(x) for x in v)
    if isinstance(v, list):
        return [_ir(x) for x in v]
    if isinstance(v, dict):
        return {k: _ir(x) for k, x in v.items()}
    return v


def route(call: _ops.OpCall):
    """`pto_core.ops.registry` router: the TIK kernel a ``pto.<op>`` call belongs to, or None."""
    ptrs = [p for v in call.operands for p in _pointers(v)]
    for v in call.clauses.values():
        ptrs += [x for x in P.clause_exprs(v) if isinstance(x, P.PtrExpr)]
    kernels = list(_OWNERS)
    owners, names = [], []              # in operand order (the WeakSet's order is arbitrary)
    for p in ptrs:
        for tik in kernels:
            t = tik._bridged_tensor(p)
            if t is None:
                continue
            if tik not in owners:
                owners.append(tik)
                names.append([])
            if t.name not in names[owners.index(tik)]:
                names[owners.index(tik)].append(t.name)
    names = [" and ".join(repr(n) for n in ns) for ns in names]
    if len(owners) > 1:
        # a user error of a TIK script: the facade's error class (SystemExit-flavoured like every other TIK
        # error, so an uncaught one prints the message and the user's call stack, not our traceback)
        raise tik_error(f"operands point into tensors of {len(owners)} different TIK kernels (tensor "
                        + "; tensor ".join(f"{n} of kernel {i + 1}" for i, n in enumerate(names)) + ")",
                        api=call.spec.asm_name, where=call.where, cls=IllegalOperand,
                        hint="use pointers of one kernel's tensors (x.pto_ptr() of tensors declared on the "
                             "tik.Tik() the op belongs to)", exit_on_error=owners[0]._exit_on_error)
    if owners:
        return owners[0]
    return _registry.tracing_kernel()


def call_error(e, args: tuple, kwargs: dict):
    """`pto_core.ops.registry` call-error hook: a ``pto.<op>`` call with a pointer of a TIK kernel whose
    operands the registry refuses (operand count, clause names) fails as a TIK error of that kernel."""
    ptrs = list(_pointers(list(args) + list(kwargs.values())))
    for tik in list(_OWNERS):
        if any(tik._bridged_tensor(p) is not None for p in ptrs):
            return convert(e, api=e.op, where=e.where, exit_on_error=tik._exit_on_error)
    return e


_ops.add_router(route)
_ops.add_call_error_hook(call_error)

__all__ = ["BridgeAPI", "route", "WRITTEN_OPERANDS"]
