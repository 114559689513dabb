from pathlib import Path

import pytest

#: The project's shared data folder, beside the repository: <repo>/../shared/data.
SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.fixture
def shared_data():
    """Return a function giving the path of a file under ../shared/data, skipping when it is absent."""

    def locate(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.is_file():
            pytest.skip(f"../shared/data is absent: {relative} not found under {SHARED_DATA.resolve()}")
        return path

    return locate
