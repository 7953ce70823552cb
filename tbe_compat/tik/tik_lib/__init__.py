"""``tik.tik_lib``: CANN's package of TIK internals; the facade provides only the module path that
public ops test values against (`tik_expr`). Its presence is what CANN's ``impl/ascend/_check.py``
checks (``hasattr(tik, "tik_lib")``) to pick its "C7X" branch."""
from . import tik_expr  # noqa: F401

__all__ = ["tik_expr"]
