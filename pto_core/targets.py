"""Chip profiles: frozen data, looked up by any alias.

Two kinds of profile share one dataclass:

* **PTO targets** (``A2A3``, ``A5``, ``Kirin9030``, ``KirinX90``): capacities and
  alignment from ``pto-isa include/pto/common/buffer_limits.hpp`` (pto_spec.md §1.2),
  MAD type tables from pto_spec.md §4.2.
* **Legacy TIK SoCs** (``Ascend310`` default, ``Ascend910A``, ``Ascend910B1`` ...):
  buffer sizes and core counts from the CANN platform ini files (tik_api.md §1.3),
  MAD type tables from TIK's ``tik.mmad`` support map (tik_api.md Appendix B).
  Checked against the public CANN 8.1.RC1 inis (see migration_guide/platform.md);
  Hi3796CV300CS and SD3403 have no public ini.

Everything a later layer needs to know about a chip is a field here, so behaviour
differences between chips are data, not code paths.

Sizes are bytes. ``BufferSizes`` field names are the memory-space names used by
pointers (``l1``, ``l0a``, ``l0b``, ``l0c``, ``ub``, ``bt``, ``fb``, ``l0a_scale``,
``l0b_scale``). A size of 0 means the space does not exist on that chip.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Optional

from .errors import UnknownName

KiB = 1024
MiB = 1024 * 1024

#: On-chip memory spaces, in documentation order. ``gm`` is off-chip and unbounded.
ON_CHIP_SPACES = ("l1", "l0a", "l0b", "l0c", "ub", "bt", "fb", "l0a_scale", "l0b_scale")
ALL_SPACES = ("gm",) + ON_CHIP_SPACES

#: Spelling aliases of memory spaces (PTO canonical / legacy / C++ TileType / TIK scope).
SPACE_ALIASES = {
    "gm": "gm", "global": "gm", "out": "gm",
    "l1": "l1", "mat": "l1", "cbuf": "l1", "local.l1": "l1",
    "l0a": "l0a", "left": "l0a", "ca": "l0a", "local.l0a": "l0a",
    "l0b": "l0b", "right": "l0b", "cb": "l0b", "local.l0b": "l0b",
    "l0c": "l0c", "acc": "l0c", "cc": "l0c", "local.l0c": "l0c", "l1out": "l0c",
    "ub": "ub", "vec": "ub", "ubuf": "ub", "local.ub": "ub",
    "bt": "bt", "bias": "bt", "local.bt": "bt",
    "fb": "fb", "scaling": "fb", "fbuffer": "fb", "local.fb0": "fb", "fb0": "fb",
    "l0a_scale": "l0a_scale", "scaleleft": "l0a_scale",
    "l0b_scale": "l0b_scale", "scaleright": "l0b_scale",
}


def space_name(name: str) -> str:
    """Canonical memory-space name for any alias (``"Mat"`` -> ``"l1"``)."""
    key = str(name).lower()
    if key in SPACE_ALIASES:
        return SPACE_ALIASES[key]
    raise UnknownName(f"unknown memory space {name!r}", value=name, limit="one of " + ", ".join(ALL_SPACES),
                      hint="use gm, l1, l0a, l0b, l0c, ub, bt, fb, l0a_scale or l0b_scale")


@dataclass(frozen=True)
class BufferSizes:
    """Capacity in bytes of each on-chip space (0 = absent)."""

    l1: int
    l0a: int
    l0b: int
    l0c: int
    ub: int
    bt: int = 0
    fb: int = 0
    l0a_scale: int = 0
    l0b_scale: int = 0

    def of(self, space: str) -> int:
        return getattr(self, space_name(space))

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


Triple = tuple  # (lhs dtype, rhs dtype, dst dtype) canonical names

_A2A3_MAD = frozenset({("s8", "s8", "s32"), ("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f32", "f32", "f32")})
_FP8 = ("e4m3", "e5m2")
_A5_MAD = _A2A3_MAD | frozenset({(a, b, "f32") for a in _FP8 for b in _FP8}) | frozenset({("hif8", "hif8", "f32")})
_A5_MX = frozenset({(a, b) for a in _FP8 for b in _FP8}) | frozenset(
    {(a, b) for a in ("e2m1x2", "e1m2x2") for b in ("e2m1x2", "e1m2x2")})
_KIRIN_MAD = frozenset({("f16", "f16", "f16"), ("s8", "s8", "s32")})

# Legacy TIK `tik.mmad` support map (tik_api.md Appendix B), written (a, b, c).
_V100_MAD = frozenset({("u8", "u8", "u32"), ("s8", "s8", "s32"), ("u8", "s8", "s32"), ("f16", "f16", "f16"),
                       ("f16", "f16", "f32")})
_V200_MAD = _V100_MAD | frozenset({("u8", "u8", "s32")})
_HISI_MAD = frozenset({("u8", "u8", "u32"), ("u8", "u8", "s32"), ("s8", "s8", "s32"), ("u8", "s8", "s32"),
                       ("f16", "f16", "f16")})
_910B_MAD = frozenset({("u8", "u8", "s32"), ("s8", "s8", "s32"), ("u8", "s8", "s32"), ("f16", "f16", "f16"),
                       ("f16", "f16", "f32"), ("f32", "f32", "f32"), ("bf16", "bf16", "f32")})
_310B_MAD = frozenset({("s8", "s8", "s32"), ("f16", "f16", "f32"), ("f32", "f32", "f32")})


@dataclass(frozen=True)
class ChipProfile:
    """Everything the simulator needs to know about one chip.

    Attributes:
        name: canonical name (``"A2A3"``, ``"Ascend310"``).
        kind: ``"pto"`` for PTO ISA targets, ``"soc"`` for legacy TIK SoCs.
        aliases: other names this profile answers to.
        arch: PTO architecture family the chip's cube/FIXPIPE behaves like
            (``"a2a3"``, ``"a5"``, ``"kirin9030"``, ``"kirinx90"``; legacy SoCs map to the
            closest one for lowering).
        sizes: on-chip capacities.
        alignment: address alignment of every on-chip space in bytes (32 on all chips).
        scale_alignment: alignment of MX scale destinations in L0A/L0B scale space.
        emulated_spaces: spaces the real chip lacks but the simulator provides so that
            legacy APIs can be lowered onto PTO ops (documented in migration_guide).
        aic_cores: cube (AI) cores; default ``block_num`` limit.
        vector_subcores: UBs per core that FIXPIPE can address (2 = AIV0/AIV1 split
            architecture; 1 = the AI core owns one UB).
        mad_dtypes: legal (lhs, rhs, dst) element-type triples of ``pto.mad*``.
        mad_mx_dtypes: legal (lhs, rhs) pairs of ``pto.mad_mx*`` (dst f32, scales e8m0).
        acc_dtypes: L0C accumulator element types.
        overflow_mode: default float overflow mode, ``"saturation"`` (inf -> max,
            nan -> 0) or ``"inf_nan"`` (IEEE-754).
        fixpipe_to_ub: whether ``pto.mte_l0c_ub`` exists (A5-class).
        buffer_ids: how many buffer-id tokens ``pto.get_buf``/``pto.rls_buf`` have per core
            (A5: 32, asc_lock ``mutex_id`` 0..31); 0 = the chip has no buffer-id sync.
        soc_version / short_soc_version / family / core_type: what TIK's
            ``get_soc_spec`` answers (``family`` is TIK's "v100"/"v200"/"v220"/"v300").
        aiv_cores: separate vector cores (TIK ``VectorCore``), 0 if none.
        l2_size: L2 cache size for ``get_soc_spec("L2_SIZE")``.
        dprofile: legacy ``tik.Dprofile(arch, version)`` pairs that select this chip.
    """

    name: str
    kind: str
    sizes: BufferSizes
    arch: str
    mad_dtypes: frozenset
    acc_dtypes: tuple
    overflow_mode: str
    aliases: tuple = ()
    alignment: int = 32
    scale_alignment: int = 16
    emulated_spaces: tuple = ()
    aic_cores: int = 1
    aiv_cores: int = 0
    vector_subcores: int = 1
    mad_mx_dtypes: frozenset = frozenset()
    fixpipe_to_ub: bool = False
    buffer_ids: int = 0
    soc_version: str = ""
    short_soc_version: str = ""
    family: str = ""
    core_type: str = "AiCore"
    l2_size: int = 0
    dprofile: tuple = ()

    @property
    def label(self) -> str:
        """The chip as chip-support messages name it: ``"<name> <core_type>"`` (``"Ascend610 VectorCore"``),
        as the TIK front end's trace-time checks do (a VectorCore profile has its own vector tables)."""
        return f"{self.name} {self.core_type}"

    def capacity(self, space: str) -> int:
        """Capacity in bytes of ``space`` (0 if the space does not exist)."""
        space = space_name(space)
        if space == "gm":
            raise ValueError("gm has no fixed capacity")
        return self.sizes.of(space)

    def has_space(self, space: str) -> bool:
        space = space_name(space)
        return space == "gm" or self.sizes.of(space) > 0

    def supports_mad(self, lhs: str, rhs: str, dst: str) -> bool:
        return (lhs, rhs, dst) in self.mad_dtypes

    @property
    def resident_blocks(self) -> int:
        """How many blocks of one launch can run at the same time: the chip's cores of the kind the kernel
        runs on (``aiv_cores`` for a TIK ``VectorCore`` profile, else the larger of ``aic_cores`` and
        ``aiv_cores``, so that a vector-only kernel on a split-architecture chip is not undercounted).
        A launch with more blocks runs them in batches (named choice BARRIER_NEEDS_RESIDENT_BLOCKS)."""
        if self.core_type == "VectorCore":
            return max(1, self.aiv_cores)
        return max(1, self.aic_cores, self.aiv_cores)

    def __str__(self) -> str:
        return self.name


def _pto(name, sizes, arch, mad, acc, overflow, *, aliases=(), mx=frozenset(), fixpipe_to_ub=False,
         cores=1, subcores=2, buffer_ids=0):
    return ChipProfile(name=name, kind="pto", sizes=sizes, arch=arch, mad_dtypes=mad, acc_dtypes=acc,
                       overflow_mode=overflow, aliases=aliases, mad_mx_dtypes=mx, fixpipe_to_ub=fixpipe_to_ub,
                       buffer_ids=buffer_ids,
                       aic_cores=cores, vector_subcores=subcores, soc_version=name, short_soc_version=name,
                       family=arch)


def _soc(name, *, short, family, arch, aic, aiv, ub, l1, l0a, l0b, l0c, mad, acc, overflow, aliases=(),
         bt=0, fb=0, subcores=1, l2=0, dprofile=(), core_type="AiCore"):
    emulated = tuple(s for s, v in (("bt", bt), ("fb", fb)) if v == 0)
    sizes = BufferSizes(l1=l1, l0a=l0a, l0b=l0b, l0c=l0c, ub=ub, bt=bt or 4 * KiB, fb=fb or 4 * KiB)
    return ChipProfile(name=name, kind="soc", sizes=sizes, arch=arch, mad_dtypes=mad, acc_dtypes=acc,
                       overflow_mode=overflow, aliases=aliases, emulated_spaces=emulated, aic_cores=aic,
                       aiv_cores=aiv, vector_subcores=subcores, soc_version=name, short_soc_version=short,
                       family=family, l2_size=l2, dprofile=dprofile, core_type=core_type)


_PROFILES = (
    # ---- PTO ISA targets (pto_spec.md §1.2, §2.3, §4.2) ----
    _pto("A2A3", BufferSizes(l1=512 * KiB, l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, ub=192 * KiB, bt=1 * KiB,
                             fb=2 * KiB), "a2a3", _A2A3_MAD, ("f32", "s32"), "inf_nan",
         aliases=("a2", "a3", "a2a3", "Ascend910B", "910B"), cores=24),
    _pto("A5", BufferSizes(l1=512 * KiB, l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, ub=256 * KiB, bt=4 * KiB,
                           fb=4 * KiB, l0a_scale=4 * KiB, l0b_scale=4 * KiB), "a5", _A5_MAD, ("f32", "s32"),
         "inf_nan", aliases=("a5", "Ascend950", "950"), mx=_A5_MX, fixpipe_to_ub=True, cores=32,
         buffer_ids=32),     # asc_lock/asc_unlock: mutex_id 0..31, Ascend 950PR/950DT only
    _pto("Kirin9030", BufferSizes(l1=512 * KiB, l0a=32 * KiB, l0b=32 * KiB, l0c=64 * KiB, ub=128 * KiB, bt=1 * KiB,
                                  fb=7 * KiB), "kirin9030", _KIRIN_MAD, ("f16", "s32"), "inf_nan",
         aliases=("kirin9030",), cores=1, subcores=1),
    _pto("KirinX90", BufferSizes(l1=1024 * KiB, l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, ub=128 * KiB, bt=1 * KiB,
                                 fb=6 * KiB), "kirinx90", _KIRIN_MAD, ("f16", "s32"), "inf_nan",
         aliases=("kirinx90",), cores=1, subcores=1),
    # ---- Legacy TIK SoCs (tik_api.md §1.3, §2, Appendix B) ----
    _soc("Ascend310", short="Ascend310", family="v100", arch="a2a3", aic=2, aiv=0, ub=253952, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V100_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v100", "mini"),), l2=8 * MiB),
    _soc("Ascend910A", short="Ascend910", family="v100", arch="a2a3", aic=32, aiv=0, ub=262144, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V100_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", aliases=("Ascend910",), dprofile=(("v100", "cloud"),), l2=32 * MiB),
    _soc("Ascend310P3", short="Ascend310P", family="v200", arch="a2a3", aic=8, aiv=7, ub=262144, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V200_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", aliases=("Ascend310P",), l2=16 * MiB),
    _soc("Ascend310P1", short="Ascend310P", family="v200", arch="a2a3", aic=10, aiv=8, ub=262144, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V200_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v200", "aic"),), l2=16 * MiB),
    _soc("Ascend610", short="Ascend610", family="v200", arch="a2a3", aic=10, aiv=8, ub=262144, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V200_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v200", "vec"),), l2=16 * MiB),
    _soc("BS9SX1AA", short="BS9SX1A", family="v200", arch="a2a3", aic=10, aiv=8, ub=262144, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=256 * KiB, mad=_V200_MAD, acc=("f32", "f16", "s32", "u32"),
         overflow="saturation", aliases=("BS9SX1A",), dprofile=(("v210", "aic"), ("v210", "aiv")), l2=16 * MiB),
    _soc("Ascend910B1", short="Ascend910B", family="v220", arch="a2a3", aic=24, aiv=48, ub=196608, l1=512 * KiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, bt=1 * KiB, fb=2 * KiB, subcores=2, mad=_910B_MAD,
         acc=("f32", "f16", "s32"), overflow="inf_nan", l2=192 * MiB),
    _soc("Ascend910B2", short="Ascend910B", family="v220", arch="a2a3", aic=24, aiv=48, ub=196608, l1=512 * KiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, bt=1 * KiB, fb=2 * KiB, subcores=2, mad=_910B_MAD,
         acc=("f32", "f16", "s32"), overflow="inf_nan", l2=192 * MiB),
    _soc("Ascend910B3", short="Ascend910B", family="v220", arch="a2a3", aic=20, aiv=40, ub=196608, l1=512 * KiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, bt=1 * KiB, fb=2 * KiB, subcores=2, mad=_910B_MAD,
         acc=("f32", "f16", "s32"), overflow="inf_nan", l2=192 * MiB),
    _soc("Ascend910B4", short="Ascend910B", family="v220", arch="a2a3", aic=20, aiv=40, ub=196608, l1=512 * KiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, bt=1 * KiB, fb=2 * KiB, subcores=2, mad=_910B_MAD,
         acc=("f32", "f16", "s32"), overflow="inf_nan", l2=96 * MiB),
    _soc("Ascend310B1", short="Ascend310B", family="v300", arch="a2a3", aic=1, aiv=1, ub=253952, l1=1 * MiB,
         l0a=64 * KiB, l0b=64 * KiB, l0c=128 * KiB, bt=1 * KiB, fb=2 * KiB, mad=_310B_MAD, acc=("f32", "s32"),
         overflow="inf_nan", dprofile=(("v300", "aiv"),), l2=4 * MiB),
    _soc("Hi3796CV300ES", short="Hi3796CV300ES", family="v200", arch="kirinx90", aic=1, aiv=0, ub=196608,
         l1=512 * KiB, l0a=32 * KiB, l0b=32 * KiB, l0c=128 * KiB, mad=_HISI_MAD, acc=("f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v200", "hisi-es"),)),
    _soc("Hi3796CV300CS", short="Hi3796CV300CS", family="v200", arch="kirinx90", aic=1, aiv=0, ub=196608,
         l1=512 * KiB, l0a=32 * KiB, l0b=32 * KiB, l0c=128 * KiB, mad=_HISI_MAD, acc=("f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v200", "hisi-cs"),)),
    _soc("SD3403", short="SD3403", family="v200", arch="kirinx90", aic=1, aiv=0, ub=196608, l1=1 * MiB,
         l0a=32 * KiB, l0b=32 * KiB, l0c=128 * KiB, mad=_HISI_MAD, acc=("f16", "s32", "u32"),
         overflow="saturation", dprofile=(("v200", "sd3403"), ("v200", "hisi-sd3403"))),
)

#: name -> profile, for canonical names and every alias (case-insensitive look-up via `get_target`).
TARGETS: dict = {}
for _p in _PROFILES:
    for _key in (_p.name, *_p.aliases):
        TARGETS.setdefault(_key.lower(), _p)
del _p, _key

DEFAULT_PTO_TARGET = "A2A3"
DEFAULT_SOC = "Ascend310"


def get_target(name: "str | ChipProfile") -> ChipProfile:
    """Return the profile for ``name`` (any alias, any case).

    Raises `UnknownName` listing the valid names.
    """
    if isinstance(name, ChipProfile):
        return name
    found = TARGETS.get(str(name).lower())
    if found is None:
        raise UnknownName(f"unknown target {name!r}", value=name, limit="one of " + ", ".join(target_names()),
                          hint="pick a PTO target (A2A3, A5, Kirin9030, KirinX90) or a TIK SoC such as Ascend310")
    return found


_VECTOR_CORE_VARIANTS: dict = {}


def vector_core_variant(profile: ChipProfile) -> ChipProfile:
    """``profile`` as its TIK ``VectorCore`` (``core_type="VectorCore"``; everything else equal), one
    object per chip so identity comparisons of the current target stay stable. Only the vector
    instruction tables read the core type (`pto_core.vector_isa.CHIP_FAMILY_AIV`)."""
    if profile.core_type == "VectorCore":
        return profile
    found = _VECTOR_CORE_VARIANTS.get(profile.name)
    if found is None:
        found = _VECTOR_CORE_VARIANTS[profile.name] = replace(profile, core_type="VectorCore")
    return found


def target_names(kind: Optional[str] = None) -> list:
    """Canonical names of all profiles (optionally only ``kind="pto"`` or ``"soc"``)."""
    return [p.name for p in _PROFILES if kind is None or p.kind == kind]


def profiles() -> tuple:
    return _PROFILES


def dprofile_target(arch: str, version: str) -> ChipProfile:
    """The SoC a legacy ``tik.Dprofile(arch, version)`` pair selects."""
    key = (str(arch).lower(), str(version).lower())
    for p in _PROFILES:
        if key in p.dprofile:
            return p
    pairs = sorted({f"({a!r}, {v!r})" for p in _PROFILES for a, v in p.dprofile})
    raise UnknownName(f"unknown Dprofile ({arch!r}, {version!r})", value=key, limit="one of " + ", ".join(pairs),
                      hint="use tik.Dprofile('v100', 'mini') or set_current_compile_soc_info('Ascend310')")
