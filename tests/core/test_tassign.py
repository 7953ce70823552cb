"""TASSIGN (seed 003): runtime form, checked form SA-0351..SA-0354, ping-pong, auto placement."""
import numpy as np
import pytest

from pto_core import Machine, Tile, TileAllocator, tassign, tassign_checked
from pto_core.errors import CapacityExceeded, IllegalOperand, OutOfBounds, TassignError
from pto_core.tassign import default_layout, tassign_violations
from pto_core.targets import get_target


def test_runtime_form_binds_without_checks_and_bounds_are_checked_at_use():
    m = Machine("A2A3")
    a, b, c = (Tile("Vec", "f32", 16, 16) for _ in range(3))
    tassign(a, 0x1000), tassign(b, 0x2000), tassign(c, 0x3000)
    m.write(a.ptr(m), np.arange(256, dtype=np.float32))
    assert m.read(a.ptr(m), (16, 16))[15, 15] == 255
    far = tassign(Tile("Vec", "f32", 128, 128), 0x2F000)  # no error at TASSIGN time ...
    ctx = m.context(0)
    ctx.begin_op("pto.use", "V", None)
    with pytest.raises(OutOfBounds, match="outside ub"):  # ... but when the tile is used
        ctx.view(far.ptr(m), 128 * 128, write=True, operand="%tile")


def test_checked_form_accepts_the_docs_ok_example():
    tiles = [Tile("Vec", "f32", 16, 16) for _ in range(3)]
    for t, addr in zip(tiles, (0x0000, 0x0400, 0x0800)):
        tassign_checked(t, addr, "A2A3")
        assert t.addr == addr and t.nbytes == 1024


def test_checked_form_tile_larger_than_ub():
    big = Tile("Vec", "f32", 256, 256)  # 256 KiB > 192 KiB
    with pytest.raises(TassignError) as ei:
        tassign_checked(big, 0x0, "A2A3")
    assert set(ei.value.violations) == {"SA-0352", "SA-0353"}
    assert "Tile storage size exceeds memory space capacity" in str(ei.value) and "FIX-A12" in str(ei.value)
    assert big.addr is None
    tassign_checked(big, 0x0, "A5")  # fits the 256 KiB UB of A5


def test_checked_form_reports_every_violation():
    t = Tile("Vec", "f32", 128, 128)  # 64 KiB
    tassign_checked(Tile("Vec", "f32", 128, 128), 0x20000, "A2A3")  # exactly fits
    with pytest.raises(TassignError) as ei:
        tassign_checked(t, 0x20001, "A2A3")
    assert ei.value.violations == ("SA-0353", "SA-0354")
    assert "0x20001 + 65536 B = 196609 B > 196608 B" in str(ei.value)


def test_checked_form_space_missing_on_the_target():
    scale = Tile("ScaleLeft", "e8m0", 16, 2)
    with pytest.raises(TassignError) as ei:
        tassign_checked(scale, 0x0, "A2A3")
    assert "SA-0351" in ei.value.violations and "not available on this architecture" in str(ei.value)
    tassign_checked(scale, 0x20, "A5")
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile("ScaleLeft", "e8m0", 16, 2), 0x8, "A5")
    assert ei.value.violations == ("SA-0354",)


@pytest.mark.parametrize("tile_type", ["ScaleLeft", "ScaleRight"])
def test_checked_form_scale_tiles_need_32_byte_alignment(tile_type):
    # pto-isa TASSIGN table and buffer_limits.hpp: ScaleLeft/ScaleRight share L0A/L0B's 32 B alignment
    shape = (16, 2) if tile_type == "ScaleLeft" else (2, 16)        # whole inner boxes (Zz 16x2, Nn 2x16)
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile(tile_type, "e8m0", *shape), 0x10, "A5")
    assert ei.value.violations == ("SA-0354",) and "0x10 % 32 = 16" in str(ei.value)
    assert tassign_checked(Tile(tile_type, "e8m0", *shape), 0x40, "A5").addr == 0x40


@pytest.mark.parametrize("target", ["A2A3", "A5", "Kirin9030", "KirinX90"])
def test_violations_agree_with_the_capacity_table(target):
    t = get_target(target)
    rng = np.random.default_rng(1)
    for _ in range(200):
        tile = Tile("Acc", "f32", 16 * int(rng.integers(1, 40)), 16 * int(rng.integers(1, 20)))
        addr = int(rng.integers(0, 2 * t.sizes.l0c))
        got = {v[0] for v in tassign_violations(tile, addr, t)}
        want = set()
        if tile.nbytes > t.sizes.l0c:
            want.add("SA-0352")
        if addr + tile.nbytes > t.sizes.l0c:
            want.add("SA-0353")
        if addr % 32:
            want.add("SA-0354")
        assert got == want


def test_ping_pong_l0_tiles_in_separate_spaces():
    m = Machine("A2A3")
    a0, a1 = Tile("Left", "f16", 64, 128), Tile("Left", "f16", 64, 128)
    b0, b1 = Tile("Right", "f16", 128, 64), Tile("Right", "f16", 128, 64)
    for t, addr in ((a0, 0x0), (a1, 0x8000), (b0, 0x0), (b1, 0x8000)):
        tassign_checked(t, addr, "A2A3")
    m.write(a1.ptr(m), np.full(64 * 128, 2, np.float16))
    m.write(b1.ptr(m), np.full(128 * 64, 3, np.float16))
    assert m.read(a1.ptr(m), 1)[0] == 2 and m.read(b1.ptr(m), 1)[0] == 3  # distinct physical memories
    assert default_layout("Left", get_target("A2A3")) == ("Zz", 512)
    assert default_layout("Left", get_target("A5")) == ("Nz", 512)
    assert default_layout("Acc", get_target("A5")) == ("Nz", 1024)
    a0.validate_shape("A2A3")
    with pytest.raises(IllegalOperand, match="inner box"):
        Tile("Left", "f16", 20, 16).validate_shape("A2A3")


def test_allocator_first_fit_scopes_and_capacity_error_lists_occupants():
    alloc = TileAllocator("A2A3", "l0a", alignment=512)
    x = alloc.alloc(1000, "x")
    y = alloc.alloc(512, "y")
    assert (x, y) == (0, 1024)
    mark = alloc.mark()
    alloc.alloc(30000, "z")
    alloc.release_to(mark)
    assert alloc.used == 1512
    alloc.free("x")
    assert alloc.alloc(512, "w") == 0  # the hole left by x is reused
    with pytest.raises(CapacityExceeded) as ei:
        alloc.alloc(65000, "huge")
    msg = str(ei.value)
    assert "cannot place huge of 65000 B in l0a (65536 B on A2A3" in msg and "y [0x400, 0x600)" in msg
    with pytest.raises(IllegalOperand, match="nothing named 'nope'"):
        alloc.free("nope")


def test_checked_form_space_missing_reports_no_out_of_bounds():
    # tassign_check.hpp guards SA-0353 with `capacity == 0 || end_addr <= capacity`: a space that
    # does not exist reports SA-0351 (+ SA-0352 for the non-empty tile), never SA-0353.
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile("ScaleRight", "e8m0", 2, 16), 0x40, "A2A3")
    assert ei.value.violations == ("SA-0351", "SA-0352") and "SA-0353:" not in str(ei.value)
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile("ScaleLeft", "e8m0", 16, 2), 0x41, "Kirin9030")
    assert ei.value.violations == ("SA-0351", "SA-0352", "SA-0354")


def test_checked_form_runs_the_tile_templates_shape_rules_first():
    """pto_spec.md §2.1: boxed tiles need whole inner boxes (the row rule waived for Vec, MX scale and one-row
    tiles); unboxed row-major tiles need columns filling whole 32-byte blocks. The C++ Tile type does not
    compile otherwise, so TASSIGN<addr> of such a tile is an IllegalOperand naming the user's line."""
    with pytest.raises(IllegalOperand, match=r"test_tassign.py:\d+: .*Left.*not a multiple of the Nz inner box "
                                             r"16x16 for bf16.*Fix: pad the tile"):
        tassign_checked(Tile("Left", "bf16", 3, 205), 0, "A5")
    with pytest.raises(IllegalOperand, match=r"unboxed row-major \(ND\) tile needs its columns to fill whole "
                                             r"32-byte blocks \(5 columns x f16 = 10 B\).*multiple of 16"):
        tassign_checked(Tile("Vec", "f16", 4, 5), 0, "A2A3")
    assert tassign_checked(Tile("Left", "f16", 1, 16), 0, "A5").addr == 0          # one row: waived
    assert tassign_checked(Tile("Vec", "f32", 3, 8), 0x40, "A2A3").addr == 0x40   # Vec: no row rule
    assert tassign(Tile("Left", "bf16", 3, 205), 0).addr == 0                     # runtime form: no checks

def test_both_forms_name_the_users_line():
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile("Vec", "f32", 16, 16), 0x30000, "A2A3")
    assert ei.value.where is not None and ei.value.where.file == __file__
    assert f"test_tassign.py:{ei.value.where.line}" in str(ei.value)
    with pytest.raises(IllegalOperand) as ei:
        tassign(Tile("Vec", "f32", 16, 16), "0x40")
    assert ei.value.where is not None and ei.value.where.file == __file__


def test_both_forms_accept_numpy_integer_addresses():
    # the address is an integral value (pto-isa TASSIGN: "addr must be an integral type"); numpy
    # integers are integers like everywhere else in the simulator (registry int operands)
    a = tassign(Tile("Vec", "f32", 16, 16), np.int64(0x400))
    b = tassign_checked(Tile("Vec", "f32", 16, 16), np.uint32(0x800), "A2A3")
    assert (a.addr, b.addr) == (0x400, 0x800) and type(a.addr) is int and type(b.addr) is int
    with pytest.raises(TassignError) as ei:
        tassign_checked(Tile("Vec", "f32", 16, 16), np.int32(0x21), "A2A3")
    assert ei.value.violations == ("SA-0354",)


def test_mx_fractal_waives_the_row_rule_for_any_tile_type():
    """pto_tile.hpp waives `Rows % InnerRows` for `SFractalSize == fractalMxSize` (not by tile type): an L1
    scale tile `Tile<Mat, uint8_t, scaleK, N, ColMajor, .., ColMajor, 32>` with an odd scaleK compiles."""
    assert tassign_checked(Tile("Mat", "e8m0", 3, 16, layout="Nn", fractal=32), 0, "A5").addr == 0
    assert tassign_checked(Tile("Mat", "e8m0", 8, 2, layout="Zz", fractal=32), 0, "A5").addr == 0
    with pytest.raises(IllegalOperand, match="not a multiple of the Nn inner box 16x2"):
        tassign_checked(Tile("Mat", "e8m0", 2, 7, layout="Nn", fractal=32), 0, "A5")     # cols rule stays
    with pytest.raises(IllegalOperand, match=r"rows % 16 == 0"):                           # 512 B: not MX
        tassign_checked(Tile("ScaleLeft", "e8m0", 8, 32, layout="Zz", fractal=512), 0, "A5")


def test_unboxed_rule_counts_half_bytes_of_packed_4_bit_rows():
    # 63 x fp4 = 31.5 B is not a whole 32-byte block (rounding the byte count up hid it); 64 x fp4 = 32 B is
    with pytest.raises(IllegalOperand, match=r"63 columns x e2m1x2 = 31.5 B.*multiple of 64"):
        tassign_checked(Tile("Vec", "e2m1x2", 1, 63), 0, "A5")
    assert tassign_checked(Tile("Vec", "e2m1x2", 1, 64), 0, "A5").addr == 0


def test_mx_and_acc_fractals_check_shapes_against_the_templates_fixed_box():
    """pto_tile.hpp getInnerRow/getInnerCol: a 32 B (MX) fractal checks against 16 x 2 and a 1024 B one
    against 16 x 16 whatever the layout, so a ScaleRight (Nn) tile needs an even column count only."""
    assert tassign_checked(Tile("ScaleRight", "e8m0", 2, 8), 0, "A5").addr == 0
    assert tassign_checked(Tile("ScaleRight", "e8m0", 3, 2), 0, "A5").addr == 0          # rows waived (MX)
    with pytest.raises(IllegalOperand, match=r"inner box 16x2 .*cols % 2 == 0"):
        tassign_checked(Tile("ScaleRight", "e8m0", 2, 7), 0, "A5")
    with pytest.raises(IllegalOperand, match=r"inner box 16x16 for f32 \(1024 B"):
        tassign_checked(Tile("Acc", "f32", 16, 8), 0, "A5")
