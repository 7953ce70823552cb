"""Data-movement ops (pto.mte_*, pto.raw_fill_l1): layouts against index maps, units, errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kernel_helpers import handoff
from pto_core import BurstTailWarning, GmOverreadWarning, GmPaddingWriteWarning, Machine, MachineOptions, dtype, layout, pto
from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnknownName, UnsupportedOp
from pto_core.ops import get_op
from pto_core.ops.mte import BT_LOAD_UNIT

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.default_rng(1234)


def raw(m, ptr, nbytes):
    return m.read(ptr.cast("u8"), (nbytes,))


def rand_bytes(n):
    return RNG.integers(0, 256, n, dtype=np.uint8)


def nibbles(b):
    out = np.empty(b.size * 2, np.uint8)
    out[0::2], out[1::2] = b & 0xF, b >> 4
    return out


def pack_nibbles(c):
    c = np.asarray(c, np.uint8)
    return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)


def elems(b, d):
    """raw bytes -> element codes (uint of the element size, or nibbles)."""
    d = dtype(d)
    return nibbles(b) if d.bits == 4 else b.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.bits // 8])


def to_bytes(e, d):
    d = dtype(d)
    return pack_nibbles(e) if d.bits == 4 else np.ascontiguousarray(e).view(np.uint8)


def storage_of(logical, lay, d, fractal=512):
    """Storage order of a logical matrix of element codes by the layout's index map (independent of the ops)."""
    r, c = logical.shape
    om = layout.offset_map(lay, r, c, d, fractal)
    out = np.zeros(r * c, logical.dtype)
    out[om] = logical
    return out


def ceil_to(a, b):
    return -(-a // b) * b


# ============================================================================ byte bursts


def test_mte_gm_l1_nburst_and_loops_match_reference():
    m = Machine("A2A3")
    src = rand_bytes(4096)
    g = m.gm_tensor(src, name="s")
    d = m.ptr("l1", "u8", 0)
    pto.mte_gm_l1(g, d, 64, nburst=(3, 100, 96), loop=[(2, 400, 512), (2, 1000, 1536)])
    out = raw(m, d, 4096)
    for l1 in range(2):
        for l0 in range(2):
            for r in range(3):
                s0 = l1 * 1000 + l0 * 400 + r * 100
                d0 = l1 * 1536 + l0 * 512 + r * 96
                assert np.array_equal(out[d0:d0 + 64], src[s0:s0 + 64])


def test_mte_gm_l1_writes_whole_32_byte_blocks_with_source_tail():
    m = Machine("A2A3")
    src = rand_bytes(256)
    g = m.gm_tensor(src, name="s")
    d = m.ptr("l1", "u8", 0)
    with pytest.warns(BurstTailWarning):         # pto_spec §3.1: a constant len_burst % 32 != 0 warns
        pto.mte_gm_l1(g, d, 40, nburst=(2, 100, 64))
    out = raw(m, d, 128)
    assert np.array_equal(out[0:64], src[0:64])          # 40 bytes + tail up to 64 from the source
    assert np.array_equal(out[64:128], src[100:164])


def test_mte_gm_l1_tail_past_tensor_end_is_unknown_not_an_error():
    m = Machine("A2A3", options=MachineOptions(uninitialized="record"))
    src = rand_bytes(40)
    g = m.gm_tensor(src, name="s")
    d = m.ptr("l1", "u8", 0)
    with pytest.warns(BurstTailWarning):         # pto_spec §3.1: a constant len_burst % 32 != 0 warns
        pto.mte_gm_l1(g, d, 40, nburst=(1, 0, 0))
    assert np.array_equal(raw(m, d, 40), src)
    buf = m.cores[0].buffer("l1")
    assert buf.written[:40].all() and not buf.written[40:64].any()


def test_mte_gm_l1_errors():
    m = Machine("A2A3")
    g = m.gm_tensor(rand_bytes(256), name="s")
    with pytest.raises(IllegalOperand, match="nburst"):
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 32)
    with pytest.raises(Misaligned, match="32-byte") as e:
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 16), 32, nburst=(1, 0, 0))
    assert e.value.operand == "%dst"
    with pytest.raises(Misaligned, match="stride 48") as e:
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 32, nburst=(2, 32, 48))
    with pytest.raises(IllegalOperand, match="outside") as e:
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 32, nburst=(0, 32, 32))
    assert "count" in e.value.operand
    with pytest.warns(GmOverreadWarning, match=r"reads GM bytes \[0, 320\) of region 's'"):
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 64, nburst=(5, 64, 64))       # a read: unknown data past 288 B
    pto.pipe_barrier("ALL")
    with pytest.raises(OutOfBounds, match="run past"):
        pto.mte_l1_gm(m.ptr("l1", "u8", 0), g, 64, nburst=(5, 64, 64))       # a write past the padding
    with pytest.raises(IllegalOperand, match="must point into gm"):
        pto.mte_gm_l1(m.ptr("ub", "u8", 0), m.ptr("l1", "u8", 0), 32, nburst=(1, 0, 0))
    with pytest.raises(IllegalOperand, match="list of parameter tuples"):
        pto.mte_gm_l1(g, m.ptr("l1", "u8", 0), 32, nburst=(1, 0, 0), loop=(2, 32, 32))


def test_mte_l1_ub_and_ub_l1_roundtrip_units():
    m = Machine("A5")
    data = rand_bytes(1024)
    l1 = m.ptr("l1", "u8", 0)
    m.write(l1, data)
    ub = m.ptr("ub", "u8", 0, sub=1)
    pto.mte_l1_ub(l1, ub, 64, nburst=(4, 128, 64))                     # bytes, stride start-to-start
    handoff("MTE1", "MTE3")
    assert np.array_equal(raw(m, ub, 256).reshape(4, 64), data[:512].reshape(4, 128)[:, :64])
    back = m.ptr("l1", "u8", 2048)
    pto.mte_ub_l1(ub, back, 2, nburst=(2, 0, 1))                         # 32-byte units, gaps
    out = raw(m, back, 192)
    assert np.array_equal(out[0:64], data[0:64]) and np.array_equal(out[96:160], data[128:192])
    assert not m.cores[0].buffer("l1").written[2048 + 64:2048 + 96].any()


def test_mte_gm_ub_pad_and_ub_gm_depad():
    m = Machine("A2A3")
    x = np.arange(1, 1 + 6 * 20, dtype=np.float16).reshape(6, 20)
    g = m.gm_tensor(x, name="x")
    ub = m.ptr("ub", "f16", 0)
    # 20 f16 = 40 bytes per row; pad left 2, right 3 elements with -1 -> row of round32(4+40+6)=64 bytes
    pto.mte_gm_ub(g, ub, 0, 40, nburst=(6, 40, 64), pad=(-1.0, 2, 3))
    rows = m.read(ub, (6, 32))
    assert np.array_equal(rows[:, 2:22], x) and (rows[:, :2] == -1).all() and (rows[:, 22:] == -1).all()
    # no pad: the rest of each 32-byte block is "dummy" data, copies of the burst's first element
    # (CCE copy_gm_to_ubuf_align, cceapi_0093); only the burst's bytes are read from GM
    ub2 = m.ptr("ub", "f16", 1024)
    pto.mte_gm_ub(g, ub2, 0, 40, nburst=(2, 40, 64))
    rows2 = m.read(ub2, (2, 32))
    assert np.array_equal(rows2[:, :20], x[:2]) and (rows2[:, 20:] == x[:2, :1]).all()
    b8 = m.ptr("ub", "u8", 2048)                                  # b8: byte copies of the first byte
    pto.mte_gm_ub(g, b8, 0, 5, nburst=(1, 0, 0))
    first = x.reshape(-1).view(np.uint8)[:5]
    assert np.array_equal(raw(m, b8, 32), np.concatenate([first, np.full(27, first[0], np.uint8)]))
    out = m.gm_alloc((6, 20), "f16", name="o", fill="zero")
    handoff("MTE2", "MTE3")
    pto.mte_ub_gm(ub, out, 40, nburst=(6, 64, 40), l2_cache_ctl=(0,))
    assert np.array_equal(m.read(out, (6, 20)), rows[:, :20])          # only len_burst bytes of each row


def test_mte_gm_ub_errors():
    m = Machine("A2A3")
    g = m.gm_tensor(np.zeros(64, np.float16), name="x")
    with pytest.raises(IllegalOperand, match="both padding counts"):
        pto.mte_gm_ub(g, m.ptr("ub", "f16", 0), 0, 32, nburst=(1, 0, 0), pad=(0.0, 1))
    with pytest.raises(IllegalOperand, match=r"outside \[0, 3\]") as e:
        pto.mte_gm_ub(g, m.ptr("ub", "f16", 0), 7, 32, nburst=(1, 0, 0))
    assert e.value.operand == "%l2_cache_ctl"
    with pytest.raises(Misaligned):
        pto.mte_gm_ub(g, m.ptr("ub", "f16", 2), 0, 32, nburst=(1, 0, 0))
    with pytest.raises(Misaligned, match="stride 40"):
        pto.mte_ub_gm(m.ptr("ub", "f16", 0), g, 40, nburst=(2, 40, 40))
    with pytest.raises(IllegalOperand, match="byte-sized element type"):
        pto.mte_gm_ub(g.cast("s4"), m.ptr("ub", "s4", 0), 0, 32, nburst=(1, 0, 0), pad=(0,))


def test_mte_gm_ub_ub_gm_len_burst_is_a_21_bit_byte_count():
    m = Machine("A2A3")
    n = 40000                                                     # 80000 B > 0xFFFF
    x = np.arange(n, dtype=np.float16)
    g = m.gm_tensor(x, name="x")
    ub = m.ptr("ub", "f16", 0)
    pto.mte_gm_ub(g, ub, 0, 2 * n, nburst=(1, 0, 0))
    out = m.gm_alloc((n,), "f16", name="o", fill="zero")
    handoff("MTE2", "MTE3")
    pto.mte_ub_gm(ub, out, 2 * n, nburst=(1, 0, 0))
    assert np.array_equal(m.read(out, (n,)), x)
    with pytest.raises(IllegalOperand, match=r"outside \[1, 2097151\]"):
        pto.mte_gm_ub(g, ub, 0, 1 << 21, nburst=(1, 0, 0))


def test_raw_fill_l1_16_and_32_bit_words():
    m = Machine("A2A3")
    d = m.ptr("l1", "u16", 0)
    m.write(d.cast("u8"), np.zeros(1024, np.uint8))
    pto.raw_fill_l1(d, 32, 0x1234ABCD, 3, 2, 1, fill_word_bits=16)
    out = m.read(d, (512,))
    for r in range(3):
        s = (32 + r * 96) // 2
        assert (out[s:s + 32] == 0xABCD).all()
        assert (out[s + 32:s + 48] == 0).all()
    d32 = m.ptr("l1", "u32", 4096)
    pto.raw_fill_l1(d32, 0, 0x1234ABCD, 1, 1, 0, fill_word_bits=32)
    assert (m.read(d32, (8,)) == 0x1234ABCD).all()


def test_raw_fill_l1_errors():
    m = Machine("A2A3")
    d = m.ptr("l1", "u16", 0)
    with pytest.raises(IllegalOperand, match="fill_word_bits"):
        pto.raw_fill_l1(d, 0, 0, 1, 1, 0)
    with pytest.raises(IllegalOperand, match="attribute value 8"):
        pto.raw_fill_l1(d, 0, 0, 1, 1, 0, fill_word_bits=8)
    with pytest.raises(Misaligned, match="multiple of 32"):
        pto.raw_fill_l1(d, 16, 0, 1, 1, 0, fill_word_bits=16)
    with pytest.raises(IllegalOperand, match=r"\[0, 32767\]") as e:
        pto.raw_fill_l1(d, 0, 0, 40000, 1, 0, fill_word_bits=16)
    assert e.value.operand == "%repeat_times"


# ============================================================================ GM -> L1 Nz repack


def frac_reference(src, d, mode, n, dv, groups, inner, outer, l2, l3, l4, dst_bytes):
    """Expected L1 bytes: element (g, n, d) at g*l4*32 + (d//C0)*l3*32 + n*l2*32 + (d%C0)*size; lanes to C0 zero."""
    d = dtype(d)
    c0 = d.c0
    size_bits = d.bits
    out_el = None
    exp = np.full(dst_bytes * (2 if d.bits == 4 else 1) // max(1, size_bits // 8 if d.bits >= 8 else 1), -1,
                  np.int64)
    d1 = -(-dv // c0)
    for gi in range(groups):
        for r in range(n):
            for col in range(d1 * c0):
                if col < dv:
                    if mode == "nd2nz":
                        pos_bits = (gi * outer + r * inner) * 8 + col * size_bits
                    else:
                        pos_bits = (gi * outer + col * inner) * 8 + r * size_bits
                    byte = pos_bits // 8
                    if d.bits == 4:
                        v = (src[byte] >> (4 if pos_bits % 8 else 0)) & 0xF
                    else:
                        v = int.from_bytes(src[byte:byte + size_bits // 8].tobytes(), "little")
                else:
                    v = 0
                dst_bits = (gi * l4 * 32 + (col // c0) * l3 * 32 + r * l2 * 32) * 8 + (col % c0) * size_bits
                exp[dst_bits // size_bits] = v
    del out_el
    return exp


@SETTINGS
@given(dt=st.sampled_from(["f16", "f32", "s8", "bf16", "e4m3", "e2m1x2"]), mode=st.sampled_from(["nd2nz", "dn2nz"]),
       n=st.integers(1, 20), dv=st.integers(1, 40), groups=st.integers(1, 3), pad=st.integers(0, 3),
       l2=st.integers(1, 2), extra3=st.integers(0, 2), data=st.data())
def test_mte_gm_l1_frac_matches_address_formula(dt, mode, n, dv, groups, pad, l2, extra3, data):
    d = dtype(dt)
    if d.bits == 4:
        n, dv = n + n % 2, dv + dv % 2
    row_elems, rows = (dv, n) if mode == "nd2nz" else (n, dv)
    inner = d.nbytes(row_elems) + pad * max(1, d.bits // 8)
    outer = rows * inner + data.draw(st.integers(0, 64))
    src = rand_bytes(groups * outer + 64)
    c0 = d.c0
    d1 = -(-dv // c0)
    l3 = n * l2 + extra3
    l4 = d1 * l3 + data.draw(st.integers(0, 3))
    dst_bytes = ((groups - 1) * l4 + (d1 - 1) * l3 + (n - 1) * l2 + 1) * 32
    m = Machine("A5", options=MachineOptions(fill="zero"))
    g = m.gm_tensor(src, name="s", dtype="u8")
    l1 = m.ptr("l1", dt, 64)
    clause = {mode: True}
    pto.mte_gm_l1_frac(g.cast(dt), l1, **clause, shape=(n, dv), src_layout=(inner, outer),
                       dst_group=(groups, l2, l3, l4), ctrl=(0, False))
    got = elems(raw(m, l1, dst_bytes), d).astype(np.int64)
    exp = frac_reference(src, dt, mode, n, dv, groups, inner, outer, l2, l3, l4, dst_bytes)
    mask = exp >= 0
    assert np.array_equal(got[mask], exp[mask])
    written = m.cores[0].buffer("l1").written[64:64 + dst_bytes]
    assert written.sum() == groups * n * d1 * 32           # exactly the generated blocks


def test_mte_gm_l1_frac_standard_tile_equals_nz_index_map():
    m = Machine("A2A3")
    x = RNG.standard_normal((37, 45)).astype(np.float16)
    g = m.gm_tensor(x, name="x")
    l1 = m.ptr("l1", "f16", 0)
    pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(37, 45), src_layout=(90,), dst_group=(1, 1, 48, 0),
                       ctrl=(0, False))
    nz = layout.unpack(m.read(l1, (48 * 48,)), "Nz", 48, 48)
    assert np.array_equal(nz[:37, :45], x) and (nz[:37, 45:] == 0).all()


def test_mte_gm_l1_frac_small_c0():
    m = Machine("A5")                                 # buffers start as 0xFF: the zero padding is real
    x = np.arange(1, 1 + 5 * 3, dtype=np.float16).reshape(5, 3)
    g = m.gm_tensor(x, name="x")
    l1 = m.ptr("l1", "f16", 0)
    pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(5, 3), src_layout=(6,), dst_group=(2, 0, 0, 2),
                       ctrl=(0, True))
    exp = np.zeros((5, 4), np.float16)               # each row as 4 channels, missing channel zero
    exp[:, :3] = x
    group = m.read(l1, (32,))                         # 20 values, padded with zeros to 64 bytes
    assert np.array_equal(group[:20], exp.reshape(-1)) and (group[20:] == 0).all()
    second = m.read(l1 + 32, (32,))                   # group 1 at loop4 = 2 C0 units = 64 bytes
    assert np.array_equal(second[:20], exp.reshape(-1))


def test_mte_gm_l1_frac_errors():
    m = Machine("A5")
    g = m.gm_tensor(np.zeros((16, 16), np.float16), name="x")
    l1 = m.ptr("l1", "f16", 0)
    kw = dict(shape=(16, 16), src_layout=(32,), dst_group=(1, 1, 16, 0), ctrl=(0, False))
    with pytest.raises(IllegalOperand, match="nd2nz or dn2nz"):
        pto.mte_gm_l1_frac(g, l1, **kw)
    with pytest.raises(IllegalOperand, match="mutually exclusive"):
        pto.mte_gm_l1_frac(g, l1, nd2nz=True, dn2nz=True, **kw)
    with pytest.raises(IllegalOperand, match="dst_group"):
        pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(16, 16), src_layout=(32,), ctrl=(0, False))
    with pytest.raises(IllegalOperand, match="small-C0") as e:
        pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(16, 16), src_layout=(32,), dst_group=(1, 1, 16, 0),
                           ctrl=(0, True))
    assert "smallc0" in e.value.operand
    with pytest.raises(IllegalOperand, match="overlap"):
        pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(8, 32), src_layout=(64,), dst_group=(1, 1, 4, 0),
                           ctrl=(0, False))
    with pytest.raises(IllegalOperand, match=r"\[1, inf\]") as e:
        pto.mte_gm_l1_frac(g, l1, nd2nz=True, shape=(16, 16), src_layout=(32,), dst_group=(0, 1, 16, 0),
                           ctrl=(0, False))
    assert "group_count" in e.value.operand
    with pytest.raises(IllegalOperand, match="differ in size"):
        pto.mte_gm_l1_frac(g, m.ptr("l1", "f32", 0), nd2nz=True, **kw)
    with pytest.raises(Misaligned):
        pto.mte_gm_l1_frac(g, m.ptr("l1", "f16", 8), nd2nz=True, **kw)


# ============================================================================ L1 -> L0A / L0B


DTS = ["f16", "f32", "s8", "bf16", "e4m3", "e2m1x2"]


def random_codes(d, count):
    d = dtype(d)
    if d.bits == 4:
        return RNG.integers(0, 16, count).astype(np.uint8)
    return rand_bytes(count * d.bits // 8).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.bits // 8])


@SETTINGS
@given(dt=st.sampled_from(DTS), target=st.sampled_from(["A2A3", "A5"]), side=st.sampled_from(["a", "b"]),
       e0=st.integers(1, 70), e1=st.integers(1, 150), transpose=st.booleans(), kcol=st.integers(0, 2))
def test_mte_l1_l0_shape_form_matches_layout_index_maps(dt, target, side, e0, e1, transpose, kcol):
    d = dtype(dt)
    c0 = d.c0
    g = max(16, c0)
    m = Machine(target, options=MachineOptions(fill="zero"))
    # destination logical matrix: L0A holds A (e0=m x e1=k); L0B holds B (e0=k x e1=n)
    if side == "a":
        rows_l, cols_l = e0, e1
    else:
        rows_l, cols_l = e1, e0             # L0B's Nz geometry holds X = B^T (n x k)
    if transpose:
        r_al, c_al = ceil_to(rows_l, g), ceil_to(cols_l, g)
        x = random_codes(dt, r_al * c_al).reshape(r_al, c_al)
        src_logical = x.T                     # the L1 tile holds the transpose, Nz, height c_al
        src_cols_extra = kcol * c0
        src_full = np.concatenate([random_codes(dt, c_al * src_cols_extra).reshape(c_al, src_cols_extra),
                                   src_logical], axis=1) if src_cols_extra else src_logical
        start_col = src_cols_extra
    else:
        r_al, c_al = ceil_to(rows_l, 16), ceil_to(cols_l, c0)
        x = random_codes(dt, r_al * c_al).reshape(r_al, c_al)
        src_cols_extra = kcol * c0
        src_full = np.concatenate([random_codes(dt, r_al * src_cols_extra).reshape(r_al, src_cols_extra), x],
                                  axis=1) if src_cols_extra else x
        start_col = src_cols_extra
    l1 = m.ptr("l1", dt, 0)
    m.write(l1.cast("u8"), to_bytes(storage_of(src_full, "Nz", d), d))
    zz = side == "a" and target == "A2A3"
    if transpose and (ceil_to(cols_l, c0) != c_al and r_al > 16 if zz
                      else ceil_to(rows_l, 16) != r_al and c_al > c0):
        # TRANSPOSE_SHAPE_FITS: the g-rounded block does not fit the tile pto.mad reads
        load = pto.mte_l1_l0a if side == "a" else pto.mte_l1_l0b
        with pytest.raises(IllegalOperand, match="transpose granularity"):
            load(l1, m.ptr("l0a" if side == "a" else "l0b", dt, 0), e0, e1, 0, start_col, transpose=True)
        return
    if side == "a":
        dst = m.ptr("l0a", dt, 0)
        pto.mte_l1_l0a(l1, dst, e0, e1, 0, start_col, transpose=transpose or None)
        lay = "Zz" if target == "A2A3" else "Nz"
        exp = storage_of(x, lay, d)
    else:
        dst = m.ptr("l0b", dt, 0)
        pto.mte_l1_l0b(l1, dst, e0, e1, 0, start_col, transpose=transpose or None)
        exp = storage_of(np.ascontiguousarray(x.T), "Zn", d)            # B = X^T stored Zn
    got = elems(raw(m, dst, d.nbytes(x.size)), d)
    assert np.array_equal(got, exp)


def fractal_reference(src_bytes, ctl, transpose, d, dst_outer, dst_bytes):
    """Per-fractal loop reference of the full-control form (independent of the op's strided views)."""
    m_start, k_start, m_step, k_step, ss, ds = ctl
    d = dtype(d)
    c0 = d.c0
    frac = [[src_bytes[((k_start + j) * ss + m_start + i) * 512:((k_start + j) * ss + m_start + i + 1) * 512]
             for j in range(k_step)] for i in range(m_step)]
    if transpose:
        s = np.block([[elems(frac[i][j], d).reshape(16, c0) for j in range(k_step)] for i in range(m_step)])
        x = s.T
        frac = [[to_bytes(np.ascontiguousarray(x[i * 16:(i + 1) * 16, j * c0:(j + 1) * c0]).reshape(-1), d)
                 for j in range(x.shape[1] // c0)] for i in range(x.shape[0] // 16)]
    out = np.zeros(dst_bytes, np.uint8)
    for i, row in enumerate(frac):
        for j, f in enumerate(row):
            at = (j * ds + i) if dst_outer == "col" else (i * ds + j)
            out[at * 512:(at + 1) * 512] = f
    return out


@SETTINGS
@given(dt=st.sampled_from(DTS), side=st.sampled_from(["a", "b"]), target=st.sampled_from(["A2A3", "A5"]),
       m_start=st.integers(0, 3), k_start=st.integers(0, 3), m_step=st.integers(1, 4), k_step=st.integers(1, 4),
       ss=st.integers(1, 6), ds_extra=st.integers(0, 2), transpose=st.booleans())
def test_mte_l1_l0_full_control_matches_fractal_loop(dt, side, target, m_start, k_start, m_step, k_step, ss, ds_extra,
                                                     transpose):
    d = dtype(dt)
    c0 = d.c0
    if transpose:   # round extents to the transpose granularity
        if c0 == 8:
            k_step += k_step % 2
        if c0 > 16:
            m_step = ceil_to(m_step, c0 // 16)
    m = Machine(target, options=MachineOptions(fill="zero"))
    src = rand_bytes(((k_start + k_step) * ss + m_start + m_step + 1) * 512)
    l1 = m.ptr("l1", dt, 0)
    m.write(l1.cast("u8"), src)
    dst_outer = "row" if side == "a" and target == "A2A3" else "col"
    rows, cols = (c0 * k_step // 16, 16 * m_step // c0) if transpose else (m_step, k_step)
    ds = (cols if dst_outer == "row" else rows) + ds_extra
    dst_bytes = (((cols - 1) * ds + rows) if dst_outer == "col" else ((rows - 1) * ds + cols)) * 512
    dst = m.ptr("l0" + side, dt, 0)
    ctl = (m_start, k_start, m_step, k_step, ss, ds)
    getattr(pto, "mte_l1_l0" + side)(l1, dst, *ctl, transpose=transpose or None)
    got = raw(m, dst, dst_bytes)
    exp = fractal_reference(src, ctl, transpose, dt, dst_outer, dst_bytes)
    assert np.array_equal(got, exp)


def test_mte_l1_l0_errors():
    m = Machine("A5")
    l1 = m.ptr("l1", "f16", 0)
    m.write(l1, np.zeros(64 * 64, np.float16))
    a = m.ptr("l0a", "f16", 0)
    with pytest.raises(IllegalOperand, match="start_row must be 0") as e:
        pto.mte_l1_l0a(l1, a, 16, 32, 16, 0)
    assert e.value.operand == "%start_row" and "full-control" in str(e.value)
    with pytest.raises(IllegalOperand, match="multiple of the 16-element C0") as e:
        pto.mte_l1_l0a(l1, a, 16, 32, 0, 8)
    assert e.value.operand == "%start_col"
    with pytest.raises(IllegalOperand, match="transpose needs whole destination fractals"):
        pto.mte_l1_l0a(m.ptr("l1", "f32", 0), m.ptr("l0a", "f32", 0), 0, 0, 1, 1, 1, 1, transpose=True)
    with pytest.raises(IllegalOperand, match=r"\[1, 255\]") as e:
        pto.mte_l1_l0a(l1, a, 0, 0, 256, 1, 1, 1)
    assert e.value.operand == "%m_step"
    with pytest.raises(IllegalOperand, match="field limit 255"):
        pto.mte_l1_l0a(l1, a, 16 * 256, 16, 0, 0)
    with pytest.raises(IllegalOperand, match="got 5"):
        pto.mte_l1_l0a(l1, a, 16, 16, 0, 0, 1)
    with pytest.raises(IllegalOperand, match="differ in size"):
        pto.mte_l1_l0a(l1, m.ptr("l0a", "f32", 0), 16, 16)
    with pytest.raises(IllegalOperand, match="must point into l0b"):
        pto.mte_l1_l0b(l1, a, 16, 16)
    with pytest.raises(Misaligned) as e:
        pto.mte_l1_l0b(l1, m.ptr("l0b", "f16", 48), 16, 16)
    assert e.value.operand == "%dst"
    with pytest.raises(OutOfBounds, match="l0a") as e:         # 256 x 256 f16 = 128 KiB > 64 KiB L0A
        pto.mte_l1_l0a(l1, a, 0, 0, 16, 16, 16, 16)
    assert e.value.operand == "%dst"
    with pytest.raises(IllegalOperand, match="attribute value"):
        pto.mte_l1_l0a(l1, a, 16, 16, transpose=1)


def test_mte_l1_l0a_defaults_start_to_zero_and_copies_written_flags():
    m = Machine("A2A3")
    l1 = m.ptr("l1", "f16", 0)
    m.write(l1, np.ones(16 * 16, np.float16))         # only the first 16 x 16 fractal is written
    a = m.ptr("l0a", "f16", 0)
    pto.mte_l1_l0a(l1, a, 16, 32)                      # reads one unwritten fractal: copied, not reported
    assert m.reports == []
    w = m.cores[0].buffer("l0a").written
    assert w[:512].all() and not w[512:1024].any()


# ============================================================================ MX scales


def test_mx_scale_loads_copy_fragments_to_data_address_over_16():
    m = Machine("A5")
    src = rand_bytes(4096)
    l1 = m.ptr("l1", "e8m0", 0)
    m.write(l1.cast("u8"), src)
    dst = m.ptr("l0a", "e4m3", 0x800)                       # data tile address; scales at 0x80
    pto.mte_l1_l0a_mx(l1, dst, 40, 200, 0, 0)              # 3 fragment rows x ceil(ceil(200/32)/2)=4 columns
    scale = m.cores[0].buffer("l0a_scale").data
    got = scale[0x80:0x80 + 3 * 4 * 32]
    assert np.array_equal(got, src[:3 * 4 * 32])
    dstb = m.ptr("l0b", "e4m3", 0x1000)
    pto.mte_l1_l0b_mx(l1, dstb, x_start=1, y_start=2, x_step=2, y_step=3, src_stride=6, dst_stride=4)
    sb = m.cores[0].buffer("l0b_scale").data[0x100:0x100 + 2 * 4 * 32].reshape(2, 4, 32)
    srcf = src.reshape(-1, 32)
    for i in range(2):
        for j in range(3):
            assert np.array_equal(sb[i, j], srcf[(1 + i) * 6 + 2 + j])


def test_mx_scale_load_errors():
    a2 = Machine("A2A3")
    with pytest.raises(UnsupportedOp, match="no MX scale buffer"):
        pto.mte_l1_l0a_mx(a2.ptr("l1", "e8m0", 0), a2.ptr("l0a", "e4m3", 0), 16, 64, 0, 0)
    m = Machine("A5")
    l1 = m.ptr("l1", "e8m0", 0)
    with pytest.raises(IllegalOperand, match="incomplete full MX group: missing y_step"):
        pto.mte_l1_l0a_mx(l1, m.ptr("l0a", "e4m3", 0), x_start=0, y_start=0, x_step=1, src_stride=1,
                          dst_stride=1)
    with pytest.raises(IllegalOperand, match="mutually exclusive"):
        pto.mte_l1_l0a_mx(l1, m.ptr("l0a", "e4m3", 0), 16, 64, 0, 0, x_start=0)
    with pytest.raises(Misaligned, match="16-byte"):
        pto.mte_l1_l0b_mx(l1, m.ptr("l0b", "e4m3", 8), 64, 16, 0, 0)


# ============================================================================ BT and FB


@pytest.mark.parametrize("target", ["A2A3", "A5"])
@pytest.mark.parametrize("src_dt,dst_dt", [("f16", "f32"), ("bf16", "f32"), ("f32", "f32"), ("s32", "s32"),
                                           ("f16", "f16")])
def test_mte_l1_bt_widening_units_and_gaps(target, src_dt, dst_dt):
    m = Machine(target, options=MachineOptions(fill="zero"))
    unit = BT_LOAD_UNIT[m.target.arch]
    sd = dtype(src_dt)
    per_unit = unit // (sd.bits // 8)
    vals = (RNG.integers(-50, 50, 4 * per_unit) / 4).astype(sd.storage)
    l1 = m.ptr("l1", src_dt, 0)
    m.write(l1, vals)
    bt = m.ptr("bt", dst_dt, 0)
    pto.mte_l1_bt(l1, bt, 1, nburst=(2, 1, 1))          # units 0 and 2 -> slots [0, n) and [2n, 3n)
    slots = m.read(bt.cast("u8"), (4 * per_unit * 4,)).view(np.uint8)
    n = per_unit
    for b, src_unit in ((0, 0), (1, 2)):
        chunk = slots[b * 2 * n * 4:(b * 2 * n + n) * 4].reshape(n, 4)
        exp = vals[src_unit * n:(src_unit + 1) * n]
        if dst_dt == "f16":
            got = np.ascontiguousarray(chunk[:, :2]).view(np.float16).reshape(n)
            assert (chunk[:, 2:] == 0).all()
        else:
            got = np.ascontiguousarray(chunk).view(dtype(dst_dt).storage).reshape(n)
        assert np.array_equal(got.astype(np.float64), exp.astype(np.float64))


def test_mte_l1_bt_errors():
    m = Machine("A2A3")
    with pytest.raises(IllegalOperand, match="type pair s8 -> f32") as e:
        pto.mte_l1_bt(m.ptr("l1", "s8", 0), m.ptr("bt", "f32", 0), 1, nburst=(1, 0, 0))
    assert "f16->f32" in str(e.value)
    with pytest.raises(IllegalOperand, match="nburst"):
        pto.mte_l1_bt(m.ptr("l1", "f32", 0), m.ptr("bt", "f32", 0), 1)
    with pytest.raises(OutOfBounds, match="bt"):                     # 1 KiB bias table on A2A3
        pto.mte_l1_bt(m.ptr("l1", "f32", 0), m.ptr("bt", "f32", 0), 17, nburst=(1, 0, 0))


def test_mte_l1_fb_128_byte_units():
    m = Machine("A5", options=MachineOptions(fill="zero"))
    data = rand_bytes(1024)
    l1 = m.ptr("l1", "u8", 0)
    m.write(l1, data)
    fb = m.ptr("fb", "u8", 0)
    pto.mte_l1_fb(l1, fb, 1, nburst=(2, 2, 1))
    out = raw(m, fb, 512)
    assert np.array_equal(out[:128], data[:128]) and np.array_equal(out[256:384], data[384:512])
    assert (out[128:256] == 0).all()


# ============================================================================ op table


def test_pipes_per_spec():
    expect = {"mte_gm_l1": "MTE2", "mte_gm_l1_frac": "MTE2", "raw_fill_l1": "MTE2", "mte_l1_l0a": "MTE1",
              "mte_l1_l0b": "MTE1", "mte_l1_l0a_mx": "MTE1", "mte_l1_l0b_mx": "MTE1", "mte_l1_bt": "MTE1",
              "mte_l1_fb": "FIX", "mte_l1_ub": "MTE1", "mte_ub_l1": "MTE3", "mte_gm_ub": "MTE2", "mte_ub_gm": "MTE3",
              "mad": "M", "mad_acc": "M", "mad_bias": "M", "mad_mx": "M", "mad_mx_acc": "M", "mad_mx_bias": "M"}
    for name, pipe in expect.items():
        assert get_op(name).pipe == pipe, name


def test_unknown_clause_lists_valid_ones():
    m = Machine("A2A3")
    with pytest.raises(UnknownName, match="unknown clause 'pad'") as e:
        pto.mte_gm_l1(m.gm_tensor(np.zeros(32, np.uint8), name="z"), m.ptr("l1", "u8", 0), 32, nburst=(1, 0, 0),
                      pad=(0,))
    assert "nburst" in str(e.value)


def test_gm_read_may_run_into_the_allocation_padding():
    """The host allocates a GM tensor of n bytes as round32(n) + 32 bytes (GE's
    GetTensorMemorySizeInBytes): a read may run past the tensor up to that end -- also a whole
    block starting past the tensor -- and the bytes past the tensor are unknown (not written);
    a read that starts inside the allocation and runs past it reads unknown data there too, with a
    warning (GM_OVERREAD_READS_UNKNOWN); one that starts past the allocation is an error."""
    m = Machine("A2A3")
    src = rand_bytes(100)                                                # allocation: 128 + 32 = 160 B
    g = m.gm_tensor(src, name="s")
    ub = m.ptr("ub", "u8", 0)
    pto.mte_gm_ub(g.byte_offset(72), ub, 0, 32, nburst=(1, 32, 32))      # bytes [72, 104): 4 past the end
    assert np.array_equal(raw(m, ub, 28), src[72:100])
    buf = m.cores[0].buffer("ub")
    assert buf.written[:28].all() and not buf.written[28:32].any()
    l1 = m.ptr("l1", "u8", 0)
    pto.mte_gm_l1(g, l1, 64, nburst=(2, 40, 64))                        # row 2: [40, 104)
    assert np.array_equal(raw(m, l1, 124)[64:124], src[40:100])
    pto.mte_gm_ub(g.byte_offset(72), ub, 0, 64, nburst=(1, 64, 64))      # 2nd block [104, 136) starts past 100
    assert np.array_equal(raw(m, ub, 28), src[72:100]) and not buf.written[28:64].any()
    ub2 = m.ptr("ub", "u8", 256)
    pto.mte_gm_ub(g.byte_offset(128), ub2, 0, 32, nburst=(1, 32, 32))    # [128, 160): all padding
    assert not buf.written[256:288].any()
    m.write(ub, np.full(96, 0xAB, np.uint8))
    with pytest.warns(GmOverreadWarning, match=r"reads GM bytes \[72, 168\) of region 's' \(100 B; the host "
                                               r"allocates 160 B\): the 8 byte\(s\) past"):
        pto.mte_gm_ub(g.byte_offset(72), ub, 0, 96, nburst=(1, 96, 96))   # [72, 168): past 160
    assert np.array_equal(raw(m, ub, 28), src[72:100]) and not buf.written[28:96].any()
    assert sum(k == "gm-overread" for k, _ in m.reports) == 1
    with pytest.warns(GmOverreadWarning, match=r"reads GM bytes \[104, 168\)"):
        pto.mte_gm_ub(g.byte_offset(104), ub, 0, 64, nburst=(1, 64, 64))  # starts in the padding, runs past it
    with pytest.raises(OutOfBounds, match=r"not inside any allocated region \(100 B past the end of region 's'\)"):
        pto.mte_gm_ub(g.byte_offset(200), ub, 0, 32, nburst=(1, 32, 32))  # starts past the allocation


def test_gm_write_into_the_allocation_padding_is_dropped():
    """A store that runs past a GM tensor into its allocation's padding (up to round32(n) + 32 bytes)
    writes the bytes inside and drops the rest, with a "gm-tail" report; plain and atomic stores alike,
    and a store that starts in the padding. Running past the padding is OutOfBounds."""
    m = Machine("A2A3")
    g = m.gm_tensor(np.full(100, 7, np.uint8), name="d")                  # allocation: 160 B
    nxt = m.gm_tensor(np.full(64, 9, np.uint8), name="next")
    src = rand_bytes(128)
    ub = m.ptr("ub", "u8", 0)
    m.write(ub, src)
    with pytest.warns(GmPaddingWriteWarning, match=r"tensor 'd' \(100 B\): the 60 byte\(s\) \[100, 160\) past"):
        pto.mte_ub_gm(ub, g.byte_offset(64), 96, nburst=(1, 96, 96))      # bytes [64, 160): 60 past the end
    out = raw(m, g, 100)
    assert np.array_equal(out[64:], src[:36]) and (out[:64] == 7).all()
    assert (raw(m, nxt, 64) == 9).all()
    assert any(k == "gm-tail" and "60 byte(s) past its end" in msg for k, msg in m.reports)
    with pytest.warns(GmPaddingWriteWarning, match=r"\[128, 160\) past its end are dropped"):
        pto.mte_ub_gm(ub, g.byte_offset(128), 32, nburst=(1, 32, 32))     # [128, 160): all padding
    assert np.array_equal(raw(m, g, 100)[64:], src[:36])
    assert any(k == "gm-tail" and "bytes 128..159" in msg for k, msg in m.reports)
    f = m.gm_tensor(np.ones(10, np.float32), name="acc")                  # 40 B: an atomic 64-byte store
    m.write(m.ptr("ub", "f32", 256), np.arange(16, dtype=np.float32))
    pto.set_atomic_f32()
    pto.set_atomic_add()
    pto.mte_ub_gm(m.ptr("ub", "f32", 256), f, 64, nburst=(1, 64, 64))   # ends in acc's last block: no warning
    pto.set_atomic_none()
    assert np.array_equal(m.read(f, 10), 1 + np.arange(10, dtype=np.float32))
    with pytest.raises(OutOfBounds, match="and of its allocation's padding"):
        pto.mte_ub_gm(ub, g.byte_offset(64), 128, nburst=(1, 128, 128))   # [64, 192): past 160
    assert (raw(m, nxt, 64) == 9).all()


def test_gm_write_into_the_padding_warns_only_past_the_last_block():
    """GM_PADDING_WRITE_WARNS: a whole-block store ending inside the tensor's last 32-byte block (the
    partial-last-block idiom) is a gm-tail report only; one reaching the host's extra block warns once
    per line and tensor (mte_ub_gm and mte_l1_gm alike)."""
    import warnings
    m = Machine("A2A3")
    g = m.gm_tensor(np.full(100, 7, np.uint8), name="d")                  # last block ends at 128
    m.write(m.ptr("ub", "u8", 0), rand_bytes(128))
    m.write(m.ptr("l1", "u8", 0), rand_bytes(128))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pto.mte_ub_gm(m.ptr("ub", "u8", 0), g.byte_offset(64), 64, nburst=(1, 64, 64))   # [64, 128)
        pto.mte_l1_gm(m.ptr("l1", "u8", 0), g, 4, nburst=(1, 0, 0))                     # [0, 128)
    assert sum(k == "gm-tail" for k, _ in m.reports) == 2
    with pytest.warns(GmPaddingWriteWarning, match=r"writes GM bytes \[32, 160\) of tensor 'd'"):
        pto.mte_l1_gm(m.ptr("l1", "u8", 0), g.byte_offset(32), 4, nburst=(1, 0, 0))


def test_gm_read_past_the_padding_names_the_whole_read():
    """The report of a GM read past the tensor's allocation names the whole read range, the allocation
    size and the line; the bytes past it read as unknown (unwritten) data."""
    from pto_core.program import program
    with program("oob_tail", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (64,))                    # 256 B: allocation 288 B
        k.gm_arg("y", "f32", (64,), io="out")
        pto.mte_gm_ub(x + 48, k.ptr("ub", "f32", 0), 0, 128, nburst=(1, 0, 0))    # [192, 320)
    exe = k.program.compile()
    with pytest.warns(GmOverreadWarning, match=r"test_mte.py:\d+.*: pto.mte_gm_ub reads GM bytes \[192, 320\) of "
                                               r"region 'x' \(256 B; the host allocates 288 B\)"):
        exe.run({"x": np.zeros(64, np.float32)})
    assert [k for k, _ in exe.reports].count("gm-overread") == 1


def test_gm_overread_warning_is_attributed_to_the_users_line():
    """The GmOverreadWarning was issued at pto_core/ops/mte.py (Python printed our file and our source line
    `_report_overread(ctx, region, off, n)` above the message); it belongs to the op's line in the user's file."""
    import inspect
    import warnings
    from pto_core.program import program
    with program("oob_tail_site", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (64,))
        k.gm_arg("y", "f32", (64,), io="out")
        pto.mte_gm_ub(x + 48, k.ptr("ub", "f32", 0), 0, 128, nburst=(1, 0, 0))
    line = inspect.currentframe().f_lineno - 1
    exe = k.program.compile()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        exe.run({"x": np.zeros(64, np.float32)})
    w = [w for w in got if issubclass(w.category, GmOverreadWarning)]
    assert len(w) == 1 and w[0].filename == __file__ and w[0].lineno == line, (w[0].filename, w[0].lineno)


def test_a_ub_stride_not_a_multiple_of_32_is_refused_with_a_bytes_not_blocks_fix():
    """The UB stride field of mte_gm_ub / mte_ub_gm must be a multiple of 32 bytes also for one burst
    (STRIDE_FIELD_CHECKED_FOR_ONE_BURST: the PTO-ISA copy_gm_to_ubuf page gives the field as "bytes, 32B-aligned").
    The Fix says PTO counts bytes where TIK's data_move counts 32-byte blocks and names the value given, the nearest
    legal stride and the byte stride of the value read as a block count (it said only "use a multiple of 32")."""
    m = Machine("A2A3")
    g = m.gm_tensor(np.zeros(64, np.float16), name="x")
    with pytest.raises(Misaligned) as e:
        pto.mte_gm_ub(g, m.ptr("ub", "f16", 0), 0, 64, nburst=(1, 64, 2))     # 2 blocks written as a TIK count
    text = str(e.value)
    assert e.value.operand == "nburst(%dst_stride)" and e.value.value == 2
    assert "also with one burst, where it is not used" in text and "stride 2 is not" in text
    assert "PTO lengths and strides are BYTES" in text and "TIK's data_move counts 32-byte blocks" in text
    assert "nearest legal stride to 2 is 0" in text and "the byte stride is 64" in text
    with pytest.raises(Misaligned) as e:
        pto.mte_ub_gm(m.ptr("ub", "f16", 0), g, 40, nburst=(2, 40, 40))
    text = str(e.value)
    assert e.value.operand == "nburst(%src_stride)" and "one burst" not in text
    assert "nearest legal stride to 40 is 32" in text and "are 32 and 64" in text
    with pytest.raises(Misaligned, match="nearest legal stride to 50 is 64"):
        pto.mte_ub_gm(m.ptr("ub", "f16", 0), g, 32, nburst=(1, 0, 0), loop=[(2, 50, 64)])
    pto.mte_gm_ub(g, m.ptr("ub", "f16", 0), 0, 64, nburst=(1, 64, 64))   # a multiple of 32: accepted
    from pto_core.ops.mte import STRIDE_FIELD_CHECKED_FOR_ONE_BURST
    assert STRIDE_FIELD_CHECKED_FOR_ONE_BURST
