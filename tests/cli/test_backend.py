"""``--backend`` and the ``--ray-*`` options, checked before anything runs."""

from __future__ import annotations

import pytest

from ragmeter.cli._backend import backend_from_options


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("spark", None, None, None), "--backend must be local or ray"),
        (("local", "127.0.0.1:6379", None, None), "need --backend ray"),
        (("ray", None, 0, None), "--ray-workers must be at least 1"),
    ],
)
def test_backend_options_are_checked(options: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        backend_from_options(*options)
