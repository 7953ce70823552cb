"""tik-migrate --format python: the replacement Python of every TIK call site runs, inside the same TIK kernel, to
bit-identical outputs (kernels rewritten from the tool's own rows), says so where it cannot name an operand, and
spells every clause the way the Python API takes it."""
import ast
import importlib.util
import itertools
import re

import numpy as np
import pytest

from pto_core import pto
from pto_core.ops.registry import OPS, clause_python, normalize_clause
from tbe_compat.migrate import main
from tbe_compat.migrate_python import PLACEHOLDER, format_python, python_rows
from tbe_compat.tik import registry as tik_registry


@pytest.fixture(autouse=True)
def _owners_recorded():
    """These tests build kernels and call python_rows themselves: record call owners as tik-migrate --format
    python does (`registry.recording_call_owners`); the lifetime tests below turn it off."""
    with tik_registry.recording_call_owners():
        yield

HEAD = '''\
import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
'''

#: name -> (source of a module defining kernel() and feed(), TIK API calls it makes that record PTO ops)
KERNELS = {
    "vec_tail": (HEAD + '''
N, CORES, PER, LAST = 1000, 2, 512, 488


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
    with ti.for_range(0, CORES, block_num=CORES) as core:
        xu = ti.Tensor("float16", (PER,), name="xu", scope=tik.scope_ubuf)
        yu = ti.Tensor("float16", (PER,), name="yu", scope=tik.scope_ubuf)
        count = ti.Scalar("int32", name="count")
        with ti.if_scope(core < CORES - 1):
            count.set_as(PER)
        with ti.else_scope():
            count.set_as(LAST)
        base = core * PER
        burst = ti.Scalar("int32", name="burst")
        burst.set_as((count * 2 + 31) // 32)
        ti.data_move(xu, x[base], 0, 1, burst, 0, 0)
        ti.data_move(yu, y[base], 0, 1, burst, 0, 0)
        rep = ti.Scalar("int32", name="rep")
        rep.set_as(count // 128)
        tail = ti.Scalar("int32", name="tail")
        tail.set_as(count % 128)
        with ti.if_scope(rep > 0):
            ti.vec_add(128, xu, xu, yu, rep, 8, 8, 8)
            ti.vec_relu(128, xu, xu, rep, 8, 8)
        with ti.if_scope(tail > 0):
            off = rep * 128
            ti.vec_add(tail, xu[off], xu[off], yu[off], 1, 8, 8, 8)
            ti.vec_relu(tail, xu[off], xu[off], 1, 8, 8)
        ti.data_move(z[base], xu, 0, 1, burst, 0, 0)
    ti.BuildCCE(kernel_name="vec_tail", inputs=[x, y], outputs=[z])
    return ti


def feed():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}
''', 7),
    "moves": (HEAD + '''
def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    a = ti.Tensor("float16", (8, 64), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float16", (8, 32), name="b", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (8, 32), name="ub", scope=tik.scope_ubuf)
    l1 = ti.Tensor("float16", (8, 32), name="l1", scope=tik.scope_cbuf)
    with ti.for_range(0, 2) as half:
        ti.data_move(ub[half * 4, 0], a[half * 4, 16], 0, 4, 2, 2, 0)
    ti.data_move(l1, ub, 0, 2, 8, 0, 0)
    ti.data_move(ub, l1, 0, 1, 16, 0, 0)
    ti.vec_adds(128, ub, ub, 1.5, 2, 8, 8)
    ti.data_move(b, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="moves", inputs=[a], outputs=[b])
    return ti


def feed():
    return {"a": np.random.default_rng(1).standard_normal((8, 64)).astype(np.float16)}
''', 5),
    "matmul": (HEAD + '''
M, K, N, KC = 32, 128, 64, 64
KC1, NC, NC1, M1 = KC // 16, 32, 2, 2


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (K // 16, M, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (K // 16, N, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = ti.Tensor("float16", (N // 16, M, 16), name="c_gm", scope=tik.scope_gm)
    with ti.for_range(0, 2, block_num=2) as core:
        a_l1 = ti.Tensor("float16", (KC1, M, 16), name="a_l1", scope=tik.scope_cbuf)
        b_l1 = ti.Tensor("float16", (KC1, NC, 16), name="b_l1", scope=tik.scope_cbuf)
        a_l0 = ti.Tensor("float16", (M1, KC1, 16, 16), name="a_l0", scope=tik.scope_ca)
        b_l0 = ti.Tensor("float16", (KC1, NC1, 16, 16), name="b_l0", scope=tik.scope_cb)
        c_l0c = ti.Tensor("float32", (NC1, M, 16), name="c_l0c", scope=tik.scope_cbuf_out)
        with ti.for_range(0, K // KC) as kc:
            ti.data_move(a_l1, a_gm[kc * KC1, 0, 0], 0, 1, KC1 * M, 0, 0)
            ti.data_move(b_l1, b_gm[kc * KC1, core * NC, 0], 0, KC1, NC, N - NC, 0)
            with ti.for_range(0, M1) as m1:
                ti.load2dv2(a_l0[m1, 0, 0, 0], a_l1[0, m1 * 16, 0], 0, KC1, 0, M1, 0, False)
            ti.load2dv2(b_l0, b_l1, 0, KC1 * NC1, 0, 1, 0, False)
            with ti.if_scope(kc == 0):
                ti.mmad(c_l0c, a_l0, b_l0, M, KC, NC, 0)
            with ti.else_scope():
                ti.mmad(c_l0c, a_l0, b_l0, M, KC, NC, 1)
        ti.fixpipe(c_gm[core * NC1, 0, 0], c_l0c, NC1, M * 16 * 4 // 32, 0, 0,
                   extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}, "relu": True})
    ti.BuildCCE(kernel_name="matmul", inputs=[a_gm, b_gm], outputs=[c_gm])
    return ti


def feed():
    rng = np.random.default_rng(2)
    return {"a_gm": rng.standard_normal((K // 16, M, 16)).astype(np.float16),
            "b_gm": rng.standard_normal((K // 16, N, 16)).astype(np.float16)}
''', 7),
    "conv": (HEAD + '''
N = 256


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    w = ti.Tensor("int32", (N,), name="w", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (N,), name="xu", scope=tik.scope_ubuf)
    xf = ti.Tensor("float32", (N,), name="xf", scope=tik.scope_ubuf)
    th = ti.Tensor("float32", (N,), name="th", scope=tik.scope_ubuf)
    wi = ti.Tensor("int32", (N,), name="wi", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, N * 2 // 32, 0, 0)
    ti.vec_conv(64, "none", xf, xu, N // 64, 8, 4)
    ti.vec_dup(64, th, 0.3, N // 64, 8)
    ti.vec_mul(64, xf, xf, th, N // 64, 8, 8, 8)
    low = ti.Tensor("float32", (64,), name="low", scope=tik.scope_ubuf)
    ti.vec_dup(64, low, float("-inf"), 1, 8)                # a literal Python has no name for
    ti.vec_max(64, xf, xf, low, N // 64, 8, 8, 0)
    ti.vec_conv(64, "round", xu, xf, N // 64, 4, 8)
    ti.vec_conv(64, "ceil", wi, xf, N // 64, 8, 8)
    ti.data_move(y, xu, 0, 1, N * 2 // 32, 0, 0)
    ti.data_move(w, wi, 0, 1, N * 4 // 32, 0, 0)
    ti.BuildCCE(kernel_name="conv", inputs=[x], outputs=[y, w])
    return ti


def feed():
    return {"x": (np.random.default_rng(3).standard_normal(N) * 100).astype(np.float16)}
''', 10),
    "atomic_branches": (HEAD + '''
N = 256


def kernel():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (N,), name="x", scope=tik.scope_gm)
    mode = ti.InputScalar("int32", name="mode")
    y = ti.Tensor("float32", (N,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    xu = ti.Tensor("float32", (N,), name="xu", scope=tik.scope_ubuf)
    with ti.for_range(0, 2, block_num=2) as core:
        ti.data_move(xu, x, 0, 1, N * 4 // 32, 0, 0)
        ti.vec_muls(64, xu, xu, mode, N // 64, 8, 8)
        ti.set_atomic_add(mode)                     # the lowering branches on the InputScalar
        ti.data_move(y, xu, 0, 1, N * 4 // 32, 0, 0)
        ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="atomic_branches", inputs=[x, mode], outputs=[y])
    return ti


def feed():
    return {"x": np.random.default_rng(5).standard_normal(N).astype(np.float32), "mode": 1}
''', 5),
    "reduce": (HEAD + '''
ROWS, COLS = 8, 256


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (ROWS, COLS), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (ROWS, COLS), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (COLS,), name="xu", scope=tik.scope_ubuf)
    red = ti.Tensor("float16", (16,), name="red", scope=tik.scope_ubuf)
    work = ti.Tensor("float16", (32,), name="work", scope=tik.scope_ubuf)
    mx = ti.Scalar("float16", name="mx")
    sm = ti.Scalar("float16", name="sm")
    with ti.for_range(0, ROWS) as r:
        ti.data_move(xu, x[r, 0], 0, 1, COLS * 2 // 32, 0, 0)
        ti.vec_reduce_max(128, red, xu, work, 2, 8, cal_index=False)
        ti.vec_muls(1, red, red, -1.0, 1, 8, 8)
        mx.set_as(red[0])
        ti.vec_adds(128, xu, xu, mx, 2, 8, 8)
        ti.vec_exp(128, xu, xu, 2, 8, 8)
        ti.vec_reduce_add(128, red, xu, work, 2, 8)
        ti.vec_rec(1, red, red, 1, 8, 8)
        sm.set_as(red[0])
        ti.vec_muls(128, xu, xu, sm, 2, 8, 8)
        ti.data_move(y[r, 0], xu, 0, 1, COLS * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="reduce", inputs=[x], outputs=[y])
    return ti


def feed():
    return {"x": np.random.default_rng(4).standard_normal((ROWS, COLS)).astype(np.float16)}
''', 9),
    # feat469: class-based kernels in CANN style -- the Tik instance, the tensors and Scalars are attributes of the
    # operator object, declared in one method and used in others (ATTR_RULE)
    "cls_vec_tail": (HEAD + '''
N, CORES, PER, LAST = 1000, 2, 512, 488


class AddRelu:
    def __init__(self):
        set_current_compile_soc_info("Ascend310")
        self.tik_instance = tik.Tik()
        self.x_gm = self.tik_instance.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
        self.y_gm = self.tik_instance.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
        self.z_gm = self.tik_instance.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
        self.x_ub = None
        self.y_ub = None
        self.rep = None
        self.tail = None

    def _init_ub(self):
        self.x_ub = self.tik_instance.Tensor("float16", (PER,), name="x_ub", scope=tik.scope_ubuf)
        self.y_ub = self.tik_instance.Tensor("float16", (PER,), name="y_ub", scope=tik.scope_ubuf)
        self.rep = self.tik_instance.Scalar("int32", name="rep")
        self.tail = self.tik_instance.Scalar("int32", name="tail")

    def _tail(self):
        off = self.rep * 128
        self.tik_instance.vec_add(self.tail, self.x_ub[off], self.x_ub[off], self.y_ub[off], 1, 8, 8, 8)
        self.tik_instance.vec_relu(self.tail, self.x_ub[off], self.x_ub[off], 1, 8, 8)

    def compute(self):
        with self.tik_instance.for_range(0, CORES, block_num=CORES) as core:
            self._init_ub()
            count = self.tik_instance.Scalar("int32", name="count")
            with self.tik_instance.if_scope(core < CORES - 1):
                count.set_as(PER)
            with self.tik_instance.else_scope():
                count.set_as(LAST)
            base = core * PER
            burst = self.tik_instance.Scalar("int32", name="burst")
            burst.set_as((count * 2 + 31) // 32)
            self.tik_instance.data_move(self.x_ub, self.x_gm[base], 0, 1, burst, 0, 0)
            self.tik_instance.data_move(self.y_ub, self.y_gm[base], 0, 1, burst, 0, 0)
            self.rep.set_as(count // 128)
            self.tail.set_as(count % 128)
            with self.tik_instance.if_scope(self.rep > 0):
                self.tik_instance.vec_add(128, self.x_ub, self.x_ub, self.y_ub, self.rep, 8, 8, 8)
                self.tik_instance.vec_relu(128, self.x_ub, self.x_ub, self.rep, 8, 8)
            with self.tik_instance.if_scope(self.tail > 0):
                self._tail()
            self.tik_instance.data_move(self.z_gm[base], self.x_ub, 0, 1, burst, 0, 0)
        self.tik_instance.BuildCCE(kernel_name="add_relu", inputs=[self.x_gm, self.y_gm], outputs=[self.z_gm])
        return self.tik_instance


def kernel():
    return AddRelu().compute()


def feed():
    rng = np.random.default_rng(7)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}
''', 7),
    "cls_block_param": (HEAD + '''
N, CORES, PER, LAST = 1000, 2, 512, 488


class AddRelu:
    def __init__(self):
        set_current_compile_soc_info("Ascend310")
        self.tik_instance = tik.Tik()
        self.x_gm = self.tik_instance.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
        self.y_gm = self.tik_instance.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
        self.z_gm = self.tik_instance.Tensor("float16", (N,), name="z", scope=tik.scope_gm)

    def init_ub(self):
        self.xu = self.tik_instance.Tensor("float16", (PER,), name="xu", scope=tik.scope_ubuf)
        self.yu = self.tik_instance.Tensor("float16", (PER,), name="yu", scope=tik.scope_ubuf)
        self.count = self.tik_instance.Scalar("int32", name="count")

    def compute_core(self, core):
        base = core * PER
        burst = self.tik_instance.Scalar("int32", name="burst")
        burst.set_as((self.count * 2 + 31) // 32)
        self.tik_instance.data_move(self.xu, self.x_gm[base], 0, 1, burst, 0, 0)
        self.tik_instance.data_move(self.yu, self.y_gm[base], 0, 1, burst, 0, 0)
        rep = self.tik_instance.Scalar("int32", name="rep")
        rep.set_as(self.count // 128)
        tail = self.tik_instance.Scalar("int32", name="tail")
        tail.set_as(self.count % 128)
        with self.tik_instance.if_scope(rep > 0):
            self.tik_instance.vec_add(128, self.xu, self.xu, self.yu, rep, 8, 8, 8)
            self.tik_instance.vec_relu(128, self.xu, self.xu, rep, 8, 8)
        with self.tik_instance.if_scope(tail > 0):
            off = rep * 128
            self.tik_instance.vec_add(tail, self.xu[off], self.xu[off], self.yu[off], 1, 8, 8, 8)
            self.tik_instance.vec_relu(tail, self.xu[off], self.xu[off], 1, 8, 8)
        self.tik_instance.data_move(self.z_gm[base], self.xu, 0, 1, burst, 0, 0)

    def build(self):
        with self.tik_instance.for_range(0, CORES, block_num=CORES) as core:
            self.init_ub()
            with self.tik_instance.if_scope(core < CORES - 1):
                self.count.set_as(PER)
            with self.tik_instance.else_scope():
                self.count.set_as(LAST)
            self.compute_core(core)
        self.tik_instance.BuildCCE(kernel_name="add_relu", inputs=[self.x_gm, self.y_gm], outputs=[self.z_gm])
        return self.tik_instance


def kernel():
    return AddRelu().build()


def feed():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}
''', 7),
    "cls_loop_param": (HEAD + '''
N, CORES, PER, CHUNK = 1024, 2, 512, 256


class AddChunks:
    def __init__(self):
        set_current_compile_soc_info("Ascend310")
        self.ti = tik.Tik()
        self.x_gm = self.ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
        self.y_gm = self.ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
        self.z_gm = self.ti.Tensor("float16", (N,), name="z", scope=tik.scope_gm)

    def _chunk(self, core, j):
        xu = self.ti.Tensor("float16", (CHUNK,), name="xu", scope=tik.scope_ubuf)
        yu = self.ti.Tensor("float16", (CHUNK,), name="yu", scope=tik.scope_ubuf)
        self.ti.data_move(xu, self.x_gm[core * PER + j * CHUNK], 0, 1, CHUNK // 16, 0, 0)
        self.ti.data_move(yu, self.y_gm[core * PER + j * CHUNK], 0, 1, CHUNK // 16, 0, 0)
        self.ti.vec_add(128, xu, xu, yu, CHUNK // 128, 8, 8, 8)
        self.ti.data_move(self.z_gm[core * PER + j * CHUNK], xu, 0, 1, CHUNK // 16, 0, 0)

    def compute(self):
        with self.ti.for_range(0, CORES, block_num=CORES) as core:
            with self.ti.for_range(0, PER // CHUNK) as j:
                self._chunk(core, j)
        self.ti.BuildCCE(kernel_name="add_chunks", inputs=[self.x_gm, self.y_gm], outputs=[self.z_gm])
        return self.ti


def kernel():
    return AddChunks().compute()


def feed():
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal(N).astype(np.float16), "y": rng.standard_normal(N).astype(np.float16)}
''', 4),
    "cls_matmul": (HEAD + '''
M, K, N, KC = 32, 128, 64, 64
KC1, NC, NC1, M1 = KC // 16, 32, 2, 2


class MatmulRelu:
    def __init__(self):
        set_current_compile_soc_info("Ascend910B1")
        self.tik_inst = tik.Tik()
        self.a_gm = self.tik_inst.Tensor("float16", (K // 16, M, 16), name="a_gm", scope=tik.scope_gm)
        self.b_gm = self.tik_inst.Tensor("float16", (K // 16, N, 16), name="b_gm", scope=tik.scope_gm)
        self.c_gm = self.tik_inst.Tensor("float16", (N // 16, M, 16), name="c_gm", scope=tik.scope_gm)

    def _alloc(self):
        self.a_l1 = self.tik_inst.Tensor("float16", (KC1, M, 16), name="a_l1", scope=tik.scope_cbuf)
        self.b_l1 = self.tik_inst.Tensor("float16", (KC1, NC, 16), name="b_l1", scope=tik.scope_cbuf)
        self.a_l0 = self.tik_inst.Tensor("float16", (M1, KC1, 16, 16), name="a_l0", scope=tik.scope_ca)
        self.b_l0 = self.tik_inst.Tensor("float16", (KC1, NC1, 16, 16), name="b_l0", scope=tik.scope_cb)
        self.c_l0c = self.tik_inst.Tensor("float32", (NC1, M, 16), name="c_l0c", scope=tik.scope_cbuf_out)

    def _load_a(self):
        with self.tik_inst.for_range(0, M1) as m1:
            self.tik_inst.load2dv2(self.a_l0[m1, 0, 0, 0], self.a_l1[0, m1 * 16, 0], 0, KC1, 0, M1, 0, False)

    def _mmad(self, kc):
        with self.tik_inst.if_scope(kc == 0):
            self.tik_inst.mmad(self.c_l0c, self.a_l0, self.b_l0, M, KC, NC, 0)
        with self.tik_inst.else_scope():
            self.tik_inst.mmad(self.c_l0c, self.a_l0, self.b_l0, M, KC, NC, 1)

    def compute(self):
        with self.tik_inst.for_range(0, 2, block_num=2) as core:
            self._alloc()
            with self.tik_inst.for_range(0, K // KC) as kc:
                self.tik_inst.data_move(self.a_l1, self.a_gm[kc * KC1, 0, 0], 0, 1, KC1 * M, 0, 0)
                self.tik_inst.data_move(self.b_l1, self.b_gm[kc * KC1, core * NC, 0], 0, KC1, NC, N - NC, 0)
                self._load_a()
                self.tik_inst.load2dv2(self.b_l0, self.b_l1, 0, KC1 * NC1, 0, 1, 0, False)
                self._mmad(kc)
            self.tik_inst.fixpipe(self.c_gm[core * NC1, 0, 0], self.c_l0c, NC1, M * 16 * 4 // 32, 0, 0,
                                  extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None},
                                                 "relu": True})
        self.tik_inst.BuildCCE(kernel_name="matmul_relu", inputs=[self.a_gm, self.b_gm], outputs=[self.c_gm])
        return self.tik_inst


def kernel():
    return MatmulRelu().compute()


def feed():
    rng = np.random.default_rng(8)
    return {"a_gm": rng.standard_normal((K // 16, M, 16)).astype(np.float16),
            "b_gm": rng.standard_normal((K // 16, N, 16)).astype(np.float16)}
''', 7),
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rewrite(path, rows, runnable_only=True) -> str:
    """The kernel source with every row's call statement replaced by the row's code (same indentation)."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    stmts = {n.lineno: n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Expr) and
             isinstance(n.value, ast.Call)}
    for r in sorted(rows, key=lambda r: -r.line):
        assert (r.runnable or not runnable_only) and r.file == str(path), (r.site, r.problems)
        st = stmts[r.line]
        pad = " " * st.col_offset
        lines[st.lineno - 1:st.end_lineno] = [pad + c + "\n" for c in r.code]
    return "from pto_core import pto\n" + "".join(lines)


def _run(mod):
    outs = mod.kernel().tikdb.start_debug(mod.feed(), interactive=False)
    return [np.asarray(o).tobytes() for o in outs]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_call_site_replaced_by_its_python_runs_bit_identical(name, tmp_path):
    src, sites = KERNELS[name]
    path = tmp_path / f"{name}_tik.py"
    path.write_text(src)
    mod = _load(path, f"{name}_tik_{id(tmp_path)}")
    tik = mod.kernel()
    rows = python_rows(tik)
    assert len(rows) == sites, [r.site for r in rows]
    golden = _run(mod)
    assert all(g != b"\xff" * len(g) for g in golden)       # really written, not the GM fill
    new = tmp_path / f"{name}_pto.py"
    new.write_text(_rewrite(path, rows))
    mixed = _load(new, f"{name}_pto_{id(tmp_path)}")
    assert python_rows(mixed.kernel()) == []                # no TIK call recording PTO ops is left
    assert _run(mixed) == golden


def test_vector_rows_name_tensors_scalars_and_clauses(tmp_path):
    path = tmp_path / "vec_tail_names.py"
    path.write_text(KERNELS["vec_tail"][0])
    rows = python_rows(_load(path, f"vec_tail_names_{id(tmp_path)}").kernel())
    by_line = {r.source: r for r in rows}
    tail_add = by_line["ti.vec_add(tail, xu[off], xu[off], yu[off], 1, 8, 8, 8)"]
    assert tail_add.code == ["pto.ub.vadd(xu.pto_ptr() + rep * 128, xu.pto_ptr() + rep * 128, "
                             "yu.pto_ptr() + rep * 128, 1, mask=tail, rep_stride=(8, 8, 8))"]
    load = by_line["ti.data_move(xu, x[base], 0, 1, burst, 0, 0)"]
    assert load.code == ["pto.mte_gm_ub(x.pto_ptr() + core * 512, xu.pto_ptr(), 0, 32, nburst=(burst, 32, 32))"]
    assert any("pto.assert_in_range" in n for n in load.notes)
    vadd = by_line["ti.vec_add(128, xu, xu, yu, rep, 8, 8, 8)"]
    assert any("auto-sync inserts set_flag/wait_flag MTE2 -> V" in n for n in vadd.notes)


def test_branches_a_lowering_opened_are_if_scopes_of_the_calls_tik_instance(tmp_path):
    path = tmp_path / "atomic_names.py"
    path.write_text(KERNELS["atomic_branches"][0])
    rows = python_rows(_load(path, f"atomic_names_{id(tmp_path)}").kernel())
    atomic = next(r for r in rows if r.source == "ti.set_atomic_add(mode)")
    assert atomic.code[:6] == ["with ti.if_scope(mode == 0):", "    pto.set_atomic_none()", "with ti.else_scope():",
                               "    with ti.if_scope(mode == 1):", "        pto.set_atomic_f32()",
                               "        pto.set_atomic_add()"]


def test_cube_and_conv_clauses_are_python_keywords(tmp_path):
    path = tmp_path / "mm_names.py"
    path.write_text(KERNELS["matmul"][0])
    rows = python_rows(_load(path, f"mm_names_{id(tmp_path)}").kernel())
    code = [c for r in rows for c in r.code]
    assert "pto.mad(a_l0.pto_ptr(), b_l0.pto_ptr(), c_l0c.pto_ptr(), 32, 32, 64, disable_gemv=True)" in code
    fix = next(c for c in code if c.startswith("pto.mte_l0c_gm("))
    assert fix.endswith('pre_quant=(0.0, {"mode": "f32_f16"}), pre_relu={"mode": "normal_relu"})')
    import os                                                   # pto_api.md shows this line (wrapped)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "migration_guide", "pto_api.md"), encoding="utf-8") as f:
        page = f.read()
    shown = re.search(r"```text\n(pto\.mte_l0c_gm\(c_l0c.*?)```", page, re.S).group(1)
    assert " ".join(shown.split()) == fix
    path = tmp_path / "conv_names.py"
    path.write_text(KERNELS["conv"][0])
    rows = python_rows(_load(path, f"conv_names_{id(tmp_path)}").kernel())
    conv = [c for r in rows for c in r.code if c.startswith("pto.ub.vconv(")]
    assert [re.findall(r'round="\w"', c) for c in conv] == [[], ['round="r"'], ['round="c"']]


UNNAMED = HEAD + '''
def add(ti, dst, a, b, n):
    ti.vec_add(n, dst, a, b, 1, 8, 8, 8)


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("float16", (256,), name="xu", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 16, 0, 0)
    add(ti, xu, xu, xu, 128)
    for k in range(2):
        ti.vec_muls(128, xu[k * 128], xu[k * 128], 0.5, 1, 8, 8)
    ti.data_move(y, xu, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="unnamed", inputs=[x], outputs=[y])
    return ti
'''


def test_operands_the_trace_cannot_name_are_placeholders_and_the_site_says_so(tmp_path):
    path = tmp_path / "unnamed.py"
    path.write_text(UNNAMED)
    tik = _load(path, f"unnamed_{id(tmp_path)}").kernel()
    rows = {r.source: r for r in python_rows(tik)}
    helper = rows["ti.vec_add(n, dst, a, b, 1, 8, 8, 8)"]
    assert not helper.runnable
    assert helper.code == [f"pto.ub.vadd({PLACEHOLDER}xu.pto_ptr(), {PLACEHOLDER}xu.pto_ptr(), "
                           f"{PLACEHOLDER}xu.pto_ptr(), 1, mask=128, rep_stride=(8, 8, 8))"]
    assert any("'xu'" in p and "may not be the name" in p for p in helper.problems)
    loop = rows["ti.vec_muls(128, xu[k * 128], xu[k * 128], 0.5, 1, 8, 8)"]
    assert not loop.runnable and "2 times with different operands" in loop.problems[0]
    assert "pto.ub.vmuls(xu.pto_ptr() + 128, xu.pto_ptr() + 128, 0.5, 1, mask=128, rep_stride=(8, 8))" in loop.code
    text = format_python(list(rows.values()), "unnamed")
    assert text.count("# NOT RUNNABLE AS IS") == 2
    with pytest.raises(NameError, match=PLACEHOLDER):          # run as it stands: stops, never runs wrong
        exec(compile("\n".join(helper.code), "gen.py", "exec"), {"pto": pto})


def test_tik_scratch_pointer_is_a_placeholder(tmp_path):
    src = HEAD + '''
def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (1, 16, 16), name="out", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (1, 16, 16), name="a_l1", scope=tik.scope_cbuf)
    a_l0 = ti.Tensor("float16", (1, 16, 16), name="a_l0", scope=tik.scope_ca)
    b_l0 = ti.Tensor("float16", (1, 16, 16), name="b_l0", scope=tik.scope_cb)
    acc = ti.Tensor("float32", (1, 16, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a_l1, a_gm, 0, 1, 16, 0, 0)
    ti.load2dv1(a_l0, a_l1, 0, 1, 1, 0, False)
    ti.load2dv1(b_l0, a_l1, 0, 1, 1, 0, False)
    ti.mmad(acc, a_l0, b_l0, 16, 16, 16, 0)
    ti.fixpipe(out, acc, 1, 32, 0, 0, extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None},
                                                     "relu": True})
    ti.BuildCCE(kernel_name="scratch", inputs=[a_gm], outputs=[out])
    return ti
'''
    path = tmp_path / "scratch.py"
    path.write_text(src)
    rows = python_rows(_load(path, f"scratch_{id(tmp_path)}").kernel())
    fix = next(r for r in rows if r.api == "tik.fixpipe")
    assert not fix.runnable
    assert any("scratch TIK placed for itself" in p for p in fix.problems), fix.problems
    assert any(f"{PLACEHOLDER}ub_0x" in c for c in fix.code), fix.code


def _sample_values(clause):
    """Canonical values (what normalize_clause returns) of every shape the clause takes."""
    if clause.form == "flag":
        return [True]
    if clause.form == "sat":
        return [True, False, "preserve_nan"]
    if clause.form in ("word", "word_or_arg"):
        return list(clause.values) + ([7] if clause.form == "word_or_arg" else [])
    if clause.form == "optarg":
        return [True, 3]
    if clause.form == "attr":
        return list(clause.values) or [5]
    need = len(clause.params) if clause.min_params is None else clause.min_params
    out = []
    for n in range(need, len(clause.params) + 1):
        args = tuple(itertools.islice(itertools.cycle((3, 0.5, 64)), n))
        out.append((args, {}))
        for k, legal in clause.keys.items():
            out.append((args, {k: legal[0] if legal else "x"}))
    if clause.repeat:
        return [tuple(out[:2])]
    return out


def test_clause_python_is_the_inverse_of_normalize_clause():
    """Every clause of every op: the Python text the tool writes, evaluated, normalises back to the value."""
    checked = 0
    for spec in OPS.values():
        for clause in spec.clauses:
            for value in _sample_values(clause):
                text = clause_python(clause, value, repr)
                assert normalize_clause(spec, clause, eval(text)) == value, (spec.name, clause.name, value, text)
                checked += 1
    assert checked > 900


def test_cli_prints_python_and_refuses_bad_combinations(tmp_path, capsys):
    path = tmp_path / "cli_kernel.py"
    path.write_text(KERNELS["moves"][0] + "\n\nif __name__ == '__main__':\n    kernel()\n")
    assert main([str(path), "--format", "python"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# kernel moves: the Python statements")
    assert "pto.mte_ub_gm(ub.pto_ptr(), b.pto_ptr(), 512, nburst=(1, 512, 512))" in out
    compile(out, "out.py", "exec")                              # the whole output is Python
    for extra, flag in ((["-o", str(tmp_path / "k.pto")], "-o"), (["--expand"], "--expand"),
                        (["--constants"], "--constants"), (["--width", "40"], "--width"),
                        (["--group", "sequence"], "--group sequence")):
        assert main([str(path), "--format", "python", *extra]) == 2
        err = capsys.readouterr().err
        assert f"{flag} cannot be combined with --format python" in err and "Fix:" in err, err
    assert not (tmp_path / "k.pto").exists()


#: example scripts whose every TIK call site has a runnable replacement (others hold TIK scratch: conv2d, matmul,
#: fixpipe on a chip without the FIXPIPE unit; or tensors in Python lists)
RUNNABLE_EXAMPLES = {"tik_argmax.py": [], "tik_atomic_reduce.py": [], "tik_dynamic_shape.py": ["333"],
                     "tik_entry_returns_none.py": [], "tik_softmax.py": [], "tik_tiled_copy.py": [],
                     "tik_vector_add_tail.py": []}


def _trace(path, args):
    import contextlib
    import io
    from tbe_compat.migrate import trace_script
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return trace_script(str(path), args)


@pytest.mark.parametrize("example", sorted(RUNNABLE_EXAMPLES))
def test_example_rewritten_with_its_rows_gives_the_same_outputs(example, tmp_path, monkeypatch):
    """The example with every TIK call site replaced by its rows (run as tik-migrate runs it) gives every
    start_debug output bit for bit."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "examples", example)
    args = RUNNABLE_EXAMPLES[example]
    before = _trace(path, args)
    assert before.status == 0 and before.runs
    rows = [r for tik in before.kernels.values() for r in python_rows(tik)]
    assert rows and all(r.runnable for r in rows), [(r.site, r.problems) for r in rows if not r.runnable]
    import pathlib
    new = tmp_path / example
    new.write_text(_rewrite(pathlib.Path(path), rows))
    monkeypatch.syspath_prepend(os.path.join(root, "examples"))
    after = _trace(new, args)
    assert after.status == 0
    assert [r for tik in after.kernels.values() for r in python_rows(tik)] == []
    assert sorted(after.runs) == sorted(before.runs)
    for name, runs in before.runs.items():
        for r0, r1 in zip(runs, after.runs[name], strict=True):
            assert {k: np.asarray(v).tobytes() for k, v in r0.results.items()} == \
                   {k: np.asarray(v).tobytes() for k, v in r1.results.items()}


#: review466: names the call's source spells, bound to another tensor there. A helper's parameters named like the
#: kernel's tensors but passed swapped; a Python loop's ``prev`` (its tensor declared as ``t`` one run earlier);
#: ``old = cur`` before ``cur`` is rebound. Each once wrote the wrong tensor into a runnable row.
REBOUND = HEAD + '''
N = 256


def combine(ti, a, b):
    ti.vec_sub(128, a, a, b, 2, 8, 8, 8)


def kernel():
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float16", (N,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (N,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, N * 2 // 32, 0, 0)
    ti.vec_muls(128, b, a, 3.0, 2, 8, 8)
    combine(ti, b, a)
    prev = None
    for k in range(2):
        t = ti.Tensor("float16", (N,), name=f"t{k}", scope=tik.scope_ubuf)
        ti.vec_adds(128, t, b, float(k), 2, 8, 8)
        if prev is not None:
            ti.vec_mul(128, t, t, prev, 2, 8, 8, 8)
        prev = t
    cur = ti.Tensor("float16", (N,), name="ping", scope=tik.scope_ubuf)
    old = cur
    cur = ti.Tensor("float16", (N,), name="pong", scope=tik.scope_ubuf)
    ti.vec_muls(128, old, t, 0.5, 2, 8, 8)
    ti.vec_add(128, cur, t, old, 2, 8, 8, 8)
    ti.data_move(y, cur, 0, 1, N * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="rebound", inputs=[x], outputs=[y])
    return ti


def feed():
    return {"x": np.random.default_rng(6).standard_normal(N).astype(np.float16)}
'''


def test_a_name_the_call_spells_but_bound_to_another_tensor_is_a_placeholder(tmp_path):
    """A name is written only where it is provably bound to the traced tensor at the call (NAME_RULE); every other
    row is NOT RUNNABLE, and the kernel with its runnable rows replaced (the others kept as TIK calls) gives the
    same bits."""
    path = tmp_path / "rebound.py"
    path.write_text(REBOUND)
    mod = _load(path, f"rebound_{id(tmp_path)}")
    rows = {r.source: r for r in python_rows(mod.kernel())}
    for src, wrong in (("ti.vec_sub(128, a, a, b, 2, 8, 8, 8)", "b.pto_ptr(), b.pto_ptr(), a.pto_ptr()"),
                       ("ti.vec_mul(128, t, t, prev, 2, 8, 8, 8)", "t.pto_ptr(), t.pto_ptr(), t.pto_ptr()"),
                       ("ti.vec_muls(128, old, t, 0.5, 2, 8, 8)", "cur.pto_ptr()"),
                       ("ti.vec_add(128, cur, t, old, 2, 8, 8, 8)", "t.pto_ptr(), cur.pto_ptr()")):
        r = rows[src]
        assert not r.runnable and r.problems, (src, r.code)
        assert not any(wrong in c for c in r.code), (src, r.code)
    vec_add = rows["ti.vec_add(128, cur, t, old, 2, 8, 8, 8)"]
    assert vec_add.code[0].startswith(f"pto.ub.vadd(cur.pto_ptr(), {PLACEHOLDER}t_t1.pto_ptr(), "
                                      f"{PLACEHOLDER}cur_ping.pto_ptr(), ")       # t0 / t1 told apart
    assert rows["ti.data_move(y, cur, 0, 1, N * 2 // 32, 0, 0)"].runnable     # cur: the last binding
    golden = _run(mod)
    new = tmp_path / "rebound_pto.py"
    new.write_text(_rewrite(path, [r for r in rows.values() if r.runnable]))
    assert _run(_load(new, f"rebound_pto_{id(tmp_path)}")) == golden


def test_a_call_run_with_different_operands_stops_before_its_runs_if_pasted_as_it_stands(tmp_path):
    """Every run's statements one after the other, pasted into the Python loop as they stand, would all run at each
    call (xu[0:128] and xu[128:256] halved twice): the row starts with a placeholder (RUNS_GUARD), so it stops with a
    NameError instead, and the whole kernel rewritten with every row as printed stops there too."""
    path = tmp_path / "runs.py"
    path.write_text(UNNAMED.replace("    add(ti, xu, xu, xu, 128)\n", ""))
    mod = _load(path, f"runs_{id(tmp_path)}")
    rows = python_rows(mod.kernel())
    loop = next(r for r in rows if r.source == "ti.vec_muls(128, xu[k * 128], xu[k * 128], 0.5, 1, 8, 8)")
    assert [r for r in rows if not r.runnable] == [loop]
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    at = loop.line - 1
    pad = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    lines[at:at + 1] = [pad + c + "\n" for c in loop.code]
    new = tmp_path / "runs_pasted.py"
    new.write_text("from pto_core import pto\n" + "".join(lines))
    with pytest.raises(NameError, match=PLACEHOLDER):
        _load(new, f"runs_pasted_{id(tmp_path)}").kernel()
    from tbe_compat.migrate_python import RUNS_GUARD
    assert loop.code[0].startswith(RUNS_GUARD + "  #") and RUNS_GUARD in loop.problems[0]
    header = [ln for ln in format_python([loop], "runs").splitlines() if ln.startswith("# NOT RUNNABLE AS IS")]
    assert header == ["# NOT RUNNABLE AS IS: the script ran this call several times with different operands, one "
                      "replacement per run follows; fill in:"]       # every operand named: not "cannot name"


def test_not_runnable_header_says_why():
    """review466: the header said "the trace cannot name every operand" for a call run with different operands
    whose operands all have names; it now gives the reason(s) the row's problems hold."""
    from tbe_compat.migrate_python import PyRow, RUNS_GUARD

    def header(problems):
        row = PyRow("k.py", 3, "tik.vec_add", "ti.vec_add(...)", ["pto.ub.vadd()"], [], problems)
        return next(ln for ln in format_python([row], "k").splitlines() if ln.startswith("# NOT RUNNABLE"))
    runs, name = f"{RUNS_GUARD}: the script ran this call 2 times", f"{PLACEHOLDER}xu: ub tensor xu is 'xu'"
    assert "different operands" in header([runs]) and "cannot name" not in header([runs])
    assert "cannot name every operand" in header([name]) and "different operands" not in header([name])
    assert "different operands" in header([runs, name]) and "cannot name every operand" in header([runs, name])


def test_a_lowering_loop_of_another_step_stops_with_a_name_error():
    """TIK's for_range steps by 1: a loop of step 2 is a placeholder statement of its own before the ``with`` (as the
    ``with``'s target, ``as FILL_IN_loop``, it bound the name and ran a step-1 loop twice as long)."""
    from pto_core import program as P
    from tbe_compat.migrate_python import _stmts, _Writer

    class _NoSite:
        def tik_receiver(self):
            return "ti"

    w = _Writer(None, _NoSite())
    loop = P.For(P.LoopVar(P.I64), P.Const(0, P.I64), P.Const(8, P.I64), P.Const(2, P.I64), [])
    code = _stmts(w, [loop], 0, [])
    assert code[0] == f"{PLACEHOLDER}loop" and code[1].startswith("with ti.for_range(0, 8) as i1:"), code
    assert any("step" in p for p in w.problems)
    with pytest.raises(NameError, match=PLACEHOLDER):
        exec(compile("\n".join(code), "gen.py", "exec"), {"ti": None})


#: feat469: attributes a class-based kernel's call spells but that hold another tensor there (ATTR_RULE). ``swap_in_loop``
#: calls with ``self.a`` once the loop has swapped ``self.a`` / ``self.b`` (swapped back by the end of the trace);
#: ``swap_through_local`` swaps ``self.c`` / ``self.d`` through a local; ``locals_only`` swaps two locals (the
#: attributes keep their tensors: their names are right); two `Stage` objects declare their ``buf`` at one line;
#: ``other.double(lone.solo)`` spells ``t`` while ``other.solo`` is set from outside the file (``setup``), which
#: also swaps ``g`` / ``h`` for good before ``swapped_outside``; ``dropped`` sets ``self.n = None`` and uses the tensor
#: through a local (a ``= None`` write is allowed, NONE_BEFORE_DECLARATION, but this one stays: refused).
ATTRS = HEAD + '''
N = 256


class Stage:
    def __init__(self, ti, name):
        self.ti = ti
        self.buf = ti.Tensor("float16", (N,), name=name, scope=tik.scope_ubuf)

    def add_from(self, other):
        self.ti.vec_add(128, self.buf, self.buf, other.buf, 2, 8, 8, 8)


class Lone:
    def __init__(self, ti, declare):
        self.ti = ti
        if declare:
            self.solo = ti.Tensor("float16", (N,), name="lone", scope=tik.scope_ubuf)

    def double(self, t):
        self.ti.vec_muls(128, t, t, 2.0, 2, 8, 8)


class Swaps:
    def __init__(self):
        set_current_compile_soc_info("Ascend310")
        self.ti = tik.Tik()
        self.x = self.ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
        self.y = self.ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
        self.a = self.ti.Tensor("float16", (N,), name="a", scope=tik.scope_ubuf)
        self.b = self.ti.Tensor("float16", (N,), name="b", scope=tik.scope_ubuf)
        self.c = self.ti.Tensor("float16", (N,), name="c", scope=tik.scope_ubuf)
        self.d = self.ti.Tensor("float16", (N,), name="d", scope=tik.scope_ubuf)
        self.e = self.ti.Tensor("float16", (N,), name="e", scope=tik.scope_ubuf)
        self.f = self.ti.Tensor("float16", (N,), name="f", scope=tik.scope_ubuf)
        self.g = self.ti.Tensor("float16", (N,), name="g", scope=tik.scope_ubuf)
        self.h = self.ti.Tensor("float16", (N,), name="h", scope=tik.scope_ubuf)
        self.n = self.ti.Tensor("float16", (N,), name="n", scope=tik.scope_ubuf)

    def load(self):
        self.ti.data_move(self.e, self.x, 0, 1, N * 2 // 32, 0, 0)
        self.ti.vec_muls(128, self.f, self.e, 3.0, 2, 8, 8)
        self.ti.vec_adds(128, self.a, self.e, 1.0, 2, 8, 8)
        self.ti.vec_adds(128, self.b, self.f, -1.0, 2, 8, 8)
        self.ti.vec_muls(128, self.c, self.e, 0.5, 2, 8, 8)
        self.ti.vec_muls(128, self.d, self.f, 0.25, 2, 8, 8)
        self.ti.vec_muls(128, self.g, self.e, 0.75, 2, 8, 8)
        self.ti.vec_muls(128, self.h, self.f, 1.5, 2, 8, 8)

    def swap_in_loop(self):
        for k in range(2):
            if k == 1:
                self.ti.vec_sub(128, self.a, self.a, self.b, 2, 8, 8, 8)
            self.a, self.b = self.b, self.a

    def swap_through_local(self):
        tmp = self.c
        self.c = self.d
        self.d = tmp
        self.ti.vec_sub(128, self.c, self.c, self.d, 2, 8, 8, 8)

    def swapped_outside(self):
        self.ti.vec_sub(128, self.g, self.g, self.h, 2, 8, 8, 8)

    def dropped(self):
        t = self.n
        self.n = None
        self.ti.vec_muls(128, t, self.e, 2.0, 2, 8, 8)
        self.ti.vec_add(128, self.e, self.e, t, 2, 8, 8, 8)

    def locals_only(self):
        e, f = self.f, self.e
        self.ti.vec_sub(128, e, e, f, 2, 8, 8, 8)

    def store(self, s1, s2):
        self.ti.vec_add(128, self.e, self.e, self.f, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, self.a, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, self.b, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, self.c, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, self.d, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, self.g, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, s1.buf, 2, 8, 8, 8)
        self.ti.vec_add(128, self.e, self.e, s2.buf, 2, 8, 8, 8)
        self.ti.data_move(self.y, self.e, 0, 1, N * 2 // 32, 0, 0)


def kernel(setup=None):
    k = Swaps()
    k.load()
    (setup or (lambda k: None))(k)
    k.swap_in_loop()
    k.swap_through_local()
    k.swapped_outside()
    k.dropped()
    k.locals_only()
    s1, s2 = Stage(k.ti, "s1"), Stage(k.ti, "s2")
    k.ti.data_move(s1.buf, k.x, 0, 1, N * 2 // 32, 0, 0)
    k.ti.vec_muls(128, s2.buf, s1.buf, 5.0, 2, 8, 8)
    s1.add_from(s2)
    lone, other = Lone(k.ti, True), Lone(k.ti, False)
    (setup or (lambda k, lone=None, other=None: None))(k, lone, other)
    k.ti.data_move(lone.solo, k.x, 0, 1, N * 2 // 32, 0, 0)
    other.double(lone.solo)
    k.ti.vec_add(128, s2.buf, s2.buf, lone.solo, 2, 8, 8, 8)
    k.ti.vec_add(128, s2.buf, s2.buf, other.solo, 2, 8, 8, 8)
    k.store(s1, s2)
    k.ti.BuildCCE(kernel_name="attrs", inputs=[k.x], outputs=[k.y])
    return k.ti


def feed():
    return {"x": np.random.default_rng(9).standard_normal(N).astype(np.float16)}
'''


def _attrs_setup(tmp_path):
    """``lone`` declares its buffer in the kernel file's Lone.__init__ (run once); ``other.solo`` is set here, outside
    the kernel's file: ``other.double(lone.solo)`` spells ``t``, and ``self.solo`` there is another tensor."""
    setup_py = tmp_path / "attrs_setup.py"
    setup_py.write_text(HEAD + '''

def setup(k, lone=None, other=None):
    if lone is None:            # before Swaps.swapped_outside: its g and h swapped here, for good
        k.g, k.h = k.h, k.g
        return
    other.solo = k.ti.Tensor("float16", (256,), name="other", scope=tik.scope_ubuf)
''')
    return _load(setup_py, f"attrs_setup_{id(tmp_path)}").setup


def test_class_attributes_that_may_hold_another_tensor_are_placeholders(tmp_path):
    """A class-based kernel's ``self.<attr>`` is written only where it provably holds the traced tensor at the call
    (ATTR_RULE): an attribute swapped in a loop or through a local, a buffer two objects declare at one line, a
    buffer declared by another object than the one whose method makes the call are placeholders; every other row
    is runnable, and the kernel with its runnable rows replaced, and with every row as printed, gives the same bits
    or stops with a NameError."""
    path = tmp_path / "attrs.py"
    path.write_text(ATTRS)
    mod = _load(path, f"attrs_{id(tmp_path)}")
    setup = _attrs_setup(tmp_path)
    rows = {r.source: r for r in python_rows(mod.kernel(setup))}
    for src, wrong in (("self.ti.vec_sub(128, self.a, self.a, self.b, 2, 8, 8, 8)", "self.b.pto_ptr(), self.b"),
                       ("self.ti.vec_sub(128, self.c, self.c, self.d, 2, 8, 8, 8)", "self.d.pto_ptr(), self.d"),
                       ("self.ti.vec_sub(128, self.g, self.g, self.h, 2, 8, 8, 8)", "self.h.pto_ptr(), self.h"),
                       ("self.ti.vec_add(128, self.buf, self.buf, other.buf, 2, 8, 8, 8)", "self.buf"),
                       ("self.ti.vec_muls(128, t, t, 2.0, 2, 8, 8)", "self.solo"),
                       ("self.ti.vec_muls(128, t, self.e, 2.0, 2, 8, 8)", "self.n")):
        r = rows[src]
        assert not r.runnable and any("may not hold it" in p for p in r.problems), (src, r.code, r.problems)
        assert not any(wrong in c for c in r.code), (src, r.code)
    swapped = rows["self.ti.vec_sub(128, self.a, self.a, self.b, 2, 8, 8, 8)"]
    assert swapped.code[0].startswith(f"pto.ub.vsub({PLACEHOLDER}self_b.pto_ptr(), ")
    assert rows["self.ti.vec_sub(128, e, e, f, 2, 8, 8, 8)"].code[0].startswith(
        "pto.ub.vsub(self.f.pto_ptr(), self.f.pto_ptr(), self.e.pto_ptr(), ")      # a local swap: names right
    assert rows["self.ti.vec_add(128, self.e, self.e, self.f, 2, 8, 8, 8)"].runnable
    golden = _run_with(mod, setup)
    assert all(g != b"\xff" * len(g) for g in golden)
    new = tmp_path / "attrs_pto.py"
    new.write_text(_rewrite(path, [r for r in rows.values() if r.runnable]))
    assert _run_with(_load(new, f"attrs_pto_{id(tmp_path)}"), setup) == golden
    every = tmp_path / "attrs_every.py"
    every.write_text(_rewrite(path, list(rows.values()), runnable_only=False))
    with pytest.raises(NameError, match=PLACEHOLDER):
        _load(every, f"attrs_every_{id(tmp_path)}").kernel(setup)


def _run_with(mod, setup):
    outs = mod.kernel(setup).tikdb.start_debug(mod.feed(), interactive=False)
    return [np.asarray(o).tobytes() for o in outs]


# ---------------------------------------------------------------- review471: call owners only when asked for
LIFETIME = HEAD + '''
set_current_compile_soc_info("Ascend310")


class Op:
    def __init__(self):
        self.big = np.ones(1 << 16)
        self.tik_instance = tik.Tik()
        self.x_gm = self.tik_instance.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
        self.z_gm = self.tik_instance.Tensor("float16", (256,), name="z", scope=tik.scope_gm)

    def compute(self):
        ub = self.tik_instance.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
        self.tik_instance.data_move(ub, self.x_gm, 0, 1, 16, 0, 0)
        self.tik_instance.vec_relu(128, ub, ub, 2, 8, 8)
        self.tik_instance.data_move(self.z_gm, ub, 0, 1, 16, 0, 0)
        self.tik_instance.BuildCCE(kernel_name="lifetime_op", inputs=[self.x_gm], outputs=[self.z_gm])
        return self.tik_instance


if __name__ == "__main__":
    Op().compute()
'''


def test_a_dropped_class_kernel_is_freed_at_once_unless_owners_are_recorded(tmp_path):
    """The operator object (and its arrays) goes with its last reference: the Tik does not keep it (a strong
    record of call owners made a cycle through self.tik_instance and kept the object of the last kernel built
    under each name alive through the kernel registry)."""
    import gc
    import weakref
    path = tmp_path / "lifetime_tik.py"
    path.write_text(LIFETIME)
    mod = _load(path, f"lifetime_{id(tmp_path)}")
    gc.disable()
    try:
        with tik_registry.recording_call_owners(False):
            op = mod.Op()
            tik = op.compute()
            ref = weakref.ref(op)
            del op
            assert ref() is None                    # refcount alone frees it: no cycle, no registry hold
            assert tik._call_owners is None
        op = mod.Op()                               # recording on (the fixture): python_rows names attributes
        tik = op.compute()
        assert tik._call_owners and all(o is op for o in tik._call_owners)
        assert any("self.z_gm" in c for r in python_rows(tik) for c in r.code)
    finally:
        gc.enable()


def test_cli_python_format_records_owners_and_other_formats_do_not(tmp_path, capsys):
    path = tmp_path / "lifetime_cli.py"
    path.write_text(LIFETIME)
    with tik_registry.recording_call_owners(False):
        assert main([str(path), "--format", "python"]) == 0
        assert "self.z_gm.pto_ptr()" in capsys.readouterr().out
        assert tik_registry.kernel("lifetime_op")._call_owners is not None
        assert main([str(path)]) == 0
        assert tik_registry.kernel("lifetime_op")._call_owners is None
        assert not tik_registry._RECORD_CALL_OWNERS[0]


PARAMS = HEAD + '''
N, CORES, PER = 1024, 2, 512


class Params:
    def __init__(self):
        set_current_compile_soc_info("Ascend310")
        self.ti = tik.Tik()
        self.x_gm = self.ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
        self.z_gm = self.ti.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
        self.xu = self.ti.Tensor("float16", (PER,), name="xu", scope=tik.scope_ubuf)

    def load_shifted(self, c):
        self.ti.data_move(self.xu, self.x_gm[(c - 1) * PER], 0, 1, PER // 16, 0, 0)

    def scale_rebound(self, core, k):
        self.ti.vec_muls(128, self.xu[core * 0], self.xu, 2.0, PER // 128, 8, 8)
        core = k

    def store(self, core):
        self.ti.data_move(self.z_gm[core * PER], self.xu, 0, 1, PER // 16, 0, 0)

    def compute(self):
        with self.ti.for_range(0, CORES, block_num=CORES) as core:
            self.load_shifted(core + 1)
            self.scale_rebound(core, 0)
            self.store(core)
        self.ti.BuildCCE(kernel_name="params", inputs=[self.x_gm], outputs=[self.z_gm])
        return self.ti


def kernel():
    return Params().compute()


def feed():
    return {"x": np.random.default_rng(5).standard_normal(N).astype(np.float16)}
'''


def test_a_loop_variable_passed_as_anything_but_itself_into_an_unrebound_parameter_is_a_placeholder(tmp_path):
    """LOOP_PARAMETER_RULE: ``core + 1`` is another object (placeholder), a parameter bound again in its function is
    refused even where it still holds the loop variable; the parameter that holds it and is never rebound is
    written, and the kernel with its runnable rows replaced gives the same bits."""
    path = tmp_path / "params.py"
    path.write_text(PARAMS)
    mod = _load(path, f"params_{id(tmp_path)}")
    rows = {r.line: r for r in python_rows(mod.kernel())}
    src = PARAMS.splitlines()
    line = [next(i + 1 for i, t in enumerate(src) if k in t)
            for k in ("self.x_gm[(c - 1)", "self.xu[core * 0]", "self.z_gm[core * PER]")]
    assert sorted(rows) == line, (sorted(rows), line)
    shifted, rebound, store = (rows[k] for k in line)
    for r in (shifted, rebound):
        assert not r.runnable and any(PLACEHOLDER + "core" in p for p in r.problems), (r.site, r.code, r.problems)
        assert not any(" c " in c or "(c " in c or " core " in c for c in r.code), r.code
    assert store.runnable and "self.z_gm.pto_ptr() + core * 512" in store.code[-1], store.code
    golden = _run(mod)
    new = tmp_path / "params_pto.py"
    new.write_text(_rewrite(path, [store]))
    assert _run(_load(new, f"params_pto_{id(tmp_path)}")) == golden
