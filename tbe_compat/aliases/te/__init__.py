"""Legacy ``te`` package (alias onto `tbe_compat`). ``te.tik`` is imported on demand
(it emits CANN's deprecation notice)."""
from . import op, platform, utils  # noqa: F401

from tbe_compat import missing_modules as _missing_modules  # noqa: E402,F401 (installs its finder)

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
