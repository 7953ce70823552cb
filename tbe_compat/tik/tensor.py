"""TIK tensors: one `Storage` (a GM kernel argument or an on-chip allocation) and views of it.

A `Tensor` is a *view*: (storage, dtype, element offset, shape, strides), exactly as
TIK models it (tik_api.md §4.2):

* ``t[i]`` / ``t[a:b]`` on a 1-D tensor index / slice it (negative ints wrap; bounds
  and steps may be ints or TIK expressions; ``step`` must be an int).
* On a multi-dimensional tensor a **single** index or slice is a *flat* element index
  counted from the first element of the whole tensor, whatever the view's offset (named
  choice FLAT_INDEX_FROM_TENSOR_START, as CANN TIK does; the facade warns where a view's
  offset is dropped); the result is 1-D.
* With several indices there must be one per dimension; an int index keeps its
  dimension with length 1 (CANN 8.1 ``tik_tensor_._normalize_slice`` turns ``i`` into
  ``slice(i, i + 1, 1)``): ``t[i, :, :]`` of an (a, b, c) tensor has shape ``[1, b, c]``,
  ``t[i, j]`` of a 2-D tensor ``[1, 1]`` (h_* APIs compare these shapes exactly).
* ``reshape``, ``flatten``, ``reinterpret_cast_to`` (wider: last dim and offset divide by
  the ratio; narrower: a trailing dimension of size ratio is appended -- TIK "version 1").

Instructions use a view as its *start element* and may access up to the end of the
storage: `Tensor.elements_available` is what is left from the view's start. A view with
an out-of-range start is legal until an instruction really accesses it (CHECKLIST S11:
a run-time repeat count of 0 on ``x[i + 1, 0]`` at the last row). Static indices and
slice bounds are checked when the view is made, as TIK does.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pto_core import program as P
from pto_core.dtypes import DType
from pto_core.errors import UnsupportedOp
from pto_core.program import INDEX, I64

from .errors import user_method
from .scalar import Expr, affine_difference, integer_rooted, static_int, tik_dtype_name

#: TIK scope string -> canonical space (tik_api.md §1.1; ``scope_cbuf_out`` == ``scope_cc``).
SCOPE_SPACES = {"global": "gm", "local.L1": "l1", "local.UB": "ub", "local.L0A": "l0a", "local.L0B": "l0b",
                "local.L0C": "l0c", "local.BT": "bt", "local.FB0": "fb"}
#: canonical space -> TIK's short name in messages
SPACE_TIK_NAMES = {"gm": "GM (scope_gm)", "l1": "L1 (scope_cbuf)", "ub": "UB (scope_ubuf)", "l0a": "L0A (scope_ca)",
                   "l0b": "L0B (scope_cb)", "l0c": "L0C (scope_cc/scope_cbuf_out)", "bt": "BT (scope_bt)",
                   "fb": "FB (scope_fb0)"}
#: Named choice **RESHAPE_OF_PART_REFUSED**: ``reshape`` / ``flatten`` / ``change_shape`` of a view that covers only
#: part of its tensor (``t[16:48].reshape((2, 16))``, ``t2[16:].flatten()``) is an error when the view's shape and
#: the tensor's shape are both constants, as CANN 8.1.RC1 TIK's ``TensorInner.check_tensor_reshapeable``
#: (tbe/tik/tik_lib/tik_tensor_.py) raises "Reshape operator is needed, but the tensor with shape: [32] has been
#: sliced." when the product of the view's shape differs from the product of its ``original_shape`` (the whole
#: tensor's, in the view's dtype); tik_api.md §4.3 says the same. A view with a run-time dimension is not checked
#: (TIK skips the check when a dimension is not a constant); a non-contiguous view is refused in every case (the
#: simulator cannot give it row-major strides). False: a contiguous partial view is reshaped in place (the
#: simulator's behaviour before fix438). migration_guide/tik_core.md §2.
RESHAPE_OF_PART_REFUSED = True
#: Named choice **RESHAPE_OF_1D_PART_WARNS** (refines RESHAPE_OF_PART_REFUSED): a contiguous one-dimensional view
#: holding part of its tensor (``ub[16:48].reshape((2, 16))``, ``ub[n - tail:n].reshape((tail,))``,
#: ``t2[16:].flatten()``) is reshaped in place with a `Cann81RuleWarning` once per call site instead of the error,
#: as the other rules only CANN 8.x TIK enforces (USER_FLAG_CANN81_RULES_WARN, data.py). te.tik 2019
#: (tik_tensor.py, ``TensorSlice.reshape``, MODIFIED 2019-07-18) takes a sliced tensor whose index is one-dimensional:
#: a one-dimensional new shape returns the slice itself, a longer one a view of the same contiguous elements from
#: the same start (its dimensions come out permuted: (2, 16) gives (16, 2), a te.tik quirk the simulator does not
#: copy); its restriction is only "the total size of the new shape must be the same" (te.tik 2019 docstring).
#: CANN 8.0-9.0's reshape page adds "If the data of a Tensor is partially obtained from another Tensor, the Tensor
#: cannot be reshaped" and CANN 8.1 ``check_tensor_reshapeable`` raises. A multi-dimensional partial view stays an
#: error (te.tik 2019: "not support for now"; CANN 8.1 refuses it too), as does a non-contiguous one. False (or
#: USER_FLAG_CANN81_RULES_WARN False): every partial view is refused, as fix438 made it.
#: migration_guide/tik_core.md §2 (reshape).
RESHAPE_OF_1D_PART_WARNS = True

#: Tensor dtypes TIK accepts (tik_api.md §1.5, plus int4/uint4 cube operands).
TENSOR_DTYPES = ("uint8", "int8", "uint16", "int16", "float16", "bfloat16", "uint32", "int32", "float32", "uint64",
                 "int64", "bool", "int4", "uint4")


class Storage:
    """One tensor allocation.

    Attributes:
        space: canonical space (``gm``, ``ub``, ``l1``, ``l0a``, ``l0b``, ``l0c``, ``bt``, ``fb``).
        name: the TIK ``name=`` (not unique: scripts reuse names).
        dtype, shape: as declared (shape entries are ints or IR expressions for dynamic dims).
        nbytes: bytes of the allocation (int; None for GM tensors with dynamic dims).
        runtime_size: for a GM tensor declared unbounded (CANN's ``(MAX_INT64,)`` idiom), the
            hidden scalar argument holding its real element count, fixed at launch.
        addr: byte address (on-chip) -- None for GM; an I64 register for an open-ended dynamic tensor
            placed at run time (DYNAMIC_TENSOR_RUNTIME_CHAIN, then ``chain_root`` is the tensor whose
            reservation holds it and ``nbytes`` a static upper bound).
        gm: the `pto_core.program.GmArg` of a GM tensor.
        alive: False after the creating scope ended (on-chip).
        where: provenance of the ``Tensor(...)`` call.
    """

    __slots__ = ("space", "scope", "name", "dtype", "shape", "nbytes", "addr", "gm", "alive", "alloc_id", "where",
                 "is_workspace", "is_atomic_add", "is_global", "init_value", "size_expr", "runtime_size", "chain_root",
                 "_base_ptrs", "copies", "placed_over")

    def __init__(self, space, scope, name, dtype: DType, shape, where):
        self.space, self.scope, self.name, self.dtype, self.shape, self.where = space, scope, name, dtype, shape, where
        self._base_ptrs: dict = {}
        self.nbytes = None
        self.addr = None
        self.gm = None
        self.alive = True
        self.alloc_id = None
        self.is_workspace = False
        self.is_atomic_add = False
        #: ``is_global_tensor=True`` (GLOBAL_TENSORS_ARE_ARGUMENTS, build.py)
        self.is_global = False
        self.init_value = None
        self.size_expr = None
        self.runtime_size = None
        self.chain_root = None
        #: copies of ``nbytes`` the on-chip allocation books (THREAD_NUM_RESERVES_COPIES: a tensor declared in a
        #: thread_num > 1 for_range books one per buffer; set by `Tik._place`)
        self.copies = 1
        #: the live tensors whose bytes a ``start_addr=`` placed this one over (`Placement.place`; automatic
        #: placement never overlaps a live tensor): a hazard note says which way two tensors came to share bytes,
        #: together by start_addr= or in turn (`debug._explain_hazard_between_tik_calls`)
        self.placed_over = ()

    def reserved_bytes(self):
        """Bytes the allocation books in its buffer: ``nbytes`` x ``copies``. The one rule the declaration's
        placement and BuildCCE's capacity recheck share."""
        return None if self.nbytes is None else self.nbytes * self.copies

    def reserved_bounds(self) -> tuple:
        """``(lo, hi)``: static byte range the allocation books, all its copies (`static_bounds` is one copy)."""
        if isinstance(self.addr, int):
            return self.addr, self.addr + self.reserved_bytes()
        return self.chain_root.reserved_bounds()

    def static_bounds(self) -> tuple:
        """``(lo, hi)``: static byte range holding the allocation (the chain root's reservation for a
        tensor placed at a run-time address)."""
        if isinstance(self.addr, int):
            return self.addr, self.addr + self.nbytes
        root = self.chain_root
        return root.addr, root.addr + root.nbytes

    def base_ptr(self, dt: DType) -> P.PtrExpr:
        """Pointer to the first byte of the allocation, typed ``dt``."""
        if self.space == "gm":
            return self.gm.cast(dt)
        key = (self.addr, dt.name)      # IR expressions are immutable: one node per address and type
        ptr = self._base_ptrs.get(key)
        if ptr is None:
            addr = P.Const(self.addr, I64) if isinstance(self.addr, int) else self.addr
            ptr = self._base_ptrs[key] = P.PtrFromInt(addr, P.PtrType(dt, self.space))
        return ptr

    def __repr__(self):
        where = "" if self.addr is None else f" @{self.addr:#x}" if isinstance(self.addr, int) else \
            " @(run time)"
        return f"<{self.space} tensor {self.name!r} {self.dtype.tik_name}{list(self.shape)}{where}>"


def _dims(shape) -> tuple:
    """Normalise a TIK shape (list/tuple/int; ints, integral floats, Scalars/Exprs) to ints or IR values."""
    if isinstance(shape, (int, np.integer, float, Expr)):
        shape = (shape,)
    out = []
    for d in shape:
        v = static_int(d)
        if v is not None:
            out.append(v)
        elif isinstance(d, Expr):
            out.append(P.cast(d.ir, INDEX))
        else:
            raise ValueError(d)
    return tuple(out)


def _mul(a, b):
    if type(a) is int and type(b) is int:       # the common case (static offsets), before the general checks
        return a * b
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(b, int) and b == 1:
        return _idx(a)
    if isinstance(a, int) and a == 1:
        return _idx(b)
    if (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0):
        return 0
    return P.binop("mul", _idx(a), _idx(b))


def _add(a, b):
    if type(a) is int and type(b) is int:
        return a + b
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    return P.binop("add", _idx(a), _idx(b))


def _sub(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return P.binop("sub", _idx(a), _idx(b))


def _idx(v):
    """An element count/offset as an int or an ``index`` IR value."""
    if isinstance(v, int):
        return v
    if isinstance(v, Expr):
        v = v.ir
    if isinstance(v, P.Const):
        return int(v.value)
    return P.cast(v, INDEX)


def prod(dims):
    out = 1
    for d in dims:
        out = _mul(out, d)
    return out


#: TIK Tensor members that expose TVM objects (tik_tensor.py): refused with a clear error
_TIK_TENSOR_INTERNALS = {"access_ptr": "a tvm_access_ptr intrinsic for emit()", "indice": "its TensorSlice",
                         "disable_tensor": "the end of a scope's lifetime, which TIK calls itself"}


class Tensor:
    """A TIK tensor view (see module doc). Created by ``tik_instance.Tensor(...)``."""

    __slots__ = ("tik", "storage", "_dt", "_shape", "_strides", "offset", "_whole", "_name")
    __array_ufunc__ = None

    def __init__(self, tik, storage: Storage, dt: DType, shape: tuple, strides: tuple, offset, whole: bool,
                 name: Optional[str] = None):
        self.tik = tik
        self.storage = storage
        self._dt = dt
        self._shape = tuple(shape)
        self._strides = tuple(strides)
        self.offset = offset          # element offset (int or index IR) in units of _dt from the storage start
        self._whole = whole
        self._name = name

    # -- TIK attributes
    @property
    def dtype(self) -> str:
        return self._dt.tik_name

    @property
    def dt(self) -> DType:
        """The `pto_core.dtypes.DType` of the view."""
        return self._dt

    @property
    def name(self) -> str:
        return self._name or self.storage.name

    @property
    def scope(self) -> str:
        return self.storage.scope

    @property
    def space(self) -> str:
        return self.storage.space

    @property
    def shape(self) -> list:
        """The view's dims (ints; TIK expressions for dynamic dims)."""
        return [d if isinstance(d, int) else Expr(d) for d in self._shape]

    @property
    def buffer(self) -> Storage:
        return self.storage

    @property
    def size(self):
        """Elements of the view (int, or an IR value for dynamic dims)."""
        return prod(self._shape)

    @property
    def is_contiguous(self) -> bool:
        """Row-major without gaps (dynamic dims compare as equal)."""
        expect = 1
        for d, s in zip(reversed(self._shape), reversed(self._strides)):
            if isinstance(d, int) and d == 1:
                continue
            if isinstance(s, int) and isinstance(expect, int) and s != expect:
                return False
            expect = _mul(expect, d)
        return True

    @property
    def static_offset(self) -> Optional[int]:
        return self.offset if isinstance(self.offset, int) else None

    @property
    def storage_elements(self):
        """Elements of the whole storage in the view's dtype (int, or IR for dynamic GM shapes)."""
        st = self.storage
        if st.nbytes is not None:
            return st.nbytes * 8 // self._dt.bits
        return P.binop("div", P.binop("mul", st.size_expr, st.dtype.bits), self._dt.bits)

    @property
    def elements_available(self):
        """Elements from the view's start to the end of its storage (what an instruction may touch)."""
        return _sub(self.storage_elements, self.offset)

    @property
    def is_workspace(self) -> bool:
        """The ``is_workspace=`` flag the tensor was created with."""
        return self.storage.is_workspace

    @property
    def is_atomic_add(self) -> bool:
        """The ``is_atomic_add=`` flag the tensor was created with."""
        return self.storage.is_atomic_add

    @property
    def buffer_size(self):
        """Bytes of the whole allocation (TIK ``Tensor.buffer_size``; an IR value for dynamic GM shapes)."""
        st = self.storage
        if st.nbytes is not None:
            return st.nbytes
        return Expr(P.binop("div", P.binop("mul", st.size_expr, st.dtype.bits), 8))

    @user_method("tik.Tensor.is_single_point")
    def is_single_point(self) -> bool:
        """Whether every dim of the view is 1 (TIK ``Tensor.is_single_point``)."""
        return all(isinstance(d, int) and d == 1 for d in self._shape)

    @user_method("tik.Tensor.is_tensor_slice")
    def is_tensor_slice(self) -> bool:
        """Whether the view covers less than its whole allocation (TIK ``Tensor.is_tensor_slice``; views with
        run-time dims or offsets count as slices only where that is known at trace time)."""
        if self._whole:
            return False
        size, total = self.size, self.storage_elements
        if isinstance(size, int) and isinstance(total, int) and size != total:
            return True
        return isinstance(self.offset, int) and self.offset != 0

    @user_method("tik.Tensor.ptr")
    def ptr(self, index=None):
        """``t.ptr(i)`` is ``t[i]`` (TIK ``Tensor.ptr``); ``t.ptr()`` is the view's start as a PTO pointer
        expression (``!pto.ptr<dtype, space>``)."""
        if index is not None:
            return self.tik._api_view(self, index)
        base = self.storage.base_ptr(self._dt)
        return base + self.offset if not (isinstance(self.offset, int) and self.offset == 0) else base

    @user_method("tik.Tensor.pto_ptr")
    def pto_ptr(self) -> P.PtrExpr:
        """The PTO pointer to this view's first element, for ``pto.*`` calls in this TIK kernel (mixed
        kernels; see `tbe_compat.tik.bridge` for the dtype/space/offset rules)."""
        return self.tik.pto_ptr(self)

    @user_method("tik.Tensor.byte_offset")
    def byte_offset(self):
        """Byte offset of the view's start inside the storage (int or IR)."""
        return _mul(self.offset, self._dt.bits // 8) if self._dt.bits >= 8 else \
            (self.offset * self._dt.bits // 8 if isinstance(self.offset, int) else
             P.binop("div", P.binop("mul", _idx(self.offset), self._dt.bits), 8))

    def __repr__(self):
        dims = ", ".join(str(d) if isinstance(d, int) else "?" for d in self._shape)
        return f"tik.Tensor({self.name!r}, {self.dtype}, [{dims}], {self.space}, offset={self.offset!r})"

    # -- views
    def _view(self, shape, strides, offset, whole=False) -> "Tensor":
        return Tensor(self.tik, self.storage, self._dt, shape, strides, offset, whole, self._name)

    def __getitem__(self, key) -> "Tensor":
        return self.tik._api_view(self, key)

    @user_method("tik.Tensor.__call__")
    def __call__(self, key) -> "Tensor":
        """``t(i)`` is ``t[i]``: TIK's Tensor defines ``__call__(index)`` as ``__getitem__(index)``
        (undocumented; CANN's nll_loss reads ``target_ub(0)`` and writes ``output(offset)``)."""
        return self.tik._api_view(self, key)

    def __setitem__(self, key, value) -> None:
        self.tik._api_setitem(self, key, value)

    # comparisons ``__eq__`` .. ``__ge__`` (TIK: load the single element into a temporary Scalar, then
    # compare it) are set below the class; hashing stays by identity: the facade keys tensors with `is`
    __hash__ = object.__hash__

    # -- Python operations a TIK tensor does not have: a clear error instead of Python's TypeError
    def _no_python_op(self, what: str, hint: str):
        with self.tik._api(f"tik.Tensor.{what}"):
            raise self.tik._error(f"tensor {self.name!r} is a TIK tensor view: it has no Python {what} (its data "
                                  f"exists only when the kernel runs)", operand="self", hint=hint)

    def _arith(self, *_):
        self._no_python_op("arithmetic", "compute on tensors with the vector APIs (vec_add, vec_muls, h_add ...), "
                                         "or read an element into a Scalar (s.set_as(t[i])) and compute on that")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _arith
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __pos__ = __abs__ = __pow__ = _arith
    __rpow__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __and__ = __rand__ = __or__ = __ror__ = _arith
    __xor__ = __rxor__ = __invert__ = __matmul__ = __rmatmul__ = __divmod__ = __rdivmod__ = __round__ = _arith

    def __len__(self):
        self._no_python_op("len()", "use t.shape (a list of its dimensions) or t.size")

    def __bool__(self):              # a tensor is an object: `if bias:` tests that one was given (not __len__)
        return True

    def __iter__(self):
        self._no_python_op("iteration", "index it (t[i], t[a:b]) or loop with tik_instance.for_range")

    def __int__(self):
        self._no_python_op("int()", "read the element into a Scalar: s = tik_instance.Scalar(dtype); s.set_as(t[i])")

    __index__ = __float__ = __int__

    def index(self, key, bounds: bool = True) -> "Tensor":
        """The view ``self[key]`` (TIK's rules; raises `_IndexError` on a bad index). ``bounds=False``
        skips the range checks of static indices and slice bounds (code that never runs, see
        `container._api_view`); the other rules still apply."""
        nd = len(self._shape)
        if isinstance(key, list):
            # named choice LIST_INDEX_IS_TUPLE: a Python list is one index per dimension, as a tuple
            # (CANN's cum_computer moves `gm[[o, e, m * len]]` and passes its UT on 910/310/710)
            key = tuple(key)
        if isinstance(key, tuple) and len(key) == 1 and nd > 1:
            key = key[0]            # one index in a tuple/list is one index (flat), as TIK's __getitem__ counts them
        if not isinstance(key, tuple):
            if nd == 1:
                upper = isinstance(self.offset, int) or not DYNAMIC_VIEW_INDEX_UNBOUNDED
                return self._index_dims((key,), bounds, upper=upper)
            # FLAT_INDEX_FROM_TENSOR_START: the index counts from the tensor's first element, whatever the
            # view (CANN TIK flattens the whole buffer), so contiguity and the view's extent do not matter
            whole = self._view((self.storage_elements,), (1,), 0)
            try:
                return whole._index_dims((key,), bounds)
            except _IndexError as e:
                if e.message.startswith("tensor overflow") and not _zero(self.offset):
                    e.hint = (f"{e.hint}; a single index on a {nd}-D view is a flat index into the whole "
                              f"tensor {self.name!r} from its first element, as CANN TIK counts it, not into the "
                              f"view: give one index per dimension")
                raise
        if len(key) != nd:
            raise _IndexError(f"length of index ({len(key)}) should be equal to the dimension of Tensor ({nd})",
                              "index", limit=f"{nd} indices or 1 flat index",
                              hint=f"index with {nd} indices (t[i0, ..., i{nd - 1}]) or with one flat index t[i]")
        return self._index_dims(key, bounds)

    def _index_dims(self, key, bounds: bool = True, upper: bool = True) -> "Tensor":
        """``upper=False``: static indices and slice stops are not checked against the view's end."""
        offset = self.offset
        shape, strides = [], []
        for k, dim, stride in zip(key, self._shape, self._strides):
            if isinstance(k, slice):
                start, length, step = _slice(k, dim, bounds, upper)
                offset = _add(offset, _mul(start, stride))
                shape.append(length)
                strides.append(_mul(stride, step))
            else:                   # TIK keeps an int-indexed dimension with length 1 (tik_tensor_._normalize_slice)
                i = _index(k, dim, bounds, upper)
                if type(i) is not int and U64_INDEX_SUM_IN_U64 and type(offset) is int and type(stride) is int \
                        and _u64_index(i):
                    offset = _u64_offset(i.a, offset, stride)     # (the dimension stays, length 1)
                else:
                    offset = _add(offset, _mul(i, stride))
                shape.append(1)
                strides.append(stride)
        return self._view(tuple(shape), tuple(strides), offset)

    @user_method("tik.Tensor.reshape")
    def reshape(self, *dims, new_shape=None) -> "Tensor":
        """TIK ``Tensor.reshape(new_shape)``: the documented name works as a keyword too
        (``t.reshape(new_shape=(8, 16))``); ``t.reshape((8, 16))`` and ``t.reshape(8, 16)`` as before."""
        if new_shape is not None and dims:    # both forms at once (Python's own 'multiple values' case)
            return self.tik._api_reshape(self, dims, twice=new_shape)
        return self.tik._api_reshape(self, dims if new_shape is None else (new_shape,))

    @user_method("tik.Tensor.flatten")
    def flatten(self) -> "Tensor":
        return self.tik._api_flatten(self)

    @user_method("tik.Tensor.reinterpret_cast_to")
    def reinterpret_cast_to(self, dtype) -> "Tensor":
        return self.tik._api_reinterpret(self, dtype)

    @user_method("tik.Tensor.change_shape")
    def change_shape(self, new_shape) -> None:
        """TIK ``Tensor.change_shape``: ``reshape`` in place (this Python object takes the new shape; ops
        already traced keep the old one)."""
        v = self.tik._api_change_shape(self, new_shape)
        self._shape, self._strides, self.offset, self._whole = v._shape, v._strides, v.offset, v._whole

    @user_method("tik.Tensor.double_buffer_size")
    def double_buffer_size(self, thread_num_value):
        """TIK ``Tensor.double_buffer_size``: `buffer_size` times ``thread_num_value`` (bytes)."""
        return self.buffer_size * thread_num_value

    def _tvm_internal(self, name):
        """The error of reading TIK's TVM-level attribute ``name`` (`_TIK_TENSOR_INTERNALS`; each is a property of
        the class that raises it: a ``__getattr__`` would keep Python from specialising every other attribute
        read of a tensor, which the facade does at every call)."""
        tik = self.tik
        with tik._api(f"tik.Tensor.{name}"):
            raise tik._error(f"Tensor.{name} is TIK's TVM-level plumbing ({_TIK_TENSOR_INTERNALS[name]}); the "
                             f"simulator has no TVM buffers", operand=name, cls=UnsupportedOp,
                             hint="index the tensor (t[i], t[a:b]) and pass views to TIK calls instead")

    access_ptr = property(lambda self: self._tvm_internal("access_ptr"))
    indice = property(lambda self: self._tvm_internal("indice"))
    disable_tensor = property(lambda self: self._tvm_internal("disable_tensor"))

    @user_method("tik.Tensor.set_as")
    def set_as(self, value, dst_offset=0, src_offset=None) -> None:
        self.tik._tensor_set_as(self, value, dst_offset, src_offset)

    # -- pure view arithmetic (called by the Tik API wrappers)
    def reshaped(self, dims: tuple, part_ok: bool = False) -> "Tensor":
        """The view with row-major dims ``dims``; ``part_ok``: a view holding part of its tensor is taken
        (RESHAPE_OF_1D_PART_WARNS, after the caller warned)."""
        if not self.is_contiguous:
            raise _IndexError("Reshape operator is needed, but the tensor has been sliced (it is not contiguous)",
                              "new_shape", hint="reshape the whole tensor (or a slice with step 1 of contiguous "
                                                "rows) and index the result instead")
        size, new = self.size, prod(dims)
        whole = self._static_whole_elements()
        if RESHAPE_OF_PART_REFUSED and not part_ok and isinstance(size, int) and whole is not None and size != whole:
            raise _IndexError(f"Reshape operator is needed, but the tensor with shape {list(self._shape)} has been "
                              f"sliced: the view holds {size} of the {whole} elements of {self.storage.name!r} (TIK "
                              f"reshapes only a view of the whole tensor)", "new_shape", value=list(self._shape),
                              limit=f"{whole} elements",
                              hint=f"reshape the whole tensor and index the result ({self.storage.name}.reshape(...)[a:b, "
                                   f":] for a block of rows), or declare a tensor of the slice's size")
        if isinstance(size, int) and isinstance(new, int) and size != new:
            raise _IndexError(f"cannot reshape {size} elements into {list(dims)} ({new} elements)", "new_shape",
                              limit=f"{size} elements",
                              hint=f"give a new_shape whose dims multiply to {size}")
        strides = []
        acc = 1
        for d in reversed(dims):
            strides.append(acc)
            acc = _mul(acc, d)
        return Tensor(self.tik, self.storage, self._dt, dims, tuple(reversed(strides)), self.offset,
                      self._whole, self._name)

    def static_part(self):
        """``(size, whole)`` when the view's size and its tensor's (in the view's dtype) are constants and differ
        (a view holding part of its tensor, which TIK's ``check_tensor_reshapeable`` refuses), else None."""
        size, whole = self.size, self._static_whole_elements()
        if isinstance(size, int) and whole is not None and size != whole:
            return size, whole
        return None

    def _static_whole_elements(self):
        """Elements of the whole declared tensor in the view's dtype (TIK's ``original_shape`` product), or None
        when a declared dimension is not a constant."""
        st = self.storage
        if not all(isinstance(d, int) for d in st.shape):
            return None
        return prod(st.shape) * st.dtype.bits // self._dt.bits

    def reinterpreted(self, new: DType) -> "Tensor":
        old = self._dt
        if new.bits == old.bits:
            return Tensor(self.tik, self.storage, new, self._shape, self._strides, self.offset, self._whole,
                          self._name)
        if self._strides and self._strides[-1] != 1:
            raise _IndexError("reinterpret_cast_to needs the last dimension to be contiguous (stride 1)", "dtype",
                              value=f"last stride {self._strides[-1]}", limit="last stride 1",
                              hint="reinterpret the tensor (or a slice with step 1) and index the result instead: "
                                   "t.reinterpret_cast_to(dtype)[...]")
        if new.bits > old.bits:
            ratio = new.bits // old.bits
            last = self._shape[-1]
            if isinstance(last, int) and last % ratio:
                raise _IndexError(f"the last dimension ({last}) is not a multiple of {ratio} "
                                  f"({old.tik_name} -> {new.tik_name})", "dtype", limit=f"multiple of {ratio}",
                                  hint=f"reinterpret a view whose last dimension is a multiple of {ratio} (e.g. "
                                       f"the whole tensor) and slice the result in {new.tik_name}")
            if isinstance(self.offset, int) and self.offset % ratio:
                raise _IndexError(f"the view's offset ({self.offset} elements) is not a multiple of {ratio} "
                                  f"({old.tik_name} -> {new.tik_name})", "dtype", limit=f"multiple of {ratio}",
                                  hint=f"reinterpret the tensor from an element offset that is a multiple of {ratio} "
                                       f"(e.g. the whole tensor) and slice the result in {new.tik_name}")
            shape = self._shape[:-1] + ((last // ratio) if isinstance(last, int) else P.binop("div", last, ratio),)
            strides = tuple(s // ratio for s in self._strides[:-1]) + (1,)
            if any(s % ratio for s in self._strides[:-1]):
                raise _IndexError("a dimension's stride does not divide by the width ratio", "dtype",
                                  value=list(self._strides), limit=f"strides multiples of {ratio}",
                                  hint="reinterpret the whole tensor first and slice the result in the wider dtype")
            off = self.offset // ratio if isinstance(self.offset, int) else P.binop("div", self.offset, ratio)
            return Tensor(self.tik, self.storage, new, shape, strides, off, self._whole, self._name)
        ratio = old.bits // new.bits
        shape = self._shape + (ratio,)
        strides = tuple(s * ratio for s in self._strides) + (1,)
        return Tensor(self.tik, self.storage, new, shape, strides, _mul(self.offset, ratio), self._whole, self._name)

    # -- numpy image of a view (used by the debugger for outputs that are views)
    def numpy_view(self, raw: np.ndarray, *, shape=None, strides=None, offset=None) -> np.ndarray:
        """The view's elements from the storage's raw bytes ``raw`` (dynamic dims/offset given
        as ints by the caller)."""
        arr = raw.view(self._dt.storage)
        size = self._dt.bits // 8
        shape = tuple(int(d) for d in (self._shape if shape is None else shape))
        strides = tuple(int(s) * size for s in (self._strides if strides is None else strides))
        off = int(self.offset if offset is None else offset)
        return np.lib.stride_tricks.as_strided(arr[off:], shape, strides).copy()


class _IndexError(Exception):
    """A bad index/slice/reshape (converted to the facade's error by the Tik API wrapper)."""

    def __init__(self, message, operand, limit=None, value=None, hint=None):
        super().__init__(message)
        self.message, self.operand, self.limit, self.value = message, operand, limit, value
        self.hint = hint or {"index": "index with ints or integer Scalars/Exprs inside the tensor's shape "
                                      "(t[i], t[a:b], one index per dimension)",
                             "new_shape": "give a shape with the same number of elements as the view"}.get(operand)


_INDEX_HINT = "index with a Python int or an integer Scalar/Expr (convert a float one with .astype('int32'))"


def _index_value(k, what: str):
    """An index or slice bound: a Python int, or an integer IR value (a float Scalar/Expr, a float with a
    fraction, a str ... are errors: TIK indices are integers)."""
    if isinstance(k, Expr):
        k = k.ir
    if isinstance(k, P.Expr):
        if isinstance(k, P.Const):
            i = static_int(k)
            if i is None:
                raise _IndexError(f"{what} {k.value!r} is not an integer", "index", value=k.value, hint=_INDEX_HINT)
            return i
        if k.is_ptr or not (k.type.kind in ("s", "u") or k.type.name == "index" or integer_rooted(k)):
            raise _IndexError(f"{what} is a {tik_dtype_name(k.type)} expression, not an integer one", "index",
                              value=repr(k),
                              hint=_INDEX_HINT)
        return P.cast(k, INDEX)
    i = static_int(k) if not isinstance(k, (float, np.floating)) or float(k).is_integer() else None
    if i is None:
        raise _IndexError(f"{what} {k!r} is not an integer or a TIK integer expression", "index", value=k,
                          hint=_INDEX_HINT)
    return i


def _index(k, dim, bounds: bool = True, upper: bool = True):
    """An int index (wrapped if negative, range-checked unless ``bounds`` is False; ``upper=False``: only
    against the view's start) or an IR index value."""
    i = _index_value(k, "index")
    if not isinstance(i, int):
        return i
    if isinstance(dim, int):
        if i < 0:
            i += dim
        if bounds and not (0 <= i < dim or (not upper and i >= 0)):
            raise _IndexError(f"tensor overflow: index {static_int(k)} is outside [0, {dim})", "index", value=k,
                              limit=f"[0, {dim})", hint=f"use an index from 0 to {dim - 1} (or -{dim} to -1)")
    return i


def _tensor_comparison(pred: str):
    def compare(self, other):
        return getattr(self.tik, f"_api_tensor_{pred}")(self, other)
    compare.__name__ = f"__{pred}__"
    return compare


for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tensor, f"__{_pred}__", _tensor_comparison(_pred))
del _pred


def _affine(e, depth: int = 0, memo: Optional[dict] = None):
    """``(constant, {atom: coefficient})`` of an integer IR value built from constants, +, -, * by a
    constant and negation over atoms (loop variables, registers, other subexpressions by identity);
    wide integer casts are looked through. None where that does not describe it. A node shared in the
    expression's DAG is described once (``memo``)."""
    if memo is None:
        memo = {}
    hit = memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    r = _affine_node(e, depth, memo)
    memo[id(e)] = (e, r)
    return r


def _affine_node(e, depth: int, memo: dict):
    if isinstance(e, int):
        return e, {}
    if depth > 32 or not isinstance(e, P.ScalarExpr) or e.type.kind not in ("s", "u") and e.type.name != "index":
        return None
    if isinstance(e, P.Const):
        return int(e.value), {}
    if isinstance(e, P.Cast):
        inner = e.a.type
        if (e.type.name == "index" or e.type.bits >= 32) and (inner.kind in ("s", "u") or inner.name == "index"):
            return _affine(e.a, depth + 1, memo)
        return None
    if isinstance(e, P.UnOp) and e.op == "neg":
        x = _affine(e.a, depth + 1, memo)
        return None if x is None else (-x[0], {k: -v for k, v in x[1].items()})
    if isinstance(e, P.BinOp) and e.op in ("add", "sub", "mul"):
        x, y = _affine(e.a, depth + 1, memo), _affine(e.b, depth + 1, memo)
        if x is None or y is None:
            return None
        if e.op == "mul":
            if x[1] and y[1]:
                return None
            (c, terms), k = (x, y[0]) if not y[1] else (y, x[0])
            return c * k, {a: v * k for a, v in terms.items()}
        sign = 1 if e.op == "add" else -1
        terms = dict(x[1])
        for a, v in y[1].items():
            terms[a] = terms.get(a, 0) + sign * v
        return x[0] + sign * y[0], terms
    return 0, {id(e): 1}


def _constant_difference(b, a):
    """``b - a`` as an int when the atoms cancel (both affine in the same loop variables), else None."""
    return affine_difference(_affine(b), _affine(a))


#: Named choice: the shortest legal slice length. 0 -- ``t[a:a]`` (``ub[n:]`` with n == size) is a
#: zero-length view at ``a``; TIK's ``TensorSlice.__getitem__`` (tik_tensor.py) raises only for a negative
#: length, and IndexSDK ``distance_flat_ip_maxs_with_mask`` builds such a tail for a branch that never
#: runs. Instructions given the view still access memory past it, checked against the buffer.
EMPTY_SLICE = 0

#: Named choice: a 1-D view that starts at a run-time offset (``out[k]``, k an Expr) takes static indices and
#: slice stops past its end, relative to its start (``out[k][12]`` is element k + 12). TIK clips a sub-index
#: to the view's end only when that end is a constant (tik_tensor.py ``TensorSlice._slice_cal``); a CANN-era
#: STFT op writes each row's tail through ``dst[set_as_offset]`` of ``out[row_start]``. Accesses are still
#: checked against the tensor when the kernel runs; an index before the view's start stays an error.
DYNAMIC_VIEW_INDEX_UNBOUNDED = True


#: Named choice FLAT_INDEX_FROM_TENSOR_START (tik_api.md §4.2 and open question 13): one index or slice on a
#: multi-dimensional view (``t2d[1:, :][5]``, ``first[row, 0][128]``) is a flat element index counted from
#: the first element of the whole tensor, not of the view: CANN TIK's ``Tensor.__getitem__`` rebuilds the
#: tensor over its whole buffer and flattens that (tik_tensor.py, the ``flatten_flag`` branch), and the
#: hiascend page bounds the index by the tensor's element count. The kernel then computes on the device
#: what this gives; `single_index_skips_view` tells the facade to warn where the view had an offset.


def single_index_skips_view(t: "Tensor", key) -> bool:
    """Whether ``t[key]`` is a flat index on a multi-dimensional view whose start is not statically the
    tensor's first element (the view's offset is dropped: FLAT_INDEX_FROM_TENSOR_START)."""
    if len(t._shape) < 2 or _zero(t.offset):
        return False
    if isinstance(key, (tuple, list)):
        return len(key) == 1
    return True


class FlatIndexWarning(UserWarning):
    """One index on a multi-dimensional view with an offset: it counts from the tensor's first element
    (FLAT_INDEX_FROM_TENSOR_START), which is rarely what the kernel's author meant."""


def _zero(v) -> bool:
    return isinstance(v, int) and v == 0


#: Named choice (tik_core.md §4.2): a uint64 index of a view with a static offset, ``ub[16:][u]``, is TIK's Python-int
#: offset plus a uint64 Scalar: a uint64 expression (C arithmetic, wraps modulo 2**64), exactly as ``ub[16 + u]``;
#: the sum is then the offset, refused at run time when it does not fit int64 (``program.offset_error``). Before, the
#: index was converted to ``index`` first (2**64 - 1 became -1) and only a u64 *whole* offset was checked.
U64_INDEX_SUM_IN_U64 = True


def _u64_index(i) -> bool:
    """``i`` is an unsigned 64-bit integer expression converted to ``index`` (`_index_value`)."""
    return isinstance(i, P.Cast) and i.a.type.kind == "u" and i.a.type.bits == 64 and i.a.type.name != "index"


def _u64_offset(u, offset: int, stride: int):
    """``offset + u * stride`` computed in uint64 (as TIK's ``int + uint64 Scalar``), then the ``index`` offset."""
    if stride != 1:
        u = P.binop("mul", u, stride)
    if offset:
        u = P.binop("add", u, offset)
    return P.cast(u, INDEX)


def _slice(k: slice, dim, bounds: bool = True, upper: bool = True):
    """``(start, length, step)`` of a slice on a dimension of length ``dim`` (``bounds=False``: start and
    stop are not checked against the dimension; ``upper=False``: the stop is not)."""
    step = 1 if k.step is None else static_int(k.step)
    if step is None or (isinstance(k.step, float) and not float(k.step).is_integer()):
        raise _IndexError(f"slice step {k.step!r} must be a Python int", "index", value=k.step,
                          hint="give the slice step as a Python int >= 1 (t[a:b:2]); a run-time step needs a "
                               "loop over the elements")
    if step < 1:
        raise _IndexError(f"slice step {step} must be >= 1", "index", value=step, limit=">= 1",
                          hint="slice with a step >= 1 (TIK views have no reversed slices)")
    start = 0 if k.start is None else _index_value(k.start, "slice start")
    stop = dim if k.stop is None else _index_value(k.stop, "slice stop")
    s0, s1 = static_int(start), static_int(stop)
    dyn_start = s0 is None
    dyn_stop = s1 is None
    if not dyn_start and s0 < 0 and isinstance(dim, int):
        s0 += dim
    if not dyn_stop and s1 < 0 and isinstance(dim, int):
        s1 += dim
    if bounds and not dyn_start and s0 < 0:
        raise _IndexError(f"tensor overflow: slice start {k.start} is before the first element", "index",
                          value=k.start, limit=f"[0, {dim})",
                          hint=f"start the slice at 0 or later (a negative start counts from the end: >= -{dim})")
    if bounds and upper and not dyn_stop and isinstance(dim, int) and s1 > dim:
        raise _IndexError(f"tensor overflow: slice stop {k.stop} is past the end ({dim})", "index", value=k.stop,
                          limit=f"<= {dim}", hint=f"end the slice at most at {dim}, the dimension's length")
    if not dyn_start and not dyn_stop and s1 - s0 < EMPTY_SLICE:
        raise _IndexError(f"slice [{k.start}:{k.stop}] has its stop before its start (a slice may be empty, "
                          f"start == stop, but not negative)", "index", value=(k.start, k.stop),
                          hint="give a slice stop >= its start")
    a = _idx(start) if dyn_start else s0
    b = _idx(stop) if dyn_stop else s1
    n = _sub(b, a)
    if not isinstance(n, int):                  # x[4*i:4*(i+1)]: a moving window of a constant length
        const = _constant_difference(b, a)
        if const is not None:
            if const < EMPTY_SLICE:
                raise _IndexError(f"slice [{k.start}:{k.stop}] has its stop before its start (a slice may be "
                                  f"empty, start == stop, but not negative)", "index", value=(k.start, k.stop),
                                  hint="give a slice stop >= its start")
            n = const
    if step != 1:
        n = (n + step - 1) // step if isinstance(n, int) else P.binop("div", P.binop("add", n, step - 1), step)
    return a, n, step


__all__ = ["Tensor", "Storage", "SCOPE_SPACES", "TENSOR_DTYPES", "prod"]
