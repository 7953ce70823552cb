"""The legacy ``te`` package's attribute look-up (its module-level ``__getattr__``).

``te.tik`` is not imported with ``te`` (importing it emits CANN's deprecation notice), but CANN operators
use it as a plain attribute of ``te`` after importing only other ``te`` modules: CANN's 2021 dynamic
``unsorted_segment.py`` (the body of UnsortedSegmentMax/Min/Prod) does ``import te.lang.dynamic`` and
later tests ``isinstance(key, te.tik.api.tik_scalar.Scalar)``. Under CANN that attribute exists,
because ``impl.util.platform_adapter`` (which every such operator imports) loads the TIK package on
import. Here the first ``te.tik`` attribute access imports ``te.tik`` as ``from te import tik`` would
(with its notice) -- named choice ``TE_LAZY_SUBMODULES``.
"""
from __future__ import annotations

import importlib

#: Named choice (platform.md "Legacy import names"): ``te`` submodules an attribute access imports on
#: first use, as CANN's import chain has loaded them by the time an operator's code runs.
TE_LAZY_SUBMODULES = ("tik",)


def te_getattr(name: str):
    """``te.<name>`` for a name the package has not imported yet: the lazily imported submodules of
    `TE_LAZY_SUBMODULES`; any other name is Python's usual AttributeError."""
    if name in TE_LAZY_SUBMODULES:
        return importlib.import_module(f"te.{name}")
    raise AttributeError(f"module 'te' has no attribute {name!r}")
