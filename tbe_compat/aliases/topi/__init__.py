"""Legacy ``topi`` package (alias onto `tbe_compat`)."""
from . import cce  # noqa: F401

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
