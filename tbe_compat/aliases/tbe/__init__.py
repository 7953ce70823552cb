"""Legacy ``tbe`` package (alias onto `tbe_compat`)."""
from . import common, dsl, tik  # noqa: F401

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
