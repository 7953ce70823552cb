"""``tbe.dsl.compute`` (only the modules TIK kernels import for a DSL fallback; the DSL is not simulated)."""
from . import array  # noqa: F401
