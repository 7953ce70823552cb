"""A clear error for a CANN module the legacy packages (``tbe``, ``te``, ``topi``, ``impl``) do not provide.

CANN operator files import many CANN modules; the simulator provides the ones TIK kernels use
(migration_guide/platform.md). Importing another one (``import te.platform.cce_runtime``,
``from te.platform import cce_runtime``, ``from impl.dynamic.foo import bar``) used to end in Python's
bare ``No module named ...``. `MissingModuleFinder`, the last entry of ``sys.meta_path``, runs only
after every other finder failed (a project's own ``impl`` modules are still found first) and raises
`MissingModule`: an `UnsupportedOp` that is also a ``ModuleNotFoundError`` (so ``try: import ...
except ImportError:`` in a script keeps working), naming the module, what the simulator's package
does provide, and the script's ``file:line``. Importing this module installs the finder (the alias
packages and `tbe_compat.cann_impl` import it).
"""
from __future__ import annotations

import os
import pkgutil
import sys

from pto_core.errors import Provenance, UnsupportedOp

from .tik.errors import user_frame

#: the legacy top-level packages whose missing submodules `MissingModuleFinder` reports.
LEGACY_PACKAGES = ("tbe", "te", "topi", "impl")

#: the import system's function that calls ``sys.meta_path`` finders (through ``_find_spec``) for an
#: ``import`` statement, ``__import__`` or ``importlib.import_module``; any other caller
#: (``importlib.util.find_spec``, ``pkgutil``) is probing, and gets None as Python's finders return.
IMPORT_FRAME = "_find_and_load_unlocked"


class MissingModule(UnsupportedOp, ModuleNotFoundError):
    """A submodule of a legacy CANN package that the simulator does not provide.

    ``name`` is left unset (None): with it set, ``from te.platform import cce_runtime`` would
    swallow this error and raise Python's bare ``cannot import name`` instead."""


def _is_our_portion(path: str) -> bool:
    """Whether ``path`` is the simulator's ``impl`` directory (its ``constant_util.py`` imports tbe_compat)."""
    try:
        with open(os.path.join(path, "constant_util.py"), encoding="utf-8") as f:
            return "tbe_compat" in f.read(2000)
    except OSError:
        return False


def _ours(top: str) -> bool:
    mod = sys.modules.get(top)
    if mod is None:
        return False
    if top != "impl":
        return bool(getattr(mod, "__tbe_compat_alias__", False))
    return any(_is_our_portion(p) for p in getattr(mod, "__path__", ()))   # a namespace package


def _provided(parent: str) -> list:
    mod = sys.modules.get(parent)
    path = getattr(mod, "__path__", None)
    if path is None:
        return []
    names = {m.name for m in pkgutil.iter_modules(list(path))}
    for p in path:                       # namespace subpackages (impl.util) have no __init__.py
        try:
            names.update(e.name for e in os.scandir(p) if e.is_dir() and e.name.isidentifier())
        except OSError:
            pass
    return sorted(n for n in names if not n.startswith("_"))


def _later_finders_spec(fullname, path, target):
    """The spec of ``fullname`` from a finder appended to ``sys.meta_path`` after `MissingModuleFinder`
    (a project's own import hook installed after ``from tbe import tik``), or None."""
    finders = list(sys.meta_path)
    if MissingModuleFinder not in finders:
        return None
    for finder in finders[finders.index(MissingModuleFinder) + 1:]:
        find_spec = getattr(finder, "find_spec", None)
        spec = None if find_spec is None else find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


class MissingModuleFinder:
    """Meta-path finder of last resort for the legacy packages (see the module docstring)."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        top, dot, _ = fullname.partition(".")
        if not dot or top not in LEGACY_PACKAGES or not _ours(top):
            return None
        parent = fullname.rpartition(".")[0]
        if parent not in sys.modules:
            return None                  # the parent failed first: Python reports that one
        if sys._getframe(2).f_code.co_name != IMPORT_FRAME:
            return None                  # a probe (importlib.util.find_spec): "not found" is None, not an error
        spec = _later_finders_spec(fullname, path, target)
        if spec is not None:
            return spec                  # a finder the project appended after this one provides it
        have = _provided(parent)
        site = user_frame()
        from . import tik as _tik
        if getattr(sys.modules.get(parent), "__getattr__", None) is _tik.__getattr__:
            # ``from tbe.tik import scope_l0a``: Python imports a submodule after the name lookup failed; the
            # user asked for a name, so the error is the tik module's missing-name one (still an ImportError)
            name = fullname.rpartition(".")[2]
            mods = f" (its modules: {', '.join(have)})" if have else ""
            raise MissingModule(f"{parent} has no name or module {name!r}{mods}: tik.{name} is not a TIK name",
                                value=name, where=None if site is None else Provenance(site.file, site.line,
                                                                                       f"import {fullname}"),
                                hint=_tik.name_hint(name))
        listing = f"; {parent} provides: {', '.join(have)}" if have else ""
        where = None if site is None else Provenance(site.file, site.line, f"import {fullname}")
        project = " (nor is it on sys.path in your project)" if top == "impl" else ""
        raise MissingModule(f"module {fullname!r} is not among the CANN modules the simulator provides{project}"
                            f"{listing}", value=fullname, where=where,
                            hint="remove the import if the kernel's TIK code does not use it, or replace its use "
                                 "with TIK calls (migration_guide/platform.md lists the modules provided)")

    @classmethod
    def invalidate_caches(cls):
        return None


def install() -> None:
    """Append `MissingModuleFinder` to ``sys.meta_path`` (idempotent)."""
    if MissingModuleFinder not in sys.meta_path:
        sys.meta_path.append(MissingModuleFinder)


install()
