"""The older ``te.platform`` namespace (``cce_conf``, ``cce_params``, ``cce_intrin``).

Everything answers from `tbe_compat.platform`. As in CANN, the ``te.platform``
spellings of ``get_soc_spec``, ``api_check_support``, ``intrinsic_check_support`` and
``te_set_version`` emit a deprecation notice (`TbeDeprecationWarning`, once per call
site) pointing at the ``tbe.common.platform`` names.
"""
from __future__ import annotations

from . import platform as _platform
from .platform import *  # noqa: F401,F403  (constants, scopes, SoC names, CceProductParams, te_set_version)
from .platform import warn_deprecated as _warn


def get_soc_spec(key):
    """``te.platform.get_soc_spec``: `tbe_compat.platform.get_soc_spec`, with CANN's notice."""
    _warn("te.platform.get_soc_spec", "tbe.common.platform.get_soc_spec")
    return _platform.get_soc_spec(key)


def api_check_support(intrinsic, dtype=""):
    """``te.platform.api_check_support``: `tbe_compat.platform.api_check_support`, with CANN's notice."""
    _warn("te.platform.api_check_support", "tbe.common.platform.api_check_support")
    return _platform.api_check_support(intrinsic, dtype)


def intrinsic_check_support(intrinsic, dtype=""):
    """``te.platform.intrinsic_check_support``, with CANN's notice."""
    _warn("te.platform.intrinsic_check_support", "tbe.common.platform.intrinsic_check_support")
    return _platform.intrinsic_check_support(intrinsic, dtype)


def te_set_l2_mode(l2_mode) -> None:
    """``te.platform.cce_conf.te_set_l2_mode``: records the L2 mode (an int) in
    ``CceProductParams().build_options["l2_mode"]``; it has no effect on simulation."""
    _warn("te.platform.cce_conf.te_set_l2_mode", "tbe.common.buildcfg.build_config(l2_mode=...)")
    try:
        mode = int(l2_mode)
    except (TypeError, ValueError):
        raise _platform.PlatformError(f"l2_mode must be an int, got {l2_mode!r}", op="te_set_l2_mode",
                                      operand="l2_mode", value=l2_mode, limit="an int such as 0 or 1",
                                      hint="pass an int l2_mode such as 0 or 1") from None
    _platform.CceProductParams().set_build_option("l2_mode", mode)


#: ``cce_conf`` product-version strings (CceProductParams.cce_product values).
VERSION_CLOUD = "1980"
VERSION_MINI = "1910"
VERSION_MINI_L = "Ascend310B"
VERSION_MINI_NG1 = "ng1dc"
VERSION_MINI_NG1M = "ng1mdc"
VERSION_MINI_NG1PG2 = "ng1pg2"
VERSION_SHISI = "smallhisi"
#: CANN 2020's names of the same three products ("1951dc", "1951mdc", "1951pg2" then). Named choice: they
#: carry the values this module's `get_product_version` answers, so ``get_product_version() ==
#: VERSION_MINI_1951`` holds on the chip it held on in CANN 2020 (Ascend710, now Ascend310P).
VERSION_MINI_1951 = VERSION_MINI_NG1
VERSION_MINI_1951M = VERSION_MINI_NG1M
VERSION_MINI_1951PG2 = VERSION_MINI_NG1PG2

_SHORT_TO_PRODUCT = {"Ascend310": VERSION_MINI, "Ascend910": VERSION_CLOUD, "Hi3796CV300ES": VERSION_SHISI,
                     "Hi3796CV300CS": VERSION_SHISI, "SD3403": VERSION_SHISI, "Ascend310P": VERSION_MINI_NG1,
                     "Ascend610": VERSION_MINI_NG1M, "BS9SX1A": VERSION_MINI_NG1PG2, "Ascend310B": VERSION_MINI_L}


def get_product_version() -> str:
    """``cce_conf.get_product_version``: the product version of the selected chip."""
    short = _platform.current_soc().short_soc_version
    if short not in _SHORT_TO_PRODUCT:
        raise _platform.PlatformError(f"no cce_conf product version for {short}", op="get_product_version",
                                      operand="soc_version", value=short, limit=sorted(_SHORT_TO_PRODUCT),
                                      hint="pass a soc_version whose family is listed")
    return _SHORT_TO_PRODUCT[short]


def is_mini_version() -> bool:
    return get_product_version() == VERSION_MINI


def is_cloud_version() -> bool:
    return get_product_version() == VERSION_CLOUD


def is_lhisi_version() -> bool:
    return get_product_version() == VERSION_SHISI


def is_mini_or_lhisi_version() -> bool:
    return get_product_version() in (VERSION_MINI, VERSION_SHISI)


def is_v200_version() -> bool:
    return get_product_version() in (VERSION_MINI_NG1, VERSION_MINI_NG1M)


def is_v200_version_new() -> bool:
    return _platform.current_soc().short_soc_version in ("Ascend310P", "Ascend610", "BS9SX1A", "Ascend610B",
                                                         "Hi3796CV300CS", "SD3403")


def is_mini_l_version() -> bool:
    return get_product_version() == VERSION_MINI_L


def is_lhisi_cs_version() -> bool:
    """CANN 2020's ``cce_conf.is_lhisi_cs_version``: the selected chip is Hi3796CV300CS."""
    return _platform.current_soc().short_soc_version == "Hi3796CV300CS"


def get_product():
    """CANN 2020's ``cce_conf.get_product``: ``CceProductParams().cce_product`` (None until
    `te_set_version` sets it)."""
    return _platform.CceProductParams().cce_product


def set_status_check(bool_status) -> None:
    """CANN 2020's ``cce_conf.set_status_check``: asks the compiler to add overflow-status checks.
    Recorded in ``CceProductParams().build_options["status_check"]``; the simulator has no such
    code to add. Anything but a bool is rejected, as in CANN."""
    if not isinstance(bool_status, bool):
        raise _platform.PlatformError(f"set_status_check takes a bool, got {bool_status!r}", op="set_status_check",
                                      operand="bool_status", value=bool_status, limit="True or False",
                                      hint="pass True or False")
    _platform.CceProductParams().set_build_option("status_check", bool_status)


__all__ = sorted(set(_platform.__all__) | {
    "get_soc_spec", "api_check_support", "intrinsic_check_support", "te_set_l2_mode", "VERSION_CLOUD", "VERSION_MINI",
    "VERSION_MINI_L", "VERSION_MINI_NG1", "VERSION_MINI_NG1M", "VERSION_MINI_NG1PG2", "VERSION_SHISI",
    "get_product_version", "is_mini_version", "is_cloud_version", "is_lhisi_version", "is_mini_or_lhisi_version",
    "is_v200_version", "is_v200_version_new", "is_mini_l_version", "VERSION_MINI_1951", "VERSION_MINI_1951M",
    "VERSION_MINI_1951PG2", "is_lhisi_cs_version", "get_product", "set_status_check"})
