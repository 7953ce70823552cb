"""Legacy ``te`` package (alias onto `tbe_compat`). ``te.tik`` is imported on demand (it emits CANN's
deprecation notice): by ``from te import tik`` / ``import te.tik``, or by the first ``te.tik`` attribute access
(`tbe_compat.te_package`)."""
from . import op, platform, utils  # noqa: F401

from tbe_compat.te_package import te_getattr as __getattr__  # noqa: E402,F401 (PEP 562: te.tik on first use)

from tbe_compat import missing_modules as _missing_modules  # noqa: E402,F401 (installs its finder)

__tbe_compat_alias__ = True  # marks the simulator's alias package (see tbe_compat.aliases.install)
