"""The TBE DSL's names as TIK operator scripts import them: ``tvm`` (``from te import tvm``, ``from tbe
import tvm``, ``from impl.util.platform_adapter import tvm``), ``te.lang.cce`` (``import te.lang.cce``)
and ``topi.generic`` (``from topi import generic``).

The DSL (TVM expressions ``tvm.const`` / ``tvm.placeholder`` / ``tvm.compute``, the ``te.lang.cce``
compute and build functions, ``topi.generic.auto_schedule``) is not modelled: the simulator runs TIK.
Many TIK kernels import these modules at module level and use them only on a DSL fallback path or
not at all (CANN's 2020 dynamic ``gather_v2``, ``unsorted_segment_sum``, ``atomic_addr_clean`` import
``topi.generic``; MindSpore's ``matmul_cube_dense_left_impl.py`` imports ``te.lang.cce``), so the
names exist: the import works, and using any attribute raises `UnsupportedOp` naming it and the
script's ``file:line``. Python's protocol names (``__path__``, ``__wrapped__`` ...) stay plain
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
}


def module_getattr(module: str) -> Callable[[str], object]:
    """The module-level ``__getattr__`` of DSL namespace ``module``: every name raises `UnsupportedOp`."""
    info = DSL_MODULES[module]

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise UnsupportedOp(f"{module}.{name} is part of {info.what}, which the simulator does not model "
                            "(only TIK is simulated)", op=f"{module}.{name}", hint=info.hint, where=user_frame())
    return __getattr__


tvm_getattr = module_getattr("tvm")                       # tbe_compat.tvm, te.tvm, tbe.tvm
te_lang_cce_getattr = module_getattr("te.lang.cce")       # the te.lang.cce alias
topi_generic_getattr = module_getattr("topi.generic")     # the topi.generic alias
