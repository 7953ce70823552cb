"""Helpers for hand-written PTO test kernels."""
from pto_core import pto


def handoff(src: str, dst: str, event: int = 0) -> None:
    """``set_flag(src -> dst)`` immediately followed by the matching ``wait_flag``: everything
    ``src`` issued so far happens before everything ``dst`` issues next (the producer/consumer
    edge real kernels put between pipeline stages)."""
    pto.set_flag(src, dst, event)
    pto.wait_flag(src, dst, event)
