"""``tbe.dsl.static_schedule`` (only the modules TIK kernels import for a DSL fallback)."""
from . import split_schedule  # noqa: F401
