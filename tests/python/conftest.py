import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "kernels"
sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.fixture
def kernels() -> pathlib.Path:
    return KERNELS
