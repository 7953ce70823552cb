"""Where on-chip tensors live: TIK's automatic buffer placement.

TIK places every on-chip tensor itself (the user never gives addresses, except the rare
``start_addr=``, placed exactly there: `START_ADDR_IS_USER_MANAGED`). We place each tensor at trace time with a first-fit
`pto_core.tassign.TileAllocator` per memory space, with TIK's start-address alignment
(tik_api.md §1.4, ``TENSOR_START_ADDR_ALIGN``):

=========  ================================
scope      tensor start alignment
=========  ================================
UB         32 B
L1         512 B
L0A, L0B   512 B
L0C        512 B (16-bit dtypes), 1024 B (32-bit)
BT, FB     64 B / 128 B (bias table, fixpipe buffer)
=========  ================================

Tensors are freed when the TIK scope that created them ends (``for_range``,
``if_scope``/``elif_scope``/``else_scope``, ``new_stmt_scope`` bodies), like TIK, so
sequential scopes reuse memory. A tensor used after its scope ended keeps working as
long as nothing was placed over it since (it is then owned by the scope using it);
if its bytes were given to another tensor meanwhile, the use raises an error naming
both. Capacities are the selected chip's (`buffer_capacity`; read when a tensor is placed
and checked again when ``BuildCCE`` freezes the chip).
"""
from __future__ import annotations

from typing import Optional

from pto_core.errors import CapacityExceeded, PtoError
from pto_core.tassign import TileAllocator
from pto_core.targets import ChipProfile

from .. import platform

#: Named choice: a tensor given ``start_addr`` is placed there even where live tensors already
#: are (they then share those bytes, as on the device); automatic placement keeps avoiding it.
#: Kernels that place tensors by hand reuse memory by design: CANN's attention_score
#: (mat_mul_softmax_dropout_matmul) pins its second matmul's UB tensors at 0 over automatically
#: placed tensors it has finished with. The TIK pages give no overlap rule. Capacity and
#: alignment are still checked; stale data read through an alias shows in the results.
START_ADDR_IS_USER_MANAGED = True
#: start-address alignment in bytes per space (for L0C: per element size, see `alignment`).
SCOPE_ALIGNMENT = {"ub": 32, "l1": 512, "l0a": 512, "l0b": 512, "l0c": 512, "bt": 64, "fb": 128}


def alignment(space: str, elem_bytes: int) -> int:
    """TIK's start alignment of a tensor of ``elem_bytes``-byte elements in ``space``."""
    if space == "l0c" and elem_bytes >= 4:
        return 1024
    return SCOPE_ALIGNMENT[space]


class Placement:
    """The allocators of one Tik instance (one per on-chip space), created on first use."""

    def __init__(self):
        self._alloc: dict = {}
        #: every placed storage, in placement order (live and freed)
        self.placed: list = []

    def allocator(self, space: str, target: ChipProfile) -> TileAllocator:
        a = self._alloc.get(space)
        if a is None:
            a = self._alloc[space] = TileAllocator(target, space, alignment=32)
        a.capacity = buffer_capacity(space)
        return a

    def place(self, storage, target: ChipProfile, nbytes: int, align: int, start_addr: Optional[int] = None) -> int:
        """Place ``storage`` (a `tensor.Storage`); returns its byte address. Raises `CapacityExceeded`."""
        a = self.allocator(storage.space, target)
        if start_addr is not None:
            end = start_addr + nbytes       # the live tensors it goes over (a hazard note's wording, `placed_over`)
            storage.placed_over = tuple(s for s in self.placed if s.alive and s.space == storage.space
                                        and isinstance(s.addr, int) and s.addr < end
                                        and start_addr < s.addr + (s.nbytes or 0))
            addr = self._place_at(a, storage, nbytes, start_addr, align)
        else:
            addr = a.alloc(nbytes, storage.name, alignment=align)
        storage.alloc_id = a._order[-1]
        self.placed.append(storage)
        return addr

    @staticmethod
    def _place_at(a: TileAllocator, storage, nbytes: int, addr: int, align: int = 32) -> int:
        """A tensor at the user's ``start_addr``: user-managed placement (`START_ADDR_IS_USER_MANAGED`).
        A tensor larger than the whole buffer is refused for its size (no start_addr can help); past the end,
        the Fix names the highest ``align``-aligned start_addr that fits."""
        if not START_ADDR_IS_USER_MANAGED:
            for lo, size, name in a.occupants():
                if lo < addr + nbytes and addr < lo + size:
                    raise CapacityExceeded(f"start_addr {addr:#x} + {nbytes} B overlaps tensor {name!r} at "
                                           f"[{lo:#x}, {lo + size:#x})", operand="start_addr", value=hex(addr),
                                           hint="choose a start_addr outside the other tensors, or drop start_addr")
        if nbytes > a.capacity:     # the Fix said "a start_addr at most -0x23a80": the shape is what is wrong
            raise CapacityExceeded(f"tensor {storage.name!r} needs {nbytes} B, more than the whole {a.space} "
                                   f"({a.capacity} B), at any start_addr", operand="shape", value=nbytes,
                                   limit=f"<= {a.capacity} B",
                                   hint="reduce the tensor's shape (tile the data and move it in parts)")
        if addr + nbytes > a.capacity:
            top = (a.capacity - nbytes) // align * align      # a start_addr the alignment check also takes
            raise CapacityExceeded(f"start_addr {addr:#x} + {nbytes} B is past the end of {a.space} "
                                   f"({a.capacity} B)", operand="start_addr", value=hex(addr),
                                   limit=f"{a.capacity} B",
                                   hint=f"pass a start_addr at most {top:#x}, or drop start_addr")
        return a._place(addr, nbytes, storage.name)

    def mark(self) -> dict:
        """Allocation marks of every space (for `release_to`)."""
        return {s: a.mark() for s, a in self._alloc.items()}

    def release(self, storages: list) -> None:
        """Free ``storages`` (the tensors a scope created) unless already freed."""
        for st in storages:
            if st.alive and st.space in self._alloc:
                a = self._alloc[st.space]
                if st.alloc_id in a._order:
                    a._free_id(st.alloc_id)
                st.alive = False

    def reclaim(self, storage) -> Optional[str]:
        """Re-reserve the bytes of a freed ``storage`` used after its scope; returns the name of a
        tensor now occupying them (the caller reports it), or None on success."""
        a = self._alloc[storage.space]
        if storage.chain_root is not None:      # placed at a run-time address inside another's reservation
            root = storage.chain_root
            if not root.alive:
                return root.name
            storage.alive = True
            return None
        for lo, size, name in a.occupants():
            if lo < storage.addr + storage.nbytes and storage.addr < lo + size:
                return name
        a._place(storage.addr, storage.nbytes, storage.name)
        storage.alloc_id = a._order[-1]
        storage.alive = True
        return None

    def high_water(self) -> dict:
        """Space -> (highest end address ever booked, the storage booking it), checked against the frozen chip in
        BuildCCE; every copy a storage books counts (`Storage.reserved_bounds`, THREAD_NUM_RESERVES_COPIES)."""
        out: dict = {}
        for st in self.placed:
            hi = st.reserved_bounds()[1]
            if hi > out.get(st.space, (0, None))[0]:
                out[st.space] = (hi, st)
        return out


#: get_soc_spec keys of the on-chip buffers (they answer per core type: a VectorCore has no L1/L0).
_SIZE_KEYS = {"ub": "UB_SIZE", "l1": "L1_SIZE", "l0a": "L0A_SIZE", "l0b": "L0B_SIZE", "l0c": "L0C_SIZE"}


#: (id(SocState), space) -> (SocState, bytes) answered by the platform tables (static data; every
#: tensor declaration asks)
_TABLE_CAPACITY: dict = {}


def buffer_capacity(space: str) -> int:
    """Bytes of ``space`` on the selected chip and core type."""
    soc = platform.current_soc()
    hit = _TABLE_CAPACITY.get((id(soc), space))
    if hit is not None and hit[0] is soc:
        return hit[1]
    key = _SIZE_KEYS.get(space)
    if key is not None:
        try:
            cap = int(platform.get_soc_spec_of(soc, key))
        except PtoError:
            pass
        else:
            if len(_TABLE_CAPACITY) >= 4096:
                _TABLE_CAPACITY.clear()
            _TABLE_CAPACITY[id(soc), space] = (soc, cap)
            return cap
    return soc.profile.sizes.of(space)
