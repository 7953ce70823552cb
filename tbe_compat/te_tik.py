"""``te.tik``: the pre-2021 import name of TIK. Importing it emits CANN's deprecation
notice once and re-exports `tbe_compat.tik` unchanged."""
from .platform import warn_deprecated as _warn
from .tik import *  # noqa: F401,F403
from .tik import __dict__ as _tik_namespace

_warn("te.tik", "tbe.tik (from tbe import tik)", stacklevel=2)

__all__ = [name for name in _tik_namespace if not name.startswith("_")]
