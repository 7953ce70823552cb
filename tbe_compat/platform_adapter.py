"""What CANN's ``impl.util.platform_adapter`` gives operator scripts, from the facade's parts.

CANN's built-in operator package re-exports, in one module, the names its TIK kernels
use: ``tik``, ``tbe_platform`` (the ``tbe.common.platform`` namespace; also as ``PlatformApi``), ``para_check``,
``shape_util``, ``tvm`` (importable only: the TBE DSL's TVM layer is not simulated, see
`tbe_compat.tvm`), ``register_operator`` / ``register_operator_compute``, ``error_manager_vector``
(the ``raise_err_*`` parameter errors), ``tbe_context`` (the per-build op context kernels
add compile info to) and a few constant classes. The legacy alias
``impl.util.platform_adapter`` imports from here.

``impl`` and ``impl.util`` are *namespace* packages (no ``__init__.py``): a project's own
regular ``impl`` package always takes precedence over them, so the alias never shadows
user code.
"""
from __future__ import annotations

from pto_core.errors import IllegalOperand

from . import para_check, platform as tbe_platform  # noqa: F401
from .dsl_modules import DslNamespace, dsl_only
from .tik.errors import user_frame

#: CANN 2022+ ops also import the platform namespace as ``PlatformApi``
#: (``PlatformApi.get_soc_spec(PlatformApi.UB_SIZE)``, swin_attention_ffn).
PlatformApi = tbe_platform
from . import tik  # noqa: F401
from . import tvm  # noqa: F401
from .register import register_op_compute, register_operator  # noqa: F401
# names CANN's module imports at its top and ops import from it (``from impl.util.platform_adapter import
# set_current_compile_soc_info``; ``add_compile_info`` is ``tbe.dsl.base.operation.add_compile_info``, the
# same record as ``te.op.add_compile_info``)
from .platform import intrinsic_check_support, set_current_compile_soc_info  # noqa: F401
from .register import add_compile_info  # noqa: F401


def register_operator_compute(op_type, op_mode="dynamic", support_fusion=False):
    """Decorator registering an op's compute function (CANN spelling of `register_op_compute`)."""
    return register_op_compute(op_type, op_mode, support_fusion)


class OpPatternMode:
    """Operator pattern names used by CANN's dynamic-shape classifier (values as CANN 2021-2022)."""

    NONE = ""
    GATHER = "gather"
    ELEWISE = "elewise"
    ELEWISE_WITH_BROADCAST = "broadcast"
    REDUCE = "reduce"
    TRANSDATA = "transdata"
    NORM = "norm"
    TUPLE_REDUCE = "tuple_reduce"
    POOLING_GRAD_WITH_ARG = "pooling_grad_with_arg"
    POOLING = "pooling"
    ASCEND_ANTI_QUANT = "anti_quant"
    ASCEND_QUANT = "quant"
    SEGMENT = "segment"
    SPARSE_APPLY = "sparse_apply"
    SORT = "sort"
    CONV2D_BP_FILTER = "Conv2d_backprop_filter"


class OpImplMode:
    """Implementation modes a kernel may be asked to favour (``impl_mode=`` of an entry function)."""

    HIGH_PERFORMANCE = "high_performance"
    HIGH_PRECISION = "high_precision"
    SUPER_PERFORMANCE = "super_performance"
    NORM_CLASS = "norm_class"
    SUPPORT_OUT_OF_BOUND_INDEX = "support_out_of_bound_index"


class OpTbeImplMode:
    """The TBE implementation mode name CANN's ``platform_adapter`` also exports."""

    TBE_HIGH_PRECISION = "high_precision"


def check_support_block_size_16() -> bool:
    """True on chips whose UB block is 16 bytes (CANN's nano-series test; TIK kernels such as
    ``concat_v2_d_tik`` pick their block constants from it): ``get_block_size() == 16``."""
    return tbe_platform.get_block_size() == 16


def check_supported_vcopy() -> bool:
    """True where TIK's ``vcopy`` exists: ``api_check_support("tik.vcopy")``."""
    return bool(tbe_platform.api_check_support("tik.vcopy"))


#: Names of CANN's ``platform_adapter`` that are the TBE DSL / compiler (``tbe`` is ``tbe.dsl``,
#: ``classify`` / ``tbe_classify`` its shape classifier, ``operation`` its dynamic-shape context,
#: ``buildcfg`` / ``build_config`` the build configuration, ``op_tiling`` / ``rl_bank`` compiler
#: services, ``tuple_sum`` a DSL compute): importable, raising `UnsupportedOp` when used.
tbe = DslNamespace("impl.util.platform_adapter.tbe (tbe.dsl)")
operation = DslNamespace("impl.util.platform_adapter.operation (tbe.dsl.base.operation)")
buildcfg = DslNamespace("impl.util.platform_adapter.buildcfg (tbe.common.buildcfg)")
op_tiling = DslNamespace("impl.util.platform_adapter.op_tiling (tbe.common.utils.op_tiling)")
rl_bank = DslNamespace("impl.util.platform_adapter.rl_bank (tbe.common.rl_bank)")
classify = dsl_only("impl.util.platform_adapter.classify")
tbe_classify = dsl_only("impl.util.platform_adapter.tbe_classify")
tuple_sum = dsl_only("impl.util.platform_adapter.tuple_sum")
build_config = dsl_only("impl.util.platform_adapter.build_config")


class TbeContextKey:
    PATTERN = "pattern"


class _ErrorManagerVector:
    """``error_manager_vector``: every ``raise_err_<what>(op_name, *details)`` raises CANN's
    ``RuntimeError(error_info_dict, message)`` naming the op, the check and the values given."""

    def __getattr__(self, name):
        if not name.startswith("raise_err_"):
            raise AttributeError(f"error_manager_vector has no attribute {name!r}")
        what = name[len("raise_err_"):].replace("_", " ")

        def raise_err(op_name="", *details, **named):
            parts = [repr(d) for d in details] + [f"{k}={v!r}" for k, v in named.items()]
            message = f"In op[{op_name}], {what}" + (f": {', '.join(parts)}" if parts else "")
            raise RuntimeError({"errCode": name, "op_name": op_name, "detail": parts}, message)
        raise_err.__name__ = name
        return raise_err


error_manager_vector = _ErrorManagerVector()
#: ``error_manager_cube``: the same ``raise_err_<what>`` reporters (CANN keeps a separate table per family)
error_manager_cube = error_manager_vector


class error_manager_util:  # noqa: N801 (CANN's module name, used as ``error_manager_util.raise_runtime_error``)
    """``error_manager_util``: ``raise_runtime_error(error_info_dict)`` raises CANN's
    ``RuntimeError(error_info_dict, message)``; ``get_error_message(error_info_dict)`` formats it."""

    @staticmethod
    def get_error_message(args: dict) -> str:
        return ", ".join(f"{k}: {v}" for k, v in dict(args).items())

    @staticmethod
    def raise_runtime_error(args: dict):
        raise RuntimeError(args, error_manager_util.get_error_message(args))


class OpInfo:
    """What an operator unit test registers on its op context (CANN ``tbe.common.context.op_info.OpInfo``):
    the op's name and type (``OpInfo("ScanPQCodes", "ScanPQCodes")``); the simulator only keeps it."""

    def __init__(self, op_name, op_type):
        for operand, value in (("op_name", op_name), ("op_type", op_type)):
            if not isinstance(value, str) or not value:
                raise IllegalOperand(f"{operand} must be a non-empty str, got {value!r}", op="OpInfo", operand=operand,
                                     value=value, hint='use OpInfo("MyOp", "MyOp")', where=user_frame())
        self.op_name = op_name
        self.op_type = op_type

    def __repr__(self):
        return f"OpInfo({self.op_name!r}, {self.op_type!r})"


class OpContext:
    """The per-build op context (CANN ``tbe.common.context.op_context.OpContext``): a store for the
    compile info and build results a kernel reports (the simulator only keeps them) and the op mode.

    Used as a context manager (``with tbe.common.context.op_context.OpContext("dynamic"):``, as CANN's
    operator unit tests do), it is what ``tbe_context.get_context()`` returns inside the ``with``
    block; outside any block ``get_context()`` gives one process-wide context in mode ``"static"``.
    The mode is only recorded (``get_op_mode()``): TIK kernels run the same either way.
    """

    def __init__(self, op_mode="static"):
        if not isinstance(op_mode, str) or not op_mode:
            raise IllegalOperand(f"the op mode must be a non-empty str such as 'static' or 'dynamic', got {op_mode!r}",
                                 op="OpContext", operand="op_mode", value=op_mode,
                                 hint='use OpContext("dynamic") or OpContext("static")',
                                 where=user_frame())
        self.op_mode = op_mode
        self.compile_info: dict = {}
        self.build_res: dict = {}
        self.op_infos: list = []

    def add_compile_info(self, key, value):
        self.compile_info[key] = value

    def get_compile_info(self):
        return self.compile_info

    def add_build_res(self, key, value):
        self.build_res[key] = value

    def get_build_res(self, key=None):
        return self.build_res if key is None else self.build_res.get(key)

    def get_op_mode(self):
        return self.op_mode

    def add_op_info(self, op_info):
        if not isinstance(op_info, OpInfo):
            raise IllegalOperand(f"add_op_info takes an OpInfo, got {type(op_info).__name__}", op="add_op_info",
                                 operand="op_info", value=op_info,
                                 hint='use tbe.common.context.op_info.OpInfo("MyOp", "MyOp")', where=user_frame())
        self.op_infos.append(op_info)

    def get_op_info(self, op_name=None):
        """The registered `OpInfo` objects (all, or those named ``op_name``)."""
        return [i for i in self.op_infos if op_name is None or i.op_name == op_name]

    def __enter__(self):
        tbe_context._stack.append(self)
        return self

    def __exit__(self, *exc):
        # contexts close in the reverse order they opened (``with`` blocks nest)
        if tbe_context._stack and tbe_context._stack[-1] is self:
            tbe_context._stack.pop()
        return False


#: the name this context had before ``OpContext`` became public
_OpContext = OpContext


class _TbeContext:
    """``tbe_context`` (CANN ``tbe.common.context``): ``get_context()`` gives the innermost
    ``with OpContext(...)`` context, else the process-wide one."""

    def __init__(self):
        self._context = OpContext()
        self._stack: list = []

    def get_context(self):
        return self._stack[-1] if self._stack else self._context


tbe_context = _TbeContext()


def get_context():
    """``tbe.common.context.get_context()`` / ``op_context.get_context()``: the current op context."""
    return tbe_context.get_context()


# CANN's platform_adapter exports the ``tbe.common.utils.errormgr`` package as ``error_manager`` (imported last:
# it re-exports the reporters defined above)
from . import errormgr as error_manager  # noqa: E402

__all__ = ["tik", "tvm", "tbe_platform", "PlatformApi", "para_check", "register_operator", "register_operator_compute",
           "OpPatternMode", "OpImplMode", "TbeContextKey", "error_manager_vector", "error_manager_cube",
           "error_manager_util", "error_manager", "tbe_context", "OpContext", "OpInfo", "OpTbeImplMode",
           "check_support_block_size_16", "check_supported_vcopy", "tbe", "operation", "buildcfg", "op_tiling",
           "rl_bank", "classify", "tbe_classify", "tuple_sum", "build_config", "set_current_compile_soc_info",
           "intrinsic_check_support", "add_compile_info"]
