"""Shared set-up for tbe_compat tests: legacy import names importable without an
install, and every test starting from the default chip (Ascend310 AiCore)."""
import pytest

import tbe_compat.aliases
from tbe_compat import platform

tbe_compat.aliases.install()


@pytest.fixture(autouse=True)
def _default_chip():
    platform.reset_platform()
    yield
    platform.reset_platform()
