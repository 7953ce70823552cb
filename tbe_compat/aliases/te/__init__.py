"""Legacy ``te`` package (alias onto `tbe_compat`). ``te.tik`` is imported on demand
(it emits CANN's deprecation notice)."""
from . import op, platform, utils  # noqa: F401

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
