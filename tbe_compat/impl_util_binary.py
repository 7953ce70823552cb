"""``impl.util.util_binary``: CANN's binary-kernel helper module. TIK operators import only its
``get_bit_len`` at module level (ifmr, split_v_d, strided_slice_d, region proposal ...), the same helper
as ``tbe.dsl.instrinsic.cce_intrin.get_bit_len``. Its binary-reuse matchers (``binary_match``,
``BinaryMatchBase``) belong to CANN's build flow, which the simulator does not model: they raise
`UnsupportedOp` naming the script's line. The alias is `tbe_compat/aliases/impl/util/util_binary.py`."""
from tbe_compat.cann_impl import missing_name as _missing
from tbe_compat.platform import get_bit_len

__all__ = ["get_bit_len"]
__getattr__ = _missing("impl.util.util_binary", "binary-kernel matching is part of CANN's build flow, which the "
                                                "simulator does not model; only get_bit_len is provided")
