"""Legacy ``tbe`` package (alias onto `tbe_compat`)."""
from . import common, dsl, tik  # noqa: F401

from tbe_compat import missing_modules as _missing_modules  # noqa: E402,F401 (installs its finder)

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
