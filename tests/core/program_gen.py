"""Random kernels for property tests, and an independent tree-walking reference evaluator.

`random_program(seed)` builds a valid kernel (every register initialised first, loop
variables used only inside their loop, divisors forced non-zero, shift counts in range)
mixing every scalar type, expression node, loop/if/elif/else, break/continue, scalar
loads/stores and (optionally) test ops. `reference_run` evaluates the IR directly with
`pto_core.scalars` (wrapping after every integer operation), independently of the
interpreter's code generator.
"""
from __future__ import annotations

import random

import numpy as np

from pto_core import pto
from pto_core import scalars as S

from program_testops import barrier_all
from pto_core.program import (BinOp, Bitcast, BlockIdx, BlockNum, Break, Cast, Cmp, Const, Continue, For, GmArg,
                              If, Load, LoopVar, OpStmt, PtrAdd, PtrCast, PtrFromInt, Reg, Return, ScalarArg, Select,
                              Store, UnOp, Assign, bitcast, cast, max_, min_, program, select, sqrt)

TYPES = ("bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "index", "f16", "bf16", "f32")
INT_TYPES = ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "index")
FLOAT_TYPES = ("f16", "bf16", "f32")
NBUF = 16


class _Gen:
    def __init__(self, seed: int, ops: bool):
        self.r = random.Random(seed)
        self.ops = ops

    def const(self, t):
        r = self.r
        if t == "bool":
            return r.random() < 0.5
        if t in FLOAT_TYPES:
            return r.choice([0.0, -0.0, 1.5, -2.25, 1e-3, 3.0e4, r.uniform(-100, 100), 65504.0, 1e-7])
        lo, hi = S.int_bounds(S.scalar_type(t))
        return r.choice([0, 1, -1 if lo < 0 else 2, lo, hi, r.randint(lo, hi), r.randint(-50, 50) if lo < 0 else
                         r.randint(0, 50)])

    def leaf(self, k, depth):
        r = self.r
        pick = r.random()
        if pick < 0.45 and self.regs:
            return r.choice(self.regs)
        if pick < 0.6 and self.vars:
            return r.choice(self.vars)
        if pick < 0.7:
            return r.choice([self.n, self.s])
        if pick < 0.73:
            return cast(k.block_idx, "s32")
        t = r.choice(TYPES)
        return Const(self.const(t), t)

    def expr(self, k, depth):
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            return self.leaf(k, depth)
        a = self.expr(k, depth - 1)
        b = self.expr(k, depth - 1)
        choice = r.random()
        ta = a.type
        if choice < 0.35:
            op = r.choice(["add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"])
            if op in ("and", "or", "xor", "shl", "shr") and (S.is_float(ta) or S.is_float(b.type)):
                a, b = cast(a, "s32"), cast(b, "s32")
            if op in ("shl", "shr"):
                if S.is_bool(a.type):
                    a = cast(a, "u8")
                return BinOp(op, a, cast(cast(b, a.type) & 7, a.type))
            if op in ("div", "rem"):
                if S.is_bool(a.type) and S.is_bool(b.type):
                    a = cast(a, "s16")
                from pto_core.program import _pair
                a, b = _pair(a, b)
                if not S.is_float(a.type):
                    b = b | 1
                return BinOp(op, a, b)
            if S.is_bool(a.type) and S.is_bool(b.type) and op in ("add", "sub", "mul", "min", "max"):
                a = cast(a, "s8")
            if op in ("min", "max"):
                return min_(a, b) if op == "min" else max_(a, b)
            from pto_core.program import binop
            return binop(op, a, b)
        if choice < 0.5:
            op = r.choice(["lt", "le", "gt", "ge", "eq", "ne"])
            from pto_core.program import cmp
            return cmp(op, a, b)
        if choice < 0.65:
            return cast(a, r.choice(TYPES))
        if choice < 0.72:
            if S.is_bool(ta):
                return ~a if r.random() < 0.5 else (a & (b != 0))
            if S.is_float(ta):
                return r.choice([-a, abs(a), sqrt(a), UnOp(r.choice(list(S.ROUND_TO_INTEGRAL)), a)])
            return r.choice([-a, ~a, abs(a)])
        if choice < 0.78:
            bits = ta.bits
            others = [t for t in TYPES if S.scalar_type(t).bits == bits and t != ta.name and t != "bool"
                      and not (t == "index" or ta.name == "index")]
            if others and not S.is_bool(ta):
                return bitcast(a, r.choice(others))
            return a
        if choice < 0.86:
            return select(self.expr(k, depth - 1) > 0, a, b)
        return a + b if not (S.is_bool(ta) and S.is_bool(b.type)) else a | b

    def block(self, k, depth, in_loop):
        r = self.r
        for _ in range(r.randint(1, 4)):
            kind = r.random()
            if kind < 0.35 or depth <= 0:
                reg = r.choice(self.regs)
                reg.set(self.expr(k, 3))
            elif kind < 0.45:
                idx = cast(self.expr(k, 2), "s32") & (NBUF - 1)
                k.load(self.x, idx, into=r.choice(self.regs))
            elif kind < 0.55:
                idx = cast(self.expr(k, 2), "s32") & (NBUF - 1)
                k.store(self.buf, idx, self.expr(k, 2))
            elif kind < 0.7:
                with k.if_(self.expr(k, 2)):
                    self.block(k, depth - 1, in_loop)
                if r.random() < 0.6:
                    if r.random() < 0.4:
                        with k.elif_(self.expr(k, 2)):
                            self.block(k, depth - 1, in_loop)
                    with k.else_():
                        self.block(k, depth - 1, in_loop)
            elif kind < 0.85:
                hi = self.n if r.random() < 0.4 else r.randint(0, 4)
                lo = r.randint(0, 1) if not isinstance(hi, int) else r.randint(0, max(0, hi))
                step = r.choice([1, 1, 2])
                with k.for_(lo, hi, step, name=r.choice(["i", "j", "kk"]), dtype=r.choice([None, "s32", "u16"])) as v:
                    self.vars.append(v)
                    self.block(k, depth - 1, True)
                    self.vars.pop()
            elif kind < 0.9 and in_loop:
                with k.if_(self.expr(k, 1) > 0):
                    (k.break_ if r.random() < 0.5 else k.continue_)()
            elif kind < 0.93 and self.ops:
                barrier_all()
                pto.t_fill(self.ub + r.randint(0, 4), r.randint(1, 8), self.expr(k, 1).astype("s32"))
                barrier_all()
                pto.t_copy(self.ub, self.buf, NBUF)
                barrier_all()
            elif kind < 0.95:
                with k.if_(self.expr(k, 1) > 100):
                    k.return_()
            else:
                reg = r.choice(self.regs)
                if S.is_bool(reg.type):
                    reg ^= cast(self.expr(k, 2), "bool")
                else:
                    reg += self.expr(k, 2)


def random_program(seed: int, *, ops: bool = False, depth: int = 3):
    """A random valid kernel and its inputs: ``(program, inputs)``."""
    g = _Gen(seed, ops)
    with program(f"rand{seed}", target="A2A3") as k:
        g.x = k.gm_arg("x", "s32", (NBUF,))
        g.buf = k.gm_arg("buf", "s32", (NBUF,), io="out", fill="zero")
        g.n = k.scalar_arg("n", "s32")
        g.s = k.scalar_arg("s", "u8")
        nreg = g.r.randint(3, 7)
        g.regs = [k.reg(t, g.const(t), name=f"r{i}") for i, t in enumerate(g.r.choice(TYPES) for _ in range(nreg))]
        out_i = k.gm_arg("out_i", "s64", (nreg,), io="out", fill="zero")
        out_f = k.gm_arg("out_f", "f32", (nreg,), io="out", fill="zero")
        g.vars = []
        if ops:
            g.ub = k.ptr("ub", "s32", 0)
            pto.t_fill(g.ub, NBUF, 0)
            barrier_all()
        g.block(k, depth, False)
        for i, reg in enumerate(g.regs):
            if S.is_float(reg.type):
                k.store(out_f, i, reg)
            else:
                k.store(out_i, i, reg)
    rng = np.random.default_rng(seed)
    inputs = {"x": rng.integers(-1000, 1000, NBUF).astype(np.int32), "n": int(rng.integers(0, 5)),
              "s": int(rng.integers(0, 256))}
    return k.program, inputs


# ============================================================================= reference evaluator

class _Exit(Exception):
    def __init__(self, kind):
        self.kind = kind


def reference_run(prog, inputs: dict, block_idx: int = 0, block_num: int = 1) -> dict:
    """Evaluate a scalar-only kernel (loads/stores to GM, no ops) by walking the IR."""
    mem = {}
    for a in prog.gm_args:
        if a.io in ("in", "inout"):
            mem[a] = np.array(inputs[a.name]).reshape(-1).view(np.uint8).copy()
        else:
            mem[a] = np.zeros(a.nbytes, dtype=np.uint8)
    regs = {}
    env = {}

    def ev(e):
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Reg):
            return regs[e]
        if isinstance(e, LoopVar):
            return env[e]
        if isinstance(e, ScalarArg):
            return S.normalize(inputs[e.name], e.type)
        if isinstance(e, BlockIdx):
            return block_idx
        if isinstance(e, BlockNum):
            return block_num
        if isinstance(e, BinOp):
            a, b, t = ev(e.a), ev(e.b), e.type
            if S.is_bool(t):
                return {"and": a & b, "or": a | b, "xor": a ^ b}[e.op]
            if S.is_float(t):
                rnd = S.ROUNDERS[t.name]
                return {"add": lambda: rnd(a + b), "sub": lambda: rnd(a - b), "mul": lambda: rnd(a * b),
                        "div": lambda: rnd(S.fdiv(a, b)), "rem": lambda: S.frem(a, b),
                        "min": lambda: S.fmin(a, b), "max": lambda: S.fmax(a, b)}[e.op]()
            v = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: S.tdiv(a, b),
                 "rem": lambda: S.trem(a, b), "shl": lambda: S.shl(a, b, t.bits), "shr": lambda: S.shr(a, b),
                 "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "min": lambda: min(a, b),
                 "max": lambda: max(a, b)}[e.op]()
            return S.wrap(v, t)
        if isinstance(e, UnOp):
            a, t = ev(e.a), e.type
            if S.is_bool(t):
                return not a
            if S.is_float(t):
                if e.op in S.ROUND_TO_INTEGRAL:
                    return S.ROUND_TO_INTEGRAL[e.op](a)
                return {"neg": -a, "abs": abs(a), "sqrt": S.ROUNDERS[t.name](S.fsqrt(a))}[e.op]
            return S.wrap({"neg": -a, "not": ~a, "abs": abs(a)}[e.op], t)
        if isinstance(e, Cmp):
            a, b = ev(e.a), ev(e.b)
            return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[e.pred]
        if isinstance(e, Cast):
            return S.convert(ev(e.a), e.a.type, e.type)
        if isinstance(e, Bitcast):
            return S.bitcast(ev(e.a), e.a.type, e.type)
        if isinstance(e, Select):
            return ev(e.a) if ev(e.c) else ev(e.b)
        raise TypeError(e)

    def addr(p):
        if isinstance(p, GmArg):
            return mem[p], 0
        if isinstance(p, PtrAdd):
            base, off = addr(p.p)
            return base, off + ev(p.n) * (p.dtype.bits // 8)
        if isinstance(p, PtrCast):
            return addr(p.p)
        raise TypeError(p)

    def run(block):
        for s in block:
            if isinstance(s, Assign):
                regs[s.reg] = ev(s.value)
            elif isinstance(s, Load):
                buf, off = addr(s.ptr)
                off += ev(s.offset) * s.ptr.dtype.itemsize
                v = buf[off:off + s.ptr.dtype.itemsize].view(s.ptr.dtype.storage)[0]
                regs[s.reg] = float(v) if S.is_float(s.reg.type) else int(v)
            elif isinstance(s, Store):
                buf, off = addr(s.ptr)
                off += ev(s.offset) * s.ptr.dtype.itemsize
                buf[off:off + s.ptr.dtype.itemsize].view(s.ptr.dtype.storage)[0] = ev(s.value)
            elif isinstance(s, For):
                lo, hi, st = ev(s.lo), ev(s.hi), ev(s.step)
                for i in range(lo, hi, st):
                    env[s.var] = i
                    try:
                        run(s.body)
                    except _Exit as x:
                        if x.kind == "break":
                            break
                        if x.kind == "continue":
                            continue
                        raise
            elif isinstance(s, If):
                if ev(s.cond):
                    run(s.then)
                elif s.orelse:
                    run(s.orelse)
            elif isinstance(s, Break):
                raise _Exit("break")
            elif isinstance(s, Continue):
                raise _Exit("continue")
            elif isinstance(s, Return):
                raise _Exit("return")
            elif isinstance(s, OpStmt):
                raise TypeError("reference_run evaluates scalar-only kernels")
            else:
                raise TypeError(s)

    try:
        run(prog.body)
    except _Exit as x:
        if x.kind != "return":
            raise
    return {a.name: mem[a].view(a.dtype.storage).reshape(a.shape) for a in prog.gm_args if a.io in ("out", "inout")}


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical arrays, except that NaNs only need to be NaN in both."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        na, nb = np.isnan(a), np.isnan(b)
        ua = a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16)
        ub = b.view(ua.dtype)
        return bool(np.array_equal(na, nb) and np.array_equal(ua[~na], ub[~nb]))
    return bool(np.array_equal(a, b))


__all__ = ["random_program", "reference_run", "same", "PtrFromInt"]
