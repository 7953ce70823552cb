"""``tvm`` as TIK operator scripts import it: ``from te import tvm``, ``from tbe import tvm``,
``from impl.util.platform_adapter import tvm``.

TVM is the expression layer of the TBE DSL (``tvm.const``, ``tvm.placeholder``, ``tvm.compute``,
``tvm.select`` ...), which the simulator does not model. Many CANN TIK kernels import it at module
level and never use it (e.g. the 2020 dynamic ``gather_v2``), so the name exists: the import
works, and using any attribute raises `UnsupportedOp` naming the attribute and the script's
``file:line``. Python's own protocol names (``__path__``, ``__wrapped__`` ...) stay plain
``AttributeError`` so import machinery and introspection keep working.
"""
from __future__ import annotations

from pto_core.errors import UnsupportedOp
from tbe_compat.tik.errors import user_frame


def __getattr__(name: str):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tvm' has no attribute {name!r}")
    raise UnsupportedOp(f"tvm.{name} is part of TVM, the TBE DSL's expression layer, which the simulator "
                        "does not model (only TIK is simulated)", op=f"tvm.{name}",
                        hint="write this part with TIK APIs (tik_instance.Scalar / Tensor / vec_* ...); "
                             "importing tvm without using it is fine",
                        where=user_frame())
