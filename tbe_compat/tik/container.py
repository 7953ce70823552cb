"""``tik.Tik``: the container a TIK kernel is written against.

One ``Tik`` instance records one kernel: it owns a `pto_core.program.Builder` (the PTO
program being traced), the auto-sync state, the on-chip placement and the TIK scope
stack. Its methods come from the API families (mixins): `control.ControlAPI`,
`data.DataAPI`, and the families other modules add (vector, cube ...); this module adds
the data constructors (``Tensor``, ``Scalar``, ``InputScalar``), the view operations
that need provenance, and ``BuildCCE``.

When is the chip fixed? Tracing reads the selected chip lazily (`platform.current_soc`)
for every decision (capacities, capability checks, op verifiers), so the chip may be
selected before or after ``tik.Tik()``. ``BuildCCE`` -- where TIK compiles -- freezes
it: the program's target becomes the chip selected at that moment, placements are
re-checked against its capacities, and capability checks and op verifiers made under
another chip are re-run. ``start_debug`` runs on the frozen chip.
"""
from __future__ import annotations

import difflib
import inspect
import math
import numbers
import re
import warnings
import weakref

import ml_dtypes
import numpy as np

from pto_core import program as P
from pto_core import scalars as S
from pto_core.dtypes import dtype as _dtype
from pto_core.errors import CapacityExceeded, IllegalOperand, PtoError, UnknownName, UnsupportedOp
from pto_core.program import INDEX

from .. import platform
from . import registry as _registry
from .api import TikBase, has_key, sync_spec, tik_api
from .errors import user_frame
from .autosync import AutoSync
from .bridge import BridgeAPI
from .control import ControlAPI
from .cube import CubeAPI
from . import data as _data_mod, tensor as _tensor_mod
from .data import DataAPI
from .debug import Tikdb
from .scalar_extra import ScalarExtraAPI
from .vector import VectorAPI
from .placement import Placement, alignment, buffer_capacity  # noqa: F401 (buffer_capacity: re-export)
from .scalar import (SCALAR_DTYPES, Expr, InputScalar, Scalar, check_immediate, int64_immediate_bits,
                     integer_rooted, option_is_off, static_int, zero_d_value)


#: SoCs whose scalar_conv 'away-zero' rounds every fraction away from zero (x.x -> x+1, -x.x -> -(x+1)):
#: Atlas training (910), A2/A3 training (910B, 910_93) and 200I/500 A2 (310B) per the TIK reference's
#: scalar_conv page and its table 3 (1.2 -> 2, 0.2 -> 1, -0.2 -> -1); Atlas inference (310P) rounds half away.
_AWAY_IS_UP_SOCS = ("Ascend910", "Ascend910B", "Ascend910_93", "Ascend310B")


def _isqrt(v):
    """floor(sqrt(v)) of a non-negative int64 expression, exact: a float32 estimate, one integer Newton
    step, then the two one-step corrections (compared through divisions, so nothing overflows)."""
    i64 = P.I64
    r = P.max_(P.cast(P.sqrt(P.cast(v, P.F32)), i64), 1)
    r = P.max_(P.binop("div", P.binop("add", r, P.binop("div", v, r)), 2), 1)
    up = P.binop("add", r, 1)
    r = P.select(P.cmp("le", up, P.binop("div", v, up)), up, r)
    r = P.select(P.cmp("gt", r, P.binop("div", v, r)), P.binop("sub", r, 1), r)
    return P.select(P.cmp("eq", v, 0), P.cast(0, i64), r)


def _bool_immediate_as_int(v):
    """A Python (or numpy) bool given to scalar_abs / scalar_max / scalar_min as an immediate: the int 1 or 0 it
    is. TIK's ``_scalar_single_func`` / ``_scalar_binary_func`` (``tik_scalar_api.py``) take any
    ``isinstance(src, (int, float))`` immediate -- ``True`` is an int -- and convert it to dst's dtype
    (``dtype_convert``); the simulator refused it ("operator 'abs' does not apply to i1 values") while
    scalar_sqrt took it. Anything else is returned unchanged."""
    return int(v) if isinstance(v, (bool, np.bool_)) else v


#: scalar_abs / scalar_max / scalar_min -> the scalar-unit instruction whose ``Intrinsic_<instr>`` row of the chip's
#: platform ini lists the dtypes dst may have (CANN ``tik_scalar_api.py``: ``intrinsic_check_support("Intrinsic_" +
#: name, dst.dtype)``; TRANS_TIK_API_TO_INSTR_MAP names the same instructions)
SCALAR_UNIT_INSTR = {"scalar_abs": "abs", "scalar_max": "max", "scalar_min": "min", "scalar_sqrt": "sqrt"}
#: scalar_conv (source, destination) -> round modes (the reference's table 2)
_SCALAR_CONV_PAIRS = {("f32", "s32"): ("round", "away-zero", "to-zero", "floor", "ceil", "ceiling"),
                      ("s32", "f32"): ("", "none"), ("f16", "f32"): ("", "none"), ("f32", "f16"): ("", "none", "odd")}
_F16, _U16 = P.scalar_type("f16"), P.scalar_type("u16")


def _f32_to_f16_odd(v):
    """float32 -> float16 rounded to odd: the nearest-even result when exact; otherwise, of the two f16
    neighbours of ``v``, the one whose last fraction bit is 1 (adjacent codes differ by one). Never rounds
    a finite value to inf (65504's code is odd); NaN stays NaN."""
    r = P.cast(v, _F16)
    back = P.cast(r, P.F32)
    code = P.bitcast(r, _U16)
    farther = P.cmp("gt", P.abs_(back), P.abs_(v))          # r lies beyond v: its odd neighbour is nearer zero
    odd = P.bitcast(P.binop("add", code, P.select(farther, P.cast(0xFFFF, _U16), P.cast(1, _U16))), _F16)
    fix = P.all_(P.cmp("ne", back, v), P.cmp("eq", P.binop("and", code, P.cast(1, _U16)), P.cast(0, _U16)))
    return P.select(fix, odd, r)


def _tensor_comparison(pred: str):
    """``Tik._api_tensor_<pred>``: the TIK API behind ``Tensor.__<pred>__`` (see `Tik._tensor_compare`)."""
    def method(self, t: Tensor, other):
        return self._tensor_compare(t, pred, other)
    method.__name__ = f"_api_tensor_{pred}"
    return tik_api(f"Tensor.__{pred}__")(method)


def _known_at_launch(e) -> bool:
    """Whether an integer IR expression uses only constants and kernel arguments (InputScalars)."""
    if isinstance(e, int):
        return True
    return all(isinstance(x, (P.Const, P.ScalarArg, P.BinOp, P.UnOp, P.Cast)) for x in P.walk(e))


def _away_from_zero(v):
    """Round a float to the integral value farther from zero (ceil for x >= 0, floor below)."""
    return P.select(P.cmp("ge", v, 0.0), P.ceil(v), P.floor(v))

#: GM tensors declared with at least this many elements are runtime-sized (see
#: `Tik._declare_gm`): CANN dynamic-shape ops declare ``(MAX_INT64,)`` = ``(2**64 - 1,)`` or
#: ``(MAX_INT32,)`` = ``(2**31 - 1,)`` and get the real buffer from the framework.
UNBOUNDED_GM_ELEMENTS = 2 ** 31 - 1
#: Named choice SET_AS_TENSOR_FIRST_ELEMENT: ``t[i].set_as(value)`` with a Tensor ``value`` of more than one
#: element (and no ``src_offset``) stores the view's first element. The TIK reference's Tensor set_as page (CANN
#: 5.0.4 .. 9.0, zh and en) says value is "A Tensor. Can have only one element. Otherwise, the first element of the
#: Tensor is used"; CANN's dynamic gather_elements stores ``res_ub[i].set_as(block_ub)`` with an 8-element
#: ``block_ub``. (An older te.tik source raised "This is illegal for tensor."; Scalar.set_as, whose page takes "one
#: value of a Tensor", still refuses a multi-element view.) An empty view (``t[4:4]``, known size 0) has no first
#: element and is refused (its offset is outside it). migration_guide/tik_core.md (set_as rows).
SET_AS_TENSOR_FIRST_ELEMENT = True
#: Named choice **TENSOR_NAME_AND_SHAPE_REQUIRED**: ``tik_instance.Tensor`` needs ``name`` (a str of letters, digits
#: and ``_``) and a list/tuple ``shape``, as TIK declares and checks them: CANN 8.1.RC1 ``Tik.Tensor(self, dtype,
#: shape, scope, name, ...)`` (tbe/tik/api/tik_build.py) has no default for ``name`` and ``Tensor.__init__``
#: (tbe/tik/api/tik_tensor.py ``__check_tensor_params``) raises "shape: 16 must be list or tuple." for another shape
#: and, through ``TikCheckUtil.check_name_str_valid``, "name must be str" for ``name=None`` (te.tik 2019 the same;
#: tik_api.md §4.1). A kernel relying on the simulator's old leniency failed under CANN. False: a tensor without
#: ``name=`` is named ``tensor_<n>`` and an int / Scalar ``shape`` is one dimension (the behaviour before fix438).
#: migration_guide/tik_core.md §2.
TENSOR_NAME_AND_SHAPE_REQUIRED = True
#: Named choice **TENSOR_NAME_NO_LEADING_DIGIT**: a tensor name starting with a digit (``name="1ab"``) is an
#: `IllegalOperand` naming a name that works. te.tik 2019 ``Tik.Tensor_`` (tik_build.py) raises "tensor's name should
#: not begin with a digit" after ``check_name_str_valid``, and the CANN TIK reference's Tensor page (8.0,
#: atlastikapi_07_0007: "Only digits, letters, and underscores (_) are allowed. However, the name must not start with
#: a digit") states the rule; CANN 8.1's ``TikInner.tensor_`` is not in the public mirror, so no TIK is known to take
#: such a name (an error, not a `Cann81RuleWarning`). The simulator accepted it. False: accepted (as before).
#: migration_guide/tik_core.md §2.
TENSOR_NAME_NO_LEADING_DIGIT = True
#: Named choice **TENSOR_SHAPE_NUMPY_INT_REFUSED**: a numpy integer dimension in a declared ``shape``
#: (``(np.int64(16),)``, ``[np.prod(x.shape)]``) is an `IllegalOperand` whose Fix gives the shape in Python ints.
#: CANN 8.1.RC1 ``Tensor.__check_tensor_params`` (tbe/tik/api/tik_tensor.py) requires each element to be an
#: ``int``/``float``/Scalar/Expr/TVM immediate ("element in shape should be Imm, Scalar or Expr."), and te.tik 2019
#: ``_normalize_shape`` (tik_tensor.py; ``is_immediate_number``: ``float``/``int``) raises "only support static shape
#: define now"; a numpy integer is neither. The same holds for every numpy scalar that is not a Python ``int`` or
#: ``float`` subclass: ``np.float32`` / ``np.float16`` dimensions and ``np.bool_`` are refused too (review448: they
#: were taken as their values); only ``np.float64`` subclasses ``float`` and passes both TIKs' checks. The simulator
#: took its value. False: such a dimension counts as its value (as before). migration_guide/tik_core.md §2.
TENSOR_SHAPE_NUMPY_INT_REFUSED = True
#: Named choice **WORKSPACE_NAMES_UNIQUE**: a second ``is_workspace=True`` tensor with the name of an earlier one is
#: an `IllegalOperand` at its declaration naming the first one's line. te.tik 2019 ``Tik.Tensor_`` (tik_build.py)
#: raises "Workspace's name: <name> is already used before" (its ``_workspace_tensor_name_set``); CANN 8.1.RC1 keeps
#: the same set (``Tik.__init__``, tbe/tik/api/tik_build.py) but the code that fills it (``TikInner.tensor_``) is not
#: in the public mirror. The simulator took both, and messages named the two regions alike. False: accepted (shown as
#: 'name@file:line', INTERNAL_GM_NAMES_APART). migration_guide/tik_core.md §2.
WORKSPACE_NAMES_UNIQUE = True


def _numpy_dim(d) -> bool:
    """A numpy scalar neither TIK takes as a shape element (TENSOR_SHAPE_NUMPY_INT_REFUSED): not an ``int`` or
    ``float`` subclass (``np.int64``, ``np.float32``, ``np.bool_``; ``np.float64`` is a ``float``)."""
    return isinstance(d, np.generic) and not isinstance(d, (int, float))

#: Named choice TENSOR_SET_AS_IMMEDIATE_CHECKED: an immediate stored into a tensor element (``t[i].set_as(v)``,
#: ``t[i] = v``) follows the Scalar store rule (tik_core.md §8, `check_immediate` with ``store=True``): an int (or an
#: integral float) outside an integer element's range and NaN/infinity into an integer element are errors naming the
#: range; a fraction converts as in C (``2.7`` -> 2); an int in [2**63, 2**64) into int64 is its bit pattern
#: (INT64_IMMEDIATE_BIT_PATTERN); float elements take the value rounded to nearest even (past the range: inf); a bool
#: element takes only 0 / 1 / True / False as an int (2 kept only bit 0: False). Before,
#: ``int8[0].set_as(300)`` stored 44 (wrapped) and ``set_as(1e10)`` 127 (saturated) while ``Scalar("int8").set_as(300)``
#: was an error. No TIK version fixes one result: CANN 8.1.RC1 ``Tensor.set_as`` checks only the value's type (int,
#: float, Scalar, Expr, Tensor) and hands it to ``ir_generator.assign``; te.tik's debugger stores it with a numpy item
#: assignment (``dst_flatten_np[idx] = self.value``, debug ``SetTensor.eval_``), which wraps under numpy < 1.24,
#: warns under 1.24 - 1.26 and raises OverflowError under numpy 2; an out-of-range TVM literal is refused by TVM
#: >= 0.10 (apache/tvm PR #12515). So the simulator refuses, as for Scalars. migration_guide/tik_core.md (set_as rows).
TENSOR_SET_AS_IMMEDIATE_CHECKED = True
#: Named choice INIT_VALUE_SCALAR_FILL: ``Tensor(..., scope_gm, init_value=v)`` with one immediate ``v`` (not a
#: list) makes every element of the GM tensor start as ``v`` (for a runtime-sized ``(MAX_INT32,)`` tensor: every
#: element of the buffer given at launch). The TIK Tensor page documents init_value as a list of immediates, one per
#: element (that form is unchanged: a list must have one value per element); CANN ships the one-value form: the dynamic
#: ``roi_pooling_with_arg_max`` declares its argmax output ``Tensor("int32", [MAX_INT32], scope_gm,
#: is_atomic_add=True, init_value=-1)`` and lists it in BuildCCE's outputs, so the framework's atomic clean
#: (Ascend C InitValue/SetNeedAtomic pages: the output's GM is memset to the value before the op runs) fills it.
#: The value must be a finite number that fits an integer dtype exactly. migration_guide/tik_core.md (init_value row).
INIT_VALUE_SCALAR_FILL = True
BLOCK_BYTES = 32
#: Named choice DYNAMIC_TENSOR_OPEN_ENDED: an on-chip tensor with a run-time shape and no ``max_mem_size`` (the
#: reference page atlastikapi_07_0007 allows omitting it; where TIK then places it is not documented) reserves the
#: rest of its buffer above the tensors in use, re-checked at run time (`Tik._place`).
#: Named choice DYNAMIC_TENSOR_RUNTIME_CHAIN: a later such tensor in the same space, while one is live, is placed
#: at a RUN-TIME address: the end of the last live one (its shape's size at its declaration), aligned; a run-time
#: check keeps its end inside the first one's reservation. A static tensor declared meanwhile takes its bytes from
#: the top of that reservation and re-checks the chain's run-time end (`Tik._chain_open_ended`,
#: `Tik._room_from_open_ended`); freed, it gives those bytes back (`Tik._release`). So tensors whose run-time sizes fit the buffer together run (CANN dynamic
#: embedding_dense_grad, nll_loss, roi_pool_grad_with_arg_max, sparse_segment_sum_grad); a write into a tensor
#: of the chain is checked at run time against the start of the next one (`Tik._chain_room`);
#: migration_guide/tik_core.md.
DYNAMIC_TENSOR_RUNTIME_CHAIN = True
#: Named choice THREAD_NUM_RESERVES_COPIES: an on-chip tensor of static shape declared in the body of a
#: ``for_range(..., thread_num=n)`` with n > 1 (directly, or in an if/elif/else/new_stmt_scope there; not in
#: a nested for_range with thread_num <= 1) reserves ``buffer_num`` copies of its bytes, so the buffer must hold
#: them all (`Tik._buffer_copies`). ``buffer_num`` is TIK's: the loop's thread_num, at least the enclosing
#: for_range's (tik_ir_builder ``_set_buffer_num``; thread_num 0 gives 1). Source: TIK's buffer manager
#: (``CodeBufferManager.new_tensor`` checks ``Tensor.double_buffer_size(thread_num)`` = bytes x thread_num
#: against the free space when the innermost for_range has thread_num > 1, and books that size) and
#: tik_api.md §6.1 ("tensors allocated inside the loop get per-thread copies"). A kernel whose loop body fits
#: the buffer once but not twice fails to build with TIK ("applies buffer size ... more than available").
THREAD_NUM_RESERVES_COPIES = True
#: Named choice DEAD_CODE_TENSOR_MUST_FIT: an on-chip tensor declared in code that never runs (a statically false
#: if_scope, an empty constant for_range) that does not fit its buffer is a `CapacityExceeded` at the declaration,
#: as anywhere else: TIK's buffer manager books it when the Python body is traced, before any constant folding.
#: Other declaration errors there raise too (DEAD_CODE_DECLARATIONS_CHECKED, `tik_api`), an error of its
#: ``start_addr`` (tik_api.md §4.1: "start_addr must respect §1.4 alignment") included. The declaration was
#: dropped and returned None, so the kernel's next line failed with "'NoneType' object is not subscriptable"
#: (CANN arg_min_with_value f32 on Ascend910B1: a thread_num=2 loop inside an empty for_range,
#: THREAD_NUM_RESERVES_COPIES). The Fix of a capacity or start_addr error there starts with
#: `DEAD_CODE_TENSOR_NOTE` (the author may know the code is dead).
DEAD_CODE_TENSOR_MUST_FIT = True
DEAD_CODE_TENSOR_NOTE = ("this declaration is in code that never runs (a statically false if_scope, a branch after a "
                         "statically true one, an empty constant for_range), but TIK's buffer manager places it "
                         "while the body is traced, so its size and start_addr are checked as anywhere else "
                         "(DEAD_CODE_TENSOR_MUST_FIT, migration_guide/tik_core.md)")
from .tensor import (SCOPE_SPACES, SPACE_TIK_NAMES, TENSOR_DTYPES, FlatIndexWarning, Storage, Tensor, _IndexError,
                     prod, single_index_skips_view)

#: TIK's name rules: tensors (tik_tensor check_name_str_valid; no leading digit: TENSOR_NAME_NO_LEADING_DIGIT) and Scalars
#: (the Scalar reference: no leading digit)
_TENSOR_NAME = re.compile(r"[0-9A-Za-z_]+\Z")
_SCALAR_NAME = re.compile(r"[A-Za-z_][0-9A-Za-z_]*\Z")
_SCOPE_WORDS = {"for": "for_range", "block": "for_range", "if": "if_scope", "elif": "elif_scope", "else": "else_scope",
                "stmt": "new_stmt_scope"}

#: GM tensors the kernel can read only on these chips (v100 forbids GM as a scalar source/target).
_V100_SHORT = ("Ascend310", "Ascend910")


class _Scope:
    """A TIK scope (kernel top level, for_range / if / elif / else / new_stmt_scope body).

    ``conditional``: the body may not run at all (an if/elif/else branch on a run-time
    condition, a for_range not statically known to iterate). ``dead``: the body never runs
    (an if_scope whose condition folds to False, a for_range over an empty constant range):
    TIK's constant folding drops such code, so argument checks inside it do not raise
    (see `api.tik_api`)."""

    __slots__ = ("kind", "storages", "conditional", "dead", "buffer_num", "double_buffered", "lowering",
                 "disable_sync")

    def __init__(self, kind: str, conditional: bool = False, dead: bool = False):
        self.kind, self.storages, self.conditional, self.dead = kind, [], conditional, dead
        #: a block a lowering opened for its own scratch (a ``new_stmt_scope`` called inside another API,
        #: e.g. the h_* reductions): its tensors' bytes are marked never written when it ends (`_forget_freed`)
        self.lowering = False
        #: for a for_range body: TIK's buffer count of the loop (``is_n_buffer_for_loop_list``: the
        #: loop's thread_num, at least the enclosing loop's; 1 for thread_num 0); None for other scopes
        self.buffer_num = None
        #: for a for_range body: thread_num > 1 (TIK's ``double_buffer_enable_stack_`` entry)
        self.double_buffered = False
        #: a ``new_stmt_scope(disable_sync=True)`` body (no other new_stmt_scope may open inside it)
        self.disable_sync = False


#: The number types an ``init_value`` takes (list elements and the one immediate): Python and numpy
#: ints/floats and the ml_dtypes scalars of TIK's narrow types (``bfloat16(1.5)``, as an element of a list
#: or of a bfloat16 array); bool is refused separately.
INIT_VALUE_NUMBER_TYPES = (int, float, np.integer, np.floating) + tuple(
    t for t in (getattr(ml_dtypes, n, None) for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"))
    if t is not None)


def _ints_in_range(items: list, storage: np.dtype) -> bool:
    """True when every init value is an integer (Python or numpy) inside ``storage``'s range: the common list
    passes with one type scan and one min/max instead of a per-value check (1e6 values: ~0.1 s, was ~15 s)."""
    if storage.kind not in "iu" or not items or not all(isinstance(v, (int, np.integer)) for v in items):
        return False
    info = np.iinfo(storage)
    ints = [int(v) for v in items] if not all(type(v) is int for v in items) else items
    return info.min <= min(ints) and max(ints) <= info.max


def _init_float(v) -> float:
    """``float(v)`` of an init value; a Python int past float64's range is that signed infinity (its exact
    value is past every float format's range; an integer tensor then reports it as not fitting).

    An integer wider than float64's 53 bits is first rounded to 53 bits *to odd* (`_odd53`), so the one
    later rounding to the tensor's format (at most 24 bits) is the correct rounding of the exact integer:
    plain ``float(v)`` rounded it twice (2**60 + 2**36 + 1 became 2**60 in float32, not 2**60 + 2**37)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        v = _odd53(int(v))
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _odd53(v: int) -> int:
    """``v`` rounded to 53 significant bits toward zero, with the last kept bit set when bits were dropped
    (round to odd): exact in float64, and a later round-to-nearest to <= 51 bits gives the same result as
    rounding ``v`` itself (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums", 2008)."""
    a = -v if v < 0 else v
    drop = a.bit_length() - 53
    if drop <= 0:
        return v
    kept = a >> drop
    if a & ((1 << drop) - 1):
        kept |= 1
    a = kept << drop
    return -a if v < 0 else a


def _shape_tuple_hint(shape) -> str:
    """The Fix of a Tensor ``shape`` that is not a list or tuple: one dimension (an int, a Scalar) in a tuple; the
    dimensions of a sequence (a numpy array: ``np.array(x.shape) // 2``, a range) as a tuple of Python ints."""
    if not isinstance(shape, (str, bytes)) and hasattr(shape, "__iter__") and hasattr(shape, "__len__"):
        try:
            dims = tuple(int(d) for d in shape)
        except (TypeError, ValueError, OverflowError):
            dims = None
        if dims is not None and all(d == e for d, e in zip(dims, shape)):
            return f"pass the dimensions as a tuple of Python ints: shape={dims!r:.60} (tuple(int(d) for d in shape))"
        return "pass the dimensions as a tuple: shape=tuple(...)"
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return f"pass the dimensions as a tuple: shape=({int(shape)},)"
    name = getattr(shape, "name", None)
    return f"pass the dimensions as a tuple: shape=({name if isinstance(name, str) else repr(shape)[:40]},)"


class Tik(ControlAPI, CubeAPI, DataAPI, VectorAPI, ScalarExtraAPI, BridgeAPI, TikBase):
    """``tik.Tik(profiling=None, disable_debug=True, err_msg_level=0, block_size=32)``.

    ``profiling``: None, a ``tik.Dprofile`` or the ``Dprofile`` class (all mean "the
    selected chip"). ``disable_debug`` is accepted either way (``start_debug`` always
    works: scripts written for CANN 5 relied on the old default False).
    ``err_msg_level``: 0 (errors are also ``SystemExit``) or 1 (not; full traceback),
    see `tbe_compat.tik.errors`. ``block_size`` must be 32.
    """

    def __init__(self, profiling=None, disable_debug=True, err_msg_level=0, block_size=32):
        self._depth, self._where = 0, None
        self._calls: list = []     # Provenance of every TIK call, in trace order (tik-migrate)
        # ids of the first statement each outermost TIK call recorded: two calls of one source line (a Python
        # loop) share their interned Provenance; tik-migrate --format python tells them apart by this
        self._call_starts: set = set()
        # per entry of _calls: the object whose method made the call, or None (`errors.api_site_and_self`);
        # None instead of the list unless `registry.recording_call_owners` is on (`registry._RECORD_CALL_OWNERS`)
        from . import registry as _tik_registry
        self._call_owners = [] if _tik_registry._RECORD_CALL_OWNERS[0] else None
        # recorded with the owners only: id -> each loop variable ``with for_range(...) as i`` handed out (`Expr`), and per
        # entry of _calls the ``(parameter name, value)`` of the user's frame whose value is one of them
        # (tik-migrate --format python names a loop variable passed into a helper with it, `LOOP_PARAMETER_RULE`)
        self._loop_exprs = {} if self._call_owners is not None else None
        self._call_loop_params = [] if self._call_owners is not None else None
        self._weakref = weakref.ref(self)
        self._bridged: dict = {}   # id(pointer) -> (pointer, Tensor) of tensor.pto_ptr() results (bridge)
        self._exit_on_error = err_msg_level != 1
        self._builder = P.Builder("tik_kernel", platform.current_soc().profile)
        _registry.note_builder(self)     # `errors.exit_on_error_of` of expressions of its Scalars
        self._sync = AutoSync(self._emit_pair, self._emit_barrier_all)
        self._placement = Placement()
        #: on-chip dynamic-shape tensors declared without max_mem_size: storage -> element-count IR
        self._open_ended: dict = {}
        #: open-ended storage -> I64 register holding its run-time end byte (DYNAMIC_TENSOR_RUNTIME_CHAIN)
        self._chain_end: dict = {}
        #: open-ended storage -> bytes of its whole reservation (the rest of the buffer at its declaration); a
        #: static tensor lowers it while it lives, `_release` gives the bytes back when it is freed
        self._open_full: dict = {}
        #: a multi-core loop over a computed Scalar block_num was opened (control.py: no other block loop then)
        self._dynamic_block_loop_seen = False
        self._scopes = [_Scope("kernel")]
        self._chain_taken = False     # the if-chain just closed had a statically true branch (control.py)
        self._support_checks: list = []
        self._targets_seen = {self._builder.program.target.name}
        self._gm_tensors: list = []
        self._input_scalars: list = []
        self._names: dict = {}
        self._auto_named: set = set()   # Storages of Tensor(...) calls without name= (named tensor_<n> by the simulator)
        self._on_chip_storages: list = []
        self.build = None          # set by BuildCCE: `build.BuildInfo`
        self.d_profiling = profiling
        self.disable_debug = disable_debug
        self.err_msg_level = err_msg_level
        self.tikdb = Tikdb(self)
        with self._api("tik.Tik"):
            platform.profiling_soc(profiling)
            if err_msg_level not in (0, 1):
                raise self._error(f"err_msg_level must be 0 or 1, got {err_msg_level!r}", operand="err_msg_level",
                                  value=err_msg_level, limit="0 or 1",
                                  hint="pass 0 (errors are SystemExit, CANN's default) or 1 (plain exceptions with "
                                       "tracebacks)")
            if block_size != 32:
                raise self._error(f"block_size must be 32 on the modelled chips, got {block_size!r}",
                                  operand="block_size", value=block_size, limit="32",
                                  hint="16-byte blocks exist only on Ascend035, which is not modelled")

    # ------------------------------------------------------------------ sync emission (AutoSync callbacks)
    def _emit_pair(self, src: str, dst: str) -> None:
        ops = (src, dst, 0)
        record = self._builder.record_constant
        record(sync_spec("set_flag"), ops, self._where)
        block = self._builder._blocks[-1]
        self._sync.mark(block[-1])
        record(sync_spec("wait_flag"), ops, self._where)

    def _emit_barrier_all(self) -> None:
        self._record_sync("pipe_barrier", "ALL")

    # ------------------------------------------------------------------ target tracking
    def _api(self, api):
        prog = getattr(self, "_builder", None)
        if prog is not None and not self._depth:
            t = platform.current_soc().profile
            if prog.program.target is not t:
                prog.program.target = t
                self._targets_seen.add(t.name)
        return TikBase._api(self, api)

    # ------------------------------------------------------------------ data
    @tik_api("Tensor")
    def Tensor(self, dtype=None, shape=None, scope=None, name=None, enable_buffer_reuse=False, no_reuse_list=None,
               reuse_list=None, is_workspace=False, is_atomic_add=False, max_mem_size=None, init_value=None,
               is_global_tensor=False, start_addr=None):  # noqa: N802 (TIK's name)
        """Declare a tensor (tik_api.md §4.1). GM tensors become kernel arguments when listed in
        BuildCCE, else internal workspaces; on-chip tensors are placed now."""
        dt = self._tensor_dtype(dtype)
        dead = any(sc.dead for sc in self._scopes)
        if TENSOR_NAME_AND_SHAPE_REQUIRED and shape is not None and not isinstance(shape, (list, tuple)):
            raise self._error(f"shape {shape!r:.40} must be a list or tuple (TIK: \"shape: ... must be list or "
                              f"tuple.\")", operand="shape", value=repr(shape)[:40], limit="list | tuple",
                              hint=_shape_tuple_hint(shape))
        if TENSOR_SHAPE_NUMPY_INT_REFUSED and isinstance(shape, (list, tuple)) and \
                any(_numpy_dim(d) for d in shape):
            bad = next(d for d in shape if _numpy_dim(d))

            def shown(rounding) -> str:
                """The shape with its numpy dimensions as Python ints (a fraction by ``rounding``)."""
                fixed = tuple((int(d) if float(d).is_integer() else rounding(float(d))) if _numpy_dim(d) else d
                              for d in shape)
                text = ", ".join(d.name if isinstance(getattr(d, "name", None), str) else repr(d) for d in fixed)
                return f"shape=({text}{',' if len(fixed) == 1 else ''})"
            fractions = [d for d in shape if _numpy_dim(d) and not float(d).is_integer()]
            if not fractions:
                hint = f"pass the dimensions as Python ints: {shown(int)} (int(d) of a numpy value)"
            elif not all(math.isfinite(float(d)) for d in fractions):
                hint = (f"a dimension counts elements, so it must be a whole number Python int ({fractions[0]!r} is "
                        f"not): check how the shape is computed")
            else:
                # a dimension counts elements: a Python float 2.5 is refused as well (`_shape_arg`), so the Fix
                # names whole numbers, rounded down and up
                down = f"{shown(math.floor)} (int(d), rounding down), or " if all(
                    math.floor(float(d)) >= 1 for d in fractions) else ""
                hint = (f"a dimension counts elements, so it must be a whole number ({fractions[0]!r} is not): "
                        f"compute the shape in Python ints, e.g. {down}{shown(math.ceil)} (math.ceil(d), rounding "
                        f"up)")
            raise self._error(f"shape dimension {bad!r} is a numpy {type(bad).__name__}, not a Python "
                              f"{'float' if isinstance(bad, np.floating) else 'int'} (TIK: "
                              f"\"element in shape should be Imm, Scalar or Expr.\")", operand="shape",
                              value=repr(bad), limit="int | Scalar | Expr", hint=hint)
        dims = self._shape_arg(shape, zero_ok=dead)
        if scope is None:
            raise self._error("scope is required", operand="scope",
                              hint="pass scope=tik.scope_gm, tik.scope_ubuf, tik.scope_cbuf, ...")
        space = SCOPE_SPACES.get(scope) if has_key(SCOPE_SPACES, scope) else None
        if space is None:
            known = ", ".join(f"{k!r}" for k in SCOPE_SPACES)
            cls = UnsupportedOp if isinstance(scope, str) and scope.startswith("local.") else UnknownName
            raise self._error(f"scope {scope!r} is not a tensor scope the simulator models", operand="scope",
                              value=scope, limit=f"one of {known}", cls=cls,
                              hint="use tik.scope_gm, tik.scope_ubuf, tik.scope_cbuf, tik.scope_ca, tik.scope_cb, "
                                   "tik.scope_cc (= tik.scope_cbuf_out)")
        if TENSOR_NAME_AND_SHAPE_REQUIRED and name is None:
            raise self._error("Tensor needs name= (TIK's Tensor(dtype, shape, scope, name) has no default name and "
                              "checks it is a str)", operand="name", value=None, limit="[0-9A-Za-z_]+",
                              hint="pass name='...' (letters, digits and _; the feed_dict key of a GM input)")
        auto_named = name is None
        if auto_named:
            name = f"tensor_{len(self._names)}"
        if not isinstance(name, str) or not _TENSOR_NAME.match(name):
            raise self._error(f"tensor name {name!r} must be a non-empty string of letters, digits and _",
                              operand="name", value=name, limit="[0-9A-Za-z_]+",
                              hint="pass name='...' (letters, digits and _; the feed_dict key of GM inputs)")
        if TENSOR_NAME_NO_LEADING_DIGIT and name[0].isdigit():
            raise self._error(f"tensor name {name!r} begins with a digit (TIK: \"tensor's name should not begin with "
                              f"a digit\")", operand="name", value=name, limit="[A-Za-z_][0-9A-Za-z_]*",
                              hint=f"start the name with a letter or _: name='t{name}' (for a GM input or output "
                                   f"also its feed_dict key)")
        if WORKSPACE_NAMES_UNIQUE and space == "gm" and \
                isinstance(is_workspace, (bool, np.bool_, numbers.Number)) and bool(is_workspace):
            prev = next((st for st in self._gm_tensors if st.is_workspace and st.name == name), None)
            if prev is not None:
                at = f" at {prev.where.file}:{prev.where.line}" if prev.where is not None else ""
                raise self._error(f"workspace name {name!r} is taken by the workspace declared{at} (TIK: "
                                  f"\"Workspace's name: {name} is already used before\")", operand="name",
                                  value=name, limit="a name no other workspace has",
                                  hint=f"give each workspace its own name=, e.g. name='{name}_1' (or reuse the "
                                       f"first workspace)")
        self._names[name] = self._names.get(name, 0) + 1
        if space == "gm" and len(self._scopes) > 1:
            raise self._error(f"GM tensor {name!r} is declared inside a {_SCOPE_WORDS[self._scopes[-1].kind]} body; "
                              f"TIK declares scope_gm tensors at the kernel's top level only", operand="scope",
                              value=scope, hint="declare the GM tensor before the for_range/if_scope/new_stmt_scope "
                                                "and index it inside")
        if space != "gm":
            for flag, val in (("is_workspace", is_workspace), ("is_atomic_add", is_atomic_add),
                              ("is_global_tensor", is_global_tensor), ("init_value", init_value)):
                if (val is not None) if flag == "init_value" else not option_is_off(val):  # init_value=0 too
                    raise self._error(f"{flag} applies to GM tensors only", operand=flag, value=val,
                                      hint="drop it, or declare the tensor with scope=tik.scope_gm")
        else:
            for flag, val in (("is_workspace", is_workspace), ("is_atomic_add", is_atomic_add),
                              ("is_global_tensor", is_global_tensor)):
                v = zero_d_value(val)   # a flag fixed at build time: a bool (numpy ones too) or a number
                if not (v is None or isinstance(v, (bool, np.bool_, numbers.Number))):
                    raise self._error(f"{flag} must be True or False, got {type(val).__name__} {val!r}",
                                      operand=flag, value=repr(val), limit="True | False",
                                      hint=f"pass {flag}=True or {flag}=False (a Python constant: the framework "
                                           f"allocates the tensor before the kernel runs)")
        self._check_max_mem_size(dt, dims, max_mem_size)
        storage = Storage(space, scope, name, dt, dims, self._where)
        if space != "gm":
            self._on_chip_storages.append(storage)      # to name the tensor a hazard's bytes belong to (debug.py)
        if auto_named:      # by the allocation, not the name: an explicit name='tensor_1' can equal a default one
            self._auto_named.add(storage)
        strides = _contiguous_strides(dims)
        count = prod(dims)
        if any(isinstance(d, int) and d <= 0 for d in dims):
            # only in code that never runs (`_shape_arg`): TIK's constant folding drops the declaration.
            # Nothing is placed; a call using the tensor fails `_check_alive` (and is dropped there too).
            storage.nbytes = 0
            return Tensor(self, storage, dt, dims, strides, 0, True)
        if space == "gm":
            self._declare_gm(storage, count, is_workspace, is_atomic_add, init_value, is_global_tensor)
        else:
            try:
                self._place(storage, count, max_mem_size, start_addr)
            except PtoError as e:
                if isinstance(e, CapacityExceeded) or getattr(e, "operand", None) == "start_addr":
                    e.kept_in_dead_code = DEAD_CODE_TENSOR_MUST_FIT     # not dropped by `tik_api` in dead code
                    if dead and DEAD_CODE_TENSOR_MUST_FIT:
                        e.hint = DEAD_CODE_TENSOR_NOTE + (f"; {e.hint}" if e.hint else "")
                raise
        return Tensor(self, storage, dt, dims, strides, 0, True)

    def _tensor_dtype(self, dtype):
        if isinstance(dtype, str) and dtype in TENSOR_DTYPES:
            return _dtype(dtype)
        name = getattr(dtype, "__name__", None) or getattr(dtype, "name", None)
        hint = f"pass the dtype name as a str, e.g. {name!r}" if isinstance(name, str) and name in TENSOR_DTYPES \
            else "pass one of the listed dtype names as a str (e.g. 'float16')"
        raise self._error(f"dtype {dtype!r} is not a TIK tensor dtype", operand="dtype", value=dtype,
                          limit="one of " + ", ".join(TENSOR_DTYPES), cls=UnknownName, hint=hint)

    def _shape_arg(self, shape, zero_ok: bool = False) -> tuple:
        """The dimensions of ``shape`` (ints, or INDEX expressions for dynamic ones), each >= 1.

        ``zero_ok``: dimensions <= 0 are kept (a tensor declared in code that never runs, e.g. a tail
        buffer of ``n % 8`` elements under ``if_scope(n % 8 > 0)`` with ``n`` a multiple of 8: an empty
        tensor, see `Tensor`)."""
        if shape is None:
            raise self._error("shape is required", operand="shape", hint="pass the shape as a list/tuple of ints")
        items = shape if isinstance(shape, (list, tuple)) else (shape,)
        if not items:
            raise self._error("shape must have at least one dimension", operand="shape", value=shape,
                              hint="pass a list/tuple with at least one dimension, e.g. (16,)")
        dims = []
        for d in items:
            v = static_int(d)
            if v is not None and not isinstance(d, bool):
                if isinstance(d, float) and not float(d).is_integer():
                    v = None
                elif v <= 0 and not zero_ok:
                    raise self._error(f"shape {list(items)} has a non-positive dimension {v}", operand="shape",
                                      value=list(items), limit="dimensions >= 1",
                                      hint="every dimension must be at least 1")
            if v is not None:
                dims.append(v)
            elif isinstance(d, Expr):
                dims.append(P.cast(self._int_arg(d, "shape"), INDEX))
            else:
                raise self._error(f"shape {shape!r} has a dimension {d!r} that is not an int or a TIK integer "
                                  f"expression", operand="shape", value=repr(d),
                                  hint="pass a list/tuple of Python ints (integer Scalars/Exprs for dynamic "
                                       "dimensions)")
        return tuple(dims)

    def _declare_gm(self, st: Storage, count, is_workspace, is_atomic_add, init_value, is_global_tensor=False):
        """Make ``st`` a GM kernel argument (or workspace). A tensor declared with at least
        `UNBOUNDED_GM_ELEMENTS` elements (CANN dynamic-shape operators declare ``(MAX_INT64,)``
        and get the real buffer from the framework) is *runtime-sized*: its element count is a hidden scalar
        argument fixed at launch (``start_debug``: the fed array's size), accesses are checked
        against it at run time."""
        st.is_workspace = bool(is_workspace)
        st.is_atomic_add = bool(is_atomic_add)
        st.is_global = bool(is_global_tensor)
        if st.is_global and init_value is not None:
            # CANN 8.1 tik_tensor.py _check_new_tensor_params_init_value
            raise self._error("a GM tensor with init_value cannot be a global tensor (is_global_tensor=True)",
                              operand="is_global_tensor", value=True,
                              hint="drop init_value (a global tensor is allocated by the framework), or drop "
                                   "is_global_tensor")
        if init_value is not None:
            st.init_value = self._init_values(st, count, init_value)
        internal = f"_gm{len(self._gm_tensors)}"
        if isinstance(count, int) and count >= UNBOUNDED_GM_ELEMENTS:
            # CANN dynamic-shape idiom: Tensor(dtype, (MAX_INT64,), scope_gm): the real size comes at launch
            st.runtime_size = P.ScalarArg(f"{internal}_size", "int64")
            st.size_expr = P.cast(st.runtime_size, INDEX)
            shape = (1,)
        elif isinstance(count, int):
            st.nbytes = st.dtype.nbytes(count)
            shape = tuple(st.shape)
        elif _known_at_launch(count):                   # InputScalars and constants: evaluated at launch
            st.size_expr = count
            shape = (1,)
        else:
            # a shape from Scalars the kernel computes (tiling data read from GM: CANN's sparse_reshape):
            # known only while it runs, so sized like the (MAX_INT64,) idiom from the feed at launch
            st.runtime_size = P.ScalarArg(f"{internal}_size", "int64")
            st.size_expr = P.cast(st.runtime_size, INDEX)
            shape = (1,)
        st.gm = P.GmArg(internal, st.dtype, shape, io="workspace")
        self._builder.program.args.append(st.gm)
        self._gm_tensors.append(st)

    def _init_values(self, st: Storage, count, init_value) -> np.ndarray:
        """``init_value`` of a GM tensor as a flat array (TIK: a list of immediates, one per element; one
        immediate fills every element, `INIT_VALUE_SCALAR_FILL`: a 1-element array, broadcast at launch)."""
        if INIT_VALUE_SCALAR_FILL and isinstance(init_value, np.ndarray) and init_value.ndim == 0:
            init_value = init_value[()]          # np.array(3): one number, as its numpy scalar is
        if INIT_VALUE_SCALAR_FILL and not isinstance(init_value, (list, tuple, np.ndarray)):
            return self._init_fill_value(st, init_value)
        try:
            vals = np.asarray(init_value, dtype=object).reshape(-1)
        except (TypeError, ValueError):
            vals = None
        items = [] if vals is None else vals.tolist()
        i, bad = next(((k, v) for k, v in enumerate(items) if isinstance(v, bool) or
                       not isinstance(v, INIT_VALUE_NUMBER_TYPES)), (None, None))
        if i is not None:
            raise self._error(f"init_value[{i}] = {bad!r:.40} is not a number (init_value takes numbers only"
                              f"{'; a bool is not one' if isinstance(bad, (bool, np.bool_)) else ''})",
                              operand="init_value", value=repr(bad)[:40],
                              hint="pass a list (or numpy array) with one number per element of the tensor")
        if vals is None or not vals.size:
            raise self._error(f"init_value must be a list of numbers, got {type(init_value).__name__} "
                              f"{init_value!r:.60}", operand="init_value", value=repr(init_value)[:40],
                              hint="pass a list (or numpy array) with one number per element of the tensor")
        if isinstance(count, int) and vals.size != count:
            raise self._error(f"init_value has {vals.size} values; tensor {st.name!r} has {count} elements",
                              operand="init_value", value=vals.size, limit=count,
                              hint="give one value per element (np.full(shape, v).ravel().tolist() repeats one)")
        if st.dtype.kind == "f":
            return np.asarray([_init_float(v) for v in items], dtype=np.float64)
        if not _ints_in_range(items, np.dtype(st.dtype.storage)):
            for k, v in enumerate(items):      # every value as the one-number form checks it (names the first bad)
                self._check_int_init(st, v, f"init_value[{k}]")
        return np.asarray([int(v) for v in items], dtype=object)

    def _init_fill_value(self, st: Storage, v) -> np.ndarray:
        """One immediate ``init_value`` (`INIT_VALUE_SCALAR_FILL`), checked against the tensor's dtype."""
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, INIT_VALUE_NUMBER_TYPES):
            what = "a TIK Scalar/Expr (known only while the kernel runs)" if isinstance(v, Expr) else \
                f"{type(v).__name__} {v!r:.60}"
            raise self._error(f"init_value of GM tensor {st.name!r} must be a number or a list of numbers, got {what}",
                              operand="init_value", value=repr(v)[:40],
                              hint="pass one immediate (every element starts as it) or a list with one number per "
                                   "element")
        if st.dtype.kind == "f":
            return np.asarray([_init_float(v)], dtype=np.float64)
        self._check_int_init(st, v, "init_value")
        return np.asarray([int(v)], dtype=object)

    def _check_int_init(self, st: Storage, v, what: str) -> None:
        """Refuse an integer tensor's initial value that is not a whole number in its dtype's range (never wrapped)."""
        info = np.iinfo(np.dtype(st.dtype.storage)) if np.dtype(st.dtype.storage).kind in "iu" else None
        lim = f"[{info.min}, {info.max}]" if info is not None else "an integer"
        if isinstance(v, np.generic):        # shown as the number, not np.int64(300)
            v = v.item()
        fv = _init_float(v)
        if not np.isfinite(fv) and not isinstance(v, (int, np.integer)):
            raise self._error(f"{what} = {v!r}: the {st.dtype.tik_name} tensor {st.name!r} cannot hold a NaN or "
                              f"infinity", operand="init_value", value=repr(v)[:40], limit=lim,
                              hint=f"pass an integer in {lim}")
        if not isinstance(v, (int, np.integer)) and fv != int(fv):
            raise self._error(f"{what} = {v!r} is not a whole number; the {st.dtype.tik_name} tensor {st.name!r} "
                              f"holds integers", operand="init_value", value=repr(v)[:40], limit=lim,
                              hint=f"pass an integer in {lim}")
        if info is not None and not info.min <= int(v) <= info.max:
            text = repr(v) if len(repr(v)) <= 40 else repr(v)[:20] + "..."     # a huge int: its first digits
            raise self._error(f"{what} = {text} does not fit the {st.dtype.tik_name} tensor {st.name!r}",
                              operand="init_value", value=repr(v)[:40], limit=lim,
                              hint=f"pass an integer in {lim} (values are never wrapped)")

    def _check_max_mem_size(self, dt, dims, max_mem_size) -> None:
        """CANN 8.1 TIK ``TensorBase.get_shape`` / ``__check_total_size_max_mem_size`` (tik_tensor_.py), for every
        scope: ``max_mem_size`` is an int number of bytes, a multiple of the element size; with a static shape it
        must be exactly the tensor's size ("max_mem_size is too small" / "too big"). bool tensors are left
        alone (TIK compares their bit-packed size, which the simulator's one-byte bools do not have)."""
        if max_mem_size is None or dt.name == "bool":
            return
        if isinstance(max_mem_size, (float, np.floating)) and float(max_mem_size).is_integer():
            max_mem_size = int(max_mem_size)    # an integral float is its int, as for other integer arguments
        if isinstance(max_mem_size, bool) or not isinstance(max_mem_size, (int, np.integer)):
            raise self._error(f"max_mem_size must be an int number of bytes, got {type(max_mem_size).__name__} "
                              f"{max_mem_size!r}", operand="max_mem_size", value=repr(max_mem_size),
                              hint="pass max_mem_size=<upper bound of the tensor's size in bytes> as a Python int")
        elem = max(1, dt.bits // 8)
        if max_mem_size % elem:
            raise self._error(f"max_mem_size = {max_mem_size} bytes is not a multiple of the {dt.tik_name} element "
                              f"size ({elem} B)", operand="max_mem_size", value=int(max_mem_size),
                              limit=f"multiple of {elem}",
                              hint=f"pass the largest element count times {elem}")
        count = prod(dims)
        if isinstance(count, int) and count > 0 and dt.nbytes(count) != max_mem_size:
            size = dt.nbytes(count)
            raise self._error(f"max_mem_size = {max_mem_size} bytes is too {'small' if max_mem_size < size else 'big'}"
                              f" for the static shape {list(dims)} ({size} bytes)", operand="max_mem_size",
                              value=int(max_mem_size), limit=f"{size} (the static shape's size)",
                              hint="drop max_mem_size (it bounds run-time shapes only) or pass the shape's size in "
                                   "bytes")

    def _place(self, st: Storage, count, max_mem_size, start_addr):
        """Place an on-chip tensor. A dynamic-shape tensor reserves ``max_mem_size`` bytes, or
        without it (TIK lets it be omitted when the shape has variables; CANN's dynamic diag and
        trace ops do) the rest of its buffer above the tensors in use (DYNAMIC_TENSOR_OPEN_ENDED);
        a later such tensor while one is live is placed at the run-time end of the last live one
        (DYNAMIC_TENSOR_RUNTIME_CHAIN, `_chain_open_ended`); a run-time check
        (``pto.assert_in_bounds``) keeps the shapes' sizes inside the reservation."""
        elem = max(1, st.dtype.bits // 8)
        align = alignment(st.space, elem)
        rest_of_buffer = False
        if isinstance(count, int):
            nbytes = st.dtype.nbytes(count)
        elif max_mem_size is None and start_addr is None and buffer_capacity(st.space) > 0:
            chain = self._live_chain(st.space)
            if chain:
                self._chain_open_ended(st, count, chain, align)
                return
            target = platform.current_soc().profile
            a = self._placement.allocator(st.space, target)
            top = max((lo + size for lo, size, _ in a.occupants()), default=0)
            start_addr = -(-top // align) * align
            nbytes = a.capacity - start_addr
            if nbytes < BLOCK_BYTES:
                raise self._error(f"dynamic-shape tensor {st.name!r} takes the rest of "
                                  f"{SPACE_TIK_NAMES[st.space]} without max_mem_size, but only {max(0, nbytes)} B "
                                  f"are left", operand="max_mem_size", value=max(0, nbytes), cls=CapacityExceeded,
                                  hint="declare it before the big tensors, or free them (scopes)")
            rest_of_buffer = True
        else:
            if max_mem_size is None:
                raise self._error(f"on-chip tensor {st.name!r} has a dynamic shape and needs max_mem_size "
                                  f"(bytes)", operand="max_mem_size",
                                  hint="pass max_mem_size=<upper bound in bytes>")
            nbytes = self._int_arg(max_mem_size, "max_mem_size", 1)
        if start_addr is not None:
            start_addr = self._int_arg(start_addr, "start_addr", 0)
            if start_addr % align:
                raise self._error(f"start_addr {start_addr:#x} is not {align}-byte aligned in "
                                  f"{SPACE_TIK_NAMES[st.space]}", operand="start_addr", value=hex(start_addr),
                                  limit=f"multiple of {align}",
                                  hint=f"pass start_addr={-(-start_addr // align) * align:#x} (rounded up to a "
                                       f"multiple of {align}), or leave start_addr out")
        st.nbytes = nbytes
        st.copies = copies = self._buffer_copies() if isinstance(count, int) and start_addr is None else 1
        reserve = st.reserved_bytes()
        target = platform.current_soc().profile
        if buffer_capacity(st.space) <= 0:
            raise self._error(f"{SPACE_TIK_NAMES[st.space]} does not exist on {target.name} "
                              f"({platform.current_soc().core_type})", operand="scope", value=st.scope,
                              cls=UnsupportedOp, hint="select a chip/core type that has this buffer")
        if start_addr is None and not rest_of_buffer:
            a = self._placement.allocator(st.space, target)
            top = max((lo + size for lo, size, _ in a.occupants()), default=0)
            if -(-top // align) * align + reserve > a.capacity:     # room from an open-ended reservation
                self._room_from_open_ended(st, a, align, reserve)
        try:
            st.addr = self._placement.place(st, target, reserve, align, start_addr)
        except CapacityExceeded as e:
            placed = ", ".join(f"{n!r} {s} B at {a:#x}" for a, s, n in
                               self._placement.allocator(st.space, target).occupants()) or "(none)"
            cap = buffer_capacity(st.space)
            used = self._placement.allocator(st.space, target).used
            need = f"{nbytes} B" if copies == 1 else \
                f"{copies} x {nbytes} B = {reserve} B (one copy per buffer of the thread_num={copies} for_range)"
            hint = "allocate big tensors inside for_range/new_stmt_scope bodies so they are freed, reduce the tile " \
                   "size, or reuse tensors" if copies == 1 else \
                "halve the tile (each of the thread_num buffers holds one), declare the tensor outside the " \
                "thread_num loop, or use thread_num=1"
            whose = f"tensor {st.name!r}"
            if self._depth > 1 and self._where is not None:
                # a scratch the facade's lowering of the user's call allocates (h_* scalar copies, reduction rows):
                # the user never declared it, so say whose it is and how much UB to leave free
                api = self._where.call
                whose = f"{api}'s lowering: its scratch tensor {st.name!r}, allocated by the simulator for this call " \
                        f"and freed after it,"
                hint = f"leave {reserve} B of {SPACE_TIK_NAMES[st.space]} free at this {api} call (declare a tile " \
                       f"{reserve} B smaller, or free one in a new_stmt_scope before the call); see " \
                       f"migration_guide/tik_vector.md for what the lowering of {api} allocates"
            raise self._error(f"{whose} needs {need} in {SPACE_TIK_NAMES[st.space]} but the buffer "
                              f"has {cap} B on {target.name} with {used} B in use; tensors already placed: {placed}"
                              if start_addr is None else e.message,
                              operand="shape" if start_addr is None else e.operand or "start_addr",
                              value=reserve if start_addr is None else e.value,
                              limit=f"{cap} B", cls=CapacityExceeded,
                              hint=hint if start_addr is None else e.hint or hint) from None
        self._scopes[-1].storages.append(st)
        if rest_of_buffer:
            self._open_ended[st] = count
            self._open_full[st] = nbytes
            self._check_open_ended(st, count, nbytes)
            self._chain_end[st] = self._builder.reg(P.I64, st.addr + self._byte_count(st, count))

    def _buffer_copies(self) -> int:
        """Copies an on-chip tensor declared here reserves (`THREAD_NUM_RESERVES_COPIES`): the innermost
        for_range's ``buffer_num`` when its thread_num > 1, else 1."""
        if not THREAD_NUM_RESERVES_COPIES:
            return 1
        for sc in reversed(self._scopes):
            if sc.buffer_num is not None:
                return sc.buffer_num if sc.double_buffered else 1
        return 1

    def _live_chain(self, space: str) -> list:
        """The live open-ended dynamic tensors of ``space`` in declaration order (the first holds the reservation)."""
        return [t for t in self._open_ended if t.alive and t.space == space]

    @staticmethod
    def _byte_count(st: Storage, count):
        """Bytes of ``count`` (an IR expression) elements of ``st``'s dtype, as an I64 expression."""
        return (P.cast(count, P.I64) * st.dtype.bits + 7) // 8

    def _chain_hint(self, names) -> str:
        return (f"where TIK places on-chip tensors with run-time shapes and no max_mem_size is not documented; the "
                f"simulator places {', '.join(map(repr, names))} one after another from the end of the tensors in "
                f"use, each at the run-time end of the one before (named choices DYNAMIC_TENSOR_OPEN_ENDED and "
                f"DYNAMIC_TENSOR_RUNTIME_CHAIN, migration_guide/tik_core.md), and the sizes the kernel computes "
                f"do not fit the buffer together. Declare them with max_mem_size=<its largest size in bytes> "
                f"(then they must fit their static bounds), or make the shapes the kernel computes smaller")

    def _chain_open_ended(self, st: Storage, count, chain: list, align: int) -> None:
        """DYNAMIC_TENSOR_RUNTIME_CHAIN: place ``st`` at the run-time end of the last live open-ended
        tensor (captured in registers now: the shape Scalars may change later), inside the first one's
        reservation; a run-time check keeps its end there."""
        root, prev = chain[0], chain[-1]
        top = root.addr + root.nbytes
        b = self._builder
        start = b.reg(P.I64, (self._chain_end[prev] + (align - 1)) // align * align)
        st.addr = start
        st.nbytes = root.nbytes              # static upper bound: the whole reservation
        st.chain_root = root
        self._placement.placed.append(st)
        self._scopes[-1].storages.append(st)
        self._open_ended[st] = count
        names = [t.name for t in chain] + [st.name]
        room = (P.cast(top, P.I64) - start) * 8 // st.dtype.bits
        self._emit("assert_in_bounds", 0, P.cast(count, P.I64), room,
                   what=f"the shape of dynamic tensor {st.name!r} (placed without max_mem_size at the run-time end "
                        f"of {prev.name!r} in {SPACE_TIK_NAMES[st.space]}, room up to byte {top:#x})",
                   hint=self._chain_hint(names))
        self._chain_end[st] = b.reg(P.I64, start + self._byte_count(st, count))

    def _chain_room(self, st: Storage):
        """DYNAMIC_TENSOR_RUNTIME_CHAIN: ``(bytes, hint)`` a write into ``st`` may cover from its start when
        another live open-ended tensor is placed at run time after it (up to that one's start) or ``st`` is
        itself placed at run time (up to its reservation's top); None otherwise (the static allocation
        bounds it). The bytes are an I64 expression, checked when the write runs."""
        if st not in self._open_ended or not st.alive:
            return None
        chain = self._live_chain(st.space)
        i = chain.index(st)
        if i + 1 < len(chain):
            nxt = chain[i + 1]
            end, beyond = nxt.addr, f"{nxt.name!r}, placed right after it at run time"
        elif st.chain_root is not None:
            root = st.chain_root
            end, beyond = root.addr + root.nbytes, f"the end of the reservation of {root.name!r} (byte " \
                                                  f"{root.addr + root.nbytes:#x})"
        else:
            return None
        room = P.cast(end, P.I64) - P.cast(st.addr, P.I64)
        hint = (f"{st.name!r} has a run-time shape and no max_mem_size, so the simulator packs it with the other "
                f"such tensors: a write past its room reaches {beyond} (named choice DYNAMIC_TENSOR_RUNTIME_CHAIN, "
                f"migration_guide/tik_core.md). Keep the write inside the shape, or declare {st.name!r} with "
                f"max_mem_size=<its largest size in bytes>")
        return room, hint

    def _check_open_ended(self, st: Storage, count, nbytes: int) -> None:
        self._emit("assert_in_bounds", 0, P.cast(count, P.I64), nbytes * 8 // st.dtype.bits,
                   what=f"the shape of dynamic tensor {st.name!r} ({nbytes} B of {SPACE_TIK_NAMES[st.space]} "
                        f"reserved without max_mem_size)",
                   hint=f"where TIK places an on-chip tensor with a run-time shape and no max_mem_size is not "
                        f"documented; the simulator gives it the rest of the buffer above the tensors in use "
                        f"(named choice DYNAMIC_TENSOR_OPEN_ENDED, migration_guide/tik_core.md). If the sizes the "
                        f"kernel computes fit the buffer, declare {st.name!r} with max_mem_size=<its largest size "
                        f"in bytes>; otherwise make the shape the kernel computes smaller")

    def _room_from_open_ended(self, st: Storage, a, align: int, need: int) -> None:
        """Room for static tensor ``st`` (``need`` bytes) when an open-ended dynamic tensor took the rest
        of the buffer: its reservation gives up the top ``need`` bytes, and the run-time end of the live
        open-ended tensors (DYNAMIC_TENSOR_RUNTIME_CHAIN) is re-checked against the lowered top."""
        chain = self._live_chain(st.space)
        if not chain:
            return
        root = chain[0]
        old = root.nbytes
        keep = (old - -(-need // BLOCK_BYTES) * BLOCK_BYTES - align) // align * align
        if keep < BLOCK_BYTES:
            return
        a._free_id(root.alloc_id)
        a._place(root.addr, keep, root.name)
        root.alloc_id = a._order[-1]
        root.nbytes = keep
        names = ", ".join(repr(t.name) for t in chain)
        self._emit("assert_in_bounds", 0, self._chain_end[chain[-1]], root.addr + keep,
                   what=f"the {SPACE_TIK_NAMES[st.space]} bytes (not elements) used by dynamic tensor(s) {names} "
                        f"(placed without max_mem_size) below static tensor {st.name!r} at byte "
                        f"{root.addr + keep:#x}",
                   hint=self._chain_hint([t.name for t in chain]))

    def _release(self, storages: list) -> None:
        """Free ``storages`` (a scope's tensors, tik_api.md §6.3). A live open-ended reservation
        (DYNAMIC_TENSOR_OPEN_ENDED) that static tensors lowered (`_room_from_open_ended`) grows back up to
        the lowest tensor still placed above it (at most the bytes it reserved at its declaration)."""
        self._placement.release(storages)
        for space in {st.space for st in storages}:
            chain = self._live_chain(space)
            if not chain or space not in self._placement._alloc:
                continue
            root = chain[0]
            full = self._open_full.get(root)
            if full is None or root.nbytes >= full:
                continue
            a = self._placement._alloc[space]
            end = root.addr + root.nbytes
            top = min((lo for lo, _, _ in a.occupants() if lo >= end), default=root.addr + full)
            grown = min(full, top - root.addr)
            if grown > root.nbytes:
                a._free_id(root.alloc_id)
                a._place(root.addr, grown, root.name)
                root.alloc_id = a._order[-1]
                root.nbytes = grown

    def _empty_tensor_error(self, t: Tensor, name: str):
        """The error for a use of an empty tensor (declared with a dimension <= 0 in code that never runs)."""
        st = t.storage
        w = f" at {st.where.file}:{st.where.line}" if st.where else ""
        return self._error(f"{name} uses tensor {st.name!r} of shape {list(st.shape)}: it was declared{w} in code "
                           f"that never runs (a statically false if_scope or an empty for_range), where TIK drops "
                           f"the declaration; it holds no elements", operand=name, value=list(st.shape),
                           limit="dimensions >= 1",
                           hint="use the tensor only inside the scope that declares it, or give every dimension "
                                "at least 1")

    def _check_alive(self, t: Tensor, name: str) -> None:
        st = t.storage
        if st.nbytes == 0:
            raise self._empty_tensor_error(t, name)
        if st.space == "gm" or st.alive:
            return
        other = self._placement.reclaim(st)
        if other is not None:
            w = f" (declared at {st.where.file}:{st.where.line})" if st.where else ""
            raise self._error(f"{name} uses tensor {st.name!r}{w} after the scope that created it ended; its "
                              f"{SPACE_TIK_NAMES[st.space]} bytes now belong to tensor {other!r}", operand=name,
                              value=st.name, hint="declare the tensor in the scope where it is used (or an outer "
                                                  "one), not inside a for_range/if_scope/new_stmt_scope body")
        self._scopes[-1].storages.append(st)

    @tik_api("Scalar")
    def Scalar(self, dtype="int64", name="reg_buf", init_value=None):  # noqa: N802
        """A scalar register (tik_api.md §5.1)."""
        self._scalar_dtype(dtype)
        if not isinstance(name, str) or not _SCALAR_NAME.match(name):
            raise self._error(f"Scalar name {name!r} must be letters, digits and _, not starting with a digit",
                              operand="name", value=name, limit="[A-Za-z_][0-9A-Za-z_]*",
                              hint="pass name='...' (a str of letters, digits and _)")
        if isinstance(init_value, Tensor) and init_value.storage.nbytes == 0 and self._never_runs():
            init_value = None      # an element of an empty tensor in code that never runs: a Scalar (not None)
        if init_value is not None:
            self._check_scalar_value(P.scalar_type(dtype), init_value, "init_value")
        return Scalar(self, dtype, name, init_value)

    def _check_scalar_value(self, t, value, name: str) -> None:
        """TIK's rules for the value a Scalar of register type ``t`` is set to (the Scalar reference and its
        set_as page): a one-element tensor view only; no Expr into a float16 Scalar (every chip); on Ascend310
        (Atlas 200/300/500 inference) no float Scalar from a Scalar of another type or from an Expr, and no
        int Scalar from a float Scalar or from an Expr over float Scalars. The facade's own lowerings (nested
        calls) are not checked."""
        if self._depth > 1:
            return
        if isinstance(value, Tensor):
            size = value.size
            if isinstance(size, int) and size != 1:
                raise self._error(f"{name} is tensor view {value.name!r} of shape {list(value.shape)}; a Scalar is "
                                  f"set from one element", operand=name, value=list(value.shape), limit="1 element",
                                  hint="index the element: s.set_as(t[i])")
            return
        if not isinstance(value, Expr) or isinstance(value.ir, P.Const):
            return
        computed = bool(value.ir.children())
        vt = value.ir.type
        what = f"the {vt.pto_name} Scalar" if not computed else "an Expr"
        if t.name == "f16" and computed:
            raise self._error(f"{name}: a float16 Scalar cannot be set to an Expr", operand=name, value=repr(value),
                              hint="compute in a float32 Scalar and convert with scalar_conv('', dst_f16, src_f32)")
        if platform.current_soc().short_soc_version != "Ascend310":
            return
        bad = None
        if S.is_float(t) and (computed or vt is not t):
            bad = f"a {t.pto_name} Scalar cannot be set to {what}"
        elif not S.is_float(t) and not integer_rooted(value.ir):
            bad = f"an integer Scalar cannot be set to {what} of float type"
        if bad:
            raise self._error(f"{name}: on Ascend310 {bad} (the scalar unit has no such conversion)",
                              operand=name, value=repr(value), cls=UnsupportedOp,
                              hint="use immediates or same-type Scalars, or convert with scalar_conv on a chip "
                                   "that has it")

    def _scalar_dtype(self, dtype):
        if dtype not in SCALAR_DTYPES:
            raise self._error(f"dtype {dtype!r} is not a TIK scalar dtype", operand="dtype", value=dtype,
                              limit="one of " + ", ".join(SCALAR_DTYPES), cls=UnknownName,
                              hint="pass one of the listed dtype names as a str (e.g. 'int32')")

    @tik_api("InputScalar")
    def InputScalar(self, dtype="int64", name="input_scalar"):  # noqa: N802
        """A kernel argument given at launch (``feed_dict[name]``); list it in BuildCCE inputs."""
        self._scalar_dtype(dtype)
        if not isinstance(name, str) or not name.isidentifier():
            raise self._error(f"InputScalar name {name!r} must be an identifier", operand="name", value=name,
                              hint="use letters, digits and _ only (the name is the feed_dict key)")
        if any(s.name == name for s in self._input_scalars):
            raise self._error(f"InputScalar name {name!r} is used twice", operand="name", value=name,
                              hint="give every InputScalar a unique name (it is the feed_dict key)")
        arg = P.ScalarArg(name, dtype, owner=self._builder)
        s = InputScalar(self, arg, name)
        self._input_scalars.append(s)
        return s

    # ------------------------------------------------------------------ scalar and element moves
    def _scalar_set(self, s: Scalar, value) -> None:
        if isinstance(value, Tensor):
            self._load_element(value, s.ir, "value")
            return
        v = int64_immediate_bits(self._scalar_arg(value, "value"), s.ir.type)
        self._check_stored(v, s.ir.type, f"the {s.dtype} Scalar {s.name!r}", "value")
        self._builder.assign(s.ir, v)

    def _check_stored(self, v, t, what: str, operand: str, wider: str = "") -> None:
        """`check_immediate` of a value stored into ``t`` (a Scalar, a dst register, a tensor element), as this
        call's error. A float with a fraction is checked by the integer C conversion keeps (``trunc``): an
        integer store of a float outside the type is undefined in C. ``wider``: the Fix's "or ..." alternative."""
        given = v
        if type(v) is float and math.isfinite(v) and S.is_int(t):
            v = int(v)                              # C conversion truncates toward zero
        try:
            check_immediate(v, t, f"stored into {what}", store=True)
        except IllegalOperand as e:
            hint = e.hint if not wider or e.limit is None else f"use a value in {e.limit}, or {wider}"
            message, value = e.message, e.value
            if given is not v and given != v:       # name the value the kernel wrote, not only its truncation
                message = message.replace(f"the immediate {v} ", f"the immediate {given!r} (truncated to {v}) ", 1)
                value = given
            raise self._error(message, operand=operand, value=value, limit=e.limit, hint=hint) from None

    @tik_api("Scalar.set_as")
    def _scalar_set_api(self, s, value, src_offset=None):
        if isinstance(value, Tensor) and src_offset is not None:
            value = value._view((1,), (1,), _add(value.offset, self._int_arg(src_offset, "src_offset")))
        self._check_scalar_value(s.ir.type, value, "value")
        self._scalar_set(s, value)

    @tik_api("InputScalar.set_as")
    def _input_scalar_set_as(self, s, *args, **kwargs):
        raise self._error("an InputScalar is read-only", operand=s.name,
                          hint="copy it into a Scalar first: s = tik_instance.Scalar(dtype); s.set_as(input)")

    def _load_element(self, t: Tensor, reg, name: str) -> None:
        op = self._operand(t, name, spaces=("ub", "gm"))
        if op.space == "gm" and platform.current_soc().short_soc_version in _V100_SHORT:
            raise self._error(f"{name}: a GM tensor element cannot be read into a Scalar on "
                              f"{platform.current_soc().soc_version}", operand=name, value=t.name, cls=UnsupportedOp,
                              hint="move the data to UB with data_move first")
        esize = max(1, t.dt.bits // 8)
        op.check_extent(esize, "reading one element")
        self._sync.op("S", [op.read(esize)])
        ptr = op.ptr
        rt = getattr(reg, "type", None)
        if rt is not None and rt is not t.dt and rt.bits == t.dt.bits and rt.name != "bool":
            # TIK moves the element's bits into the register (reg_mov): a uint16 Scalar set from a float16
            # slot holds its raw bits, as CANN's arg_max_with_value reads vcmax indices
            ptr = ptr.cast(rt)
        self._builder.load(ptr, 0, into=reg)

    @tik_api("Tensor.set_as")
    def _tensor_set_as(self, t: Tensor, value, dst_offset=0, src_offset=None):
        self._store_element(t, value, dst_offset, src_offset)

    def _store_element(self, t: Tensor, value, dst_offset=0, src_offset=None):
        off = self._int_arg(dst_offset, "dst_offset")
        if not (isinstance(off, int) and off == 0):
            t = t._view((1,), (1,), _add(t.offset, off))
        soc = platform.current_soc()
        spaces = ("ub",) if soc.short_soc_version in _V100_SHORT + ("Ascend310P", "Ascend610", "BS9SX1A") else \
            ("ub", "gm")
        op = self._operand(t, "dst", spaces=spaces)
        if isinstance(value, Tensor):
            if src_offset is not None:
                value = value._view((1,), (1,), _add(value.offset, self._int_arg(src_offset, "src_offset")))
            elif isinstance(value.size, int) and value.size == 0:
                # an empty view has no first element (the element at its offset lies outside it)
                raise self._error(f"value is tensor view {value.name!r} of shape {list(value.shape)}, which has no "
                                  f"element to store", operand="value", value=list(value.shape),
                                  limit="1 element",
                                  hint="index the element: t[i].set_as(src[j]), or check the slice bounds")
            elif SET_AS_TENSOR_FIRST_ELEMENT and not (isinstance(value.size, int) and value.size == 1):
                value = value._view((1,), (1,), value.offset)
            # Named choice SET_AS_ELEMENT_BITS (tik_core.md): an element of another dtype of the same width is
            # copied as bits (as the reg_mov load of a Scalar set_as; TIK documents no conversion for Tensor ->
            # Tensor set_as). CANN's prod_env_mat_a stages int32 nlist entries in a float32 block this way.
            # Other widths convert as values.
            tmp = P.Reg(P.scalar_type(value.dt))
            self._load_element(value, tmp, "value")
            v = tmp
            if value.dt is not t.dt and value.dt.bits == t.dt.bits and "bool" not in (t.dt.name, value.dt.name):
                bits_ptr = op.ptr.cast(value.dt)       # the destination slot written with the source's bits
            else:
                bits_ptr = None
        else:
            # Named choice SET_AS_SCALAR_CONVERTS (tik_core.md): a Scalar/Expr of another dtype is stored with C
            # conversion. TIK's set_as page says a Scalar "must be of the same data type" but TIK's code does not
            # check it; the store it emits converts as C does.
            v = self._scalar_arg(value, "value")
            bits_ptr = None
            if TENSOR_SET_AS_IMMEDIATE_CHECKED and not isinstance(v, P.Expr):
                et = P.scalar_type(t.dtype)
                v = int64_immediate_bits(v, et)
                self._check_stored(v, et, f"the {t.dtype} tensor element {t.name!r}", "value",
                                   wider="declare the tensor with a wider dtype")
        esize = max(1, t.dt.bits // 8)
        op.check_extent(esize, "writing one element")
        self._sync.op("S", [op.write(esize)])
        self._builder.store(op.ptr if bits_ptr is None else bits_ptr, 0, v)

    # ------------------------------------------------------------------ scalar unit ops (tik_api.md §5.1)
    def _scalar_dst(self, dst, name="dst") -> Scalar:
        if not isinstance(dst, Scalar):
            raise self._error(f"{name} must be a Scalar, got {type(dst).__name__} {dst!r}", operand=name,
                              value=repr(dst),
                              hint=f"pass a tik Scalar as {name} (tik_instance.Scalar(dtype))")
        return dst

    def _scalar_unit_check(self, api: str, dst: Scalar, check_dst: bool = True, **srcs) -> None:
        """TIK's operand checks of scalar_abs / scalar_max / scalar_min / scalar_sqrt (CANN ``tik_scalar_api.py``
        ``_scalar_single_func`` / ``_scalar_binary_func``; the TIK reference pages of the three APIs):
        each source is a Scalar of dst's dtype or an int/float immediate, and dst's dtype is one the chip's
        ``Intrinsic_<abs|max|min>`` row lists (`SCALAR_UNIT_INSTR`): int64 on Ascend310/910, int64 and
        float32 on the later chips. An InputScalar of dst's dtype is taken as a Scalar (TIK's InputScalar is
        an Expr, which TIK refuses; kept as an extension). ``check_dst=False``: the sources only (scalar_sqrt
        checks its dst itself). Raises before anything is recorded."""
        instr = SCALAR_UNIT_INSTR[api]
        for name, src in srcs.items():
            if isinstance(src, (Scalar, InputScalar)):
                if src.dtype != dst.dtype:
                    raise self._error(f"{api}'s {name} is a Scalar of dtype {src.dtype} but dst {dst.name!r} is {dst.dtype} "
                                      f"(TIK: \"Intrinsic {instr}'s {name}'s dtype should be equal to dst's dtype\")",
                                      operand=name, value=src.dtype, limit=dst.dtype,
                                      hint=f"pass a {dst.dtype} Scalar as {name} (copy it first: "
                                           f"tmp = tik_instance.Scalar('{dst.dtype}'); tmp.set_as({name}))")
            elif isinstance(src, Expr):
                raise self._error(f"{api}'s {name} is an Expr ({src.dtype}); TIK takes a Scalar or an immediate",
                                  operand=name, value=repr(src), limit="Scalar or int/float immediate",
                                  hint=f"assign the Expr to a {dst.dtype} Scalar first (tmp.set_as(expr)) and pass "
                                       "that Scalar")
        if not check_dst:
            return
        try:
            ok = platform.intrinsic_check_support("Intrinsic_" + instr, dst.dtype)
        except platform.PlatformDataMissing:
            ok = dst.dtype in ("int64", "float32")
        if not ok:
            soc = platform.current_soc().short_soc_version
            other_chip = dst.dtype in ("int64", "float32")
            raise self._error(f"{api} does not support dst dtype {dst.dtype} on {soc} (the scalar unit's {instr} takes "
                              f"{'int64 only here' if other_chip else 'int64, or float32 on chips after Ascend910'})",
                              operand="dst", value=dst.dtype, limit="int64" if other_chip else "int64, float32",
                              cls=UnsupportedOp if other_chip else IllegalOperand,
                              hint="declare dst and the source Scalars int64 (or float32 on a chip that has it, "
                                   "e.g. Ascend910B1); convert with set_as / scalar_conv first")

    @tik_api("scalar_abs")
    def scalar_abs(self, dst, src):
        """``dst = |src|``."""
        d = self._scalar_dst(dst)
        self._scalar_unit_check("scalar_abs", d, src=src)
        self._builder.assign(d.ir, P.abs_(self._scalar_arg(_bool_immediate_as_int(src), "src")))

    @tik_api("scalar_sqrt")
    def scalar_sqrt(self, dst, src):
        """``dst = sqrt(|src|)`` for int64 or float32 Scalars (the TIK reference: "a negative value is
        supported: its absolute value is taken first"; int64 results are truncated, 10 -> 3, exact up to
        2**52). Ascend310 (Atlas 200/300/500 inference) has the int64 form only."""
        d = self._scalar_dst(dst)
        if d.dtype not in ("int64", "float32"):
            raise self._error(f"scalar_sqrt takes int64 or float32 Scalars, got a {d.dtype} dst", operand="dst",
                              value=d.dtype, limit="int64, float32",
                              hint="declare dst (and src) as int64 or float32 Scalars; convert with "
                                   "Scalar.set_as or scalar_conv first")
        soc = platform.current_soc()
        if d.dtype == "float32" and soc.short_soc_version == "Ascend310":
            raise self._error("scalar_sqrt of float32 is not supported on Ascend310 (int64 only)", operand="dst",
                              value=d.dtype, limit="int64", cls=UnsupportedOp,
                              hint="use an int64 Scalar, or select a chip with float32 scalar_sqrt (e.g. Ascend910)")
        self._scalar_unit_check("scalar_sqrt", d, check_dst=False, src=src)     # its dst check is above
        sv = self._scalar_arg(src, "src")
        self._check_stored(sv, d.ir.type, f"the {d.dtype} Scalar {d.name!r}", "src")
        v = P.abs_(P.cast(P.as_expr(sv, d.ir.type), d.ir.type))
        self._builder.assign(d.ir, _isqrt(v) if d.dtype == "int64" else P.sqrt(v))

    @tik_api("scalar_max")
    def scalar_max(self, dst, src0, src1):
        """``dst = max(src0, src1)`` (floats: IEEE maxNum)."""
        d = self._scalar_dst(dst)
        self._scalar_unit_check("scalar_max", d, src0=src0, src1=src1)
        self._builder.assign(d.ir, P.max_(*self._scalar_operands(d, src0, src1)))

    @tik_api("scalar_min")
    def scalar_min(self, dst, src0, src1):
        d = self._scalar_dst(dst)
        self._scalar_unit_check("scalar_min", d, src0=src0, src1=src1)
        self._builder.assign(d.ir, P.min_(*self._scalar_operands(d, src0, src1)))

    def _scalar_operands(self, d: Scalar, src0, src1) -> tuple:
        """The two sources of a scalar_max/min in IR form; an int immediate takes the other source's dtype (or
        dst's) and must fit it."""
        a, b = self._scalar_arg(_bool_immediate_as_int(src0), "src0"), self._scalar_arg(_bool_immediate_as_int(src1),
                                                                                      "src1")
        for v, other, name in ((a, b, "src0"), (b, a, "src1")):
            t = other.type if isinstance(other, P.Expr) else d.ir.type
            try:
                check_immediate(v, t, name)
            except IllegalOperand as e:
                raise self._error(e.message, operand=name, value=e.value, limit=e.limit, hint=e.hint) from None
        return a, b

    #: scalar_conv round_mode -> (IR rounding function or None, api_check_support suffix); 'away-zero' is
    #: half away from zero here (310P-class AI/Vector Core: "四舍五入") and `_away_from_zero` on _AWAY_IS_UP_SOCS
    _SCALAR_CONV_MODES = {"": (None, ""), "none": (None, ""), "round": (P.round_even, "r"),
                          "floor": (P.floor, "f"), "ceil": (P.ceil, "c"), "ceiling": (P.ceil, "c"),
                          "away-zero": (P.round_away, "a"), "to-zero": (P.trunc, "z"), "odd": (None, "o")}
    _SHORT = {"float32": "f32", "float16": "f16", "int32": "s32"}

    @tik_api("scalar_conv")
    def scalar_conv(self, round_mode, dst, src):
        """``dst = convert(src)`` with a rounding mode (the reference's table 2): f32->s32 with round /
        floor / ceil(ing) / away-zero / to-zero; s32->f32, f16->f32 with '' or 'none'; f32->f16 with ''/'none'
        (nearest even) or 'odd' (round to odd). ``src`` is a Scalar (or InputScalar), never an Expr or an
        immediate, as TIK's ``tik_scalar_api.py`` checks; refused before anything is recorded."""
        d = self._scalar_dst(dst)
        if not isinstance(src, Expr):
            raise self._error(f"src must be a Scalar, got {type(src).__name__}", operand="src",
                              hint="pass a Scalar (s = tik_instance.Scalar('float32', init_value=x) for a number)")
        if not isinstance(src, (Scalar, InputScalar)):
            # TIK's tik_scalar_api.py scalar_conv: check_type_match(src, Scalar, 'scalar conv src must be a
            # scalar'), as scalar_abs/max/min/sqrt (`_scalar_unit_check`); an InputScalar is taken as there
            raise self._error(f"scalar_conv's src is an Expr ({src.dtype}); TIK takes a Scalar (\"scalar conv src "
                              f"must be a scalar\")", operand="src", value=repr(src), limit="Scalar",
                              hint=f"assign the Expr to a {src.dtype} Scalar first (tmp = tik_instance.Scalar("
                                   f"'{src.dtype}'); tmp.set_as(expr)) and pass that Scalar")
        mode = self._SCALAR_CONV_MODES.get(round_mode) if has_key(self._SCALAR_CONV_MODES, round_mode) else None
        if mode is None:
            raise self._error(f"round_mode {round_mode!r} is not supported", operand="round_mode",
                              value=round_mode, limit=", ".join(repr(m) for m in self._SCALAR_CONV_MODES),
                              hint="pass one of the listed round_mode strs ('' or 'none' for the default rounding)")
        fn, suffix = mode
        if round_mode == "away-zero" and platform.current_soc().short_soc_version in _AWAY_IS_UP_SOCS:
            fn = _away_from_zero
        a, b = self._SHORT.get(src.dtype), self._SHORT.get(d.dtype)
        modes = _SCALAR_CONV_PAIRS.get((a, b))
        if modes is None:
            raise self._error(f"scalar_conv from {src.dtype} to {d.dtype} is not a TIK conversion", operand="dst",
                              value=f"{src.dtype}->{d.dtype}", limit="f32->s32, s32->f32, f16->f32, f32->f16",
                              hint="convert in steps through float32 (each step one scalar_conv), or use "
                                   "Scalar.set_as for a same-type copy")
        if round_mode not in modes:
            if b == "s32" and suffix == "":
                raise self._error("scalar_conv float32 -> int32 needs a rounding mode", operand="round_mode",
                                  value=round_mode, limit="round, floor, ceil, away-zero, to-zero",
                                  hint="pass round_mode='round', 'floor', 'ceil', 'away-zero' or 'to-zero'")
            raise self._error(f"scalar_conv {src.dtype} -> {d.dtype} takes round_mode "
                              f"{', '.join(repr(m) for m in modes)}, not {round_mode!r}", operand="round_mode",
                              value=round_mode, limit=", ".join(repr(m) for m in modes),
                              hint=f"pass round_mode={modes[0]!r}" if len(modes) == 1 else
                              f"pass one of round_mode={', '.join(repr(m) for m in modes)}")
        self._require_support("tik.scalar_conv", f"{a}2{b}{suffix if b == 's32' or suffix == 'o' else ''}")
        v = src.ir
        if round_mode == "odd":
            self._builder.assign(d.ir, _f32_to_f16_odd(v))
            return
        if fn is not None and a == "f32":
            v = fn(v)
        self._builder.assign(d.ir, P.cast(v, d.ir.type))

    # ------------------------------------------------------------------ views
    def _view_error(self, e: _IndexError):
        return self._error(e.message, operand=e.operand, value=e.value, limit=e.limit, hint=e.hint)

    def _api_view(self, t: Tensor, key):
        """``t[key]`` (no statement is recorded: provenance is only needed for errors).

        In code that never runs (a statically false ``if_scope``, an empty constant ``for_range``;
        see `api.tik_api`) a static index or slice bound outside the tensor is not an error: TIK's
        constant folding drops the code. IndexSDK's flat-IP loader indexes one row past an L1
        tensor under ``if_scope(cnt % H != 0)`` with ``cnt`` a Python multiple of ``H``. The view
        is built unchecked; calls that use it are dropped or never executed."""
        if single_index_skips_view(t, key):
            self._warn_flat_index(t)
        try:
            return t.index(key)
        except _IndexError:
            pass
        if any(sc.dead for sc in self._scopes):
            try:
                return t.index(key, bounds=False)
            except _IndexError:
                pass
        with self._api("tik.Tensor.__getitem__"):
            if t.storage.nbytes == 0:
                raise self._empty_tensor_error(t, "self")
            try:
                t.index(key)
            except _IndexError as e:
                raise self._view_error(e) from None

    def _tensor_compare(self, t: Tensor, pred: str, other):
        """``t <pred> other`` for a one-element view: its element is loaded into a temporary Scalar where the
        comparison is written (CANN TIK's ``Tensor.__eq__`` ... ``__ge__``), then compared like a Scalar."""
        if t.size != 1:
            raise self._error(f"comparing tensor view {t.name!r} of shape {list(t.shape)} needs a single element",
                              operand="self", value=list(t.shape), limit="1 element",
                              hint="index one element (t[i] < x), or compare element by element with vcmpv_*")
        reg = self.Scalar(t.dtype, name=f"{t.name}_elem")
        reg.set_as(t)
        if isinstance(other, Tensor):
            other = self._tensor_element_scalar(other)
        return reg._cmp(pred, other, api_depth=1)         # the user's comparison, through this API

    def _tensor_element_scalar(self, t: Tensor):
        if t.size != 1:
            raise self._error(f"comparing with tensor view {t.name!r} of shape {list(t.shape)} needs a single "
                              f"element", operand="other", value=list(t.shape), limit="1 element",
                              hint=f"index one element of it ({t.name}[i]), or compare element by element with "
                                   f"vec_cmpv_*")
        reg = self.Scalar(t.dtype, name=f"{t.name}_elem")
        reg.set_as(t)
        return reg

    def _warn_flat_index(self, t: Tensor) -> None:
        """FLAT_INDEX_FROM_TENSOR_START drops the offset of view ``t``: say so at the user's line."""
        w = user_frame()
        dims = "x".join(str(d) if isinstance(d, int) else "?" for d in t._shape)
        offset = t.offset if isinstance(t.offset, int) else "set at run time"
        site = f"{w.file}:{w.line}: " if w else ""       # in the text too: ``-W error`` raises the message alone
        msg = (f"{site}one index on the {dims} view of tensor {t.name!r} (element offset {offset}) counts from the "
               f"tensor's first element, not the view's: CANN TIK flattens the whole tensor and the device computes "
               f"that (FLAT_INDEX_FROM_TENSOR_START). If the view's start was meant, give one index per dimension")
        if w:
            warnings.warn_explicit(msg, FlatIndexWarning, w.file, w.line)
        else:
            warnings.warn(msg, FlatIndexWarning, stacklevel=3)

    @tik_api("Tensor.__setitem__")
    def _api_setitem(self, t: Tensor, key, value):
        if t.storage.nbytes == 0:
            raise self._empty_tensor_error(t, "dst")
        if single_index_skips_view(t, key):
            self._warn_flat_index(t)
        try:
            v = t.index(key)
        except _IndexError as e:
            raise self._view_error(e) from None
        self._store_element(v, value)

    @tik_api("Tensor.reshape")
    def _api_reshape(self, t: Tensor, new_shape, twice=None):
        return self._reshape(t, new_shape, "tik.Tensor.reshape", twice)

    @tik_api("Tensor.flatten")
    def _api_flatten(self, t: Tensor):
        return self._reshape(t, ((t.size,),), "tik.Tensor.flatten")

    @tik_api("Tensor.change_shape")
    def _api_change_shape(self, t: Tensor, new_shape):
        return self._reshape(t, (new_shape,), "tik.Tensor.change_shape")

    def _reshape(self, t: Tensor, new_shape, api: str, twice=None):
        """``Tensor.reshape`` / ``flatten`` / ``change_shape`` (``api``: the TIK name the user called, which the
        decorated caller's errors and warnings carry)."""
        if twice is not None:
            raise self._error(f"Tensor.reshape got the shape by position {new_shape!r:.40} and as new_shape="
                              f"{twice!r:.40}", operand="new_shape", value=repr(twice)[:40],
                              hint="pass the shape once: t.reshape(new_shape=(16, 8)) or t.reshape((16, 8))")
        if len(new_shape) == 1 and isinstance(new_shape[0], (list, tuple)):
            new_shape = tuple(new_shape[0])
        if t.storage.nbytes == 0:
            if not self._never_runs():
                raise self._empty_tensor_error(t, "self")
            # code that never runs: the view stays an empty Tensor (not None) so the code after it traces
            dims = self._shape_arg(new_shape, zero_ok=True)
            return Tensor(self, t.storage, t._dt, dims, _contiguous_strides(dims), 0, True)
        if self._never_runs() and 0 in t.shape:
            # an empty slice of a real tensor there (``ub[n - tail:n].reshape((tail,))`` under ``if_scope(tail > 0)``
            # with ``tail`` a Python 0): an empty view too, so the code after it traces and is dropped
            dims = self._shape_arg(new_shape, zero_ok=True)
            if prod(dims) == 0:
                return Tensor(self, t.storage, t._dt, dims, _contiguous_strides(dims), t.offset, False)
        dims = self._shape_arg(new_shape)
        part = t.static_part()
        if part is not None and _tensor_mod.RESHAPE_OF_1D_PART_WARNS and _data_mod.USER_FLAG_CANN81_RULES_WARN \
                and len(t.shape) == 1 \
                and t.is_contiguous and not (isinstance(prod(dims), int) and prod(dims) != part[0]):
            # te.tik 2019 reshaped a one-dimensional slice; CANN 8.x refuses it (RESHAPE_OF_1D_PART_WARNS)
            size, whole = part
            call = api.replace("tik.Tensor.", "")
            start = f" [{t.offset}:{t.offset + size}]" if isinstance(t.offset, int) else ""
            self._cann81_rule(
                "Tensor.reshape:self",
                f"{call} of a slice: the view{start} holds {size} of the {whole} elements of {t.storage.name!r} "
                f"(CANN 8.x TIK: \"Reshape operator is needed, but the tensor with shape: [{size}] has been "
                f"sliced.\"; te.tik 2019 reshaped a one-dimensional slice)",
                does="it reshapes the slice in place: the same elements from the same start",
                fix=f"reshape the whole tensor and index the result ({t.storage.name}.reshape(...)[a:b, :] for a "
                    f"block of rows); for a one-dimensional shape use the slice itself")
            return t.reshaped(dims, part_ok=True)
        try:
            return t.reshaped(dims)
        except _IndexError as e:
            raise self._view_error(e) from None

    @tik_api("Tensor.reinterpret_cast_to")
    def _api_reinterpret(self, t: Tensor, dtype):
        new = self._tensor_dtype(dtype)
        if t.storage.nbytes == 0:          # as `_api_reshape`
            if not self._never_runs():
                raise self._empty_tensor_error(t, "self")
            return Tensor(self, t.storage, new, tuple(t._shape), _contiguous_strides(t._shape), 0, True)
        try:
            return t.reinterpreted(new)
        except _IndexError as e:
            raise self._view_error(e) from None

    # ------------------------------------------------------------------ build
    @tik_api("BuildCCE")
    def BuildCCE(self, kernel_name=None, inputs=None, outputs=None, output_files_path=None, enable_l2=False,
                 config=None, flowtable=None, evaluates=None, extend_params=None):  # noqa: N802
        """Fix the kernel's signature and chip (tik_api.md §3.2); returns this instance (some
        scripts use the return value as the Tik instance). Nothing is written to disk."""
        from .build import build
        build(self, kernel_name, inputs, outputs, config, flowtable)
        _registry.register(self)
        return self

    # ------------------------------------------------------------------ introspection
    @property
    def program(self) -> P.Program:
        """The traced PTO program (complete after BuildCCE)."""
        return self._builder.program

    def get_left_buffer_size(self, scope) -> int:
        return self.get_available_buffer_size(scope)

    def get_available_buffer_size(self, scope) -> int:
        """Bytes still free in ``scope`` (largest total, not the largest hole)."""
        space = SCOPE_SPACES.get(scope) if has_key(SCOPE_SPACES, scope) else None
        if space is None or space == "gm":
            raise self._error(f"scope {scope!r} has no on-chip buffer", api="tik.get_available_buffer_size",
                              operand="scope", value=scope,
                              hint="pass an on-chip scope: tik.scope_ubuf, tik.scope_cbuf, tik.scope_ca, "
                                   "tik.scope_cb or tik.scope_cc")
        t = platform.current_soc().profile
        return buffer_capacity(space) - self._placement.allocator(space, t).used

    def __getattr__(self, name):
        """A TIK API this simulator has no family for yet raises a clear error (an AttributeError, so
        ``hasattr(tik_instance, "vec_add")`` stays False)."""
        found = next((c.__dict__[name] for c in type(self).__mro__ if name in c.__dict__), _ABSENT)
        if found is not _ABSENT and hasattr(found, "__get__"):
            # a class attribute (a property of the Tik or of a subclass) whose getter raised AttributeError:
            # Python then calls __getattr__ and drops that error. Run the getter again so its own error
            # (the attribute it could not read) reaches the user instead of "not a TIK API".
            return found.__get__(self, type(self))
        if name.startswith("_"):
            raise AttributeError(f"'Tik' object has no attribute {name!r}")
        if name in known_tik_apis():
            from .vector import UNMODELLED
            legacy = "v" + name[4:] if name.startswith("vec_") else None
            if legacy in UNMODELLED:
                message = f"tik.{name} is not implemented, nor is its instruction {legacy}: {UNMODELLED[legacy][0]}"
                hint = UNMODELLED[legacy][1]
            elif legacy is not None and callable(getattr(type(self), legacy, None)):
                # the name list adds vec_<x> for every v<x> intrinsic; TIK has only the legacy spelling of some
                message = (f"tik.{name} is not implemented; the instruction is available as the legacy "
                           f"tik.{legacy}")
                params = str(inspect.signature(getattr(type(self), legacy))).replace("(self, ", "(", 1)
                hint = f"call tik_instance.{legacy}{params}"
            else:
                message = f"tik.{name} is a TIK API this simulator does not implement yet"
                hint = ("express it with supported calls (the API tables and the list of what is not "
                        "modelled: migration_guide/tik_vector.md, tik_cube.md, tik_core.md), or run this part "
                        "as direct PTO ops in the same kernel (migration_guide/worked_migration.md)")
        else:
            # not a TIK API at all (a typo, or a name from another DSL): the same AttributeError subclass,
            # naming the user's line and the closest TIK names
            names = {n for n in dir(type(self)) if not n.startswith("_")} | set(known_tik_apis())
            close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
            message = f"'Tik' object has no attribute {name!r}: tik.{name} is not a TIK API"
            hint = (f"did you mean {', '.join('tik_instance.' + c for c in close)}?" if close else
                    "check the spelling against the TIK API reference (tik_api.md); supported calls and what "
                    "is not modelled: migration_guide/tik_vector.md, tik_cube.md, tik_core.md")
        from .errors import tik_error_class
        from pto_core.errors import Provenance
        w = user_frame()
        cls = tik_error_class(_MissingApi, exit_on_error=False)   # AttributeError cannot also be SystemExit
        raise cls(message, op=f"tik.{name}", where=None if w is None else Provenance(w.file, w.line, f"tik.{name}"),
                  hint=hint)

    def __repr__(self):
        name = self.build.kernel_name if self.build else "(not built)"
        return f"<tik.Tik kernel {name} on {self._builder.program.target.name}>"


#: `Tik.__getattr__`'s "no such class attribute" marker (a name's value may be None)
_ABSENT = object()


class _MissingApi(UnsupportedOp, AttributeError):
    """A known TIK API without an implementation in this simulator."""


_KNOWN: set = set()
#: TIK APIs named in tik_api.md that CANN's tables do not list.
_EXTRA_APIS = ("conv2d", "matmul", "fixpipe", "mmad", "load2dv1", "load2dv2", "load3dv1", "load3dv2", "col2img",
               "broadcast_ub_to_l0c", "data_move_quant", "printf", "set_printf_params", "ScalarArray",
               "TensorAddrList", "multi_for_range", "mov_atomic_add_to_scalar", "vec_trans", "vtranspose",
               "mov_tensor_to_cmpmask", "mov_cmpmask_to_tensor", "set_scalar_to_cmpmask", "vsel", "vec_sel",
               "vec_conv", "vconv", "vec_reduce_add", "vec_reduce_max", "vec_reduce_min", "vec_cpadd",
               "vec_rec_high_preci", "vec_rsqrt_high_preci", "vec_ln_high_preci", "vec_expm1_high_preci",
               "tensor_padding_with_matrix", "set_l0_set_value", "depthwise_conv", "winograd_conv",
               "mmad_broadcast", "vec_dup", "vector_dup", "vnchwconv", "vec_trans_scatter")


def known_tik_apis() -> set:
    """Names of TIK APIs (from CANN's API tables, the intrinsic maps and tik_api.md)."""
    if not _KNOWN:
        from ..data import tik_api_map as m
        names = set(m.ONLY_TIK_API_MAP) | set(m.TRANS_TIK_API_TO_INSTR_MAP) | set(getattr(m, "H_API_MAP", {}))
        for table in platform.SOC_TABLES.values():
            for section in ("AICoreintrinsicDtypeMap", "VectorCoreintrinsicDtypeMap"):
                for key in table.get(section, {}) or {}:
                    key = key[len("Intrinsic_"):] if key.startswith("Intrinsic_") else key
                    names.add(key)
                    if key.startswith("v"):
                        names.add("vec_" + key[1:])
        names.update(_EXTRA_APIS)
        _KNOWN.update(n for n in names if n.isidentifier() and not n.endswith("_v1"))
    return _KNOWN


def _contiguous_strides(dims) -> tuple:
    """Element strides of a row-major tensor of ``dims`` (ints or INDEX expressions)."""
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc = acc * d if isinstance(acc, int) and isinstance(d, int) else P.binop("mul", _index(acc), _index(d))
    return tuple(reversed(strides))


def _index(v):
    return P.cast(v, INDEX) if isinstance(v, P.Expr) else v


def _add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return P.binop("add", _index(P.as_expr(a, INDEX)), _index(P.as_expr(b, INDEX)))


for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tik, f"_api_tensor_{_pred}", _tensor_comparison(_pred))
del _pred


__all__ = ["Tik"]
