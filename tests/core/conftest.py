"""Shared test set-up for tests/core.

Installs the test-only stand-in `vector_numerics_ref` as ``pto_core.numerics`` when the
real module is not on this branch yet (the vector ops import it lazily, by the contract
names only). With the real module present, nothing is replaced.
"""
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

try:
    importlib.import_module("pto_core.numerics")
except ModuleNotFoundError as e:  # pragma: no cover - depends on the branch state
    if e.name != "pto_core.numerics":
        raise
    import pto_core
    import vector_numerics_ref
    sys.modules["pto_core.numerics"] = vector_numerics_ref
    pto_core.numerics = vector_numerics_ref
