"""pto_core: the PTO simulator core (memory spaces, targets, numerics, layouts, PTO ops,
sync checks, programs and the interpreter). It knows nothing of TIK.

Quick start::

    from pto_core import Machine, pto
    m = Machine("A2A3")
    a = m.ptr("l0a", "f16", 0x0)
"""
from .errors import (PtoError, OutOfBounds, Misaligned, CapacityExceeded, IllegalOperand, UnknownName,  # noqa: F401
                     UnsupportedOp, SyncError, HazardError, GmRace, GmRaceWarning, GmOverreadWarning,
                     GmPaddingWriteWarning, BurstTailWarning, BarrierCountWarning, CmpmaskUnsetBitsWarning,
                     UninitializedRead, UninitializedReadWarning, ConfigError,
                     AsmParseError, TassignError, Provenance)
from .dtypes import DType, dtype  # noqa: F401
from .targets import ChipProfile, get_target, target_names  # noqa: F401
from .memory import Machine, MachineOptions, Ptr, ExecContext  # noqa: F401
from .tassign import Tile, TileAllocator, tassign, tassign_checked  # noqa: F401
from . import ops as _ops  # noqa: F401  (registers every op)
from . import pto  # noqa: F401

__version__ = "0.1.0"
