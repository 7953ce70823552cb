"""Plain-Python data tables behind `tbe_compat.platform` (no logic).

* ``soc_*.py``: per-SoC platform tables in the layout of CANN's
  ``data/platform_config/<SoC>.ini`` files: the sections ``version``, ``SoCInfo``,
  ``AICoreSpec``, ``AICoreMemoryRates``, ``CPUCache``, ``VectorCoreSpec`` (raw strings,
  exactly as the ini spells them) and the intrinsic dtype maps
  ``AICoreintrinsicDtypeMap`` / ``VectorCoreintrinsicDtypeMap`` (intrinsic name without
  the ``Intrinsic_`` prefix -> the ini's comma-separated dtype string).
* ``tik_api_map.py``: TIK's own API support table (``tbe/tik/common/tik_api_map.py``)
  and its API-name -> instruction-name translation table.
* ``dsl_support.py``: CANN's DSL API support table (``DSL_CHECK_SUPPORT_MAP``), which
  answers ``api_check_support("te.lang.cce.<api>" / "tbe.dsl.<api>", dtype)``.

Every table names its source in ``SOURCE``; `migration_guide/platform.md` lists them
and the few documented gaps (SoCs whose ini is not in the public CANN release).
"""
