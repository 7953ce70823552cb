"""``te.lang`` (alias onto `tbe_compat`): the legacy TBE namespace that CANN's 2020 dynamic-shape TIK
operators import at module level (``import te.lang.dynamic``). `dynamic` is empty; `cce` (the TBE DSL's
compute functions, ``import te.lang.cce``) imports, but using it raises UnsupportedOp: the DSL is not
simulated."""
from . import dynamic  # noqa: F401
