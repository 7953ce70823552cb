"""``tbe.dsl`` (only the pieces TIK kernels import; the DSL itself is not simulated)."""
from . import instrinsic  # noqa: F401
