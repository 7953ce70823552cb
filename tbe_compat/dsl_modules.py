"""The TBE DSL's names as TIK operator scripts import them: ``tvm`` (``from te import tvm``, ``from tbe
import tvm``, ``from impl.util.platform_adapter import tvm``), ``te.lang.cce`` (``import te.lang.cce``),
``topi.generic`` (``from topi import generic``) and ``te.platform.cce_build`` (``from te.platform.cce_build
import build_config``, the DSL build configuration CANN's 2019 ops such as ``split_d`` use on their
``tvm.build`` fallback path).

The DSL (TVM expressions ``tvm.const`` / ``tvm.placeholder`` / ``tvm.compute``, the ``te.lang.cce``
compute and build functions, ``topi.generic.auto_schedule``) is not modelled: the simulator runs TIK.
Many TIK kernels import these modules at module level and use them only on a DSL fallback path or
not at all (CANN's 2020 dynamic ``gather_v2``, ``unsorted_segment_sum``, ``atomic_addr_clean`` import
``topi.generic``; MindSpore's ``matmul_cube_dense_left_impl.py`` imports ``te.lang.cce``), so the
names exist: the import works, and using any attribute raises `UnsupportedOp` naming it and the
script's ``file:line``, except ``tvm.placeholder`` / ``tvm.var`` (declarations some kernels make before
taking their TIK path: an inert `DslValue` that refuses any use), ``tvm.const`` (the number) and
``cce_build.build_config`` (imported by name, so it is an inert `DslValue` too: ``with build_config:``
raises at that line). Python's protocol names (``__path__``, ``__wrapped__`` ...) stay plain
``AttributeError`` so import machinery and introspection keep working.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from pto_core.errors import UnsupportedOp
from tbe_compat.tik.errors import user_frame


class DslModule(NamedTuple):
    """One importable DSL namespace: what it is, and how to do its job in TIK instead."""

    what: str
    hint: str


#: The DSL namespaces TIK scripts import (module name -> description); `tbe_compat.tvm` and the
#: aliases take their ``__getattr__`` from `module_getattr`.
DSL_MODULES = {
    "tvm": DslModule("TVM, the TBE DSL's expression layer",
                     "write this part with TIK APIs (tik_instance.Scalar / Tensor / vec_* ...); importing tvm "
                     "without using it is fine"),
    "te.lang.cce": DslModule("the TBE DSL's compute and build functions (te.lang.cce)",
                             "write this part with TIK APIs, or run the DSL operator on CANN; importing "
                             "te.lang.cce without using it is fine"),
    "topi.generic": DslModule("the TBE DSL's scheduling (topi.generic.auto_schedule)",
                              "DSL operators are not simulated; importing topi.generic without using it is fine"),
    "te.platform.cce_build": DslModule("the TBE DSL's build configuration (te.platform.cce_build)",
                                       "DSL operators are not simulated; importing build_config without using "
                                       "it is fine"),
}


class DslValue:
    """What ``tvm.placeholder`` / ``tvm.var`` return here: an inert stand-in for a DSL tensor or variable.

    Several TIK kernels declare their DSL placeholders before choosing the TIK path (MindSpore's
    ``matmul_cube_dense_left_impl.py``): declaring one is fine; any use of it (an attribute, arithmetic,
    indexing, a truth test) raises `UnsupportedOp` naming the declaration's ``file:line``."""

    __slots__ = ("_call", "_where", "_subject")

    def __init__(self, call: str, where, subject: str = "the result of "):
        object.__setattr__(self, "_call", call)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_subject", subject)

    def _refuse(self, *_args, **_kwargs):
        w = self._where
        at = f" (declared at {w.file}:{w.line})" if w is not None else ""
        raise UnsupportedOp(f"{self._subject}{self._call}{at} is a TBE DSL value, which the simulator does not "
                            "model (only TIK is simulated)", op=self._call, where=user_frame(),
                            hint="use it only on the DSL path, or write this part with TIK APIs")

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._refuse()

    def __repr__(self):
        return f"<DSL value of {self._call} (not simulated)>"

    __setattr__ = __getitem__ = __setitem__ = __call__ = __iter__ = __len__ = __bool__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __index__ = __int__ = __float__ = __enter__ = __exit__ = _refuse


def _declaration(module: str, name: str):
    def declare(*args, **kwargs):
        shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        return DslValue(f"{module}.{name}({shown})", user_frame())
    declare.__name__ = name
    return declare


def _const(value, dtype="int32"):
    """``tvm.const(value, dtype)``: the Python number (an immediate wherever TIK takes one)."""
    if not isinstance(value, (int, float, bool)) or not isinstance(dtype, str):
        raise UnsupportedOp(f"tvm.const({value!r}, {dtype!r}): only a number and a dtype name are modelled",
                            op="tvm.const", where=user_frame(), hint="pass a Python int or float")
    return float(value) if dtype.startswith(("float", "bfloat")) else int(value)


#: DSL names that work here: declarations give an inert `DslValue`; ``tvm.const`` gives the number;
#: ``build_config`` (a context-manager object, imported by name at module level) is an inert `DslValue`.
DSL_NAMES = {("tvm", "placeholder"): _declaration("tvm", "placeholder"), ("tvm", "var"): _declaration("tvm", "var"),
             ("tvm", "const"): _const,
             ("te.platform.cce_build", "build_config"): DslValue("te.platform.cce_build.build_config", None, subject="")}


def module_getattr(module: str) -> Callable[[str], object]:
    """The module-level ``__getattr__`` of DSL namespace ``module``: `DSL_NAMES` work, every other name raises
    `UnsupportedOp`."""
    info = DSL_MODULES[module]

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        known = DSL_NAMES.get((module, name))
        if known is not None:
            return known
        raise UnsupportedOp(f"{module}.{name} is part of {info.what}, which the simulator does not model "
                            "(only TIK is simulated)", op=f"{module}.{name}", hint=info.hint, where=user_frame())
    return __getattr__


tvm_getattr = module_getattr("tvm")                       # tbe_compat.tvm, te.tvm, tbe.tvm
te_lang_cce_getattr = module_getattr("te.lang.cce")       # the te.lang.cce alias
topi_generic_getattr = module_getattr("topi.generic")     # the topi.generic alias
cce_build_getattr = module_getattr("te.platform.cce_build")  # the te.platform.cce_build alias


def dsl_only(name: str) -> Callable:
    """A helper of CANN's shape / check modules that builds TVM expressions: importable, and
    calling it raises `UnsupportedOp` naming it and the caller's ``file:line``."""
    def refuse(*_args, **_kwargs):
        raise UnsupportedOp(f"{name} builds TVM expressions (the TBE DSL), which the simulator does not model "
                            "(only TIK is simulated)", op=name, where=user_frame(),
                            hint="use it only on a DSL path, or write this part with TIK APIs")
    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__qualname__ = refuse.__name__
    return refuse


#: DSL modules whose *functions* TIK kernels import by name at module level for a DSL fallback path
#: (CANN's 2021 ``split_v_d.py``: ``from tbe.dsl.compute.array import split_compute_com`` and
#: ``from tbe.dsl.static_schedule.split_schedule import split_schedule_com``, while its SplitEqual /
#: SplitLastDim classes are TIK): every name imports as a `dsl_only` callable, so the import works and a
#: call raises `UnsupportedOp` at the caller's ``file:line``.
DSL_FUNCTION_MODULES = ("tbe.dsl.compute.array", "tbe.dsl.static_schedule.split_schedule")


def function_module_getattr(module: str) -> Callable[[str], object]:
    """The module-level ``__getattr__`` of a `DSL_FUNCTION_MODULES` entry: any public name is a `dsl_only`
    callable; protocol names stay ``AttributeError``."""
    if module not in DSL_FUNCTION_MODULES:
        raise KeyError(module)

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return dsl_only(f"{module}.{name}")
    return __getattr__


dsl_compute_array_getattr = function_module_getattr("tbe.dsl.compute.array")
dsl_split_schedule_getattr = function_module_getattr("tbe.dsl.static_schedule.split_schedule")


class DslNamespace:
    """A DSL / compiler namespace exported under a plain name (``impl.util.platform_adapter.tbe`` is
    ``tbe.dsl``): importing it is fine; any attribute raises `UnsupportedOp` naming it and the
    caller's ``file:line``."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise UnsupportedOp(f"{self._name}.{attr} is part of the TBE DSL / compiler, which the simulator does not "
                            "model (only TIK is simulated)", op=f"{self._name}.{attr}", where=user_frame(),
                            hint="use it only on a DSL path, or write this part with TIK APIs")

    def __repr__(self):
        return f"<DSL namespace {self._name} (not simulated)>"
