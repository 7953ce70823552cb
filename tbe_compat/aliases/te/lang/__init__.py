"""``te.lang`` (alias onto `tbe_compat`): the legacy TBE namespace that CANN's 2020 dynamic-shape TIK
operators import at module level (``import te.lang.dynamic``). Only `dynamic` is provided: the TBE
DSL itself (``te.lang.cce`` compute expressions) is not simulated."""
from . import dynamic  # noqa: F401
