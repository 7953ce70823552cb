"""``te.tik``: the pre-2021 import name of TIK. Importing it emits CANN's deprecation
notice once and re-exports `tbe_compat.tik` unchanged."""
from .platform import warn_deprecated as _warn
from .tik import *  # noqa: F401,F403
from .tik import __all__ as _tik_all
from . import tik as _tik_module

__getattr__ = _tik_module.__getattr__   # a star import skips it

_warn("te.tik", "tbe.tik (from tbe import tik)", stacklevel=2)

__all__ = list(_tik_all)
