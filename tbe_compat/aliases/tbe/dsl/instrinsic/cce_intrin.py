"""``tbe.dsl.instrinsic.cce_intrin`` (alias: ``get_bit_len`` from `tbe_compat.platform`)."""
from tbe_compat.platform import get_align_factor, get_bit_len  # noqa: F401
