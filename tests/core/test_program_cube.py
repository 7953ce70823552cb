"""A whole cube kernel written with the program builder on the real PTO ops: GM -> L1
(``mte_gm_l1_frac`` nd2nz) -> L0A/L0B -> ``pto.mad``/``pto.mad_acc`` over a K loop with
ping-pong L1/L0 buffers and set/wait flags -> FIXPIPE ``mte_l0c_gm nz2nd`` -> GM.

Each test runs only where the op families it uses are registered.
"""
import numpy as np
import pytest

from pto_core import Ptr, asm, dtype, layout, pto
from pto_core.errors import HazardError
from pto_core.ops import registry
from pto_core.program import program

CUBE = ("mte_gm_l1_frac", "mte_l1_l0a", "mte_l1_l0b", "mad", "mad_acc", "mte_l0c_gm", "set_flag", "wait_flag",
        "set_flag_dyn", "wait_flag_dyn")


def needs(*ops):
    missing = [n for n in ops if n not in registry.OPS]
    return pytest.mark.skipif(bool(missing), reason="needs ops " + ", ".join(missing))


def ceil_to(a, b):
    return -(-a // b) * b


def cube_matmul(M, N, K, kt, target="A2A3", writeback=True):
    """C[M, N] (f32) = A[M, K] @ B[K, N] (f16), K in tiles of ``kt``, double-buffered.

    ``writeback=False`` leaves C in L0C (Nz) instead of the FIXPIPE store to GM.
    """
    ktiles = K // kt
    with program("cube_matmul", target=target) as k:
        a = k.gm_arg("a", "f16", (M, K))
        b = k.gm_arg("b", "f16", (K, N))
        c = k.gm_arg("c", "f32", (M, N), io="out")
        ta, tb = ceil_to(M, 16) * kt, kt * ceil_to(N, 16)       # elements of one A / B tile
        l1a, l1b = k.ptr("l1", "f16", 0x0), k.ptr("l1", "f16", 0x10000)
        l0a, l0b, l0c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
        for ev in (0, 1):                                       # both buffers start free
            pto.set_flag("MTE1", "MTE2", ev)
            pto.set_flag("M", "MTE1", ev)
        with k.for_(0, ktiles, name="t", dtype="s32") as t:
            ping = t % 2
            pto.wait_flag_dyn("MTE1", "MTE2", ping)
            pto.mte_gm_l1_frac(a + t * kt, l1a + ping * ta, nd2nz=True, shape=(M, kt), src_layout=(2 * K,),
                               dst_group=(1, 1, ceil_to(M, 16), 0), ctrl=(0, False))
            pto.mte_gm_l1_frac(b + t * (kt * N), l1b + ping * tb, nd2nz=True, shape=(kt, N), src_layout=(2 * N,),
                               dst_group=(1, 1, ceil_to(kt, 16), 0), ctrl=(0, False))
            pto.set_flag_dyn("MTE2", "MTE1", ping)
            pto.wait_flag_dyn("MTE2", "MTE1", ping)
            pto.wait_flag_dyn("M", "MTE1", ping)
            pto.mte_l1_l0a(l1a + ping * ta, l0a + ping * ta, M, kt, 0, 0)
            pto.mte_l1_l0b(l1b + ping * tb, l0b + ping * tb, kt, N, 0, 0, transpose=True)
            pto.set_flag_dyn("MTE1", "MTE2", ping)
            pto.set_flag_dyn("MTE1", "M", ping)
            pto.wait_flag_dyn("MTE1", "M", ping)
            with k.if_(t == 0):
                pto.mad(l0a, l0b, l0c, M, N, kt)
            with k.else_():
                pto.mad_acc(l0a + ping * ta, l0b + ping * tb, l0c, M, N, kt)
            pto.set_flag_dyn("M", "MTE1", ping)
        for ev in (0, 1):
            pto.wait_flag("MTE1", "MTE2", ev)
            pto.wait_flag("M", "MTE1", ev)
        if writeback:
            pto.set_flag("M", "FIX", 0)
            pto.wait_flag("M", "FIX", 0)
            pto.mte_l0c_gm(l0c, c, M, N, ceil_to(M, 16), N, 0, 0, nz2nd=True)
    return k.program


@needs(*[op for op in CUBE if op != "mte_l0c_gm"])
@pytest.mark.parametrize("M,N,K,kt", [(32, 32, 128, 32), (40, 24, 96, 32)])
def test_cube_matmul_k_loop_accumulates_in_l0c(M, N, K, kt):
    prog = cube_matmul(M, N, K, kt, writeback=False)
    rng = np.random.default_rng(M * N)
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    exe = prog.compile()
    exe.run({"a": a, "b": b})
    r, c = ceil_to(M, 16), ceil_to(N, 16)
    m = exe.machine
    acc = layout.unpack(m.read(Ptr("l0c", dtype("f32"), 0, 0, m.context(0)), (r * c,)), "Nz", r, c, dtype("f32"),
                        fractal=1024)[:M, :N]
    assert np.array_equal(acc, a.astype(np.float32) @ b.astype(np.float32))
    assert [r for r in exe.reports if r[0] != "uninitialized"] == []
    again = asm.parse(prog.to_asm())
    assert asm.print_program(again) == prog.to_asm()


@needs(*CUBE)
@pytest.mark.parametrize("M,N,K,kt", [(32, 32, 128, 32), (16, 48, 64, 16), (40, 24, 96, 32)])
def test_cube_matmul_kernel_matches_numpy_and_survives_pto_as(M, N, K, kt):
    prog = cube_matmul(M, N, K, kt)
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    exe = prog.compile()
    assert np.array_equal(exe.run({"a": a, "b": b})["c"], want)
    assert [r for r in exe.reports if r[0] != "uninitialized"] == []
    text = prog.to_asm()
    assert "pto.set_flag[<PIPE_MTE1>, <PIPE_MTE2>, <EVENT_ID0>]" in text
    assert "pto.mte_l1_l0b" in text and "{transpose = true}" in text and "nz2nd" in text
    again = asm.parse(text)
    assert asm.print_program(again) == text
    assert np.array_equal(again.run({"a": a, "b": b})["c"], want)


@needs(*CUBE)
def test_missing_sync_in_the_cube_kernel_is_reported_with_provenance():
    prog = cube_matmul(32, 32, 64, 32)
    text = prog.to_asm().replace("pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]\n", "")
    broken = asm.parse(text, source_name="cube.pto")
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, (32, 64)).astype(np.float16)
    b = rng.integers(-4, 5, (64, 32)).astype(np.float16)
    with pytest.raises(HazardError, match="RAW hazard .* no happens-before edge from PIPE_M to PIPE_FIX") as ei:
        broken.run({"a": a, "b": b})
    assert ei.value.where.file == "cube.pto" and ei.value.op == "pto.mte_l0c_gm" and ei.value.context == {"core": 0}


@needs("mte_gm_l1", "mte_l1_ub", "set_flag", "wait_flag")
def test_repeated_and_attribute_clauses_round_trip_and_run():
    """``loop(...)`` repeated groups (a list in Python) and ``{attr = ...}`` clauses through the text."""
    with program("bursts", target="A2A3") as k:
        x = k.gm_arg("x", "u8", (4, 64))
        y = k.gm_arg("y", "u8", (4, 64), io="out")
        l1 = k.ptr("l1", "u8", 0)
        ub = k.ptr("ub", "u8", 0)
        # 2 x 2 bursts of 32 bytes, the outer loop group repeated: rows 0..3 of x
        pto.mte_gm_l1(x, l1, 32, nburst=(2, 64, 64), loop=[(2, 128, 128)])
        pto.mte_gm_l1(x + 32, l1 + 32, 32, nburst=(2, 64, 64), loop=[(2, 128, 128), (1, 0, 0)])
        pto.set_flag("MTE2", "MTE1", 0)
        pto.wait_flag("MTE2", "MTE1", 0)
        pto.mte_l1_ub(l1, ub, 256, nburst=(1, 256, 256))
        pto.set_flag("MTE1", "S", 0)
        pto.wait_flag("MTE1", "S", 0)
        with k.for_(0, 256) as i:
            k.store(y, i, k.load(ub, i))
    text = k.program.to_asm()
    assert "loop(%c2_i64, %c128_i64, %c128_i64) loop(%c1_i64, %c0_i64, %c0_i64)" in text
    again = asm.parse(text)
    assert asm.print_program(again) == text
    xs = np.arange(256, dtype=np.uint8).reshape(4, 64)
    assert again.run({"x": xs})["y"].tolist() == xs.tolist() == k.program.run({"x": xs})["y"].tolist()


@needs(*CUBE)
def test_fixpipe_atomic_add_reduces_partial_products_across_cores():
    """Split-K over cores: core c multiplies K-slice c and FIXPIPE atomically adds it into C."""
    M, N, kt, cores = 16, 32, 32, 4
    K = kt * cores
    with program("splitk", target="A2A3") as k:
        a = k.gm_arg("a", "f16", (M, K))
        b = k.gm_arg("b", "f16", (K, N))
        c = k.gm_arg("c", "f32", (M, N), io="out", fill="zero")
        with k.for_(0, cores, block_num=cores, name="core", dtype="s32") as core:
            l1a, l1b = k.ptr("l1", "f16", 0), k.ptr("l1", "f16", 0x8000)
            l0a, l0b, l0c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
            pto.mte_gm_l1_frac(a + core * kt, l1a, nd2nz=True, shape=(M, kt), src_layout=(2 * K,),
                               dst_group=(1, 1, M, 0), ctrl=(0, False))
            pto.mte_gm_l1_frac(b + core * (kt * N), l1b, nd2nz=True, shape=(kt, N), src_layout=(2 * N,),
                               dst_group=(1, 1, kt, 0), ctrl=(0, False))
            pto.set_flag("MTE2", "MTE1", 0)
            pto.wait_flag("MTE2", "MTE1", 0)
            pto.mte_l1_l0a(l1a, l0a, M, kt, 0, 0)
            pto.mte_l1_l0b(l1b, l0b, kt, N, 0, 0, transpose=True)
            pto.set_flag("MTE1", "M", 0)
            pto.wait_flag("MTE1", "M", 0)
            pto.mad(l0a, l0b, l0c, M, N, kt)
            pto.set_flag("M", "FIX", 0)
            pto.wait_flag("M", "FIX", 0)
            pto.mte_l0c_gm(l0c, c, M, N, M, N, 0, 0, nz2nd=True, atomic={"type": "f32", "op": "add"})
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    want = a.astype(np.float32) @ b.astype(np.float32)
    exe = k.program.compile()
    assert np.array_equal(exe.run({"a": a, "b": b})["c"], want)
    for seed in range(3):
        assert np.array_equal(exe.run({"a": a, "b": b}, order="random", seed=seed)["c"], want)
    text = k.program.to_asm()
    assert "atomic(type = f32, op = add)" in text and "attributes {pto.block_num = 4 : i64}" in text
    assert np.array_equal(asm.parse(text).run({"a": a, "b": b})["c"], want)
