"""``tbe_compat.tik``: the TIK facade behind ``from tbe import tik`` (and ``from te import tik``).

Module-level names as in CANN's ``tbe.tik``: the container ``Tik``, ``Dprofile``, the
storage scopes (``scope_gm``, ``scope_ubuf``, ``scope_cbuf``, ``scope_cbuf_out`` =
``scope_cc``, ``scope_ca``, ``scope_cb`` ...), the value classes ``Tensor``, ``Scalar``,
``InputScalar``, ``Expr``, the condition helpers ``all``, ``any``, ``negate`` and the
block/vector constants. See ``ARCHITECTURE.md`` in this folder for how a TIK call
becomes PTO ops.
"""
from ..platform import (BLOCK_IN, BLOCK_OUT, BLOCK_REDUCE, BLOCK_REDUCE_INT8, C0_SIZE, CUBE_MKN,  # noqa: F401
                        VECTOR_INST_BLOCK_NUM, VECTOR_INST_BLOCK_WIDTH, VECTOR_INST_MAX_REPEAT_TIMES, Dprofile,
                        scope_bt, scope_ca, scope_cb, scope_cbuf, scope_cbuf_out, scope_cc, scope_fb0, scope_gm,
                        scope_reg, scope_smask, scope_ubuf, scope_vreg)
from .container import Tik  # noqa: F401
from .registry import kernel, kernels  # noqa: F401
from .scalar import Expr, InputScalar, Scalar, negate  # noqa: F401
from .scalar import all_ as all  # noqa: F401,A001 (TIK's names)
from .scalar import any_ as any  # noqa: F401,A001
from .tensor import Tensor  # noqa: F401
# CANN module paths public ops test values against: tik.api.tik_scalar/tik_tensor, tik.tik_lib.tik_expr
from . import api, tik_lib  # noqa: E402

__all__ = ["Tik", "Dprofile", "Tensor", "Scalar", "InputScalar", "Expr", "all", "any", "negate", "kernels", "kernel",
           "scope_gm", "scope_ubuf", "scope_cbuf", "scope_cbuf_out", "scope_cc", "scope_ca", "scope_cb", "scope_bt",
           "scope_fb0", "scope_smask", "scope_reg", "scope_vreg", "BLOCK_IN", "BLOCK_OUT", "BLOCK_REDUCE",
           "BLOCK_REDUCE_INT8", "C0_SIZE", "CUBE_MKN", "VECTOR_INST_BLOCK_NUM", "VECTOR_INST_BLOCK_WIDTH",
           "VECTOR_INST_MAX_REPEAT_TIMES", "api", "tik_lib"]

#: Buffer names written in place of TIK's scope names (a public TBE overview page declares tensors in
#: ``tik.scope_l0a`` / ``scope_l0b`` / ``scope_l0c``): the module ``__getattr__`` names TIK's spelling.
SCOPE_NAME_HINTS = {"scope_l0a": "scope_ca", "scope_l0b": "scope_cb", "scope_l0c": "scope_cc",
                    "scope_l1": "scope_cbuf", "scope_ub": "scope_ubuf"}


def __getattr__(name: str):
    """``tik.<name>`` that TIK's module does not have: an AttributeError that is also the simulator's
    error naming the user's line and the TIK spelling (``hasattr`` stays False; dunder and private
    names, which Python's import machinery probes, stay plain AttributeErrors)."""
    if name.startswith("_"):
        raise AttributeError(f"module 'tik' has no attribute {name!r}")
    from pto_core.errors import Provenance
    from .container import _MissingApi
    from .errors import tik_error_class, user_frame
    hint = name_hint(name)
    w = user_frame()
    cls = tik_error_class(_MissingApi, exit_on_error=False)   # AttributeError cannot also be SystemExit
    raise cls(f"module 'tik' has no attribute {name!r}: tik.{name} is not a TIK name", op=f"tik.{name}",
              where=None if w is None else Provenance(w.file, w.line, f"tik.{name}"), hint=hint)


def name_hint(name: str) -> str:
    """The fix of a name the tik module does not have: TIK's spelling (SCOPE_NAME_HINTS) or the closest
    module names (also `tbe_compat.missing_modules` for ``from tbe.tik import scope_l0a``)."""
    import difflib
    if name in SCOPE_NAME_HINTS:
        return f"use tik.{SCOPE_NAME_HINTS[name]} (TIK's name for that buffer)"
    close = difflib.get_close_matches(name, __all__, n=3, cutoff=0.6)
    return (f"did you mean {', '.join('tik.' + c for c in close)}?" if close else
            "check the spelling against the TIK API reference (tik_api.md); module names: " + ", ".join(__all__))
