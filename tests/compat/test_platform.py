"""Chip selection in every legacy style, get_soc_spec per chip, capability probes,
Dprofile and the legacy product-parameter helpers (tbe_compat.platform)."""
import subprocess
import sys
import warnings

import pytest

from pto_core.errors import IllegalOperand, PtoError
from pto_core.targets import get_target
from tbe_compat import platform as P
from tbe_compat.platform import (Dprofile, PlatformDataMissing, PlatformError, TbeDeprecationWarning,
                                 api_check_support, current_soc, get_soc_spec, intrinsic_check_support,
                                 set_current_compile_soc_info)

KiB = 1024
MiB = 1024 * KiB

# Values read off the CANN 8.1.RC1 platform inis (and tik_api.md §1.3 for the SoCs without
# a public ini), typed independently of tbe_compat/data. AiCore view.
EXPECTED = {
    "Ascend310": dict(short="Ascend310", core=2, vec=0, ub=253952, l1=MiB, l0a=64 * KiB, l0c=256 * KiB, l2=8 * MiB,
                      types=["AICore"], arch="dav-m100"),
    "Ascend910A": dict(short="Ascend910", core=32, vec=0, ub=256 * KiB, l1=MiB, l0a=64 * KiB, l0c=256 * KiB,
                       l2=32 * MiB, types=["AICore"], arch="dav-c100", smask=0, unzip=[4, 64, 2, 1]),
    "Ascend310P1": dict(short="Ascend310P", core=10, vec=8, ub=256 * KiB, l1=MiB, l0a=64 * KiB, l0c=256 * KiB,
                        l2=16 * MiB, types=["AICore", "VectorCore"], arch="dav-m200", smask=256, unzip=[4, 64, 2, 1]),
    "Ascend310P3": dict(short="Ascend310P", core=8, vec=7, ub=256 * KiB, l1=MiB, l0a=64 * KiB, l0c=256 * KiB,
                        l2=16 * MiB, types=["AICore", "VectorCore"], arch="dav-m200", smask=256, unzip=[4, 64, 2, 1]),
    "Ascend610": dict(short="Ascend610", core=10, vec=8, ub=256 * KiB, l1=MiB, l0a=64 * KiB, l0c=256 * KiB,
                      l2=16 * MiB, types=["AICore", "VectorCore"], arch="dav-m200", smask=-1, unzip=[4, 64, 2, 1]),
    "BS9SX1AA": dict(short="BS9SX1A", core=10, vec=8, ub=256 * KiB, l1=MiB, l0a=64 * KiB, l0c=256 * KiB,
                     l2=16 * MiB, types=["AICore", "VectorCore"], arch="dav-m201", smask=-1, unzip=[4, 32, 2, 1]),
    "Ascend910B1": dict(short="Ascend910B", core=24, vec=48, ub=192 * KiB, l1=512 * KiB, l0a=64 * KiB,
                        l0c=128 * KiB, l2=192 * MiB, types=["CubeCore", "VectorCore"], arch="dav-c220-cube",
                        smask=0, unzip=[4, 64, 2, 1], fb=7 * KiB, bt=KiB),
    "Ascend910B2": dict(short="Ascend910B", core=24, vec=48, ub=192 * KiB, l1=512 * KiB, l0a=64 * KiB,
                        l0c=128 * KiB, l2=192 * MiB, types=["CubeCore", "VectorCore"], arch="dav-c220-cube",
                        smask=0, unzip=[4, 64, 2, 1], fb=7 * KiB, bt=KiB),
    "Ascend910B3": dict(short="Ascend910B", core=20, vec=40, ub=192 * KiB, l1=512 * KiB, l0a=64 * KiB,
                        l0c=128 * KiB, l2=192 * MiB, types=["CubeCore", "VectorCore"], arch="dav-c220-cube",
                        smask=0, unzip=[4, 64, 2, 1], fb=7 * KiB, bt=KiB),
    "Ascend910B4": dict(short="Ascend910B", core=20, vec=40, ub=192 * KiB, l1=512 * KiB, l0a=64 * KiB,
                        l0c=128 * KiB, l2=96 * MiB, types=["CubeCore", "VectorCore"], arch="dav-c220-cube",
                        smask=0, unzip=[4, 64, 2, 1], fb=7 * KiB, bt=KiB),
    "Ascend310B1": dict(short="Ascend310B", core=1, vec=1, ub=253952, l1=MiB, l0a=64 * KiB, l0c=128 * KiB,
                        l2=4 * MiB, types=["AICore", "VectorCore", "CubeCore"], arch="dav-m300", smask=0,
                        unzip=[1, 32, 4, 1], fb=6 * KiB, bt=KiB),
    "Hi3796CV300ES": dict(short="Hi3796CV300ES", core=1, vec=0, ub=192 * KiB, l1=512 * KiB, l0a=32 * KiB,
                          l0c=128 * KiB, types=["AICore"]),
    "Hi3796CV300CS": dict(short="Hi3796CV300CS", core=1, vec=0, ub=192 * KiB, l1=512 * KiB, l0a=32 * KiB,
                          l0c=128 * KiB, types=["AICore"]),
    "SD3403": dict(short="SD3403", core=1, vec=0, ub=192 * KiB, l1=MiB, l0a=32 * KiB, l0c=128 * KiB,
                   types=["AICore"]),
}
SOCS = sorted(EXPECTED)
VECTOR_SOCS = [s for s in SOCS if "VectorCore" in EXPECTED[s]["types"]]


def test_every_modelled_soc_has_expectations():
    assert sorted(P.SOC_TABLES) == SOCS


# ---------------------------------------------------------------------------- selection


def test_default_chip_is_ascend310_aicore():
    state = current_soc()
    assert (state.soc_version, state.core_type, state.aicore_num) == ("Ascend310", "AiCore", None)
    assert state.profile is get_target("Ascend310")
    assert get_soc_spec("SOC_VERSION") == "Ascend310"
    assert Dprofile.get_aicore_num() == 2


def test_import_time_queries_answer_for_the_default_chip():
    code = ("import tbe_compat.aliases; tbe_compat.aliases.install()\n"
            "import tbe.common.platform as tbe_platform\n"
            "UB = tbe_platform.get_soc_spec(tbe_platform.UB_SIZE)\n"
            "CORES = tbe_platform.platform_info.get_soc_spec(tbe_platform.CORE_NUM)\n"
            "print(UB, CORES)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.stdout.split() == ["253952", "2"]


def test_set_current_compile_soc_info_selects_and_reports():
    assert set_current_compile_soc_info("Ascend910B1") == "success"
    assert (current_soc().soc_version, current_soc().core_type) == ("Ascend910B1", "AiCore")
    assert get_soc_spec("CORE_NUM") == 24
    set_current_compile_soc_info("Ascend910B1", "VectorCore")
    assert get_soc_spec("CORE_NUM") == 48
    assert get_soc_spec("AICORE_TYPE") == "VectorCore"


def test_ascend910_selects_ascend910a():
    set_current_compile_soc_info("Ascend910")
    assert get_soc_spec("SOC_VERSION") == "Ascend910A"
    assert get_soc_spec("SHORT_SOC_VERSION") == "Ascend910"
    assert current_soc().profile is get_target("Ascend910A")


def test_cann20_soc_version_naming_spells_ascend910a_as_ascend910():
    """2019-2020 kernels test get_soc_spec("SOC_VERSION") in ("Ascend910", ...) (CANN 20.x names)."""
    set_current_compile_soc_info("Ascend910")
    try:
        P.set_soc_version_naming("cann20")
        assert get_soc_spec("SOC_VERSION") == "Ascend910" and get_soc_spec("FULL_SOC_VERSION") == "Ascend910"
        assert get_soc_spec("SHORT_SOC_VERSION") == "Ascend910"
        assert current_soc().soc_version == "Ascend910A"            # the chip itself is unchanged
        set_current_compile_soc_info("Ascend910B1")
        assert get_soc_spec("SOC_VERSION") == "Ascend910B1"         # other chips keep their names
        with pytest.raises(PlatformError, match="'cann21' is not one of current, cann20"):
            P.set_soc_version_naming("cann21")
        assert P.soc_version_naming() == "cann20"                    # a bad value changes nothing
    finally:
        P.set_soc_version_naming("current")
    set_current_compile_soc_info("Ascend910")
    assert get_soc_spec("SOC_VERSION") == "Ascend910A"


@pytest.mark.parametrize("name, part, aic, aiv", [("Ascend710", "Ascend310P3", 8, 7),
                                                  ("Ascend710Pro", "Ascend310P1", 10, 8),
                                                  ("Ascend615", "BS9SX1AA", 10, 8)])
def test_pre_release_names_select_their_part_and_report_the_name(name, part, aic, aiv):
    """CANN 20.x SOC_VERSION_MAP: Ascend710 8/7 and Ascend710Pro 10/8 (1951dc), Ascend615 10/8 (1951pg2)."""
    set_current_compile_soc_info(name)
    assert current_soc().soc_version == part and current_soc().profile is get_target(part)
    assert get_soc_spec("SOC_VERSION") == name and get_soc_spec("FULL_SOC_VERSION") == name
    assert get_soc_spec("SHORT_SOC_VERSION") == EXPECTED[part]["short"]     # the modelled part's
    assert get_soc_spec("CORE_NUM") == aic
    set_current_compile_soc_info(name, "VectorCore")
    assert get_soc_spec("CORE_NUM") == aiv and get_soc_spec("SOC_VERSION") == name
    set_current_compile_soc_info(part)
    assert get_soc_spec("SOC_VERSION") == part                               # the released name reports itself
    assert name in P.soc_names()


def test_te_set_version_with_a_pre_release_name_is_a_1951_product():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TbeDeprecationWarning)
        params = P.te_set_version("Ascend710")
    assert params.is_1951_version() and params.is_ng1_version() and not params.is_cloud_version()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TbeDeprecationWarning)
        assert not P.te_set_version("Ascend910").is_1951_version()


def test_cann20_naming_reports_the_pre_release_names():
    set_current_compile_soc_info("Ascend310P3")
    try:
        P.set_soc_version_naming("cann20")
        assert get_soc_spec("SOC_VERSION") == "Ascend710"
        set_current_compile_soc_info("Ascend610")
        assert get_soc_spec("SOC_VERSION") == "Ascend610"                    # a 20.x name already
    finally:
        P.set_soc_version_naming("current")


@pytest.mark.parametrize("name", ["Ascend920A", "Ascend910Lite"])
def test_unmapped_pre_release_names_say_what_to_do(name):
    set_current_compile_soc_info("Ascend310")
    with pytest.raises(PlatformError, match=f"'{name}' is a pre-release CANN name that matches no modelled part"):
        set_current_compile_soc_info(name)
    assert current_soc().soc_version == "Ascend310"


@pytest.mark.parametrize("value, expected", [("cann20", "Ascend910"), ("current", "Ascend910A"),
                                             ("bogus", "TBE_COMPAT_SOC_VERSION_NAMING='bogus'")])
def test_soc_version_naming_from_the_environment(value, expected):
    code = ("import tbe_compat.aliases; tbe_compat.aliases.install()\n"
            "import tbe.common.platform as p\n"
            "p.set_current_compile_soc_info('Ascend910')\n"
            "try:\n    print(p.get_soc_spec('SOC_VERSION'))\n"
            "except RuntimeError as e:\n    print(e)\n")
    env = dict(__import__("os").environ, TBE_COMPAT_SOC_VERSION_NAMING=value)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert expected in out.stdout


def test_selection_after_a_dprofile_is_seen_by_its_getters():
    profile = Dprofile("v100", "mini")
    assert profile.get_aicore_num() == 2
    set_current_compile_soc_info("Ascend310P3")
    assert profile.get_aicore_num() == 8          # answers lazily for the current chip
    assert profile.get_unified_buffer_size() == 256 * KiB


def test_te_set_version_warns_and_selects():
    with pytest.warns(TbeDeprecationWarning, match="te_set_version"):
        params = P.te_set_version("Ascend910", "AiCore")
    assert params is P.CceProductParams()
    assert params.get_product_version() == "1980" and params.is_cloud_version()
    assert get_soc_spec("SOC_VERSION") == "Ascend910A"
    with pytest.warns(TbeDeprecationWarning):
        P.te_set_version("BS9SX1AA", "VectorCore")
    assert params.cce_product == "ng1pg2VectorCore"
    with pytest.warns(TbeDeprecationWarning):
        P.te_set_version("Ascend310")
    assert params.is_mini_version()


def test_aicore_num_overrides_core_num():
    set_current_compile_soc_info("Ascend910B1", aicore_num=8)
    assert get_soc_spec("CORE_NUM") == 8
    assert get_soc_spec("MAX_CORE_NUM") == "8"
    assert get_soc_spec("ai_core_cnt") == "8"
    set_current_compile_soc_info("Ascend910B1", aicore_num="4")
    assert get_soc_spec("CORE_NUM") == 4
    set_current_compile_soc_info("Ascend910B1", aicore_num=0)       # 0 means "all cores"
    assert get_soc_spec("CORE_NUM") == 24


def test_aicore_num_above_the_core_count_is_rejected_except_on_310p():
    with pytest.raises(PlatformError, match=r"aicore_num 25 exceeds the 24 AiCore cores of Ascend910B1") as info:
        set_current_compile_soc_info("Ascend910B1", aicore_num=25)
    assert info.value.limit == "[1, 24]"
    set_current_compile_soc_info("Ascend310P3", aicore_num=16)       # CANN skips the check on 310P parts
    assert get_soc_spec("CORE_NUM") == 16


@pytest.mark.parametrize("bad", [-1, 2.5, "x", True])
def test_bad_aicore_num(bad):
    with pytest.raises(PlatformError, match="aicore_num"):
        set_current_compile_soc_info("Ascend310", aicore_num=bad)


@pytest.mark.parametrize("value, expected", [(True, True), ("false", False), ("TRUE", True), (None, None)])
def test_l1_fusion_values(value, expected):
    set_current_compile_soc_info("Ascend310", l1_fusion=value)
    assert current_soc().l1_fusion is expected


def test_bad_l1_fusion():
    with pytest.raises(PlatformError, match="l1_fusion 'maybe'"):
        set_current_compile_soc_info("Ascend310", l1_fusion="maybe")


def test_unknown_soc_names_the_value_and_the_valid_ones():
    with pytest.raises(PlatformError) as info:
        set_current_compile_soc_info("Ascend999")
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, PtoError)
    assert "'Ascend999'" in str(err) and "Ascend310" in str(err) and "Ascend910B1" in str(err)
    assert current_soc().soc_version == "Ascend310"                 # previous selection kept


@pytest.mark.parametrize("name, hint", [("ascend310", "case-sensitive: use 'Ascend310'"),
                                        ("Ascend310P", "short SoC version"),
                                        ("Ascend910_9391", "does not model")])
def test_soc_name_hints(name, hint):
    with pytest.raises(PlatformError, match=hint):
        set_current_compile_soc_info(name)


def test_non_string_soc():
    with pytest.raises(PlatformError, match="soc_version must be a str"):
        set_current_compile_soc_info(310)


def test_vector_core_only_where_it_exists():
    with pytest.raises(PlatformError, match="Ascend310 has no VectorCore") as info:
        set_current_compile_soc_info("Ascend310", "VectorCore")
    assert "VectorCore exists on" in str(info.value) and "Ascend910B1" in str(info.value)
    with pytest.raises(PlatformError, match="core type 'CubeCore'"):
        set_current_compile_soc_info("Ascend910B1", "CubeCore")
    for soc in VECTOR_SOCS:
        set_current_compile_soc_info(soc, "VectorCore")
        assert current_soc().core_type == "VectorCore"


# ---------------------------------------------------------------------------- get_soc_spec


@pytest.mark.parametrize("soc", SOCS)
def test_get_soc_spec_aicore_values(soc):
    exp = EXPECTED[soc]
    set_current_compile_soc_info(soc)
    assert get_soc_spec("SOC_VERSION") == get_soc_spec("FULL_SOC_VERSION") == soc
    assert get_soc_spec("SHORT_SOC_VERSION") == exp["short"]
    assert get_soc_spec("AICORE_TYPE") == "AiCore"
    assert get_soc_spec("CORE_NUM") == exp["core"]
    assert get_soc_spec("MAX_CORE_NUM") == str(exp["core"])
    assert get_soc_spec("VECTOR_CORE_CNT") == str(exp["vec"])
    assert get_soc_spec("UB_SIZE") == exp["ub"]
    assert get_soc_spec("L1_SIZE") == exp["l1"]
    assert get_soc_spec("L0A_SIZE") == get_soc_spec("L0B_SIZE") == exp["l0a"]
    assert get_soc_spec("L0C_SIZE") == exp["l0c"]
    assert get_soc_spec("CUBE_SIZE") == [16, 16, 16]
    assert get_soc_spec("ubblock_size") == 32
    assert get_soc_spec("CORE_TYPE_LIST") == exp["types"]
    assert get_soc_spec("L0A_LAYOUT_IS_zN") is False
    assert get_soc_spec("CUBE_VECTOR_SPLIT") == 0
    assert get_soc_spec("FB_SIZE") == exp.get("fb", 0)
    assert get_soc_spec("BT_SIZE") == exp.get("bt", 0)
    assert get_soc_spec("CUBE_CORE_CNT") == (str(exp["core"]) if exp["short"] == "Ascend910B" else "0")
    for key, field in (("L2_SIZE", "l2"), ("SMASK_SIZE", "smask"), ("UNZIP", "unzip"), ("Compiler_arch", "arch")):
        if field in exp:
            assert get_soc_spec(key) == exp[field], key
        else:
            with pytest.raises(PlatformDataMissing, match=f"public data for {soc} lacks"):
                get_soc_spec(key)


@pytest.mark.parametrize("soc", VECTOR_SOCS)
def test_get_soc_spec_vector_core_view(soc):
    exp = EXPECTED[soc]
    set_current_compile_soc_info(soc, "VectorCore")
    assert get_soc_spec("CORE_NUM") == exp["vec"]
    assert get_soc_spec("L2_SIZE") == exp["l2"] // 2
    assert get_soc_spec("L0A_SIZE") == get_soc_spec("L0B_SIZE") == get_soc_spec("L0C_SIZE") == 0
    assert get_soc_spec("SMASK_SIZE") == 0
    assert get_soc_spec("FB_SIZE") == get_soc_spec("BT_SIZE") == 0
    assert get_soc_spec("UB_SIZE") == exp["ub"]
    assert get_soc_spec("L1_SIZE") == (exp["l1"] if exp["short"] in ("BS9SX1A", "Ascend310B") else 0)
    assert get_soc_spec("Compiler_arch").endswith("vec") or exp["short"] == "Ascend310B"


@pytest.mark.parametrize("soc", SOCS)
def test_every_key_has_the_documented_type(soc):
    set_current_compile_soc_info(soc)
    int_keys = {"CORE_NUM", "UB_SIZE", "L2_SIZE", "L1_SIZE", "L0A_SIZE", "L0B_SIZE", "L0C_SIZE", "SMASK_SIZE",
                "VREG_SIZE", "PREG_SIZE", "WREG_SIZE", "WIDE_REG_WIDTH", "CUBE_VECTOR_SPLIT", "FB_SIZE", "FB0_SIZE",
                "FB1_SIZE", "FB2_SIZE", "FB3_SIZE", "BT_SIZE", "ubblock_size"}
    for key in P.SOC_SPEC_KEYS:
        try:
            value = get_soc_spec(key)
        except PlatformDataMissing:
            assert soc in P.PARTIAL_TABLE_SOCS, key
            continue
        if key in int_keys:
            assert type(value) is int, key
        elif key in ("CUBE_SIZE", "UNZIP"):
            assert isinstance(value, list) and all(type(v) is int for v in value), key
        elif key == "CORE_TYPE_LIST":
            assert isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif key == "L0A_LAYOUT_IS_zN":
            assert value is False
        else:
            assert isinstance(value, str), key


def test_register_widths_and_fixpipe_buffers():
    set_current_compile_soc_info("BS9SX1AA")
    assert (get_soc_spec("VREG_SIZE"), get_soc_spec("PREG_SIZE"), get_soc_spec("WIDE_REG_WIDTH")) == (256, 32, 768)
    set_current_compile_soc_info("Ascend310B1")
    assert [get_soc_spec(k) for k in ("FB0_SIZE", "FB1_SIZE", "FB2_SIZE", "FB3_SIZE")] == [2048, 1024, 1024, 2048]
    set_current_compile_soc_info("Ascend910B4")
    assert get_soc_spec("CUBE_FREQ") == "1500"
    assert get_soc_spec("VREG_SIZE") == 0


def test_raw_ini_keys():
    set_current_compile_soc_info("Ascend310P3")
    assert get_soc_spec("cube_freq") == "1060"
    assert get_soc_spec("Arch_type") == "1"
    assert get_soc_spec("l1_to_l0_a_rate") == "512"
    set_current_compile_soc_info("Ascend910B1")
    with pytest.raises(PlatformError, match="memory_type"):      # empty in the ini: CANN rejects it
        get_soc_spec("memory_type")
    with pytest.raises(PlatformError, match="has no 'pipev2_constraints'"):
        get_soc_spec("pipev2_constraints")


def test_unknown_key_names_the_key_and_the_valid_ones():
    with pytest.raises(PlatformError) as info:
        get_soc_spec("NOT_A_KEY")
    assert isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert "NOT_A_KEY" in text and "CORE_NUM" in text and "UB_SIZE" in text
    with pytest.raises(PlatformError, match="must be a str"):
        get_soc_spec(3)
    with pytest.raises(PlatformError, match="AREG_SIZE"):
        get_soc_spec("AREG_SIZE")


@pytest.mark.parametrize("soc", SOCS)
def test_targets_profiles_agree_with_the_platform_tables(soc):
    set_current_compile_soc_info(soc)
    prof = current_soc().profile
    assert prof.kind == "soc"
    assert prof.short_soc_version == get_soc_spec("SHORT_SOC_VERSION")
    assert prof.aic_cores == get_soc_spec("CORE_NUM")
    assert prof.aiv_cores == int(get_soc_spec("VECTOR_CORE_CNT"))
    for space, key in (("ub", "UB_SIZE"), ("l1", "L1_SIZE"), ("l0a", "L0A_SIZE"), ("l0b", "L0B_SIZE"),
                       ("l0c", "L0C_SIZE")):
        assert prof.capacity(space) == get_soc_spec(key), space
    if "l2" in EXPECTED[soc]:
        assert prof.l2_size == get_soc_spec("L2_SIZE")
    if "bt" in EXPECTED[soc]:
        assert prof.sizes.bt == get_soc_spec("BT_SIZE") and prof.sizes.fb == get_soc_spec("FB0_SIZE")


# ---------------------------------------------------------------------------- capability probes


@pytest.mark.parametrize("soc, expected", [("Ascend310", False), ("Ascend910A", True), ("Ascend310P1", True),
                                           ("Ascend310P3", True), ("Ascend610", True), ("BS9SX1AA", True),
                                           ("Ascend910B1", True), ("Ascend910B4", True), ("Ascend310B1", True)])
def test_vconv_f322s32r_per_chip(soc, expected):
    set_current_compile_soc_info(soc)
    assert api_check_support("tik.vconv", "f322s32r") is expected
    assert api_check_support("tik.vec_conv", "f322s32r") is expected


PROBES = [
    # (soc, core type, api, dtype, expected)
    ("Ascend310", "AiCore", "tik.vdiv", "float32", False),
    ("Ascend310", "AiCore", "tik.vdiv", "", False),
    ("Ascend310", "AiCore", "tik.vadd", "float16", True),
    ("Ascend310", "AiCore", "tik.vec_add", "int32", True),
    ("Ascend310", "AiCore", "tik.vec_add", "int16", False),
    ("Ascend310", "AiCore", "tik.vexp", "float32", False),
    ("Ascend310", "AiCore", "tik.vec_exp", "float16", True),
    ("Ascend310", "AiCore", "tik.vconv", "f162s32r", True),
    ("Ascend310", "AiCore", "tik.vconv", "s322f32", False),
    ("Ascend310", "AiCore", "tik.vec_cmpv_lt", "float16", True),
    ("Ascend310", "AiCore", "tik.vec_cmpv_lt", "float32", False),
    ("Ascend310", "AiCore", "tik.vec_reduce_add", "float32", True),     # rename table: vcadd
    ("Ascend310", "AiCore", "tik.vec_reduce_max", "float32", False),    # vcmax is f16 only
    ("Ascend310", "AiCore", "tik.mmad", "f16f16f32", True),             # TIK's own table
    ("Ascend310", "AiCore", "tik.mmad", "f32f32f32", False),
    ("Ascend310", "AiCore", "tik.vector_dup", "float16", True),
    ("Ascend310", "AiCore", "tik.vector_dup", "bfloat16", False),
    ("Ascend310", "AiCore", "tik.data_move", "", True),
    ("Ascend310", "AiCore", "tik.data_move", "float16", False),        # empty dtype row: CANN answers False
    ("Ascend310", "AiCore", "tik.vaxpy", "", False),                   # TIK lists vaxpy for Ascend035 only
    ("Ascend310", "AiCore", "tik.set_atomic_add", "float32", False),
    ("Ascend310", "AiCore", "tik.vbitsort32", "", False),
    ("Ascend310", "AiCore", "tik.vrpsort16", "float16", True),         # rename table: vbitsort
    ("Ascend910B1", "AiCore", "tik.vrpsort16", "float16", True),       # 910B ini vbitsort=float16 (k460)
    ("Ascend910B1", "AiCore", "tik.vconcat", "float16", False),
    ("Ascend310", "AiCore", "tik.h_cast", "f322f16", True),            # h_ API -> vconv
    ("Ascend310", "AiCore", "tik.h_duplicate", "float16", True),       # h_ API -> vector_dup (TIK table)
    ("Ascend310", "AiCore", "tik.h_data_move", "float16", True),       # dtype dropped for data_move
    ("Ascend310", "AiCore", "tik.h_sin", "float16", True),
    ("Ascend310", "AiCore", "tik.conv2d", "s8s8s32", True),
    ("Ascend310", "AiCore", "tik.fixpipe", "f32f16", True),
    ("Ascend310", "AiCore", "tik.no_such_api", "", False),
    ("Ascend910A", "AiCore", "tik.vdiv", "float32", True),
    ("Ascend910A", "AiCore", "tik.vconv", "f322bf16r", False),
    ("Ascend910A", "AiCore", "tik.set_atomic_add", "float32", True),
    ("Ascend910A", "AiCore", "tik.set_atomic_add", "float16", False),
    ("Ascend910A", "AiCore", "tik.vsqrt", "float32", True),
    ("Ascend310P3", "AiCore", "tik.vconv", "f162s16r", True),
    ("Ascend310P3", "AiCore", "tik.vconv", "f322s16r", False),
    ("Ascend310P3", "VectorCore", "tik.vconv", "f322s16r", True),
    ("Ascend310P3", "AiCore", "tik.vshl", "int16", False),
    ("Ascend310P3", "VectorCore", "tik.vshl", "float16", True),
    ("Ascend310P3", "AiCore", "tik.vec_maxs", "int16", True),
    ("Ascend310P3", "AiCore", "tik.vci", "int16", True),
    ("Ascend310P3", "AiCore", "tik.set_atomic_add", "float16", True),
    ("Ascend310P1", "VectorCore", "tik.vshl", "float16", False),
    ("Ascend310P1", "VectorCore", "tik.vrelu", "int16", True),
    ("Ascend310P3", "VectorCore", "tik.vrelu", "int16", False),
    ("Ascend610", "VectorCore", "tik.vdiv", "float32", True),
    ("BS9SX1AA", "VectorCore", "tik.vconv", "f162s16", True),
    ("BS9SX1AA", "AiCore", "tik.mmad", "u8u8s32", True),
    ("Ascend910B1", "AiCore", "tik.vconv", "f322bf16r", True),
    ("Ascend910B1", "AiCore", "tik.vconv", "s162s8", True),
    ("Ascend910B1", "AiCore", "tik.vec_add", "bfloat16", False),
    ("Ascend910B1", "AiCore", "tik.vector_dup", "bfloat16", True),
    ("Ascend910B1", "AiCore", "tik.data_move_pad", "bfloat16", True),
    ("Ascend910B1", "AiCore", "tik.vcmp_lt", "int16", True),           # rename table: vcmp
    ("Ascend910B1", "VectorCore", "tik.vcmp_lt", "int16", False),
    ("Ascend910B1", "AiCore", "tik.mmad", "f32f32f32", True),
    ("Ascend910B1", "AiCore", "tik.vnchwconv", "bfloat16", True),
    ("Ascend310B1", "AiCore", "tik.vconv", "s162s8", False),
    ("Ascend310B1", "AiCore", "tik.vadd", "int8", True),
    ("Ascend310B1", "AiCore", "tik.vmin", "int8", False),
    ("Ascend310B1", "VectorCore", "tik.vmin", "int8", True),
    ("Ascend310B1", "VectorCore", "tik.vector_dup", "uint8", True),
    ("SD3403", "AiCore", "tik.mmad", "u8u8s32", True),
    ("SD3403", "AiCore", "tik.fixpipe", "f16f16", True),
]


@pytest.mark.parametrize("soc, core, api, dtype, expected", PROBES)
def test_api_check_support_truth_table(soc, core, api, dtype, expected):
    set_current_compile_soc_info(soc, core)
    assert api_check_support(api, dtype) is expected


def test_probes_answer_for_the_chip_selected_when_called():
    assert api_check_support("tik.vdiv", "float32") is False
    set_current_compile_soc_info("Ascend910B2")
    assert api_check_support("tik.vdiv", "float32") is True


# DSL probes: expected values typed from CANN 8.1.RC1 tbe/dsl/compute/util.py
# (DSL_CHECK_SUPPORT_MAP, looked up by SHORT_SOC_VERSION), independently of tbe_compat/data.
DSL_PROBES = [
    # the casts public operators decide on
    ("Ascend310", "te.lang.cce.vexp", "float32", False),
    ("Ascend310", "te.lang.cce.vexp", "float16", True),
    ("Ascend310", "te.lang.cce.vdiv", "float32", True),
    ("Ascend310", "te.lang.cce.vmaxs", "float32", True),
    ("Ascend310", "te.lang.cce.sum", "float32", True),              # sum -> reduce_sum
    ("Ascend310", "te.lang.cce.reduce_sum", "int64", False),
    ("Ascend310", "te.lang.cce.vcmp", "float32", False),
    ("Ascend310", "te.lang.cce.trunc", "f162s32", True),
    ("Ascend310", "te.lang.cce.reduce_mean", "float32", False),     # no Ascend310 row: AllSoc (float16)
    ("Ascend310", "te.lang.cce.reduce_mean", "float16", True),
    ("Ascend310", "te.lang.cce.gather", "", True),                  # an empty row still exists
    ("Ascend310", "te.lang.cce.gather", "float16", False),
    ("Ascend310", "te.lang.cce.powi", "int32", False),              # no row and no AllSoc row
    ("Ascend310", "te.lang.cce.powi", "", False),
    ("Ascend310", "te.lang.cce.round_to", "int32", True),           # round_to -> clip
    ("Ascend310", "te.lang.cce.round_d", "float32", False),         # round_d -> round_half_up
    ("Ascend910A", "te.lang.cce.vexp", "float32", True),
    ("Ascend910A", "te.lang.cce.round_d", "float32", True),
    ("Ascend910A", "tbe.dsl.vrelu", "float32", False),
    ("Ascend910A", "tbe.dsl.vdiv", "int64", True),
    ("Ascend910A", "tbe.dsl.reduce_prod", "int64", True),
    ("Ascend910A", "tbe.dsl.reduce_max", "int64", False),
    ("Ascend910A", "tbe.dsl.vgcd", "int32", True),
    ("Ascend910A", "tbe.dsl.vgcd", "int16", False),
    ("Ascend910A", "tbe.dsl.topk", "float32", False),
    ("Ascend310P3", "tbe.dsl.vmaxs", "bool", True),
    ("Ascend310P3", "tbe.dsl.vmins", "bool", False),
    ("Ascend310P3", "tbe.dsl.cast_to", "s322s16", True),
    ("Ascend310P3", "tbe.dsl.trunc", "f322s16", True),
    ("Ascend310P3", "tbe.dsl.round", "f162s16", True),
    ("Ascend310P3", "tbe.dsl.ceil", "f162s16", False),
    ("Ascend310P3", "tbe.dsl.vsignbit", "", True),                  # AllSoc row is empty
    ("Ascend310P3", "tbe.dsl.vsignbit", "float16", False),
    ("Ascend310P3", "tbe.dsl.vadd", "uint64", True),
    ("Ascend310P3", "tbe.dsl.vsub", "uint64", False),
    ("Ascend610", "tbe.dsl.cast_to", "s322s16", False),
    ("Ascend610", "tbe.dsl.trunc", "f322s16", False),
    ("Ascend610", "tbe.dsl.vdiv", "int64", False),
    ("Ascend610", "tbe.dsl.full", "uint1", True),
    ("BS9SX1AA", "tbe.dsl.full", "uint1", False),
    ("BS9SX1AA", "tbe.dsl.vgcd", "int16", True),
    ("Ascend910B1", "te.lang.cce.vadd", "complex64", True),
    ("Ascend910B1", "te.lang.cce.vexp", "bfloat16", False),
    ("Ascend910B1", "te.lang.cce.broadcast", "bfloat16", True),
    ("Ascend910B1", "te.lang.cce.cast_to", "s42f16", True),
    ("Ascend910B1", "te.lang.cce.scatter_nd", "int8", True),
    ("Ascend910B1", "te.lang.cce.reduce_window", "float32", True),
    ("Ascend910B1", "te.lang.cce.vrelu", "float32", False),
    ("Ascend910B1", "te.lang.cce.complex", "float16", False),        # only in CANN's dynamic-context table
    ("Ascend310B1", "tbe.dsl.vmin", "int8", True),
    ("Ascend310B1", "tbe.dsl.vmin", "uint64", False),
    ("Ascend310B1", "tbe.dsl.vsignbit", "int16", True),
    ("Ascend310B1", "tbe.dsl.sort", "", True),
    ("Ascend310B1", "tbe.dsl.sort", "float16", False),
    ("Ascend310B1", "tbe.dsl.vdiv", "uint16", True),
    ("Hi3796CV300ES", "te.lang.cce.vexp", "float32", False),         # smallhisi row
    ("Hi3796CV300ES", "te.lang.cce.vaddrelu", "int16", True),
    ("Hi3796CV300CS", "te.lang.cce.gather", "float16", True),        # no smallhisi row: AllSoc
    ("Hi3796CV300CS", "te.lang.cce.cast_to", "f322f16", False),
    ("SD3403", "te.lang.cce.vmaxs", "float32", False),
    ("SD3403", "te.lang.cce.round_d", "float16", True),
    ("SD3403", "te.lang.cce.round_to", "int32", False),
]


@pytest.mark.parametrize("soc, api, dtype, expected", DSL_PROBES)
def test_api_check_support_dsl_truth_table(soc, api, dtype, expected):
    set_current_compile_soc_info(soc)
    assert api_check_support(api, dtype) is expected


def test_dsl_names_follow_cann_lookup():
    set_current_compile_soc_info("Ascend910B1", "VectorCore")      # the core type plays no part
    assert api_check_support("tbe.dsl.vexp", "float32") is True
    assert api_check_support("te.lang.cce.vexp", "Float32") is False
    assert api_check_support("te.lang.cce.vexp") is True
    assert api_check_support("te.lang.cce.foo.vexp", "float32") is True  # the text after the last "."
    assert api_check_support("te.lang.cce.no_such_api") is False
    assert api_check_support("tbe.dsl.") is False
    assert api_check_support("te.lang.dynamic.vexp", "float16") is False  # not a DSL prefix in CANN 8.1
    assert api_check_support("te.lang.cce.reduce_sum", "int64") is True
    assert api_check_support("te.lang.cce.sum", "int64") is True


def test_dsl_table_covers_every_modelled_chip(monkeypatch):
    from tbe_compat.data import dsl_support as D
    for soc in P.SOC_TABLES:
        short = P.SOC_TABLES[soc]["version"]["Short_SoC_version"]
        assert D.SOC_KEY_ALIASES.get(short, short) in D.SOC_KEYS, soc
    for api, rows in D.DSL_SUPPORT.items():
        assert set(rows) <= set(D.SOC_KEYS) | {D.ALL}, api
        assert all(isinstance(row, tuple) and len(set(row)) == len(row) for row in rows.values()), api
    assert set(D.SAME_API.values()) <= set(D.DSL_SUPPORT)
    monkeypatch.setattr(D, "SOC_KEYS", tuple(k for k in D.SOC_KEYS if k != "Ascend310"))
    with pytest.raises(PlatformDataMissing, match="no DSL support data for Ascend310"):
        api_check_support("te.lang.cce.vexp", "float16")


def test_non_tik_non_dsl_names_answer_false():
    assert api_check_support("vadd", "float16") is False
    assert api_check_support("te.platform.vadd") is False
    with pytest.raises(PlatformError, match="intrinsic type should be 'str'"):
        api_check_support(None)
    with pytest.raises(PlatformError, match="dtype type should be 'str'"):
        api_check_support("tik.vadd", 16)


def test_intrinsic_check_support():
    assert intrinsic_check_support("Intrinsic_vadd") is True
    assert intrinsic_check_support("Intrinsic_vadd", "float32") is True
    assert intrinsic_check_support("Intrinsic_vadd", "int16") is False
    assert intrinsic_check_support("Intrinsic_rpn_cor") is True
    assert intrinsic_check_support("Intrinsic_vmaxs") is False
    with pytest.raises(PlatformError, match="should start with 'Intrinsic_'"):
        intrinsic_check_support("vadd")


def test_missing_intrinsic_data_raises_instead_of_guessing():
    set_current_compile_soc_info("SD3403")
    with pytest.raises(PlatformDataMissing, match="no public intrinsic table for SD3403"):
        api_check_support("tik.vadd", "float16")
    set_current_compile_soc_info("Ascend310B1")
    with pytest.raises(PlatformDataMissing, match="register-ISA"):
        intrinsic_check_support("Intrinsic_vectorized_vadd")
    set_current_compile_soc_info("Ascend910B1")                 # no vectorized_* rows at all: truthful False
    assert intrinsic_check_support("Intrinsic_vectorized_vadd") is False


def test_intrinsic_table_transcription_sizes():
    sizes = {name: (len(t["AICoreintrinsicDtypeMap"] or {}), len(t["VectorCoreintrinsicDtypeMap"] or {}))
             for name, t in P.SOC_TABLES.items()}
    assert sizes["Ascend310P3"] == sizes["Ascend310P1"] == sizes["Ascend610"] == (120, 110)
    assert sizes["BS9SX1AA"] == (117, 74)
    assert sizes["Ascend910B1"] == sizes["Ascend910B4"] == (102, 74)
    assert sizes["Ascend310B1"] == (126, 75)
    assert sizes["Ascend910A"] == (97, 0) and sizes["Ascend310"] == (90, 0)


def test_ascend310_table_is_the_cloud_table_narrowed_by_appendix_a():
    mini = P.SOC_TABLES["Ascend310"]["AICoreintrinsicDtypeMap"]
    cloud = P.SOC_TABLES["Ascend910A"]["AICoreintrinsicDtypeMap"]
    assert set(mini) < set(cloud)
    assert cloud.keys() - mini.keys() == {"vdiv", "vsqrt", "vadddeqrelu", "vmulconv", "scatter_vdiv",
                                          "scatter_vsqrt", "scatter_vmulconv"}
    for name, dtypes in mini.items():                          # every mini row is a subset of the cloud row
        assert set(dtypes.split(",")) <= set(cloud[name].split(",")), name
    assert mini["scatter_vexp"] == "float16" and mini["scatter_vaxpy"] == cloud["scatter_vaxpy"]


# ---------------------------------------------------------------------------- Dprofile

DPROFILE_PAIRS = [(("v100", "mini"), ("Ascend310", "AiCore")), (("v100", "cloud"), ("Ascend910A", "AiCore")),
                  (("v200", "aic"), ("Ascend310P1", "AiCore")), (("v200", "vec"), ("Ascend610", "VectorCore")),
                  (("v200", "hisi-es"), ("Hi3796CV300ES", "AiCore")),
                  (("v200", "hisi-cs"), ("Hi3796CV300CS", "AiCore")),
                  (("v200", "sd3403"), ("SD3403", "AiCore")), (("v200", "hisi-sd3403"), ("SD3403", "AiCore")),
                  (("v210", "aic"), ("BS9SX1AA", "AiCore")), (("v210", "aiv"), ("BS9SX1AA", "VectorCore")),
                  (("v300", "aiv"), ("Ascend310B1", "VectorCore"))]


@pytest.mark.parametrize("pair, selected", DPROFILE_PAIRS)
def test_dprofile_mapping(pair, selected):
    profile = Dprofile(*pair)
    assert (current_soc().soc_version, current_soc().core_type) == selected
    assert (profile.ai_core_arch, profile.ai_core_version) == pair
    # TIK: the product name (the pair's version; "hisi-sd3403" is an alias of "sd3403"), not the SoC
    assert profile.get_product_name() == {"hisi-sd3403": "sd3403"}.get(pair[1], pair[1])


@pytest.mark.parametrize("soc, core, name", [("Ascend310", "AiCore", "mini"), ("Ascend910A", "AiCore", "cloud"),
                                             ("Hi3796CV300ES", "AiCore", "hisi-es"),
                                             ("Ascend310P3", "AiCore", "aic"), ("Ascend310P3", "VectorCore", "vec"),
                                             ("Ascend910B3", "AiCore", "aic"), ("Ascend910B3", "VectorCore", "aiv")])
def test_get_product_name_is_tiks_product_name(soc, core, name):
    set_current_compile_soc_info(soc, core)
    assert Dprofile().get_product_name() == name
    assert Dprofile.get_product_name() != get_soc_spec("SOC_VERSION")


def test_dprofile_getters_static_and_bare_constructor_reads_current():
    set_current_compile_soc_info("Ascend910B3")
    profile = Dprofile()
    assert current_soc().soc_version == "Ascend910B3"           # Dprofile() selects nothing
    for getter, value in ((Dprofile.get_aicore_num, 20), (Dprofile.get_l1_buffer_size, 512 * KiB),
                          (Dprofile.get_l0a_buffer_size, 64 * KiB), (Dprofile.get_l0b_buffer_size, 64 * KiB),
                          (Dprofile.get_l0c_buffer_size, 128 * KiB), (Dprofile.get_unified_buffer_size, 192 * KiB)):
        assert getter() == value
        assert getattr(profile, getter.__name__)() == value
    assert "Ascend910B3" in repr(profile)


def test_dprofile_errors():
    with pytest.raises(PlatformError, match=r"unknown Dprofile \('v100', 'tiny'\)") as info:
        Dprofile("v100", "tiny")
    assert "('v100', 'mini')" in str(info.value)


def test_dprofile_with_one_argument_selects_nothing_and_warns():
    """TIK's Dprofile skips the chip selection when either argument is None (public te.tik source);
    CANN's sort_v2 builds tik.Tik(tik.Dprofile('cloud')). Legal: the current chip stays, with a warning."""
    set_current_compile_soc_info("Ascend910B3")
    for args in (("cloud",), ("v100",), (None, "mini")):
        with pytest.warns(P.DprofileIgnoredWarning, match="selects no chip.*running on Ascend910B3"):
            profile = Dprofile(*args)
        assert current_soc().soc_version == "Ascend910B3"
        assert profile.get_unified_buffer_size() == 192 * KiB


def test_profiling_soc_accepts_none_instance_and_class():
    Dprofile("v100", "cloud")
    for arg in (None, Dprofile, Dprofile()):
        assert P.profiling_soc(arg).soc_version == "Ascend910A"
    with pytest.raises(IllegalOperand, match="profiling must be a tik.Dprofile"):
        P.profiling_soc("v100")


# ---------------------------------------------------------------------------- legacy helpers


def test_cce_product_params():
    params = P.CceProductParams()
    assert params is P.CceProductParams()
    assert params.getParams("Unified_Buffer") == 253952
    assert params.getParams("L1_Buffer") == MiB
    assert params.getParams("L2_Buffer") == 8 * MiB
    assert params.getParams("Device_core_num") == 2
    assert params.getParams("Compiler_arch") == "dav-m100"
    assert params.getParams("Compiler_aicpu_support_os") is True
    assert params.getParams("Intrinsic_vadd") == "float16,float32,int32"
    assert params.get_product_version() is None                   # set only by te_set_version
    with pytest.raises(PlatformError, match="Unsupported buffer name: Foo") as info:
        params.getParams("Foo_Buffer")
    assert "Unified_Buffer" in str(info.value)
    with pytest.raises(PlatformError, match="Unsupported intrinsic: vfoo"):
        params.getParams("Intrinsic_vfoo")
    with pytest.raises(PlatformDataMissing, match="stream-id"):
        params.getParams("Sid_copy_gm_to_cbuf")
    params.set_build_option("x", 1)
    assert params.get_build_option("x") == 1 and params.get_build_option("y") is None


@pytest.mark.parametrize("dtype, bits", [("float16", 16), ("bfloat16", 16), ("int8", 8), ("uint32", 32),
                                         ("int64", 64), ("int4", 4), ("uint1", 1), ("bool", 16)])
def test_get_bit_len(dtype, bits):
    assert P.get_bit_len(dtype) == bits


def test_get_bit_len_rejects_names_without_a_width():
    with pytest.raises(PtoError, match="'double'"):
        P.get_bit_len("double")


def test_small_helpers():
    assert P.get_align_factor("int8") == (32, 1)
    assert P.get_align_factor("float16") == (16, 2)
    assert P.get_align_factor("float32") == (8, 4)
    assert P.get_block_size() == 32
    assert P.get_cube_mkn("int8") == [16, 32, 16]
    with pytest.raises(PtoError, match="'float64'"):
        P.get_cube_mkn("float64")
    assert P.VECTOR_INST_BLOCK_NUM * 32 == P.VECTOR_INST_BLOCK_WIDTH == 256
    assert P.BLOCK_REDUCE_INT8 == 32 and P.C0_SIZE == 16


def test_te_platform_spellings_warn():
    import tbe_compat.te_platform as tp
    with pytest.warns(TbeDeprecationWarning, match="get_soc_spec"):
        assert tp.get_soc_spec("CORE_NUM") == 2
    with pytest.warns(TbeDeprecationWarning, match="api_check_support"):
        assert tp.api_check_support("tik.vdiv", "float32") is False
    with pytest.warns(TbeDeprecationWarning, match="api_check_support"):
        assert tp.api_check_support("te.lang.cce.vexp", "float32") is False
    with pytest.warns(TbeDeprecationWarning, match="intrinsic_check_support"):
        assert tp.intrinsic_check_support("Intrinsic_vadd", "float16") is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert P.get_soc_spec("CORE_NUM") == 2                    # tbe.common spelling: no notice
    assert tp.get_product_version() == "1910" and tp.is_mini_version() and not tp.is_cloud_version()
    set_current_compile_soc_info("Ascend310P3")
    assert tp.is_v200_version() and tp.is_v200_version_new()
    set_current_compile_soc_info("Ascend910B1")
    with pytest.raises(PlatformError, match="no cce_conf product version for Ascend910B"):
        tp.get_product_version()


def test_error_classes_distinguish_unknown_names_from_bad_values():
    from pto_core.errors import UnknownName
    with pytest.raises(P.UnknownPlatformName) as unknown:
        set_current_compile_soc_info("Ascend999")
    assert isinstance(unknown.value, UnknownName) and isinstance(unknown.value, LookupError)
    with pytest.raises(PlatformError) as bad_value:
        set_current_compile_soc_info("Ascend310", aicore_num=9)
    assert not isinstance(bad_value.value, LookupError) and isinstance(bad_value.value, ValueError)
    with pytest.raises(P.UnknownPlatformName):
        get_soc_spec("NOT_A_KEY")


def test_reset_platform_forgets_te_set_version_state():
    with pytest.warns(TbeDeprecationWarning):
        P.te_set_version("Ascend910")
    P.CceProductParams().set_build_option("l2_mode", 1)
    P.reset_platform()
    assert P.CceProductParams().get_product_version() is None
    assert P.CceProductParams().get_build_option("l2_mode") is None
    assert current_soc().soc_version == "Ascend310"
