"""Legacy import names (``tbe``, ``te``, ``topi``) as thin aliases onto `tbe_compat`.

The packages in this directory contain only imports. ``pip install .`` (and
``pip install -e .``) installs them as top-level packages (``package_dir`` in
setup.cfg), so ``from tbe import tik`` works in any script. `install` makes them
importable without installation (a source checkout, or a runner such as ``tik-run``).
"""
from __future__ import annotations

import os
import sys

from pto_core.errors import ConfigError

#: directory holding the alias packages.
ALIAS_ROOT = os.path.dirname(os.path.abspath(__file__))
#: the legacy top-level package names provided here.
TOP_LEVEL_NAMES = ("tbe", "te", "topi")


def install() -> str:
    """Put `ALIAS_ROOT` first on ``sys.path`` so ``tbe``, ``te`` and ``topi`` import the
    simulator's aliases (also ahead of a real CANN installation). Idempotent; returns
    `ALIAS_ROOT`.

    Raises `ConfigError` if one of those names is already imported from elsewhere
    (e.g. a real CANN ``tbe``): start a fresh process and call `install` first.
    """
    for name in TOP_LEVEL_NAMES:
        module = sys.modules.get(name)
        if module is not None and not getattr(module, "__tbe_compat_alias__", False):
            origin = getattr(module, "__file__", None) or repr(module)
            raise ConfigError(f"module {name!r} is already imported from {origin}", op="tbe_compat.aliases.install",
                              operand=name, value=origin,
                              hint="call tbe_compat.aliases.install() before anything imports tbe/te/topi")
    if ALIAS_ROOT in sys.path:
        sys.path.remove(ALIAS_ROOT)
    sys.path.insert(0, ALIAS_ROOT)
    return ALIAS_ROOT

