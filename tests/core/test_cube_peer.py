"""Peer cases of pto-isa's CPU-sim test suite (pto_spec.md §8.2) through the PTO moves and pto.mad*.

``tmatmul`` (tests/cpu/st/testcase/tmatmul/gen_data.py: ints 1..4, bias 1..9) and the 19
``tmatmul_mx`` cases (fp8/fp4 data, E8M0 scales in {127, 128, 129}); every golden is a
float64 numpy product, compared exactly (the data make every f32 sum exact).

Data path: GM -> L1 with ``mte_gm_l1_frac`` (A: nd2nz; B: nd2nz + transposing
``mte_l1_l0b``, or dn2nz + plain ``mte_l1_l0b``), L1 -> L0A/L0B, bias GM -> L1 -> BT,
GEMV rows GM -> L1 (``mte_gm_l1``) -> L0A as a dense row (full-control form), MX scales
GM -> L1 (``mte_gm_l1``) -> ``mte_l1_l0a_mx``/``mte_l1_l0b_mx`` (the GEMV left scales as one dense row). L0C is read back with the
Nz index map (FIXPIPE is tested separately).
"""
import ml_dtypes
import numpy as np
import pytest

from pto_core import numerics as _numerics
from kernel_helpers import handoff
from pto_core import Machine, dtype, layout, pto
from pto_core.ops.mte import BT_LOAD_UNIT

# the peer cases' panels have byte rows that are not multiples of 32: pto_spec §3.1's BurstTailWarning is expected
pytestmark = pytest.mark.filterwarnings("ignore::pto_core.BurstTailWarning")

L1_A, L1_B, L1_BIAS, L1_SA, L1_SB = 0x0, 0x20000, 0x40000, 0x48000, 0x50000


def ceil_to(a, b):
    return -(-a // b) * b


def gm(m, name, values, dt):
    """GM tensor of exactly representable values in element type ``dt`` (packed types: nibbles)."""
    d = dtype(dt)
    if d.bits == 4:
        if dt == "e2m1x2":
            codes = np.asarray(values, np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
        else:
            lut = _numerics.to_f32(np.arange(16, dtype=np.uint8), "e1m2")
            codes = np.array([np.flatnonzero(lut == v)[0] for v in np.asarray(values, np.float32).ravel()],
                             np.uint8).reshape(np.shape(values))
        flat = codes.reshape(-1)
        return m.gm_tensor((flat[0::2] | (flat[1::2] << 4)).astype(np.uint8), name=name, dtype="u8").cast(dt)
    return m.gm_tensor(np.asarray(values).astype(d.storage), name=name)


def load_a(m, ga, dt, M, K, gemv):
    """A (M x K, row-major in GM) -> L0A: Nz in L1 then the shape form, or a dense GEMV row."""
    d = dtype(dt)
    l1 = m.ptr("l1", dt, L1_A)
    l0a = m.ptr("l0a", dt, 0)
    if gemv:
        nbytes = d.nbytes(K)
        pto.mte_gm_l1(ga, l1, nbytes, nburst=(1, 0, 0))
        handoff("MTE2", "MTE1")
        pto.mte_l1_l0a(l1, l0a, 0, 0, 1, -(-nbytes // 512), 1, 1)
        return l0a
    pto.mte_gm_l1_frac(ga, l1, nd2nz=True, shape=(M, K), src_layout=(d.nbytes(K),),
                       dst_group=(1, 1, ceil_to(M, 16), 0), ctrl=(0, False))
    handoff("MTE2", "MTE1")
    pto.mte_l1_l0a(l1, l0a, M, K, 0, 0)
    return l0a


def load_b(m, gb, dt, K, N, via):
    """B (K x N, row-major in GM) -> L0B (Zn): nd2nz + transposing load, or dn2nz (B^T Nz) + plain load."""
    d = dtype(dt)
    l1 = m.ptr("l1", dt, L1_B)
    l0b = m.ptr("l0b", dt, 0)
    if via == "nd2nz":
        g = max(16, d.c0)
        pto.mte_gm_l1_frac(gb, l1, nd2nz=True, shape=(K, N), src_layout=(d.nbytes(N),),
                           dst_group=(1, 1, ceil_to(K, g), 0), ctrl=(0, False))
        handoff("MTE2", "MTE1")
        pto.mte_l1_l0b(l1, l0b, K, N, 0, 0, transpose=True)
    else:
        pto.mte_gm_l1_frac(gb, l1, dn2nz=True, shape=(N, K), src_layout=(d.nbytes(N),),
                           dst_group=(1, 1, ceil_to(N, 16), 0), ctrl=(0, False))
        handoff("MTE2", "MTE1")
        pto.mte_l1_l0b(l1, l0b, K, N, 0, 0)
    return l0b


def load_bias(m, bias, dt):
    d = dtype(dt)
    gbias = m.gm_tensor(bias.astype(d.storage), name="bias")
    l1 = m.ptr("l1", dt, L1_BIAS)
    nbytes = d.nbytes(bias.size)
    pto.mte_gm_l1(gbias, l1, nbytes, nburst=(1, 0, 0))
    handoff("MTE2", "MTE1")
    bt = m.ptr("bt", dt, 0)
    unit = BT_LOAD_UNIT[m.target.arch]
    pto.mte_l1_bt(l1, bt, -(-nbytes // unit), nburst=(1, 0, 0))
    return bt


def read_acc(m, dst, M, N):
    r, c = ceil_to(M, 16), ceil_to(N, 16)
    return layout.unpack(m.read(dst, (r * c,)), "Nz", r, c, dst.dtype, fractal=1024)[:M, :N]


# ============================================================================ tmatmul

TMATMUL = [  # name, A/B dtype, C dtype, M, K, N, bias, split-K chunk
    ("case1", "f16", "f32", 40, 50, 60, False, None),
    ("case2", "s8", "s32", 6, 7, 8, False, None),
    ("case3", "f16", "f32", 128, 128, 64, False, 32),
    ("case4", "f32", "f32", 120, 110, 50, False, None),
    ("case_gemm_1", "f16", "f32", 1, 110, 50, False, None),
    ("case_gemm_2", "f32", "f32", 1, 128, 64, False, None),
    ("case_bias_1", "s8", "s32", 8, 7, 6, True, None),
    ("case_bias_2", "f16", "f32", 16, 15, 16, True, None),
    ("case_bias_5", "f32", "f32", 127, 128, 63, True, None),
    ("case_bias_gemm", "f16", "f32", 1, 110, 50, True, None),
    ("case_bf16_1", "bf16", "f32", 40, 50, 60, False, None),
    ("case_bf16_bias_1", "bf16", "f32", 16, 15, 16, True, None),
]


@pytest.mark.parametrize("target", ["A2A3", "A5"])
@pytest.mark.parametrize("name,dt,ct,M,K,N,has_bias,split", TMATMUL, ids=[c[0] for c in TMATMUL])
def test_tmatmul_peer_cases(target, name, dt, ct, M, K, N, has_bias, split):
    rng = np.random.default_rng(19)
    a = rng.integers(1, 5, (M, K)).astype(np.float64)
    b = rng.integers(1, 5, (K, N)).astype(np.float64)
    bias = rng.integers(1, 10, N).astype(np.float64)
    golden = a @ b + (bias if has_bias else 0)
    m = Machine(target)
    via = "dn2nz" if dt == "s8" else "nd2nz"
    dst = m.ptr("l0c", ct, 0)
    gemv = M == 1
    chunks = [(0, K)] if split is None else [(k0, min(split, K - k0)) for k0 in range(0, K, split)]
    for i, (k0, kc) in enumerate(chunks):
        if i:  # the previous chunk's L1 and L0 tiles are overwritten: wait for their readers
            handoff("MTE1", "MTE2")
            handoff("M", "MTE1")
        ga = gm(m, f"a{i}", a[:, k0:k0 + kc], dt)
        gb = gm(m, f"b{i}", b[k0:k0 + kc], dt)
        lhs = load_a(m, ga, dt, M, kc, gemv)
        rhs = load_b(m, gb, dt, kc, N, via)
        bt = load_bias(m, bias, ct) if i == 0 and has_bias else None
        handoff("MTE1", "M")
        if bt is not None:
            pto.mad_bias(lhs, rhs, dst, bt, M, N, kc)
        elif i == 0:
            pto.mad(lhs, rhs, dst, M, N, kc)
        else:
            pto.mad_acc(lhs, rhs, dst, M, N, kc)
    assert np.array_equal(read_acc(m, dst, M, N).astype(np.float64), golden)
    assert m.reports == []


# ============================================================================ tmatmul_mx

MX = [  # A, B, M, K, N, mode
    ("e5m2", "e5m2", 128, 64, 64, ""), ("e4m3", "e4m3", 127, 72, 64, ""), ("e4m3", "e5m2", 128, 110, 63, ""),
    ("e2m1x2", "e2m1x2", 128, 64, 64, ""), ("e1m2x2", "e2m1x2", 117, 64, 60, ""),
    ("e2m1x2", "e1m2x2", 128, 118, 64, ""), ("e2m1x2", "e1m2x2", 115, 64, 30, ""),
    ("e4m3", "e4m3", 16, 32, 16, ""), ("e4m3", "e5m2", 10, 50, 54, ""), ("e2m1x2", "e2m1x2", 4, 30, 8, ""),
    ("e1m2x2", "e1m2x2", 1, 128, 62, "gemv"), ("e4m3", "e5m2", 1, 256, 20, "gemv"),
    ("e5m2", "e4m3", 115, 64, 30, "bias"), ("e4m3", "e4m3", 200, 192, 95, "bias"),
    ("e2m1x2", "e1m2x2", 35, 128, 56, "bias"),
    ("e1m2x2", "e1m2x2", 47, 128, 62, "bias+acc"), ("e4m3", "e5m2", 64, 192, 64, "bias+acc"),
    # pto-isa runs the two M = 1 bias cases through RunTMATMULMX(_SPLIT_K) with a 16-row TileLeft: not GEMV
    ("e1m2x2", "e1m2x2", 1, 64, 62, "bias+acc,disable_gemv"), ("e1m2x2", "e1m2x2", 1, 2048, 64, "bias+acc,disable_gemv"),
]
VALUES = {"e4m3": [-3, -2, -1, 0, 1, 2, 3, 4], "e5m2": [-2, -1, 0, 1, 2, 3, 4],
          "e2m1x2": [-3, -2, -1.5, -1, 0, 0.5, 1, 2, 3, 4, 6], "e1m2x2": [-1.5, -1, -0.25, 0, 0.5, 1, 1.25, 1.75]}


def scale_fragments(s, side, gemv=False):
    """E8M0 scale matrix -> the 32-byte fragment order of the L1 scale tile (left Zz 16x2, right Nn 2x16);
    the GEMV left scale is one dense row (pto-isa RunTGEMVMX: a 1 x scaleK GM tensor in a 1-row Mat tile)."""
    if side == "a" and gemv:
        pairs = -(-s.shape[1] // 2)
        full = np.full(32 * pairs, 127, np.uint8)
        full[:s.shape[1]] = s[0]
        return full
    if side == "a":
        rows, groups = s.shape
        pairs = -(-groups // 2)
        full = np.full((ceil_to(rows, 16), 2 * pairs), 127, np.uint8)
        full[:rows, :groups] = s
        return full.reshape(-1, 16, pairs, 2).transpose(0, 2, 1, 3).reshape(-1)
    groups, cols = s.shape
    pairs = -(-groups // 2)
    full = np.full((2 * pairs, ceil_to(cols, 16)), 127, np.uint8)
    full[:groups, :cols] = s
    return full.reshape(pairs, 2, -1, 16).transpose(2, 0, 3, 1).reshape(-1)


@pytest.mark.parametrize("da,db,M,K,N,mode", MX, ids=[f"{c[0]}x{c[1]}_{c[2]}x{c[3]}x{c[4]}_{c[5]}" for c in MX])
def test_tmatmul_mx_peer_cases(da, db, M, K, N, mode):
    rng = np.random.default_rng(7)
    a = rng.choice(VALUES[da], (M, K)).astype(np.float64)
    b = rng.choice(VALUES[db], (K, N)).astype(np.float64)
    groups = -(-K // 32)
    sa = rng.integers(127, 130, (M, groups)).astype(np.uint8)
    sb = rng.integers(127, 130, (groups, N)).astype(np.uint8)
    bias = rng.integers(1, 10, N).astype(np.float64)
    a_s = a * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)[:, :K]
    b_s = b * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=0)[:K]
    golden = a_s @ b_s
    m = Machine("A5")
    gemv = M == 1 and "disable_gemv" not in mode
    lhs = load_a(m, gm(m, "a", a, da), da, M, K, gemv)
    rhs = load_b(m, gm(m, "b", b, db), db, K, N, "dn2nz" if dtype(db).bits == 8 else "nd2nz")
    for side, s, l1, data, ext in (("a", sa, L1_SA, lhs, (M, K)), ("b", sb, L1_SB, rhs, (K, N))):
        frag = scale_fragments(s, side, gemv)
        gs = m.gm_tensor(frag, name="s" + side, dtype="u8").cast("e8m0")      # raw E8M0 codes
        src = m.ptr("l1", "e8m0", l1)
        pto.mte_gm_l1(gs, src, frag.size, nburst=(1, 0, 0))
        handoff("MTE2", "MTE1")
        getattr(pto, f"mte_l1_l0{side}_mx")(src, data, *ext, 0, 0)
    bt = load_bias(m, bias, "f32") if "bias" in mode else None
    handoff("MTE1", "M")
    dst = m.ptr("l0c", "f32", 0)
    flags = {"disable_gemv": True} if "disable_gemv" in mode else {}
    if "bias" in mode:
        pto.mad_mx_bias(lhs, rhs, dst, bt, M, N, K, **flags)
        golden = golden + bias
        if "acc" in mode:
            pto.mad_mx_acc(lhs, rhs, dst, M, N, K, **flags)
            golden = golden + a_s @ b_s
    else:
        pto.mad_mx(lhs, rhs, dst, M, N, K, **flags)
    assert np.array_equal(read_acc(m, dst, M, N).astype(np.float64), golden)
    assert m.reports == []
