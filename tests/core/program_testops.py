"""Test-local PTO ops for the program / interpreter / PTO-AS tests.

They exercise every operand kind and clause form of the registry contract, so the
generic machinery is tested independently of the real op families. Registered only
while a test module that uses the `testops` fixture runs (``registry.OPS`` is restored
afterwards).
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

from pto_core import pto
from pto_core.errors import IllegalOperand
from pto_core.ops import registry
from pto_core.ops.registry import Clause, Operand, OpSpec
from pto_core.program import Expr

ANY = ("gm", "l1", "l0a", "l0b", "l0c", "ub", "bt", "fb")


def _copy(ctx, src, dst, n):
    nb = src.dtype.nbytes(n)
    data = ctx.read(src, nb, operand="src").copy()
    ctx.write(dst, nb, operand="dst")[:] = data


def _copy_pipe(operands, clauses):
    src, dst = operands[0], operands[1]
    if src.space == "gm":
        return "MTE2"
    if dst.space == "gm":
        return "MTE3"
    return "MTE1"


def _fill(ctx, dst, n, value):
    ctx.view(dst, n, write=True, operand="dst")[:] = value


def _matmul(ctx, a, b, c, m, n, k, acc=None, unit_flag=None):
    """Row-major ``c[m, n] (+)= a[m, k] @ b[k, n]`` in f32."""
    if not (1 <= m <= 4095 and 1 <= n <= 4095 and 1 <= k <= 4095):
        raise IllegalOperand(f"shape ({m}, {n}, {k}) outside [1, 4095]", operand="%m", limit="[1, 4095]")
    av = ctx.view(a, m * k, operand="lhs").astype(np.float32).reshape(m, k)
    bv = ctx.view(b, k * n, operand="rhs").astype(np.float32).reshape(k, n)
    prod = av @ bv
    if acc:
        cur = ctx.view(c, m * n, operand="dst").reshape(m, n)
        prod = prod + cur
    ctx.view(c, m * n, write=True, operand="dst")[:] = prod.reshape(-1)


def _matmul_verify(call, target):
    a, b, c = call.operands[:3]
    if (a.dtype.name, b.dtype.name, c.dtype.name) != ("f16", "f16", "f32"):
        raise IllegalOperand(f"dtypes {a.dtype.name} x {b.dtype.name} -> {c.dtype.name} are not supported",
                             operand="%lhs", limit="f16 x f16 -> f32")


def _atomic_add(ctx, src, dst, n):
    """GM read-modify-write add (one op = one atomic transaction)."""
    nb = src.dtype.nbytes(n)
    add = ctx.read(src, nb, operand="src").view(src.dtype.storage)
    ctx.gm_atomic = "add"                # the GM accesses are an atomic add (cross-core race checker)
    try:
        cur = ctx.read(dst, nb, operand="dst").view(dst.dtype.storage).copy()
        ctx.write(dst, nb, operand="dst").view(dst.dtype.storage)[:] = cur + add
    finally:
        ctx.gm_atomic = None


def _sync(ctx, src_pipe, dst_pipe, event):
    log = getattr(ctx, "test_sync_log", None)
    if log is None:
        log = ctx.test_sync_log = []
    log.append((src_pipe, dst_pipe, event))


def _demo(ctx, dst, n, mode=None, scale=None, bias=None, flagc=None, sat=None):
    """Writes a code of its clause values to ``dst[0:n]`` (s32) so tests can see what arrived."""
    v = 0
    if mode is not None:
        v += {"a": 1, "b": 2}[mode]
    if scale is not None:
        args, kw = scale
        v += 10 * int(args[0]) + (100 * int(args[1]) if len(args) > 1 else 0)
        v += {"x": 1000, "y": 2000}.get(kw.get("kind"), 0)
    if bias is not None:
        v += 10000 if bias is True else 20000 + int(bias)
    if flagc:
        v += 100000
    if sat is not None:
        v += {True: 1000000, False: 2000000, "preserve_nan": 3000000}[sat]
    ctx.view(dst, n, write=True, operand="dst")[:] = v


def _gather(ctx, dst, srcs, n):
    """``dst[i*n:(i+1)*n] = srcs[i][0:n]`` for a list of source pointers (a ``ptrs`` operand)."""
    for i, src in enumerate(srcs):
        ctx.view(dst + i * n, n, write=True, operand="dst")[:] = ctx.view(src, n, operand=f"srcs[{i}]")


def _boom(ctx, dst, code):
    if code > 0:
        raise IllegalOperand(f"code {code} is positive", operand="%code", value=code, limit="<= 0")


SPECS = [
    OpSpec("t_copy", "mte", _copy_pipe, (Operand("src", "ptr", ANY), Operand("dst", "ptr", ANY),
                                         Operand("n", "int")), _copy, doc="copy n elements"),
    OpSpec("t_fill", "vector", "V", (Operand("dst", "ptr", ANY), Operand("n", "int"), Operand("value", "scalar")),
           _fill, doc="fill n elements"),
    OpSpec("t_matmul", "cube", "M", (Operand("lhs", "ptr", ("l0a",)), Operand("rhs", "ptr", ("l0b",)),
                                     Operand("dst", "ptr", ("l0c",)), Operand("m", "int"), Operand("n", "int"),
                                     Operand("k", "int")), _matmul,
           clauses=(Clause("acc", "flag"), Clause("unit_flag", "word", values=("check_only", "check_and_set"))),
           verify=_matmul_verify, doc="row-major matmul"),
    OpSpec("t_atomic_add", "mte", "MTE3", (Operand("src", "ptr", ANY), Operand("dst", "ptr", ("gm",)),
                                            Operand("n", "int")), _atomic_add, doc="GM += src"),
    OpSpec("t_sync", "sync", "S", (Operand("src", "pipe"), Operand("dst", "pipe"), Operand("event", "event")),
           _sync, doc="flag"),
    OpSpec("t_demo", "vector", "V", (Operand("dst", "ptr", ANY), Operand("n", "int")), _demo,
           clauses=(Clause("mode", "word", values=("a", "b")),
                    Clause("scale", "args", params=("%s", "%t"), min_params=1, keys={"kind": ("x", "y")}),
                    Clause("bias", "optarg", params=("%b",)), Clause("flagc", "flag"), Clause("sat", "sat")),
           doc="clause forms"),
    OpSpec("t_gather", "vector", "V", (Operand("dst", "ptr", ANY), Operand("srcs", "ptrs", ANY),
                                       Operand("n", "int")), _gather, doc="list-of-pointers operand"),
    OpSpec("t_boom", "vector", "V", (Operand("dst", "ptr", ANY), Operand("code", "int")), _boom,
           doc="raises for positive codes"),
]


def with_asm_form(spec: OpSpec, form: str) -> OpSpec:
    """``spec`` printed in PTO-AS form ``form`` (an `OpSpec.asm_form` field where the registry has one)."""
    if any(f.name == "asm_form" for f in dataclasses.fields(OpSpec)):
        return dataclasses.replace(spec, asm_form=form)
    cls = type("OpSpecWithForm", (OpSpec,), {"asm_form": form})
    return cls(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)})


SPECS = [with_asm_form(s, "bracket") if s.name == "t_sync" else s for s in SPECS]


# ----------------------------------------------------------------------------- synchronisation in test kernels
# The real sync ops (and the hazard verifier that checks them) may or may not be registered; test
# kernels synchronise through these helpers so they are correct either way.

def has_op(name: str) -> bool:
    return name in registry.OPS


def set_flag(src, dst, event):
    """``pto.set_flag`` (``_dyn`` for a run-time event id) when registered, else the no-op ``t_sync``."""
    if has_op("set_flag"):
        (pto.set_flag_dyn if isinstance(event, Expr) else pto.set_flag)(src, dst, event)
    else:
        pto.t_sync(src, dst, event)


def wait_flag(src, dst, event):
    if has_op("wait_flag"):
        (pto.wait_flag_dyn if isinstance(event, Expr) else pto.wait_flag)(src, dst, event)


def sync(src, dst, event=0):
    """Producer ``src`` -> consumer ``dst`` edge: set_flag then wait_flag."""
    set_flag(src, dst, event)
    wait_flag(src, dst, event)


def barrier_all():
    if has_op("pipe_barrier"):
        pto.pipe_barrier("ALL")


@contextlib.contextmanager
def registered():
    saved = dict(registry.OPS)
    for spec in SPECS:
        if spec.name not in registry.OPS:
            registry.register(spec)
    try:
        yield
    finally:
        registry.OPS.clear()
        registry.OPS.update(saved)


@pytest.fixture(scope="module")
def testops():
    with registered():
        yield
