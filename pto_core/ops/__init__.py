"""The PTO op set, one module per family; importing this package registers every op.

Families: ``mte`` (data movement), ``cube`` (``pto.mad*``), ``fixpipe``
(``pto.mte_l0c_*``), ``sync`` (flags, barriers), ``ctrl`` (control registers: the GM
atomic mode), ``vector``, ``scalar``, ``assertions`` (run-time checks front ends place),
``debug`` (``pto.debug_print``, ``pto.debug_eval``).
Each op is one execute function plus one `registry.OpSpec` row.
"""
from .registry import OPS, OpCall, OpSpec, Operand, Clause, get_op, register  # noqa: F401

import importlib as _importlib

for _family in ("sync", "ctrl", "mte", "cube", "fixpipe", "vector", "scalar", "assertions", "legacy_cube", "debug"):
    try:
        _importlib.import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as _e:  # a family not written yet
        if _e.name != f"{__name__}.{_family}":
            raise
del _family
