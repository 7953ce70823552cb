"""``tbe.dsl.instrinsic`` (CANN's spelling; alias onto `tbe_compat`)."""
from . import cce_intrin  # noqa: F401
