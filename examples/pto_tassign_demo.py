"""Place tiles with TASSIGN (both forms) on an A2A3 machine, write and read them back.

Run: python examples/pto_tassign_demo.py
"""
import numpy as np

from pto_core import Machine, Tile, TassignError, TileAllocator, tassign, tassign_checked

m = Machine("A2A3")

# Compile-time (checked) form: three 16x16 f32 Vec tiles, as in the TASSIGN docs.
a, b, c = (Tile("Vec", "f32", 16, 16, name=n) for n in "abc")
for tile, addr in ((a, 0x0000), (b, 0x0400), (c, 0x0800)):
    tassign_checked(tile, addr, m.target)

m.write(a.ptr(m), np.arange(256, dtype=np.float32))
m.write(b.ptr(m), np.full(256, 0.5, dtype=np.float32))
print("a[0, :4] =", m.read(a.ptr(m), (16, 16))[0, :4], " b[0, :4] =", m.read(b.ptr(m), (16, 16))[0, :4])

# The two failing examples of the docs: a 256 KiB tile and a misaligned out-of-bounds address.
for tile, addr in ((Tile("Vec", "f32", 256, 256), 0x0), (Tile("Vec", "f32", 128, 128), 0x20001)):
    try:
        tassign_checked(tile, addr, m.target)
    except TassignError as err:
        print("rejected:", ", ".join(err.violations))

# Runtime form: no static check; ping-pong L0A/L0B tiles, then automatic placement in L1.
a0, a1 = Tile("Left", "f16", 64, 128), Tile("Left", "f16", 64, 128)
tassign(a0, 0x0000), tassign(a1, 0x8000)
l1 = TileAllocator(m.target, "l1")
panel = l1.place(Tile("Mat", "f16", 128, 256, name="panel"))
print(f"ping at {a0.addr:#x}, pong at {a1.addr:#x}, L1 panel at {panel.addr:#x} ({panel.nbytes} B)")
