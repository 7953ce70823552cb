"""Helpers for hand-written PTO test kernels."""
from pto_core import pto


def handoff(src: str, dst: str, event: int = 0) -> None:
    """``set_flag(src -> dst)`` immediately followed by the matching ``wait_flag``: everything
    ``src`` issued so far happens before everything ``dst`` issues next (the producer/consumer
    edge real kernels put between pipeline stages)."""
    pto.set_flag(src, dst, event)
    pto.wait_flag(src, dst, event)


def line_of(path: str, text: str) -> int:
    """The first line of file ``path`` containing ``text`` (not the line of the call asking for it):
    where a test expects an error or provenance to point."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line and "line_of(" not in line:
                return n
    raise AssertionError(f"{text!r} is not in {path}")
