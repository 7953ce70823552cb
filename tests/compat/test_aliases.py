"""Every legacy import path resolves to the same tbe_compat objects; the alias
packages contain only imports; tbe_compat.aliases.install()."""
import ast
import importlib
import pathlib
import subprocess
import sys
import types

import pytest

import tbe_compat.aliases as aliases
from pto_core.errors import ConfigError, IllegalOperand
from tbe_compat import para_check, platform, platform_adapter, register, te_platform, tik_util, topi_util

ROOT = pathlib.Path(__file__).resolve().parents[2]

# (alias module, attribute, the tbe_compat object it must be)
SAME_OBJECTS = [
    ("tbe.tik", "Dprofile", platform.Dprofile),
    ("tbe.tik", "scope_gm", platform.scope_gm),
    ("tbe.tik", "scope_cbuf_out", platform.scope_cbuf_out),
    ("tbe.common.platform", "set_current_compile_soc_info", platform.set_current_compile_soc_info),
    ("tbe.common.platform", "get_soc_spec", platform.get_soc_spec),
    ("tbe.common.platform", "api_check_support", platform.api_check_support),
    ("tbe.common.platform", "intrinsic_check_support", platform.intrinsic_check_support),
    ("tbe.common.platform", "CceProductParams", platform.CceProductParams),
    ("tbe.common.platform", "UB_SIZE", "UB_SIZE"),
    ("tbe.common.platform", "CORE_NUM", "CORE_NUM"),
    ("tbe.common.platform", "L1_SIZE", "L1_SIZE"),
    ("tbe.common.platform", "ASCEND_310", "Ascend310"),
    ("tbe.common.platform", "_AIC_ENGINE", "AiCore"),
    ("tbe.common.platform.platform_info", "get_soc_spec", platform.get_soc_spec),
    ("tbe.common.platform.platform_info", "api_check_support", platform.api_check_support),
    ("tbe.common.platform.platform_info", "set_current_compile_soc_info", platform.set_current_compile_soc_info),
    ("tbe.common.platform.platform_info", "UB_SIZE", "UB_SIZE"),
    ("tbe.common.utils.para_check", "check_op_params", para_check.check_op_params),
    ("tbe.common.utils.para_check", "REQUIRED_INPUT", "required_input"),
    ("tbe.common.utils.para_check", "KERNEL_NAME", "kernel_name"),
    ("tbe.common.register", "register_op_compute", register.register_op_compute),
    ("tbe.common.register", "register_operator", register.register_operator),
    ("te.tik", "Dprofile", platform.Dprofile),
    ("te.op", "register_operator", register.register_operator),
    ("te.op", "add_compile_info", register.add_compile_info),
    ("te.platform", "te_set_version", platform.te_set_version),
    ("te.platform", "CceProductParams", platform.CceProductParams),
    ("te.platform", "get_soc_spec", te_platform.get_soc_spec),
    ("te.platform", "get_bit_len", platform.get_bit_len),
    ("te.platform", "scope_ubuf", "local.UB"),
    ("te.platform.cce_conf", "get_soc_spec", te_platform.get_soc_spec),
    ("te.platform.cce_conf", "api_check_support", te_platform.api_check_support),
    ("te.platform.cce_conf", "te_set_version", platform.te_set_version),
    ("te.platform.cce_conf", "CceProductParams", platform.CceProductParams),
    ("te.platform.cce_conf", "CORE_NUM", "CORE_NUM"),
    ("te.platform.cce_params", "BLOCK_REDUCE_INT8", 32),
    ("te.platform.cce_params", "VECTOR_INST_BLOCK_NUM", 8),
    ("te.platform.cce_params", "VECTOR_INST_BLOCK_WIDTH", 256),
    ("te.platform.cce_params", "CUBE_MKN", platform.CUBE_MKN),
    ("te.platform.cce_intrin", "get_bit_len", platform.get_bit_len),
    ("te.platform.fusion_manager", "fusion_manager", register.fusion_manager),
    ("te.utils.para_check", "check_op_params", para_check.check_op_params),
    ("te.utils.op_utils", "check_op_params", para_check.check_op_params),
    ("impl.util.platform_adapter", "PlatformApi", platform),
    ("tbe.common.context.op_context", "OpContext", platform_adapter.OpContext),
    ("tbe.common.context", "get_context", platform_adapter.get_context),
    ("tbe.common.context.op_info", "OpInfo", platform_adapter.OpInfo),
    ("te.utils.error_manager", "error_manager_vector", platform_adapter.error_manager_vector),
    ("te.utils.error_manager", "error_manager_cube", platform_adapter.error_manager_vector),
    ("te.utils.error_manager", "error_manager_util", platform_adapter.error_manager_util),
    ("impl.util.platform_adapter", "error_manager", platform_adapter.error_manager),
    ("tbe.common.utils.errormgr", "error_manager_vector", platform_adapter.error_manager_vector),
    ("tbe.common.utils.errormgr", "get_error_message", platform_adapter.error_manager_util.get_error_message),
    ("topi.cce.util", "check_input_type", para_check.check_input_type),
    ("topi.cce.util", "axis_check", topi_util.axis_check),
    ("topi.cce.util", "compare_tensor_dict_key", topi_util.compare_tensor_dict_key),
    ("topi.cce.util", "check_tensor_shape_size", topi_util.check_tensor_shape_size),
    ("topi.cce.util", "get_shape_size", para_check.get_shape_size),
    ("tbe.tik.common.util", "reduce_mul", tik_util.reduce_mul),
    ("te.tik.common.util", "ceil_div", tik_util.ceil_div),
    ("te.tik.common.util", "DTYPE_SIZE", tik_util.DTYPE_SIZE),
    ("tbe.dsl.instrinsic.cce_intrin", "get_bit_len", platform.get_bit_len),
    ("tbe.common.utils.shape_util", "get_shape_size", para_check.get_shape_size),
    ("tbe.common.utils.shape_util", "axis_check", topi_util.axis_check),
    ("te.platform.cce_conf", "te_set_l2_mode", te_platform.te_set_l2_mode),
]


@pytest.mark.filterwarnings("ignore::tbe_compat.platform.TbeDeprecationWarning")  # first `te.tik` import
@pytest.mark.parametrize("module, name, expected", SAME_OBJECTS)
def test_alias_resolves_to_the_tbe_compat_object(module, name, expected):
    value = getattr(importlib.import_module(module), name)
    if isinstance(expected, (str, int)):
        assert value == expected
    else:
        assert value is expected


def test_legacy_max_kernel_naem_len_spelling():
    """CANN's 2019-2020 te.utils.para_check / op_utils and topi.cce.util spell it MAX_KERNEL_NAEM_LEN (sic) and
    ops of that era read it (clip_boxes_d); the modern tbe.common.utils.para_check has only the corrected name."""
    for module in ("topi.cce.util", "te.utils.op_utils", "te.utils.para_check"):
        assert importlib.import_module(module).MAX_KERNEL_NAEM_LEN == 200
    modern = importlib.import_module("tbe.common.utils.para_check")
    assert modern.MAX_KERNEL_NAME_LEN == 200 and not hasattr(modern, "MAX_KERNEL_NAEM_LEN")


def test_package_attribute_access_styles():
    import tbe
    import te
    import topi
    from tbe import tik
    assert tik is sys.modules["tbe.tik"]
    assert tbe.common.platform.get_soc_spec is platform.get_soc_spec        # `import tbe; tbe.common.platform...`
    assert te.platform.cce_conf.CceProductParams is platform.CceProductParams
    assert te.platform.fusion_manager.fusion_manager is register.fusion_manager
    assert topi.cce.util.axis_check is topi_util.axis_check
    for top in (tbe, te, topi):
        assert top.__tbe_compat_alias__ is True


def test_state_is_shared_across_spellings():
    import tbe.common.platform as tbe_platform
    from te.platform import cce_conf
    from tbe import tik
    tbe_platform.set_current_compile_soc_info("Ascend910B1")
    assert tik.Dprofile().get_aicore_num() == 24
    assert cce_conf.CceProductParams().getParams("Unified_Buffer") == 196608


def _alias_files():
    return sorted(p for p in pathlib.Path(aliases.ALIAS_ROOT).rglob("*.py") if p.parent != pathlib.Path(
        aliases.ALIAS_ROOT))


@pytest.mark.parametrize("path", _alias_files(), ids=lambda p: str(p.relative_to(aliases.ALIAS_ROOT)))
def test_alias_modules_contain_only_imports(path):
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue                                                        # docstring
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__tbe_compat_alias__"]:
            continue
        pytest.fail(f"{path}: line {node.lineno} is not an import")


def test_te_tik_import_emits_the_deprecation_notice():
    code = "import tbe_compat.aliases; tbe_compat.aliases.install()\nfrom te import tik\nprint(tik.scope_gm)\n"
    out = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(ROOT))
    assert out.stdout.strip() == "global"
    assert "te.tik is deprecated" in out.stderr and "tbe.tik" in out.stderr


_TE_TIK_ATTRIBUTE_KERNEL = """
import numpy as np
import tbe_compat.aliases; tbe_compat.aliases.install()
import te.lang.dynamic                                  # the only te import, as CANN's 2021 unsorted_segment.py
from impl.util.platform_adapter import tik
ti = tik.Tik()
cfg = ti.Tensor("int32", (8,), name="cfg", scope=tik.scope_gm)
y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
cfg_ub = ti.Tensor("int32", (8,), name="cfg_ub", scope=tik.scope_ubuf)
ti.data_move(cfg_ub, cfg, 0, 1, 1, 0, 0)
key = ti.Scalar("int32", name="key", init_value=0)
if isinstance(key, te.tik.api.tik_scalar.Scalar):       # a run-time tiling value: read it from GM
    key.set_as(cfg_ub[3])
ti.vec_dup(8, cfg_ub, key, 1, 8)
ti.data_move(y, cfg_ub, 0, 1, 1, 0, 0)
ti.BuildCCE("te_attr", inputs=[cfg], outputs=[y])
out, = ti.tikdb.start_debug({"cfg": np.arange(8, dtype=np.int32) + 40}, interactive=False)
print(out.tolist())
"""


def test_te_tik_is_an_attribute_of_te_after_other_te_imports():
    """TE_LAZY_SUBMODULES: CANN operators use ``te.tik`` as an attribute of ``te`` after importing only other
    ``te`` modules (2021 dynamic unsorted_segment.py: ``isinstance(key, te.tik.api.tik_scalar.Scalar)``); the
    first access imports it, as CANN's import chain has. A fresh interpreter, so no earlier import helps."""
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", _TE_TIK_ATTRIBUTE_KERNEL], capture_output=True,
                         text=True, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str([43] * 8)
    import te
    from tbe import tik
    assert te.tik.api.tik_scalar.Scalar is tik.Scalar
    with pytest.raises(AttributeError, match="module 'te' has no attribute 'tikk'"):
        te.tikk                                                             # noqa: B018 (other names still fail)


def test_install_is_idempotent_and_first_on_sys_path():
    assert aliases.install() == aliases.ALIAS_ROOT
    assert aliases.install() == aliases.ALIAS_ROOT
    assert sys.path[0] == aliases.ALIAS_ROOT and sys.path.count(aliases.ALIAS_ROOT) == 1


def test_install_refuses_a_foreign_tbe(monkeypatch):
    foreign = types.ModuleType("tbe")
    foreign.__file__ = "/opt/cann/python/site-packages/tbe/__init__.py"
    monkeypatch.setitem(sys.modules, "tbe", foreign)
    with pytest.raises(ConfigError, match="already imported from /opt/cann") as info:
        aliases.install()
    assert info.value.operand == "tbe"


def test_kernel_script_runs_with_installed_aliases(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(
        "import tbe_compat.aliases; tbe_compat.aliases.install()\n"
        "from tbe import tik\n"
        "import tbe.common.platform as tbe_platform\n"
        "from tbe.common.utils import para_check\n"
        "@para_check.check_op_params(para_check.REQUIRED_INPUT, para_check.KERNEL_NAME)\n"
        "def entry(x, kernel_name='k'):\n"
        "    tbe_platform.set_current_compile_soc_info('Ascend910B4')\n"
        "    return tik.Dprofile.get_aicore_num()\n"
        "print(entry({'shape': [2, 16], 'ori_shape': [2, 16], 'format': 'ND', 'ori_format': 'ND', "
        "'dtype': 'float16'}, kernel_name='my_kernel'))\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "20"


def test_impl_platform_adapter_is_a_namespace_alias_that_never_shadows_user_packages(tmp_path, monkeypatch):
    import importlib
    import sys

    from tbe_compat.aliases import install
    install()
    for name in [m for m in sys.modules if m == "impl" or m.startswith("impl.")]:
        monkeypatch.delitem(sys.modules, name)
    adapter = importlib.import_module("impl.util.platform_adapter")
    import tbe_compat.platform as platform
    import tbe_compat.tik as tik
    assert adapter.tik is tik and adapter.tbe_platform is platform
    assert adapter.para_check.REQUIRED_INPUT == "required_input"
    assert callable(adapter.register_operator) and adapter.OpImplMode.HIGH_PRECISION == "high_precision"
    # CANN operators report parameter errors through error_manager_vector and compile info through tbe_context
    from impl.util.platform_adapter import error_manager_vector, tbe_context
    with pytest.raises(RuntimeError, match=r"In op\[scatter\], input dtype not supported: 'x', .*'int8'"):
        error_manager_vector.raise_err_input_dtype_not_supported("scatter", "x", "float16", "int8")
    with pytest.raises(AttributeError):
        error_manager_vector.not_a_reporter
    tbe_context.get_context().add_compile_info("vars", {"core_num": 2})
    assert tbe_context.get_context().get_compile_info()["vars"] == {"core_num": 2}
    # a project's own regular ``impl`` package wins over the namespace alias, even when it
    # comes after the alias root on sys.path
    (tmp_path / "impl").mkdir()
    (tmp_path / "impl" / "__init__.py").write_text("OWN = True\n")
    for name in [m for m in sys.modules if m == "impl" or m.startswith("impl.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "path", sys.path + [str(tmp_path)])
    importlib.invalidate_caches()
    assert importlib.import_module("impl").OWN is True


def test_op_context_block_is_the_current_context_of_a_cann_unit_test():
    # CANN's operator UTs wrap the call: ``with tbe.common.context.op_context.OpContext("dynamic"): op(...)``
    import tbe
    from impl.util.platform_adapter import tbe_context
    outer = tbe_context.get_context()
    assert outer.get_op_mode() == "static"
    with tbe.common.context.op_context.OpContext("dynamic") as ctx:
        assert tbe_context.get_context() is ctx and tbe.common.context.get_context() is ctx
        assert ctx.get_op_mode() == "dynamic"
        tbe_context.get_context().add_compile_info("vars", {"core_num": 8})
        with tbe.common.context.op_context.OpContext("static") as inner:
            assert tbe_context.get_context() is inner
        assert tbe_context.get_context() is ctx
    assert ctx.get_compile_info() == {"vars": {"core_num": 8}}
    # CANN's system tests also register the op on the context (tbe.common.context.op_info.OpInfo)
    import tbe.common.context.op_info as operator_info
    with tbe.common.context.op_context.OpContext("dynamic"):
        info = operator_info.OpInfo("ScanPQCodes", "ScanPQCodes")
        tbe.common.context.op_context.get_context().add_op_info(info)
        assert tbe.common.context.get_context().get_op_info() == [info]
        with pytest.raises(IllegalOperand, match=r"test_aliases\.py:\d+: add_op_info operand op_info: .*got str"):
            tbe.common.context.get_context().add_op_info("ScanPQCodes")
        assert tbe.common.context.get_context().get_op_info("ScanPQCodes") == [info]
    with pytest.raises(IllegalOperand, match=r"test_aliases\.py:\d+: OpInfo operand op_type: op_type must be a non-empty str, got None"):
        operator_info.OpInfo("x", None)
    assert tbe_context.get_context() is outer
    # a bad mode names the caller's line and changes nothing
    with pytest.raises(IllegalOperand, match=r"test_aliases\.py:\d+: OpContext operand op_mode: .*got 3"):
        tbe.common.context.op_context.OpContext(3)
    assert tbe_context.get_context() is outer


def test_te_lang_dynamic_imports_for_2020_dynamic_operators():
    """CANN's 2020 dynamic-shape TIK operators run ``import te.lang.dynamic`` and report errors through
    ``te.utils.error_manager``: both import, and the reporters raise CANN's RuntimeError."""
    importlib.import_module("te.lang.dynamic")
    em = importlib.import_module("te.utils.error_manager")
    with pytest.raises(RuntimeError, match=r"In op\[k\], inputs dtype not equal"):
        em.error_manager_vector.raise_err_inputs_dtype_not_equal("k", "updates", "var", "float16", "float32")
    with pytest.raises(RuntimeError, match="errCode: E80000"):
        em.error_manager_util.raise_runtime_error({"errCode": "E80000", "op_name": "k"})


def test_errormgr_package_get_error_message_for_cube_operators():
    """CANN cube TIK operators (fused_dbn_dw, avg_pool_grad_d, conv2d_backprop_*) import
    ``error_manager`` from platform_adapter (CANN's ``tbe.common.utils.errormgr`` package) and raise
    ``RuntimeError(d, error_manager.get_error_message(d))``; ``tbe.common.utils.errormgr`` is the same."""
    import tbe
    from impl.util.platform_adapter import error_manager
    d = {"errCode": "E60108", "reason": "case not supported"}
    assert error_manager.get_error_message(d) == "errCode: E60108, reason: case not supported"
    assert tbe.common.utils.errormgr.get_error_message is error_manager.get_error_message
    with pytest.raises(RuntimeError, match="errCode: E60108, reason: case not supported"):
        error_manager.raise_runtime_error(d)
    with pytest.raises(RuntimeError, match=r"In op\[k\], input dtype not supported"):
        error_manager.error_manager_vector.raise_err_input_dtype_not_supported("k", "x", "float16", "int8")


def test_te_utils_op_utils_star_import_gives_the_modules_cann_2020_leaked():
    """CANN's 2020 op_utils has no ``__all__``: ``import *`` also gave ``math``, ``re``, ``functools_reduce``
    and ``wraps``, which some operators use without importing them."""
    ns: dict = {}
    exec("from te.utils.op_utils import *", ns)
    assert ns["math"].ceil(2.5) == 3 and ns["re"].match("a", "a")
    assert ns["functools_reduce"](lambda a, b: a * b, [2, 3, 4]) == 24 and callable(ns["wraps"])
    assert ns["check_op_params"] is para_check.check_op_params and ns["REQUIRED_INPUT"] == "required_input"


def test_tvm_imports_but_any_use_is_unsupported():
    """TIK kernels import TVM (``from te import tvm``, CANN's 2020 dynamic gather_v2) without using it:
    every spelling imports; using an attribute raises UnsupportedOp at the user's line (TVM, the TBE
    DSL's expression layer, is not simulated); protocol names stay AttributeError."""
    from pto_core.errors import UnsupportedOp
    from impl.util.platform_adapter import tvm as adapter_tvm
    from tbe import tvm as tbe_tvm
    from te import tvm
    importlib.import_module("te.tvm")
    line = sys._getframe().f_lineno + 2
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*tvm.compute is part of TVM, the TBE DSL" % line):
        tvm.compute((16,), lambda i: i)
    for mod in (tbe_tvm, adapter_tvm):
        with pytest.raises(UnsupportedOp, match=r"tvm.decl_buffer .* not model"):
            mod.decl_buffer
    assert not hasattr(tvm, "__path__") and not hasattr(tbe_tvm, "__wrapped__")


def test_tvm_declarations_are_inert_until_used():
    """MindSpore's matmul_cube_dense_left_impl.py declares tvm placeholders before taking its TIK path:
    declaring works; any use raises UnsupportedOp naming the declaration; tvm.const is the number."""
    from pto_core.errors import UnsupportedOp
    from te import tvm
    line = sys._getframe().f_lineno + 1
    a = tvm.placeholder((16, 16), name="tensor_a", dtype="float16")
    assert "tvm.placeholder((16, 16), name='tensor_a', dtype='float16')" in repr(a)
    for use in (lambda: a.shape, lambda: a + 1, lambda: a[0], lambda: bool(a), lambda: len(a)):
        with pytest.raises(UnsupportedOp, match=r"the result of tvm.placeholder\(.*\) \(declared at .*"
                                                 r"test_aliases.py:%d\) is a TBE DSL value" % line):
            use()
    assert tvm.const(3, "int32") == 3 and isinstance(tvm.const(3, "int32"), int)
    assert tvm.const(0.5, "float16") == 0.5 and isinstance(tvm.const(1, "float32"), float)
    with pytest.raises(UnsupportedOp, match="only a number and a dtype name"):
        tvm.const(a, "int32")
    assert repr(tvm.var("n", dtype="int32")).startswith("<DSL value of tvm.var('n'")


def test_dsl_modules_import_but_any_use_is_unsupported():
    """``import te.lang.cce`` and ``from topi import generic`` sit at the top of TIK kernels whose DSL path
    they serve (MindSpore's matmul_cube_dense_left_impl.py, CANN's 2020 dynamic unsorted_segment_sum):
    both import; using a name raises UnsupportedOp at the user's line; protocol names stay AttributeError."""
    from pto_core.errors import UnsupportedOp
    cce = importlib.import_module("te.lang.cce")
    generic = importlib.import_module("topi.generic")
    import topi
    assert topi.generic is generic
    line = sys._getframe().f_lineno + 2
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*te.lang.cce.matmul is part of the TBE DSL" % line):
        cce.matmul(None, None, False, False)
    with pytest.raises(UnsupportedOp, match=r"topi.generic.auto_schedule is part of the TBE DSL's scheduling.*"
                                            r"only TIK is simulated"):
        generic.auto_schedule
    assert not hasattr(cce, "__path__") and not hasattr(generic, "__wrapped__")


def test_cce_build_config_imports_and_refuses_use():
    """CANN's 2019 split_d.py imports ``from te.platform.cce_build import build_config`` for its tvm.build
    fallback and takes a TIK path for most shapes: the import works; ``with build_config:`` (or any use)
    raises UnsupportedOp at the user's line; other names of the module raise on access."""
    from pto_core.errors import UnsupportedOp
    from te.platform.cce_build import build_config
    import te.platform.cce_build as cce_build
    line = sys._getframe().f_lineno + 3
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*te.platform.cce_build.build_config is a TBE DSL "
                                            r"value" % line):
        with build_config:
            pass
    with pytest.raises(UnsupportedOp, match=r"te.platform.cce_build.build_config is a TBE DSL value"):
        build_config(dump_cce_code=True)
    with pytest.raises(UnsupportedOp, match=r"te.platform.cce_build.cce_build_code is part of the TBE DSL's build "
                                            r"configuration"):
        cce_build.cce_build_code
    assert not hasattr(cce_build, "__path__")


def test_tbe_dsl_compute_and_schedule_functions_import_by_name_for_a_tik_kernel():
    """CANN's 2021 split_v_d.py imports ``split_compute_com`` / ``split_schedule_com`` from
    ``tbe.dsl.compute.array`` / ``tbe.dsl.static_schedule.split_schedule`` for its DSL fallback, while its
    SplitEqual class is TIK (vnchwconv): the imports work, the TIK path runs, a call raises UnsupportedOp at
    the caller's line; protocol names stay AttributeError."""
    import numpy as np
    from pto_core.errors import UnsupportedOp
    from tbe import tik
    from tbe.dsl.compute.array import split_compute_com
    from tbe.dsl.static_schedule.split_schedule import split_schedule_com
    import tbe.dsl.compute.array as array_mod

    tik_instance = tik.Tik()
    x = tik_instance.Tensor("float16", (16, 16), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float16", (16, 16), name="y", scope=tik.scope_gm)
    a = tik_instance.Tensor("float16", (16, 16), name="a", scope=tik.scope_ubuf)
    b = tik_instance.Tensor("float16", (16, 16), name="b", scope=tik.scope_ubuf)
    tik_instance.data_move(a, x, 0, 1, 16, 0, 0)
    tik_instance.vnchwconv(False, False, [b[i, 0] for i in range(16)], [a[i, 0] for i in range(16)], 1, 0, 0)
    tik_instance.data_move(y, b, 0, 1, 16, 0, 0)
    tik_instance.BuildCCE(kernel_name="dsl_import_then_tik", inputs=[x], outputs=[y])
    data = np.arange(256, dtype=np.float16).reshape(16, 16)
    out, = tik_instance.tikdb.start_debug({"x": data}, interactive=False)
    assert np.array_equal(out, data.T)

    line = sys._getframe().f_lineno + 3
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*tbe.dsl.compute.array.split_compute_com builds "
                                            r"TVM expressions" % line):
        split_compute_com(None, 1, [8, 8], ["y0", "y1"])
    with pytest.raises(UnsupportedOp, match=r"tbe.dsl.static_schedule.split_schedule.split_schedule_com"):
        split_schedule_com(None, 1, None)
    assert not hasattr(array_mod, "__path__") and not hasattr(array_mod, "__wrapped__")


def test_cann_shape_helper_names_resolve_in_every_legacy_module():
    """Names CANN's topi.cce.util / te.utils.op_utils / para_check / shape_util define and TIK operators
    call (concat_v2_d, split_d, reverse_v2_d: ``util.axis_transfrom_5d``; reduce ops: ``util.shape_refine``
    then ``util.simplify_axis_shape``); the DSL-only ones import and refuse use at the caller's line."""
    from pto_core.errors import UnsupportedOp
    from topi.cce import util
    from te.utils import op_utils, shape_util as te_shape_util
    from te.utils import para_check as te_para_check
    from tbe.common.utils import shape_util
    import te.platform.cce_params as cce_params
    assert util.axis_transfrom_5d(1, "NHWC") == 2 and shape_util.axis_transform_5d(1, "NHWC") == 2
    shape, axes = util.shape_refine([4, 1, 3, 5], [2, 3])
    assert (shape, axes) == ([4, 3, 5], [1, 2]) and util.simplify_axis_shape(shape, axes) == ([4, 15], [1])
    assert shape_util.shape_refine is util.shape_refine is te_shape_util.shape_refine
    for module in (op_utils, te_para_check, shape_util):
        assert module.broadcast_shapes([2, 1], [3]) == ([2, 1], [1, 3], [2, 3])
        assert module.refine_shape_axes((2, 3, 4, 5, 6), (1, -3)) == ([2, 12, 30], [1])
    assert op_utils.MAX_UNKOWN_SHAPE_NUM == te_para_check.MAX_UNKOWN_SHAPE_NUM == 2 ** 31 - 1
    assert op_utils.MIN_UNKOWN_SHAPE_RANK == 0 and op_utils.OP_ERROR_CODE_013 == "E80013"
    assert not hasattr(importlib.import_module("tbe.common.utils.para_check"), "MAX_UNKOWN_SHAPE_NUM")
    assert cce_params.ASCEND_310AIC == "Ascend310AiCore" and cce_params.ASCEND_910AIC == "Ascend910AiCore"
    assert cce_params.ASCEND_620 == "Ascend620"
    line = sys._getframe().f_lineno + 2
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*create_param_ptr builds TVM expressions" % line):
        util.create_param_ptr([1, 2], "int32", "p")
    with pytest.raises(UnsupportedOp, match="variable_shape builds TVM expressions"):
        op_utils.variable_shape([{"shape": [-1], "range": [(1, 8)]}])


def test_platform_adapter_helpers_of_cann_tik_operators():
    """CANN's TIK operators (concat_v2_d_tik, split_d, scatter ops ...) import ``check_support_block_size_16``
    and ``check_supported_vcopy`` from ``impl.util.platform_adapter``; ``@tbe_platform.fusion_manager.register``
    decorates at import time; the DSL names import and refuse use."""
    from pto_core.errors import UnsupportedOp
    from impl.util.platform_adapter import (OpImplMode, OpPatternMode, OpTbeImplMode, buildcfg, check_support_block_size_16,
                                            check_supported_vcopy, classify, tbe, tbe_platform)
    from tbe.common.platform import set_current_compile_soc_info
    assert check_support_block_size_16() is False and check_supported_vcopy() is False      # Ascend310
    set_current_compile_soc_info("Ascend910B1")
    assert check_supported_vcopy() is True and check_support_block_size_16() is False
    assert OpImplMode.SUPPORT_OUT_OF_BOUND_INDEX == "support_out_of_bound_index"
    assert OpPatternMode.NORM == "norm" and OpTbeImplMode.TBE_HIGH_PRECISION == "high_precision"
    from impl.util.platform_adapter import add_compile_info, intrinsic_check_support
    from impl.util.platform_adapter import set_current_compile_soc_info as adapter_set_soc
    assert adapter_set_soc is platform.set_current_compile_soc_info
    assert intrinsic_check_support is platform.intrinsic_check_support and add_compile_info is register.add_compile_info

    @tbe_platform.fusion_manager.register("my_op")
    def my_op_compute(x):
        return x + 1
    assert my_op_compute(1) == 2 and tbe_platform.fusion_manager is register.fusion_manager
    assert not hasattr(importlib.import_module("tbe.common.platform"), "fusion_manager")
    line = sys._getframe().f_lineno + 2
    with pytest.raises(UnsupportedOp, match=r"test_aliases.py:%d.*classify builds TVM expressions" % line):
        classify([], "elewise")
    with pytest.raises(UnsupportedOp, match=r"tbe.dsl\)\.vadd is part of the TBE DSL"):
        tbe.vadd
    with pytest.raises(UnsupportedOp, match="buildcfg"):
        buildcfg.get_current_build_config("enable_op_prebuild")


def test_cce_conf_2020_names():
    """CANN 2020's ``te.platform.cce_conf`` extras: the 1951 product names compare equal to what
    ``get_product_version`` answers; ``is_lhisi_cs_version``, ``get_product``, ``set_status_check``."""
    from te.platform import cce_conf
    from tbe.common.platform import set_current_compile_soc_info
    assert cce_conf.get_product() is None and cce_conf.is_lhisi_cs_version() is False
    set_current_compile_soc_info("Ascend310P3")
    assert cce_conf.get_product_version() == cce_conf.VERSION_MINI_1951 and cce_conf.is_v200_version()
    set_current_compile_soc_info("Hi3796CV300CS")
    assert cce_conf.is_lhisi_cs_version() is True
    with pytest.warns(platform.TbeDeprecationWarning):
        cce_conf.te_set_version("Ascend910")
    assert cce_conf.get_product() == "1980"
    cce_conf.set_status_check(True)
    assert cce_conf.CceProductParams().get_build_option("status_check") is True
    with pytest.raises(platform.PlatformError, match="set_status_check takes a bool, got 1"):
        cce_conf.set_status_check(1)
    assert cce_conf.CceProductParams().get_build_option("status_check") is True     # bad input changed nothing


def test_tbe_tvm_topi_cce_util_is_the_legacy_topi_util():
    """CANN 5.x+ ops (celu) and MindSpore's later _custom_op files (matrix_combine, fused_abs_max1, img2col,
    matmul cube ops) import ``from tbe.tvm.topi.cce import util`` and ``from tbe.tvm.topi import generic``:
    the same modules as the legacy ``topi.cce.util`` / ``topi.generic``; ``tbe.tvm`` itself stays inert."""
    from pto_core.errors import UnsupportedOp
    from tbe.tvm.topi.cce import util
    from tbe.tvm.topi import generic
    import topi.cce.util
    import topi.generic
    from tbe import tvm as tbe_tvm
    assert util.get_product_version is topi.cce.util.get_product_version
    assert util.VERSION_MINI == topi.cce.util.VERSION_MINI and util.check_kernel_name is topi.cce.util.check_kernel_name
    assert util.MAX_KERNEL_NAEM_LEN == 200
    with pytest.raises(UnsupportedOp, match=r"not model|not simulated|TBE DSL"):
        generic.auto_schedule
    with pytest.raises(UnsupportedOp, match=r"tvm.decl_buffer .* not model"):
        tbe_tvm.decl_buffer
    assert topi.generic.__name__ == "topi.generic"
    ns = {}
    exec("from tbe.tvm import topi as t; from tbe.tvm.topi import cce as c", ns)
    assert ns["c"].util is util


def test_a_cann_module_the_simulator_lacks_is_a_clear_import_error(tmp_path, monkeypatch):
    """``import te.platform.cce_runtime`` (CANN pad_v3) used to end in Python's bare ``No module named``:
    now an UnsupportedOp naming the module, the script's line and what the package does provide, which
    is still a ModuleNotFoundError, so a script's ``try: import ... except ImportError:`` keeps working."""
    from pto_core.errors import UnsupportedOp
    from tbe_compat.missing_modules import MissingModule
    aliases.install()
    import te  # noqa: F401
    line = sys._getframe().f_lineno + 2
    with pytest.raises(MissingModule) as info:
        import te.platform.cce_runtime  # noqa: F401
    e = info.value
    assert isinstance(e, UnsupportedOp) and isinstance(e, ModuleNotFoundError)
    assert e.where.file == __file__ and e.where.line == line
    assert "'te.platform.cce_runtime' is not among the CANN modules the simulator provides" in str(e)
    assert "te.platform provides: cce_build, cce_conf" in str(e) and "Fix:" in str(e)
    with pytest.raises(MissingModule, match=r"'tbe\.common\.no_such_helper'"):
        from tbe.common import no_such_helper  # noqa: F401        (the from-import form keeps the message)
    try:
        import topi.cce.no_such_helper  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.fail("no ImportError")
    # impl is a namespace package: a project's own portion is found first; only what nobody provides fails
    (tmp_path / "impl" / "dynamic").mkdir(parents=True)
    (tmp_path / "impl" / "dynamic" / "own_op.py").write_text("OWN = 1\n")
    monkeypatch.setattr(sys, "path", sys.path + [str(tmp_path)])
    for name in [m for m in sys.modules if m == "impl" or m.startswith("impl.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    importlib.import_module("impl.common_util")
    assert importlib.import_module("impl.dynamic.own_op").OWN == 1
    with pytest.raises(MissingModule, match=r"'impl\.dynamic\.other_op' .*nor is it on sys.path"):
        importlib.import_module("impl.dynamic.other_op")
    # a foreign (real CANN) package is left alone: Python's own error
    foreign = types.ModuleType("topi")
    foreign.__path__ = [str(tmp_path)]
    monkeypatch.setitem(sys.modules, "topi", foreign)
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("topi.no_such_helper")
    assert not isinstance(info.value, MissingModule)


def test_missing_module_probes_and_later_finders(monkeypatch):
    """Probing (``importlib.util.find_spec``) a CANN module nobody provides answers None as Python does
    (not an error); ``importlib.import_module`` names the script's line (not importlib's); a finder a
    project appends to ``sys.meta_path`` after ``from tbe import tik`` still provides its modules."""
    import importlib.abc
    import importlib.machinery
    import importlib.util
    from tbe_compat.missing_modules import MissingModule
    aliases.install()
    importlib.import_module("te")
    assert importlib.util.find_spec("te.platform.cce_runtime") is None
    assert importlib.util.find_spec("tbe.common.no_such_helper") is None
    line = sys._getframe().f_lineno + 2
    with pytest.raises(MissingModule) as info:
        importlib.import_module("te.platform.cce_runtime")
    assert info.value.where.file == __file__ and info.value.where.line == line

    class Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            return importlib.machinery.ModuleSpec(name, self) if name == "te.platform.cce_runtime" else None

        def create_module(self, spec):
            return types.ModuleType(spec.name)

        def exec_module(self, module):
            module.STUB = True

    monkeypatch.setattr(sys, "meta_path", sys.meta_path + [Stub()])
    monkeypatch.delitem(sys.modules, "te.platform.cce_runtime", raising=False)
    assert importlib.import_module("te.platform.cce_runtime").STUB
    sys.modules.pop("te.platform.cce_runtime", None)


def test_from_tik_import_of_a_name_tik_does_not_have_names_tiks_spelling():
    """``from tbe.tik import scope_l0a`` (Python imports a submodule once the name lookup fails) was the
    missing-module error 'module tbe.tik.scope_l0a is not among the CANN modules'; it names TIK's spelling as
    ``tik.scope_l0a`` does, and stays an ImportError."""
    from tbe_compat.missing_modules import MissingModule
    with pytest.raises(MissingModule, match=r"test_aliases.py:\d+ in `import tbe.tik.scope_l0a`: tbe.tik has no "
                                            r"name or module 'scope_l0a' .*Fix: use tik.scope_ca"):
        from tbe.tik import scope_l0a  # noqa: F401
    with pytest.raises(ImportError, match=r"did you mean tik.Tik\?"):
        from tbe.tik import Tikk  # noqa: F401
    from tbe.tik import Tik, api, scope_ubuf  # noqa: F401   (real names and submodules still import)
