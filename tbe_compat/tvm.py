"""``tvm`` as TIK operator scripts import it: ``from te import tvm``, ``from tbe import tvm``,
``from impl.util.platform_adapter import tvm``. Importable; any use raises `UnsupportedOp` (TVM, the
TBE DSL's expression layer, is not simulated; see `tbe_compat.dsl_modules`)."""
from tbe_compat import dsl_modules as _dsl

__getattr__ = _dsl.tvm_getattr
