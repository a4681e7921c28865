"""``--backend`` and the ``--ray-*`` options, checked before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--backend", "spark"], "--backend must be local or ray"),
        (["--backend", "local", "--ray-address", "127.0.0.1:6379"], "need --backend ray"),
        (["--backend", "ray", "--ray-workers", "0"], "--ray-workers must be at least 1"),
    ],
)
def test_backend_options_are_checked(options: list[str], message: str, tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    row = {"id": "q1", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    args = ["eval", str(data), "-m", "mrr", "-q", "--no-store", "-o", str(out), *options]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not out.exists()  # checked before anything ran or was written
