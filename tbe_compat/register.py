"""Operator-registration decorators that wrap TIK entry functions in real kernels
(``tbe.common.register``, ``te.op``, ``te.platform.fusion_manager``).

In CANN they feed the graph compiler; here they record what was registered (so a
driver can look an operator up by its type) and return the function unchanged, so
the decorated entry function runs exactly as written. Registering the same type
twice replaces the earlier record, as CANN's managers do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Optional

from pto_core.errors import IllegalOperand


class InvokeStage(IntEnum):
    """When a fusion pass runs (CANN ``class_manager.InvokeStage``)."""

    STAGE_PRE = 0
    STAGE_BUILD = 1
    STAGE_POST = 2


class Priority(IntEnum):
    """Fusion-pass priority (CANN ``class_manager.Priority``)."""

    HIGH = 0
    NORMAL = 1
    LOW = 2


@dataclass(frozen=True)
class OpCompute:
    """A registered compute function (``register_op_compute``)."""

    op_type: str
    op_mode: str
    support_fusion: bool
    func: Callable
    options: dict = field(default_factory=dict)

    def get_func(self) -> Callable:
        return self.func


@dataclass(frozen=True)
class Operator:
    """A registered operator entry function (``register_operator``)."""

    op_type: str
    pattern: Optional[str]
    func: Callable
    trans_bool_to_s8: bool = True

    def get_func(self) -> Callable:
        return self.func


@dataclass(frozen=True)
class FusionPassItem:
    """A registered fusion pass (``register_fusion_pass``)."""

    func: Callable
    stage: int
    priority: int


_op_computes: dict = {}
_operators: dict = {}
_param_generalizations: dict = {}
_tune_spaces: dict = {}
_tune_param_checks: dict = {}
_fusion_passes: list = []
_fusion_buildcfg: dict = {}
_compile_info: dict = {}


def _expect_name(value, api: str, operand: str = "op_type") -> str:
    if not isinstance(value, str) or not value:
        raise IllegalOperand(f"{operand} must be a non-empty str, got {value!r}", op=api, operand=operand,
                             value=value, hint=f"use @{api}(\"OpType\")")
    return value


def _recorder(table: dict, key, make: Callable, api: str) -> Callable:
    def decorator(func: Callable) -> Callable:
        if not callable(func):
            raise IllegalOperand(f"@{api} decorates a function, got {type(func).__name__}", op=api, operand="func",
                                 value=func, hint=f"put @{api}(...) on a def")
        table[key] = make(func)
        return func
    return decorator


def register_op_compute(op_type, op_mode="dynamic", support_fusion=True, **kwargs) -> Callable:
    """Decorator: record ``func`` as the compute function of ``op_type``."""
    _expect_name(op_type, "register_op_compute")
    return _recorder(_op_computes, (op_type, op_mode),
                     lambda f: OpCompute(op_type, op_mode, bool(support_fusion), f, dict(kwargs)),
                     "register_op_compute")


def get_op_compute(op_type, op_mode="dynamic") -> Optional[OpCompute]:
    return _op_computes.get((op_type, op_mode))


def register_operator(op_type, pattern=None, trans_bool_to_s8=True) -> Callable:
    """Decorator: record ``func`` as the entry function of operator ``op_type``."""
    _expect_name(op_type, "register_operator")
    return _recorder(_operators, op_type, lambda f: Operator(op_type, pattern, f, bool(trans_bool_to_s8)),
                     "register_operator")


def get_operator(op_type) -> Optional[Operator]:
    return _operators.get(op_type)


def get_op_register_pattern() -> dict:
    """``{op_type: pattern}`` of every registered operator."""
    return {name: op.pattern for name, op in _operators.items()}


def register_param_generalization(op_type) -> Callable:
    _expect_name(op_type, "register_param_generalization")
    return _recorder(_param_generalizations, op_type, lambda f: f, "register_param_generalization")


def get_param_generalization(op_type) -> Optional[Callable]:
    return _param_generalizations.get(op_type)


def register_tune_space(op_type) -> Callable:
    _expect_name(op_type, "register_tune_space")
    return _recorder(_tune_spaces, op_type, lambda f: f, "register_tune_space")


def get_tune_space(op_type) -> Optional[Callable]:
    return _tune_spaces.get(op_type)


def register_tune_param_check_supported(op_type) -> Callable:
    _expect_name(op_type, "register_tune_param_check_supported")
    return _recorder(_tune_param_checks, op_type, lambda f: f, "register_tune_param_check_supported")


def get_tune_param_check_supported(op_type) -> Optional[Callable]:
    return _tune_param_checks.get(op_type)


def register_fusion_pass(stage=InvokeStage.STAGE_BUILD, priority=Priority.NORMAL) -> Callable:
    """Decorator: record a UB fusion pass (never run by the simulator)."""
    def decorator(func: Callable) -> Callable:
        _fusion_passes.append(FusionPassItem(func, int(stage), int(priority)))
        return func
    return decorator


def get_all_fusion_pass() -> list:
    return list(_fusion_passes)


def set_fusion_buildcfg(op_type, build_config) -> None:
    if not isinstance(build_config, dict):
        raise IllegalOperand(f"build_config must be a dict, got {type(build_config).__name__}",
                             op="set_fusion_buildcfg", operand="build_config", value=build_config,
                             hint="pass build_config as a dict, e.g. {\"enable_vector_2x\": True}")
    _fusion_buildcfg[op_type] = dict(build_config)


def get_fusion_buildcfg(op_type=None):
    return dict(_fusion_buildcfg) if op_type is None else _fusion_buildcfg.get(op_type)


def reset() -> None:
    """Forget the fusion build configs (CANN's ``register.reset``)."""
    _fusion_buildcfg.clear()


# ---- te.op (older namespace) --------------------------------------------------------


def register_fusion_compute(op_type) -> Callable:
    """``te.op.register_fusion_compute``: record a fusion compute function."""
    return register_op_compute(op_type, op_mode="static", support_fusion=True)


def add_compile_info(key, value) -> None:
    """``te.op.add_compile_info``: record tiling information a dynamic kernel publishes."""
    _expect_name(key, "add_compile_info", "key")
    _compile_info[key] = value


def get_compile_info() -> dict:
    """Everything `add_compile_info` recorded in this process."""
    return dict(_compile_info)


# ---- te.platform.fusion_manager -----------------------------------------------------


class FusionManager:
    """``te.platform.fusion_manager.fusion_manager``: ``@fusion_manager.register("add")``
    records an operator's compute function and returns it unchanged."""

    def __init__(self) -> None:
        self._computes: dict = {}

    def register(self, register_name) -> Callable:
        _expect_name(register_name, "fusion_manager.register", "register_name")
        return _recorder(self._computes, register_name, lambda f: f, "fusion_manager.register")

    def has_op_compute(self, register_name) -> bool:
        return register_name in self._computes

    def get_op_compute(self, register_name) -> Optional[Callable]:
        return self._computes.get(register_name)


fusion_manager = FusionManager()

__all__ = ["InvokeStage", "Priority", "OpCompute", "Operator", "FusionPassItem", "register_op_compute",
           "get_op_compute", "register_operator", "get_operator", "get_op_register_pattern",
           "register_param_generalization", "get_param_generalization", "register_tune_space", "get_tune_space",
           "register_tune_param_check_supported", "get_tune_param_check_supported", "register_fusion_pass",
           "get_all_fusion_pass", "set_fusion_buildcfg", "get_fusion_buildcfg", "reset", "register_fusion_compute",
           "add_compile_info", "get_compile_info", "FusionManager", "fusion_manager"]
