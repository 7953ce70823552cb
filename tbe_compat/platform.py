"""The platform layer of the TIK facade: which chip a legacy script targets, and what
it may ask about that chip.

Legacy TIK scripts select a chip in four styles, often mixed and in any order relative
to ``tik.Tik()``: `set_current_compile_soc_info` (``tbe.common.platform``),
`te_set_version` (``te.platform.cce_conf``, deprecated), ``tik.Dprofile(arch, version)``
and nothing at all (the default chip, **Ascend310**). All of them set one process-global
selection; nothing freezes it, and later layers read it lazily through `current_soc`.

Queries answer from data (``tbe_compat/data``): `get_soc_spec` follows the key handling
of CANN's platform C++ (``GetSocSpec``) and the value types of
``tbe/common/platform/platform_info.py``; `api_check_support` follows
``tbe/tik/common/common_util.py`` for ``tik.`` names (TIK's own table first, then the
ini intrinsic map) and ``tbe/dsl/compute/util.py`` for ``te.lang.cce.``/``tbe.dsl.``
names (the DSL support table);
`intrinsic_check_support` reads the ini ``[AICoreintrinsicDtypeMap]`` (or
``[VectorCoreintrinsicDtypeMap]`` when the core type is VectorCore).

Errors: what CANN rejects with ``RuntimeError`` raises `PlatformError` (an
`IllegalOperand` that is also a ``RuntimeError``; `UnknownPlatformName` when a name is
unknown, listing the valid ones); a query the public CANN data cannot answer for the
selected chip raises `PlatformDataMissing` (an `UnsupportedOp`, also a
``RuntimeError``) instead of guessing. Sources and gaps: ``migration_guide/platform.md``.
"""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Optional

from pto_core.errors import IllegalOperand, Provenance, UnknownName, UnsupportedOp
from pto_core.ops import registry as _registry
from pto_core.targets import ChipProfile, dprofile_target, get_target, vector_core_variant

from .data import dsl_support, soc_v100, soc_v200, soc_v220, soc_v300
from .data.tik_api_map import (H_API_MAP, H_DATA_MOVE_DTYPES, ONLY_TIK_API_MAP,
                               TRANS_TIK_API_TO_INSTR_MAP)

# --------------------------------------------------------------------------------------
# Errors and warnings
# --------------------------------------------------------------------------------------


# frames in this package are not the user's call site
_registry.add_internal_package(os.path.dirname(os.path.abspath(__file__)))


class PlatformError(IllegalOperand, RuntimeError):
    """A chip selection or platform query CANN rejects with ``RuntimeError`` (a bad
    ``aicore_num``/``l1_fusion``, a malformed argument, an empty ini value). Without an explicit
    ``where`` it carries the user's ``file:line`` that made the call."""

    def __init__(self, message: str, **kw):
        if kw.get("where") is None:
            w = _registry.user_frame(2)
            if w is not None:
                kw["where"] = Provenance(w.file, w.line, kw.get("op") or "")
        super().__init__(message, **kw)


class UnknownPlatformName(UnknownName, PlatformError):
    """A `PlatformError` for a name that does not exist (SoC, core type, ``get_soc_spec``
    key, Dprofile pair, buffer or intrinsic name); the message lists the valid ones."""


class PlatformDataMissing(UnsupportedOp, RuntimeError):
    """The public CANN data this simulator carries does not answer the query for the
    selected chip (e.g. intrinsic tables of SoCs whose ini is not public)."""


class TbeDeprecationWarning(FutureWarning):
    """A legacy CANN API that CANN itself marks as expired (shown once per call site)."""


class DprofileIgnoredWarning(UserWarning):
    """``tik.Dprofile`` with only one of ``ai_core_arch`` / ``ai_core_version``: TIK accepts it and
    selects no chip (see `DPROFILE_LONE_ARGUMENT_SELECTS_NOTHING`); the warning says which chip runs."""


DPROFILE_LONE_ARGUMENT_SELECTS_NOTHING = True
"""``tik.Dprofile("cloud")`` (one of the two arguments): TIK's ``Dprofile1.__init__`` (public 2020
``te.tik`` source, ``tik_conf_.py``) skips the chip selection when either argument is None ("ge do the
init!"), so the call is legal and the chip stays whatever was selected before; CANN's own 2020
``sort_v2`` operator constructs ``tik.Tik(tik.Dprofile('cloud'))``. We do the same and warn
(`DprofileIgnoredWarning`), since a script run outside the framework then gets the default chip.
The CANN 8.1 constructor was not retrievable; migration_guide/platform.md."""


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Emit CANN's "expired API" notice as a `TbeDeprecationWarning`."""
    warnings.warn(f"{old} is deprecated in CANN; use {new} instead", TbeDeprecationWarning,
                  stacklevel=stacklevel)


# --------------------------------------------------------------------------------------
# Names (constants shared by tbe.common.platform, te.platform and tbe.tik)
# --------------------------------------------------------------------------------------

AIC = "AiCore"
AIV = "VectorCore"
CORE_TYPES = (AIC, AIV)
DEFAULT_SOC = "Ascend310"

# get_soc_spec keys (tbe/common/platform/platform_info.py).
SOC_VERSION = "SOC_VERSION"
FULL_SOC_VERSION = "FULL_SOC_VERSION"
SHORT_SOC_VERSION = "SHORT_SOC_VERSION"
AICORE_TYPE = "AICORE_TYPE"
CORE_NUM = "CORE_NUM"
CUBE_CORE_CNT = "CUBE_CORE_CNT"
VECTOR_CORE_CNT = "VECTOR_CORE_CNT"
MAX_CORE_NUM = "MAX_CORE_NUM"
UB_SIZE = "UB_SIZE"
L2_SIZE = "L2_SIZE"
L1_SIZE = "L1_SIZE"
CUBE_SIZE = "CUBE_SIZE"
L0A_SIZE = "L0A_SIZE"
L0B_SIZE = "L0B_SIZE"
L0C_SIZE = "L0C_SIZE"
SMASK_SIZE = "SMASK_SIZE"
UNZIP = "UNZIP"
VREG_SIZE = "VREG_SIZE"
AREG_SIZE = "AREG_SIZE"
PREG_SIZE = "PREG_SIZE"
UREG_SIZE = "UREG_SIZE"
WREG_SIZE = "WREG_SIZE"
WIDE_REG_WIDTH = "WIDE_REG_WIDTH"
CUBE_VECTOR_SPLIT = "CUBE_VECTOR_SPLIT"
COMPILER_ARCH = "Compiler_arch"
COMPILER_AICPU_SUPPORT_OS = "Compiler_aicpu_support_os"
FB_SIZE = "FB_SIZE"
FB0_SIZE = "FB0_SIZE"
FB1_SIZE = "FB1_SIZE"
FB2_SIZE = "FB2_SIZE"
FB3_SIZE = "FB3_SIZE"
BT_SIZE = "BT_SIZE"
CORE_TYPE_LIST = "CORE_TYPE_LIST"
CUBE_FREQ = "CUBE_FREQ"
L0A_LAYOUT_IS_zN = "L0A_LAYOUT_IS_zN"
UB_BLOCK_SIZE = "ubblock_size"

# SoC names (tbe/common/platform/platform_info.py).
ASCEND_310 = "Ascend310"
ASCEND_310B = "Ascend310B"
AS31XM1 = "AS31XM1"
ASCEND_031 = "Ascend031"
ASCEND_035 = "Ascend035"
ASCEND_035A = "Ascend035A"
ASCEND_035B = "Ascend035B"
ASCEND_910 = "Ascend910"
ASCEND_910H = "Ascend910B"
ASCEND_910B = "Ascend910B"
ASCEND_910_93 = "Ascend910_93"
ASCEND_910_95 = "Ascend910_95"
ASCEND_910M = "Ascend910A"
ASCEND_910P = "Ascend910ProA"
HI3796CV300ES = "Hi3796CV300ES"
HI3796CV300CS = "Hi3796CV300CS"
SD3403 = "SD3403"
ASCEND_SD = "SD3403"
ASCEND_610 = "Ascend610"
ASCEND_610LITE = "Ascend610Lite"
BS9SX2A = "BS9SX2A"
MC61AM21A = "MC61AM21A"
ASCEND_310P = "Ascend310P"
BS9SX1A = "BS9SX1A"
ASCEND_610B = "Ascend610B"
# names older CANN releases exported for SoCs before their release names; legacy ops compare
# get_soc_spec(SOC_VERSION) with them. Ascend710 and Ascend615 are accepted (`PRE_RELEASE_SOC_NAMES`);
# ASCEND_920A (sort_v2.py) matches no chip here: no public source gives its core counts
ASCEND_615 = "Ascend615"
ASCEND_710 = "Ascend710"
ASCEND_920A = "Ascend920A"
# CANN 2019-2020 te.platform.cce_params: Ascend620 (the "mini_1951m" product of topi.cce.util) matches
# no chip here either
ASCEND_620 = "Ascend620"
_AIC_ENGINE = AIC
_VEC_ENGINE = AIV
AIC_310P = ASCEND_310P + AIC
VEC_310P = ASCEND_310P + AIV
AIC_610 = ASCEND_610 + AIC
VEC_610 = ASCEND_610 + AIV
AIC_BS9SX1A = BS9SX1A + AIC
VEC_BS9SX1A = BS9SX1A + AIV
AIC_610B = ASCEND_610B + AIC
VEC_610B = ASCEND_610B + AIV
AIC_310B = ASCEND_310B + AIC
VEC_310B = ASCEND_310B + AIV
AIC_AS31XM1 = AS31XM1 + AIC
VEC_AS31XM1 = AS31XM1 + AIV
HI3796CV300ESAIC = HI3796CV300ES + AIC
ASCEND_310AIC = ASCEND_310 + AIC   # CANN 2019-2020 cce_params names
ASCEND_910AIC = ASCEND_910 + AIC
HI3796CV300CSAIC = HI3796CV300CS + AIC
SD3403AIC = SD3403 + AIC
ASCEND_910BAIC = ASCEND_910B + AIC
ASCEND_910BVEC = ASCEND_910B + AIV
ASCEND_910_93AIC = ASCEND_910_93 + AIC
ASCEND_910_93VEC = ASCEND_910_93 + AIV
ASCEND_SD_AIC = SD3403 + AIC

# Storage scopes (the strings TIK and TVM use for memory spaces).
scope_cbuf = "local.L1"
scope_ubuf = "local.UB"
scope_ca = "local.L0A"
scope_cb = "local.L0B"
scope_cc = "local.L0C"
scope_cbuf_out = "local.L0C"
scope_reg = "local.REG"
scope_vreg = "local.VREG"
scope_preg = "local.PREG"
scope_areg = "local.AREG"
scope_ureg = "local.UREG"
scope_wreg = "local.WREG"
scope_aicpu = "local_aicpu"
scope_gm = "global"
scope_cbuf_fusion = "local.L1_Fusion"
scope_ubuf_fusion = "local.UB_Fusion"
scope_smask = "local.SMASK"
scope_fb = "local.FB"
scope_fb0 = "local.FB0"
scope_fb1 = "local.FB1"
scope_fb2 = "local.FB2"
scope_fb3 = "local.FB3"
scope_bt = "local.BT"
dma_copy = "dma_copy"
dma_copy_global = "global"

# Vector and cube geometry constants.
VECTOR_INST_BLOCK_WIDTH = 256   # bytes per vector repeat
VECTOR_INST_BLOCK_NUM = 8       # 32-byte blocks per vector repeat
VECTOR_INST_MAX_REPEAT_TIMES = 255
WGT_WIDTH = 16
INP_WIDTH = 16
OUT_WIDTH = 16
BLOCK_IN = 16
BLOCK_OUT = 16
BLOCK_REDUCE = 16
BLOCK_REDUCE_INT8 = 32
BLOCK_REDUCE_INT4 = 64
BLOCK_REDUCE_FP32 = 8
BLOCK_VECTOR = 1
INP_ELEM_BYTES = BLOCK_IN * BLOCK_REDUCE * INP_WIDTH // 8
WGT_ELEM_BYTES = BLOCK_OUT * BLOCK_REDUCE * WGT_WIDTH // 8
OUT_ELEM_BYTES = BLOCK_IN * BLOCK_OUT * OUT_WIDTH // 8
GLB_ELEM_BYTES = 16 * OUT_WIDTH // 8
C0_SIZE = 16
ELEMENTS_VECTOR_OP_FP16 = 128
DEFAULT_MUL_VALUE = 1
DEFAULT_ADD_VALUE = 0
GEMM_MODE = 0
GEVM_MODE = 1
CONV_MODE = 2
VECTOR_COPY_NBURST_LIMIT = 4096
VECTOR_SINGLE_BLOCK_WIDTH_FP16 = 16
#: cube (M, K, N) fractal shape per input dtype.
CUBE_MKN = {"int4": {"mac": [16, 64, 16]}, "int8": {"mac": [16, 32, 16]}, "uint8": {"mac": [16, 32, 16]},
            "int16": {"mac": [16, 16, 16]}, "int32": {"mac": [16, 16, 16]}, "float16": {"mac": [16, 16, 16]},
            "float32": {"mac": [16, 8, 16]}, "bfloat16": {"mac": [16, 16, 16]}}

# --------------------------------------------------------------------------------------
# SoC tables
# --------------------------------------------------------------------------------------

#: SoC_version -> platform table (sections + intrinsic maps), see ``tbe_compat/data``.
SOC_TABLES: dict = {**soc_v100.SOCS, **soc_v200.SOCS, **soc_v220.SOCS, **soc_v300.SOCS}
#: names CANN accepts for a modelled SoC (``"Ascend910"`` selects ``Ascend910A.ini``).
SOC_NAME_ALIASES = {"Ascend910": "Ascend910A"}
#: Pre-release SoC names CANN 20.x / 5.x accepted (named choice, see platform.md), and the modelled
#: part each one selects. CANN 20.x ``te/platform/cce_conf.py`` ``SOC_VERSION_MAP`` gives their core
#: counts and architecture: Ascend710 8 AiCore / 7 VectorCore and Ascend710Pro 10 / 8 (product
#: 1951dc, the 310P silicon: today's Ascend310P3 and Ascend310P1 have exactly these counts), Ascend615
#: 10 / 8 (product 1951pg2: the BS9SX1A family, BS9SX1AA). Selecting one simulates the part and
#: ``get_soc_spec("SOC_VERSION")`` reports the name as given, as CANN did; 2020-2021 kernels test
#: ``SOC_VERSION in ("Ascend710", "Ascend610", "Ascend615", ...)`` to take their v200 path.
PRE_RELEASE_SOC_NAMES = {"Ascend710": "Ascend310P3", "Ascend710Pro": "Ascend310P1", "Ascend615": "BS9SX1AA"}
#: SoC names CANN 8.1 knows that this simulator does not model (for clearer errors).
UNMODELLED_SOCS = ("Ascend310P2", "Ascend310P4", "Ascend310P5", "Ascend310P7", "Ascend910B", "Ascend910ProA",
                   "Ascend910ProB", "Ascend910PremiumA", "Ascend910B2C", "Ascend910B4-1", "Ascend910_9391",
                   "Ascend910_9392", "Ascend910_9381", "Ascend910_9382", "Ascend910_9372", "Ascend910_9362",
                   "Ascend310B2", "Ascend310B3", "Ascend310B4", "AS31XM1X", "Ascend031", "Ascend035",
                   "Ascend035A", "Ascend035B", "Ascend610Lite", "Ascend610B1", "Ascend610B2", "BS9SX1AB", "BS9SX1AC",
                   "BS9SX2AA", "BS9SX2AB", "MC61AM21AA", "MC61AM21AB", "Hi3519AV200")
#: Pre-release names older CANN releases or kernels use that match no modelled part (for clearer errors):
#: Ascend910Pro / Ascend910Lite (CANN 20.x, 32 / 30 cores), Ascend920A and Ascend620 (no public core counts).
UNMAPPED_PRE_RELEASE_SOCS = ("Ascend910Pro", "Ascend910Lite", "Ascend920A", "Ascend620")
#: SoCs whose table is not a full public ini (their gaps raise `PlatformDataMissing`).
PARTIAL_TABLE_SOCS = ("Ascend310", "Ascend910A", "Hi3796CV300ES", "Hi3796CV300CS", "SD3403")

_RAW_SECTIONS = ("version", "SoCInfo", "AICoreSpec", "AICoreMemoryRates", "CPUCache")
_INTRINSIC_SECTION = {AIC: "AICoreintrinsicDtypeMap", AIV: "VectorCoreintrinsicDtypeMap"}
#: raw keys any public ini defines (to tell "unknown key" from "missing data").
_KNOWN_RAW_KEYS = frozenset(k for name, t in SOC_TABLES.items() if name not in PARTIAL_TABLE_SOCS
                            for s in _RAW_SECTIONS for k in t.get(s, {}))
#: SoCs whose L1/UB sizes CANN reports for VectorCore too (BS9SX1A, M300 families).
_L1_FOR_VECTOR_CORE = ("BS9SX1A", "Ascend310B")
#: SoCs with fixpipe buffers and a bias table (C220, M300 families).
_FB_BT_SHORT = ("Ascend910B", "Ascend310B")
#: SoCs without an SMASK buffer (CANN answers -1).
_NO_SMASK_SHORT = ("Ascend610", "BS9SX1A")
#: 310P parts skip CANN's aicore_num <= core count check.
_NO_CORE_LIMIT_SHORT = ("Ascend310P",)
#: SoCs with vector-register widths (BS9SX1A, M300 families; vector core spec).
_VREG_SHORT = ("BS9SX1A", "Ascend310B")


def soc_names() -> list:
    """Names `set_current_compile_soc_info` accepts, sorted."""
    return sorted(set(SOC_TABLES) | set(SOC_NAME_ALIASES) | set(PRE_RELEASE_SOC_NAMES))


def _soc_name(soc_version: Any, *, api: str) -> str:
    if not isinstance(soc_version, str):
        raise PlatformError(f"soc_version must be a str, got {type(soc_version).__name__} {soc_version!r}",
                            op=api, operand="soc_version", value=soc_version,
                            hint="pass a SoC name such as 'Ascend310' or 'Ascend910B1'")
    name = SOC_NAME_ALIASES.get(soc_version, PRE_RELEASE_SOC_NAMES.get(soc_version, soc_version))
    if name in SOC_TABLES:
        return name
    valid = ", ".join(soc_names())
    close = [n for n in soc_names() if n.lower() == soc_version.lower()]
    if close:
        hint = f"SoC names are case-sensitive: use {close[0]!r}"
    elif soc_version in UNMODELLED_SOCS:
        hint = (f"{soc_version!r} is a CANN SoC this simulator does not model; pick the closest modelled one "
                f"(one of {valid})")
    elif soc_version in UNMAPPED_PRE_RELEASE_SOCS:
        hint = (f"{soc_version!r} is a pre-release CANN name that matches no modelled part; select the released "
                f"part the kernel targets (one of {valid})")
    elif soc_version in ("Ascend310P", "Ascend910B", "Ascend310B"):
        hint = (f"{soc_version!r} is a short SoC version; select a part such as "
                f"{soc_version}{'3' if soc_version == 'Ascend310P' else '1'}")
    else:
        hint = f"use one of {valid}"
    raise UnknownPlatformName(f"unsupported SoC version {soc_version!r}", op=api, operand="soc_version",
                              value=soc_version, limit="one of " + valid, hint=hint)


# --------------------------------------------------------------------------------------
# The current selection
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SocState:
    """The selected chip: what every platform query and the TIK layer consult.

    Attributes:
        soc_version: the modelled SoC (``"Ascend910"`` becomes ``"Ascend910A"``, ``"Ascend710"``
            ``"Ascend310P3"``: `SOC_NAME_ALIASES`, `PRE_RELEASE_SOC_NAMES`).
        core_type: ``"AiCore"`` or ``"VectorCore"``.
        aicore_num: the ``aicore_num`` override of `set_current_compile_soc_info` (AiCore only), or None.
        l1_fusion: the ``l1_fusion`` flag, or None.
        pre_release_name: the `PRE_RELEASE_SOC_NAMES` name the chip was selected by (reported as
            ``SOC_VERSION``), or None.
    """

    soc_version: str
    core_type: str = AIC
    aicore_num: Optional[int] = None
    l1_fusion: Optional[bool] = None
    pre_release_name: Optional[str] = None

    @property
    def table(self) -> dict:
        """The platform table (ini sections + intrinsic maps) of this SoC."""
        return SOC_TABLES[self.soc_version]

    @property
    def profile(self) -> ChipProfile:
        """The simulator's `ChipProfile` for this SoC (buffer sizes, MAD types, ...); for a
        ``VectorCore`` selection its vector-core variant (the vector instruction tables differ)."""
        profile = get_target(self.soc_version)
        return vector_core_variant(profile) if self.core_type == AIV else profile

    @property
    def short_soc_version(self) -> str:
        return self.table["version"]["Short_SoC_version"]

    @property
    def api_key(self) -> str:
        """The key of TIK's API support table: short SoC version + core type."""
        return self.short_soc_version + self.core_type

    @property
    def core_num(self) -> int:
        """Cores a kernel may use: ``get_soc_spec("CORE_NUM")``."""
        return get_soc_spec_of(self, CORE_NUM)

    def raw(self, key: str) -> Optional[str]:
        """The raw ini value of ``key`` in the sections CANN searches, or None."""
        if key == "ai_core_cnt" and self.aicore_num is not None and self.core_type == AIC:
            return str(self.aicore_num)
        for section in _RAW_SECTIONS:
            value = self.table.get(section, {}).get(key)
            if value is not None:
                return value
        return None

    def intrinsic_map(self) -> Optional[dict]:
        """The ini intrinsic dtype map of this core type (None if not public)."""
        return self.table.get(_INTRINSIC_SECTION[self.core_type])


_current = SocState(DEFAULT_SOC)

#: How ``get_soc_spec("SOC_VERSION")`` / ``"FULL_SOC_VERSION"`` spell a chip (named choice, see
#: platform.md): ``"current"`` (default) gives today's CANN names (``"Ascend910A"``); ``"cann20"``
#: gives the names CANN 20.x returned, which 2019-2020 kernels compare against (``"Ascend910"``
#: for Ascend910A, ``"Ascend710"`` for Ascend310P3, ...; every other chip keeps its name). Set by `set_soc_version_naming`, by the
#: environment variable `SOC_VERSION_NAMING_ENV` at import, or by ``tik-run --soc-names``.
SOC_VERSION_NAMINGS = ("current", "cann20")
SOC_VERSION_NAMING_ENV = "TBE_COMPAT_SOC_VERSION_NAMING"
#: SOC_VERSION under ``"cann20"`` naming, where it differs from the current name: CANN 20.x's
#: ``SOC_VERSION_MAP`` names (Ascend910, and the pre-release names of `PRE_RELEASE_SOC_NAMES`).
_CANN20_SOC_VERSION = {"Ascend910A": "Ascend910", **{part: name for name, part in PRE_RELEASE_SOC_NAMES.items()}}


def _naming_from_env() -> str:
    value = os.environ.get(SOC_VERSION_NAMING_ENV, "current") or "current"
    if value not in SOC_VERSION_NAMINGS:
        raise PlatformError(f"environment variable {SOC_VERSION_NAMING_ENV}={value!r} is not a SoC version naming",
                            op="tbe_compat.platform", operand=SOC_VERSION_NAMING_ENV, value=value,
                            limit="one of " + ", ".join(SOC_VERSION_NAMINGS),
                            hint=f"set {SOC_VERSION_NAMING_ENV}=cann20 for CANN 20.x names (SOC_VERSION "
                                 f"'Ascend910'), or unset it")
    return value


_soc_version_naming = None          # read from the environment on first use


def soc_version_naming() -> str:
    """The SoC version naming in force (`SOC_VERSION_NAMINGS`)."""
    global _soc_version_naming
    if _soc_version_naming is None:
        _soc_version_naming = _naming_from_env()
    return _soc_version_naming


def set_soc_version_naming(naming: str) -> None:
    """Select how ``get_soc_spec("SOC_VERSION")`` spells the chip: ``"current"`` (``"Ascend910A"``)
    or ``"cann20"`` (``"Ascend910"``, as CANN 20.x returned; for kernels that test
    ``get_soc_spec("SOC_VERSION") in ("Ascend910", ...)``). Simulator extension; process-wide."""
    global _soc_version_naming
    if naming not in SOC_VERSION_NAMINGS:
        raise PlatformError(f"SoC version naming {naming!r} is not one of {', '.join(SOC_VERSION_NAMINGS)}",
                            op="set_soc_version_naming", operand="naming", value=naming,
                            limit="one of " + ", ".join(SOC_VERSION_NAMINGS),
                            hint="pass 'cann20' for CANN 20.x names or 'current' (the default)")
    _soc_version_naming = naming


def current_soc() -> SocState:
    """The chip currently selected (default Ascend310 AiCore). Read it lazily, at the
    moment a decision depends on it: scripts may select the chip after ``tik.Tik()``."""
    return _current


def reset_platform() -> None:
    """Select the default chip again (Ascend310, AiCore). Simulator extension for
    drivers and tests that run several kernels in one process."""
    global _current
    _current = SocState(DEFAULT_SOC)
    CceProductParams.cce_product = None
    CceProductParams.build_options.clear()


def _core_type(core_type: Any, table: dict, soc: str, *, api: str) -> str:
    if core_type in (None, ""):
        return AIC
    if core_type not in CORE_TYPES:
        raise UnknownPlatformName(f"unsupported core type {core_type!r}", op=api, operand="core_type",
                                  value=core_type, limit="one of AiCore, VectorCore",
                                  hint="use core_type='AiCore' or 'VectorCore'")
    if core_type not in table["core_types"]:
        with_vec = ", ".join(n for n, t in sorted(SOC_TABLES.items()) if AIV in t["core_types"])
        raise UnknownPlatformName(f"{soc} has no {core_type}", op=api, operand="core_type", value=core_type,
                                  limit="one of " + ", ".join(table["core_types"]),
                                  hint=f"VectorCore exists on {with_vec}")
    return core_type


def _aicore_num(aicore_num: Any, table: dict, soc: str, core_type: str, *, api: str) -> Optional[int]:
    if aicore_num in (None, 0, "0", ""):
        return None
    bad = isinstance(aicore_num, bool) or not (
        isinstance(aicore_num, int) or (isinstance(aicore_num, str) and aicore_num.isdigit()))
    if bad or int(aicore_num) <= 0:
        raise PlatformError(f"unsupported aicore_num {aicore_num!r}", op=api, operand="aicore_num", value=aicore_num,
                            limit="a positive int", hint="pass the number of AI cores to use, or None for all")
    num = int(aicore_num)
    key = "ai_core_cnt" if core_type == AIC else "vector_core_cnt"
    limit = int(table["SoCInfo"][key])
    if table["version"]["Short_SoC_version"] not in _NO_CORE_LIMIT_SHORT and num > limit:
        raise PlatformError(f"aicore_num {num} exceeds the {limit} {core_type} cores of {soc}", op=api,
                            operand="aicore_num", value=num, limit=f"[1, {limit}]",
                            hint=f"use at most {limit} cores on {soc}")
    return num if core_type == AIC else None


def _l1_fusion(l1_fusion: Any, *, api: str) -> Optional[bool]:
    if l1_fusion is None or l1_fusion == "":
        return None
    if isinstance(l1_fusion, bool):
        return l1_fusion
    if isinstance(l1_fusion, str) and l1_fusion.lower() in ("true", "false"):
        return l1_fusion.lower() == "true"
    raise PlatformError(f"unsupported l1_fusion {l1_fusion!r}", op=api, operand="l1_fusion", value=l1_fusion,
                        limit="True, False or None", hint="pass l1_fusion=True/False or leave it None")


def set_current_compile_soc_info(soc_version, core_type=AIC, aicore_num=None, l1_fusion=None) -> str:
    """Select the chip (``tbe.common.platform.set_current_compile_soc_info``).

    Args:
        soc_version: a SoC name (`soc_names`); ``"Ascend910"`` selects Ascend910A; the pre-release
            names ``"Ascend710"``, ``"Ascend710Pro"``, ``"Ascend615"`` select the part they became
            (`PRE_RELEASE_SOC_NAMES`) and ``SOC_VERSION`` reports them as given.
        core_type: ``"AiCore"`` (default) or ``"VectorCore"`` (only on SoCs with vector cores).
        aicore_num: cores to use (AiCore); must not exceed the SoC's count (310P parts excepted, as in CANN).
        l1_fusion: True/False/None (recorded, no effect on simulation).

    Returns ``"success"``. Raises `PlatformError` (a ``RuntimeError``) naming the bad value
    and the valid ones; the previous selection stays in force on error.
    """
    global _current
    api = "set_current_compile_soc_info"
    soc = _soc_name(soc_version, api=api)
    table = SOC_TABLES[soc]
    ctype = _core_type(core_type, table, soc, api=api)
    num = _aicore_num(aicore_num, table, soc, ctype, api=api)
    fusion = _l1_fusion(l1_fusion, api=api)
    _current = SocState(soc, ctype, num, fusion, soc_version if soc_version in PRE_RELEASE_SOC_NAMES else None)
    return "success"


#: CceProductParams.cce_product per short SoC version and core type (te/platform/cce_conf.py).
_PRODUCT_VERSION = {"Ascend310": "1910", "Ascend910": "1980", "Ascend910B": "1980", "Ascend310P": "ng1dc",
                    "Ascend610": "ng1mdc", "BS9SX1A": "ng1pg2", "Ascend310B": "Ascend310B",
                    "Hi3796CV300ES": "smallhisi", "Hi3796CV300CS": "smallhisi", "SD3403": "smallhisi"}


def te_set_version(soc_version, core_type=AIC, aicore_num=None, l1_fusion=None, l2_mode="0", l2_fusion=None,
                   kwargs=None) -> "CceProductParams":
    """Legacy chip selection (``te.platform.cce_conf.te_set_version``): warns like CANN,
    then does what `set_current_compile_soc_info` does. ``l2_mode``, ``l2_fusion`` and
    ``kwargs`` are accepted and ignored. Returns the `CceProductParams` singleton with
    ``cce_product`` set (``"1910"`` mini, ``"1980"`` cloud, ...)."""
    warn_deprecated("te.platform.te_set_version", "tbe.common.platform.set_current_compile_soc_info")
    set_current_compile_soc_info(soc_version, core_type, aicore_num, l1_fusion)
    params = CceProductParams()
    state = current_soc()
    product = _PRODUCT_VERSION[state.short_soc_version]
    if state.short_soc_version == "BS9SX1A" and state.core_type == AIV:
        product += AIV
    CceProductParams.cce_product = product       # class-level: the singleton and reset_platform agree
    return params


# --------------------------------------------------------------------------------------
# get_soc_spec
# --------------------------------------------------------------------------------------

#: keys whose value CANN returns as int (platform_info.py ``str2int_list``).
_INT_KEYS = (CORE_NUM, UB_SIZE, L2_SIZE, L1_SIZE, L0A_SIZE, L0B_SIZE, L0C_SIZE, SMASK_SIZE, VREG_SIZE, WREG_SIZE,
             WIDE_REG_WIDTH, AREG_SIZE, PREG_SIZE, UREG_SIZE, CUBE_VECTOR_SPLIT, FB_SIZE, FB0_SIZE, FB1_SIZE,
             FB2_SIZE, FB3_SIZE, BT_SIZE, UB_BLOCK_SIZE)
#: every key `get_soc_spec` computes (raw ini keys are accepted too).
SOC_SPEC_KEYS = (SOC_VERSION, FULL_SOC_VERSION, SHORT_SOC_VERSION, AICORE_TYPE, CORE_NUM, CUBE_CORE_CNT,
                 VECTOR_CORE_CNT, MAX_CORE_NUM, UB_SIZE, L2_SIZE, L1_SIZE, CUBE_SIZE, L0A_SIZE, L0B_SIZE, L0C_SIZE,
                 SMASK_SIZE, UNZIP, VREG_SIZE, PREG_SIZE, WREG_SIZE, WIDE_REG_WIDTH, CUBE_VECTOR_SPLIT,
                 COMPILER_ARCH, COMPILER_AICPU_SUPPORT_OS, FB_SIZE, FB0_SIZE, FB1_SIZE, FB2_SIZE, FB3_SIZE, BT_SIZE,
                 CORE_TYPE_LIST, CUBE_FREQ, L0A_LAYOUT_IS_zN, UB_BLOCK_SIZE)


_L0_RAW = {L0A_SIZE: "l0_a_size", L0B_SIZE: "l0_b_size", L0C_SIZE: "l0_c_size"}


def _need(state: SocState, key: str, raw_key: str) -> str:
    """The raw ini value ``raw_key`` behind spec ``key``; raises if the data lacks it."""
    value = state.raw(raw_key)
    if value is None:
        if state.soc_version in PARTIAL_TABLE_SOCS:
            raise PlatformDataMissing(
                f"get_soc_spec({key!r}) needs {raw_key!r}, which the public data for {state.soc_version} lacks",
                op="get_soc_spec", operand="key", value=key,
                hint=f"data for {state.soc_version} comes from: {state.table['source']}; "
                     "see migration_guide/platform.md")
        raise UnknownPlatformName(f"{state.soc_version} has no {raw_key!r} entry, so get_soc_spec({key!r}) fails "
                                  "in CANN", op="get_soc_spec", operand="key", value=key,
                                  hint=f"do not ask {state.soc_version} for {key!r} (CANN raises here too), or set a "
                                       "chip that has it")
    if value == "":
        raise PlatformError(f"Unsupported Key Value of get_soc_spec(): {key} (empty in {state.soc_version}'s ini)",
                            op="get_soc_spec", operand="key", value=key,
                            hint=f"do not ask {state.soc_version} for {key!r} (CANN raises here too), or set a chip "
                                 "that has it")
    return value


def _spec_value(state: SocState, key: str) -> str:
    """``GetSocSpec``: the string value CANN's platform layer returns for ``key``."""
    aic = state.core_type == AIC
    short = state.short_soc_version
    if key in (SOC_VERSION, FULL_SOC_VERSION):
        if state.pre_release_name is not None:
            return state.pre_release_name
        if soc_version_naming() == "cann20":
            return _CANN20_SOC_VERSION.get(state.soc_version, state.soc_version)
        return state.soc_version
    if key == SHORT_SOC_VERSION:
        return short
    if key == AICORE_TYPE:
        return state.core_type
    if key in (CORE_NUM, MAX_CORE_NUM):
        return _need(state, key, "ai_core_cnt" if aic else "vector_core_cnt")
    if key == CUBE_CORE_CNT:
        return state.raw("cube_core_cnt") or "0"
    if key == VECTOR_CORE_CNT:
        return state.raw("vector_core_cnt") or "0"
    if key == UB_SIZE:
        return _need(state, key, "ub_size")
    if key == L2_SIZE:
        size = int(_need(state, key, "l2_size"))
        return str(size if aic else size // 2)       # VectorCore sees half the L2
    if key == L1_SIZE:
        return _need(state, key, "l1_size") if aic or short in _L1_FOR_VECTOR_CORE else "0"
    if key in _L0_RAW:
        return _need(state, key, _L0_RAW[key]) if aic else "0"
    if key in (FB0_SIZE, FB1_SIZE, FB2_SIZE, FB3_SIZE, BT_SIZE):
        return _need(state, key, key.lower()) if aic and short in _FB_BT_SHORT else "0"
    if key == FB_SIZE:
        return str(sum(int(_spec_value(state, k)) for k in (FB0_SIZE, FB1_SIZE, FB2_SIZE, FB3_SIZE)))
    if key == SMASK_SIZE:
        if not aic:
            return "0"
        return "-1" if short in _NO_SMASK_SHORT else _need(state, key, "smask_buffer")
    if key == CUBE_SIZE:
        return ",".join(_need(state, key, f"cube_{d}_size") for d in "mnk")
    if key == UNZIP:
        return ",".join(_need(state, key, f"unzip_{p}") for p in ("engines", "max_ratios", "channels", "is_tight"))
    if key in (VREG_SIZE, PREG_SIZE, WREG_SIZE, WIDE_REG_WIDTH):
        if short not in _VREG_SHORT:
            return "0"
        field = {VREG_SIZE: "vector_reg_width", PREG_SIZE: "predicate_reg_width"}.get(key, "wide_reg_width")
        return state.table["VectorCoreSpec"][field]
    if key == CUBE_VECTOR_SPLIT:
        return state.raw("cube_vector_split") or "0"
    if key == COMPILER_ARCH:
        return _need(state, key, "CCEC_AIC_version" if aic else "CCEC_AIV_version")
    if key == COMPILER_AICPU_SUPPORT_OS:
        return _need(state, key, "Compiler_aicpu_support_os")
    if key == CORE_TYPE_LIST:
        return _need(state, key, "core_type_list")
    if key == CUBE_FREQ:
        return state.raw("cube_freq") if short == "Ascend910B" else "0"
    if key == L0A_LAYOUT_IS_zN:
        return "0"                                   # only M310/C310 parts (not modelled) say 1
    if state.raw(key) is not None or key in _KNOWN_RAW_KEYS:
        return _need(state, key, key)
    raise UnknownPlatformName(f"Unsupported Key Value of get_soc_spec(): {key}", op="get_soc_spec",
                              operand="key", value=key,
                              limit="one of " + ", ".join(SOC_SPEC_KEYS) + " or a platform ini key",
                              hint="use a key constant such as tbe.common.platform.CORE_NUM or UB_SIZE")


def get_soc_spec_of(state: SocState, key: str):
    """`get_soc_spec` for an explicit `SocState` (not necessarily the current one)."""
    if not isinstance(key, str):
        raise PlatformError(f"get_soc_spec key must be a str, got {type(key).__name__}", op="get_soc_spec",
                            operand="key", value=key, hint="pass a key such as 'CORE_NUM'")
    value = _spec_value(state, key)
    if key in _INT_KEYS:
        try:
            return int(value)
        except ValueError:
            raise PlatformError(f"return value {value!r} of get_soc_spec({key!r}) is not 'int' type",
                                op="get_soc_spec", operand="key", value=key,
                                hint="ask for an integer key (e.g. CORE_NUM, UB_SIZE) with get_soc_spec, or read this "
                                     "key as a str") from None
    if key in (CUBE_SIZE, UNZIP):
        return [int(v) for v in value.split(",")]
    if key == CORE_TYPE_LIST:
        return value.split(",")
    if key == L0A_LAYOUT_IS_zN:
        return value == "1"
    return value


def get_soc_spec(key: str):
    """What the selected chip is (``tbe.common.platform.get_soc_spec``).

    Value types follow CANN: ``CORE_NUM``, ``*_SIZE`` and ``ubblock_size`` are ints
    (bytes / counts); ``CUBE_SIZE`` ([m, n, k]) and ``UNZIP`` ([engines, max ratio,
    channels, tight]) are lists of ints; ``CORE_TYPE_LIST`` is a list of str;
    ``L0A_LAYOUT_IS_zN`` is a bool; everything else (``SOC_VERSION``, ``SHORT_SOC_VERSION``,
    ``AICORE_TYPE``, ``CUBE_CORE_CNT``, ``MAX_CORE_NUM``, raw ini keys) is a str.
    With ``core_type="VectorCore"``: ``CORE_NUM`` is the vector-core count, ``L2_SIZE`` is
    halved, L0A/L0B/L0C/SMASK/FB/BT sizes are 0, and L1 is 0 except on BS9SX1A/Ascend310B.
    Unknown key: `PlatformError` (a ``RuntimeError``) listing the keys.
    """
    return get_soc_spec_of(current_soc(), key)


# --------------------------------------------------------------------------------------
# Capability probes
# --------------------------------------------------------------------------------------


def _expect_str(value: Any, name: str, api: str) -> None:
    if not isinstance(value, str):
        raise PlatformError(f"{name} type should be 'str', it is [{type(value).__name__}]", op=api, operand=name,
                            value=value, hint=f"pass {name} as a string")


def intrinsic_check_support(intrinsic: str, dtype: str = "") -> bool:
    """Whether the selected chip's ini lists ``intrinsic`` (``"Intrinsic_vexp"``), and, if
    ``dtype`` is not empty, lists it with that dtype string (``"float32"``, ``"f322f16"``).
    Reads ``[VectorCoreintrinsicDtypeMap]`` when the core type is VectorCore."""
    api = "intrinsic_check_support"
    _expect_str(intrinsic, "intrinsic", api)
    _expect_str(dtype, "dtype", api)
    if not intrinsic.startswith("Intrinsic_"):
        raise PlatformError(f"intrinsic {intrinsic!r} should start with 'Intrinsic_'", op=api, operand="intrinsic",
                            value=intrinsic, hint="use names such as 'Intrinsic_vadd' or 'Intrinsic_vconv'")
    state = current_soc()
    table = state.intrinsic_map()
    name = intrinsic[len("Intrinsic_"):]
    if table is None:
        raise PlatformDataMissing(
            f"no public intrinsic table for {state.soc_version} {state.core_type}, cannot answer {intrinsic}",
            op=api, operand="intrinsic", value=intrinsic,
            hint=f"data for {state.soc_version} comes from: {state.table['source']}; select a chip with a public "
                 "ini to probe intrinsics")
    omitted = state.table.get("omitted_intrinsic_prefixes", {}).get(state.core_type, ())
    if name.startswith(tuple(omitted)) and name not in table:
        raise PlatformDataMissing(f"{intrinsic} belongs to the register-ISA family the simulator does not tabulate",
                                  op=api, operand="intrinsic", value=intrinsic,
                                  hint="the Intrinsic_vectorized_* rows of the ini are not modelled")
    row = table.get(name)
    if row is None:
        return False
    return dtype == "" or dtype in row.split(",")


def _only_tik_decides(api: str, dtype: str, key: str) -> Optional[bool]:
    rows = ONLY_TIK_API_MAP.get(api)
    if rows is None:
        return None
    return key in rows and (dtype == "" or dtype in rows[key])


def _tik_api_check_support(intrinsic: str, dtype: str) -> bool:
    """``tbe/tik/common/common_util.py::_deal_tik_api``: TIK's table, else the ini."""
    api = intrinsic[len("tik."):]
    key = current_soc().api_key
    decided = _only_tik_decides(api, dtype, key)
    if decided is not None:
        return decided
    api = TRANS_TIK_API_TO_INSTR_MAP.get(api, api)
    if api.startswith("vec_"):
        api = "v" + api[len("vec_"):]
    if api.startswith("h_"):
        h_api = H_API_MAP.get(api, "v" + api[len("h_"):])
        h_dtype = "" if h_api == "data_move" and dtype in H_DATA_MOVE_DTYPES else dtype
        rows = ONLY_TIK_API_MAP.get(h_api)
        if rows is not None:
            if key not in rows:
                return False
            if h_dtype == "" or h_dtype in rows[key]:
                return True
        api, dtype = h_api, h_dtype
    return intrinsic_check_support("Intrinsic_" + api, dtype)


def _dsl_api_check_support(intrinsic: str, dtype: str) -> bool:
    """``tbe/dsl/compute/util.py::dsl_check_support`` (static table, see `dsl_support`)."""
    name = intrinsic.split(".")[-1]
    name = dsl_support.SAME_API.get(name, name)
    rows = dsl_support.DSL_SUPPORT.get(name)
    if rows is None:
        return False
    state = current_soc()
    key = dsl_support.SOC_KEY_ALIASES.get(state.short_soc_version, state.short_soc_version)
    if key not in dsl_support.SOC_KEYS:
        raise PlatformDataMissing(f"no DSL support data for {state.soc_version} (key {key!r}), cannot answer "
                                  f"{intrinsic}", op="api_check_support", operand="intrinsic", value=intrinsic,
                                  hint=f"add the chip's rows from {dsl_support.SOURCE} to tbe_compat/data/"
                                       "dsl_support.py")
    row = rows.get(key, rows.get(dsl_support.ALL))
    if row is None:
        return False
    return dtype == "" or dtype in row


def api_check_support(intrinsic: str, dtype: str = "") -> bool:
    """Whether the selected chip supports a TIK/DSL API (``tbe.common.platform.api_check_support``).

    ``"tik.<api>"``: TIK's own table decides if it lists ``<api>`` (keyed by short SoC
    version + core type; a row with no dtypes answers True only for ``dtype=""``, as in
    CANN); otherwise ``vec_xxx`` becomes ``vxxx`` (plus TIK's rename table, e.g.
    ``vec_reduce_add`` -> ``vcadd``, ``h_cast`` -> ``vconv``) and the ini intrinsic map
    decides (`intrinsic_check_support`). dtype strings: ``"float16"`` for same-type ops,
    concatenated short codes for mixed ones (``"s8s8s32"``, vconv ``"f322s32r"``).

    ``"te.lang.cce.<api>"`` / ``"tbe.dsl.<api>"``: CANN's DSL support table
    (``tbe_compat/data/dsl_support.py``). The name is the text after the last ``"."``;
    ``sum``, ``round_to`` and ``round_d`` are checked as ``reduce_sum``, ``clip`` and
    ``round_half_up``. The row is the chip's (keyed by short SoC version; Hi3796CV300ES/CS
    and SD3403 share ``"smallhisi"``), else the ``"AllSoc"`` row; an unknown API, or no
    row at all, answers False; ``dtype=""`` answers True whenever a row exists (even one
    listing no dtype). The core type plays no part. Any other prefix answers False.
    """
    api = "api_check_support"
    _expect_str(intrinsic, "intrinsic", api)
    _expect_str(dtype, "dtype", api)
    if intrinsic.startswith("tik."):
        return _tik_api_check_support(intrinsic, dtype)
    if intrinsic.startswith(("te.lang.cce.", "tbe.dsl.")):
        return _dsl_api_check_support(intrinsic, dtype)
    return False


# --------------------------------------------------------------------------------------
# Small helpers real scripts call
# --------------------------------------------------------------------------------------


def get_bit_len(dtype: str) -> int:
    """Bits of a dtype name (``"float16"`` -> 16, ``"int8"`` -> 8). ``"bool"`` counts as
    16 bits, as in CANN's DSL helper (bool data is processed as float16)."""
    if not isinstance(dtype, str):
        raise IllegalOperand(f"dtype must be a str, got {type(dtype).__name__}", op="get_bit_len", operand="dtype",
                             value=dtype, hint="pass the dtype name as a str, e.g. \"float16\"")
    if dtype == "bool":
        return 16
    match = re.fullmatch(r"[A-Za-z_]*(\d+)", dtype)
    if match is None:
        raise UnknownName(f"get bits of dtype {dtype!r} failed: no bit width in the name", op="get_bit_len",
                          operand="dtype", value=dtype, hint="use names such as float16, int8, uint32, bfloat16")
    return int(match.group(1))


def get_align_factor(dtype: str) -> tuple:
    """(elements per 32-byte block, bytes per element), as CANN's ``get_align_factor``."""
    if dtype in ("int8", "uint8"):
        return 32, 1
    if dtype in ("float16", "int16", "uint16"):
        return 16, 2
    return 8, 4


def get_block_size() -> int:
    """Bytes per UB block of the selected chip (``get_soc_spec("ubblock_size")``)."""
    return get_soc_spec(UB_BLOCK_SIZE)


def get_cube_mkn(dtype: str) -> list:
    """Cube fractal [M, K, N] for an input dtype."""
    if dtype not in CUBE_MKN:
        raise UnknownName(f"no cube MKN for dtype {dtype!r}", op="get_cube_mkn", operand="dtype", value=dtype,
                          limit="one of " + ", ".join(CUBE_MKN),
                          hint="pass a cube input dtype: one of " + ", ".join(CUBE_MKN))
    return list(CUBE_MKN[dtype]["mac"])


_BUFFER_KEYS = {"Unified_Buffer": UB_SIZE, "L1_Buffer": L1_SIZE, "L0A_Buffer": L0A_SIZE, "L0B_Buffer": L0B_SIZE,
                "L0C_Buffer": L0C_SIZE, "L2_Buffer": L2_SIZE, "SMASK_Buffer": SMASK_SIZE}


def getValue(key: str):  # noqa: N802 (CANN's name)
    """Legacy product parameter look-up (``cce_conf.getValue``): ``"Unified_Buffer"``,
    ``"L1_Buffer"`` ... (bytes), ``"Device_core_num"``, ``"Compiler_arch"``,
    ``"Compiler_aicpu_support_os"``, ``"Intrinsic_<name>"`` (the ini dtype string)."""
    api = "CceProductParams.getParams"
    _expect_str(key, "key", api)
    if "Buffer" in key:
        if key not in _BUFFER_KEYS:
            raise UnknownPlatformName(f"Unsupported buffer name: {key.split('_Buffer')[0]}", op=api, operand="key",
                                      value=key, limit="one of " + ", ".join(_BUFFER_KEYS),
                                      hint="pass one of the buffer keys " + ", ".join(_BUFFER_KEYS))
        return get_soc_spec(_BUFFER_KEYS[key])
    if "Compiler" in key:
        if key not in (COMPILER_ARCH, COMPILER_AICPU_SUPPORT_OS):
            raise UnknownPlatformName(f"Unsupported compiler param: {key.split('Compiler_')[-1]}", op=api,
                                      operand="key", value=key,
                                      limit=f"one of {COMPILER_ARCH}, {COMPILER_AICPU_SUPPORT_OS}",
                                      hint=f"pass {COMPILER_ARCH!r} or {COMPILER_AICPU_SUPPORT_OS!r}")
        return get_soc_spec(key)
    if "Intrinsic" in key:
        name = key.split("Intrinsic_")[-1]
        table = current_soc().intrinsic_map()
        if table is None:
            raise PlatformDataMissing(f"no public intrinsic table for {current_soc().soc_version}", op=api,
                                      operand="key", value=key,
                                      hint="use platform.api_check_support / get_soc_spec on this chip, or select a "
                                           "chip with a public intrinsic table")
        if name not in table:
            raise UnknownPlatformName(f"Unsupported intrinsic: {name}", op=api, operand="key", value=key,
                                      hint="check the name with tbe_platform.api_check_support(\"tik.<api>\", dtype) "
                                           "instead")
        return table[name]
    if "Device" in key:
        if key != "Device_core_num":
            raise UnknownPlatformName(f"Unsupported device param: {key.split('Device_')[-1]}", op=api, operand="key",
                                      value=key, limit="Device_core_num", hint="pass \"Device_core_num\"")
        return get_soc_spec(CORE_NUM)
    if "Sid" in key:
        raise PlatformDataMissing(f"{key}: stream-id parameters are not modelled", op=api, operand="key", value=key,
                                  hint="drop the Sid_* query: stream ids do not affect the simulated results")
    return None


class CceProductParams:
    """Legacy product-parameter singleton (``te.platform.cce_conf.CceProductParams``).

    ``cce_product`` is set by `te_set_version` (``"1910"`` mini, ``"1980"`` cloud,
    ``"ng1dc"`` 310P, ...); ``getParams`` answers for the selected chip (see `getValue`).
    """

    cce_product = None
    build_options: dict = {}
    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def getParams(self, key):  # noqa: N802 (CANN's name)
        value = getValue(key)
        return value == "true" if key == COMPILER_AICPU_SUPPORT_OS else value

    def get_product_version(self):
        return self.cce_product

    def is_mini_version(self) -> bool:
        return self.cce_product == "1910"

    def is_cloud_version(self) -> bool:
        return self.cce_product == "1980"

    def is_lhisi_version(self) -> bool:
        return self.cce_product == "smallhisi"

    def is_ng1_version(self) -> bool:
        return self.cce_product in ("ng1dc", "ng1mdc", "ng1pg2")

    def is_1951_version(self) -> bool:
        """CANN 20.x's name of `is_ng1_version` (its products were "1951dc", "1951mdc", "1951pg2")."""
        return self.is_ng1_version()

    def set_build_option(self, key, value) -> None:
        self.build_options[key] = value

    def get_build_option(self, key):
        return self.build_options.get(key)


# --------------------------------------------------------------------------------------
# tik.Dprofile
# --------------------------------------------------------------------------------------

#: Dprofile (arch, version) pairs whose core type is VectorCore (all others: AiCore).
DPROFILE_VECTOR_CORE = (("v200", "vec"), ("v210", "aiv"), ("v300", "aiv"))

#: ``Dprofile.get_product_name()``: (short SoC version, core type) -> TIK product name. TIK
#: answers from its AI_CORE_VERSION_MAP_TO_PRODUCT (Ascend310 AiCore "mini", Ascend910 AiCore
#: "cloud", v200 AI core "aic", Hi3796CV300ES "hisi-es", v200 vector core "vec"; tik_conf_.py /
#: tik_params.py); kernels branch on it (``== "cloud"``, ``== "hisi-es"``). The other chips answer
#: the version name of the Dprofile pair that selects them (``Dprofile(arch, version)`` ->
#: ``version``), and chips no pair selects (910B, 910_93, 310B AI core) "aic" / "aiv" like the v210
#: and v300 pairs.
PRODUCT_NAMES = {("Ascend310", AIC): "mini", ("Ascend910", AIC): "cloud",
                 ("Hi3796CV300ES", AIC): "hisi-es", ("Hi3796CV300CS", AIC): "hisi-cs", ("SD3403", AIC): "sd3403",
                 ("Ascend310P", AIC): "aic", ("Ascend610", AIC): "aic", ("Ascend310P", AIV): "vec",
                 ("Ascend610", AIV): "vec"}
_PRODUCT_NAME_DEFAULT = {AIC: "aic", AIV: "aiv"}


def product_name(soc: Optional["SocState"] = None) -> str:
    """TIK's product name of ``soc`` (default: the current chip), see `PRODUCT_NAMES`."""
    soc = soc or current_soc()
    return PRODUCT_NAMES.get((soc.short_soc_version, soc.core_type), _PRODUCT_NAME_DEFAULT[soc.core_type])


class Dprofile:
    """Legacy ``tik.Dprofile(ai_core_arch, ai_core_version)``.

    With both arguments it selects the chip, like `set_current_compile_soc_info`:
    ("v100","mini") Ascend310, ("v100","cloud") Ascend910A, ("v200","aic") Ascend310P1,
    ("v200","hisi-es"/"hisi-cs") Hi3796CV300ES/CS, ("v200","sd3403"/"hisi-sd3403") SD3403,
    ("v200","vec") Ascend610 VectorCore, ("v210","aic"/"aiv") BS9SX1AA AiCore/VectorCore,
    ("v300","aiv") Ascend310B1 VectorCore. Without arguments (or with only one, with a
    `DprofileIgnoredWarning`: `DPROFILE_LONE_ARGUMENT_SELECTS_NOTHING`) it just reads the current
    chip. The getters are static: ``tik.Dprofile.get_aicore_num()`` works on the class,
    and every getter answers for the chip selected *when it is called*.
    """

    def __init__(self, ai_core_arch=None, ai_core_version=None, ddk_version=None):
        self.ai_core_arch = ai_core_arch
        self.ai_core_version = ai_core_version
        self.ddk_version = ddk_version
        if ai_core_arch is None and ai_core_version is None:
            return
        if ai_core_arch is None or ai_core_version is None:
            if DPROFILE_LONE_ARGUMENT_SELECTS_NOTHING:
                given = ai_core_arch if ai_core_version is None else ai_core_version
                warnings.warn(f"tik.Dprofile({given!r}) with one argument selects no chip, as in TIK (the "
                              f"framework's chip stays): running on {current_soc().soc_version}; pass both "
                              "arguments, e.g. tik.Dprofile('v100', 'cloud'), or call "
                              "set_current_compile_soc_info first", DprofileIgnoredWarning, stacklevel=2)
                return
            raise PlatformError("Dprofile needs both ai_core_arch and ai_core_version (or neither)",
                                op="tik.Dprofile", operand="ai_core_version" if ai_core_version is None
                                else "ai_core_arch", value=(ai_core_arch, ai_core_version),
                                hint="use tik.Dprofile('v100', 'mini') or tik.Dprofile()")
        try:
            profile = dprofile_target(ai_core_arch, ai_core_version)
        except UnknownName as exc:
            raise UnknownPlatformName(exc.message, op="tik.Dprofile", operand="(ai_core_arch, ai_core_version)",
                                      value=(ai_core_arch, ai_core_version), limit=exc.limit, hint=exc.hint) from None
        pair = (str(ai_core_arch).lower(), str(ai_core_version).lower())
        set_current_compile_soc_info(profile.name, AIV if pair in DPROFILE_VECTOR_CORE else AIC)

    @staticmethod
    def get_aicore_num() -> int:
        return get_soc_spec(CORE_NUM)

    @staticmethod
    def get_l1_buffer_size() -> int:
        return get_soc_spec(L1_SIZE)

    @staticmethod
    def get_l0a_buffer_size() -> int:
        return get_soc_spec(L0A_SIZE)

    @staticmethod
    def get_l0b_buffer_size() -> int:
        return get_soc_spec(L0B_SIZE)

    @staticmethod
    def get_l0c_buffer_size() -> int:
        return get_soc_spec(L0C_SIZE)

    @staticmethod
    def get_unified_buffer_size() -> int:
        return get_soc_spec(UB_SIZE)

    @staticmethod
    def get_product_name() -> str:
        """TIK's product name of the selected chip (``"mini"`` on Ascend310, ``"cloud"`` on
        Ascend910, ... see `PRODUCT_NAMES`); the SoC version is ``get_soc_spec("SOC_VERSION")``."""
        return product_name()

    def __repr__(self) -> str:
        return f"Dprofile({self.ai_core_arch!r}, {self.ai_core_version!r}) -> {current_soc().soc_version}"


def profiling_soc(profiling=None) -> SocState:
    """The chip a ``tik.Tik(profiling)`` argument means: None, a `Dprofile` instance or the
    `Dprofile` class itself all mean "the current chip" (a Dprofile selected it when it
    was constructed). Anything else raises `IllegalOperand`."""
    if profiling is None or profiling is Dprofile or isinstance(profiling, Dprofile):
        return current_soc()
    raise IllegalOperand(f"profiling must be a tik.Dprofile or None, got {type(profiling).__name__}",
                         op="tik.Tik", operand="profiling", value=profiling,
                         hint="pass tik.Dprofile(...) or select the chip with set_current_compile_soc_info")


# CANN's ``impl.util.platform_adapter.tbe_platform`` (``PlatformApi``, this module here) carries the fusion
# manager: ``@tbe_platform.fusion_manager.register("op")`` decorates compute functions at import time. Not
# star-exported: CANN's ``tbe.common.platform`` has no such name, and ``te.platform.fusion_manager`` is the module.
from . import register as _register  # noqa: E402

fusion_manager = _register.fusion_manager

_IMPORTED = {"fusion_manager", "annotations", "re", "warnings", "dataclass", "Any", "Optional", "IllegalOperand", "UnknownName",
             "UnsupportedOp", "ChipProfile", "dprofile_target", "get_target", "soc_v100", "soc_v200", "soc_v220",
             "soc_v300", "dsl_support", "H_API_MAP", "H_DATA_MOVE_DTYPES", "ONLY_TIK_API_MAP",
             "TRANS_TIK_API_TO_INSTR_MAP"}
#: public names (star-exported by the legacy alias modules); keeps CANN's ``_AIC_ENGINE``/``_VEC_ENGINE``.
__all__ = sorted(n for n in dir() if n not in _IMPORTED and (not n.startswith("_") or n in ("_AIC_ENGINE",
                                                                                               "_VEC_ENGINE")))
