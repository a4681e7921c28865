"""Issue 39's loop in the summaries: per judged metric, "validated on N of your labels: kappa
K [lo, hi]" or "not validated on your data", from the labels kept in the run store, and the
mean's interval with the judge's error next to the sampling one (ragmeter show, runs show,
report, eval), and the gate's min_agreement rule from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.stats import with_judge_error
from ragmeter.store import Store
from ragmeter.testing import FakeOpenAIServer
from tests.align.test_on_labels import kappa
from tests.cli.test_calibrate_cli import key, samples, scripted_judge, write_labels
from tests.cli.test_eval_budget import KEY, eval_args
from tests.cli.test_exit import faithfulness_reply
from tests.cli.test_startup import _found, _loaded

runner = CliRunner()
# The judge's P(yes) of claim a and b of each sample (yes at 0.5) and the people's labels.
P_A = [0.9, 0.8, 0.3, 0.7, 0.2, 0.95, 0.4, 0.85, 0.6, 0.1]
P_B = [0.2, 0.7, 0.9, 0.3, 0.8, 0.1, 0.65, 0.45, 0.75, 0.55]
HUMAN_A = [True, True, False, True, False, True, True, False, True, False]
HUMAN_B = [False, True, True, False, False, False, True, False, True, True]
#: The people's score of each sample's answer (sample-level labels).
SCORES = [0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 0.5]


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "250"})


@pytest.fixture
def stored(tmp_path: Path, monkeypatch) -> str:
    """A run judged by faithfulness (its score: the share of its 2 claims supported) in a
    SQLite run store, named "judged", and in the run directory tmp_path/run."""
    monkeypatch.chdir(tmp_path)
    result = evaluate(
        samples(), ["faithfulness"], judge=scripted_judge(P_A, P_B), run_dir=tmp_path / "run"
    )
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    Store(url).record(result, name="judged")
    return url


def import_labels(url: str, tmp_path: Path, rows: list[dict] | None = None) -> None:
    path = tmp_path / "labels.jsonl"
    if rows is None:
        write_labels(path, HUMAN_A, HUMAN_B)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = invoke("labels", "import", str(path), "--store", url)
    assert done.exit_code == 0, done.output


def claim_pairs() -> list[tuple[float, float]]:
    """(the judge's verdict, the people's) per claim, in the labels file's order."""
    pairs = []
    for i in range(len(P_A)):
        pairs += [
            (float(P_A[i] >= 0.5), float(HUMAN_A[i])),
            (float(P_B[i] >= 0.5), float(HUMAN_B[i])),
        ]
    return pairs


def test_show_says_not_validated_without_labels_and_reads_no_store_that_is_not_there(
    stored: str, tmp_path: Path
):
    shown = invoke("show", "judged", "--store", stored)
    assert shown.exit_code == 0, shown.output
    assert "faithfulness: not validated on your data" in shown.output
    assert "ragmeter labels queue judged" in shown.output
    assert "with judge error" not in shown.output
    missing = tmp_path / "none.db"
    folder = invoke("show", str(tmp_path / "run"), "--store", f"sqlite:///{missing}")
    assert folder.exit_code == 0, folder.output
    assert "faithfulness: not validated on your data" in folder.output
    assert not missing.exists()
    as_json = json.loads(invoke("show", "judged", "--json", "--store", stored).output)
    assert as_json["validation"]["faithfulness"]["text"] == "not validated on your data"


def test_a_store_that_cannot_be_read_is_a_warning_and_claims_nothing(stored, tmp_path: Path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    shown = invoke("show", str(tmp_path / "run"), "--store", f"sqlite:///{broken}")
    assert shown.exit_code == 0, shown.output
    assert "were not read" in shown.output
    assert "validated" not in shown.output.replace("were not read", "")


def test_show_and_runs_show_give_the_validation_and_the_interval_with_judge_error(
    stored: str, tmp_path: Path
):
    import_labels(stored, tmp_path)
    human = [h for a, b in zip(HUMAN_A, HUMAN_B) for h in (a, b)]
    judge = [j for a, b in zip(P_A, P_B) for j in (a >= 0.5, b >= 0.5)]
    expected = f"validated on 20 of your labels (claim level): kappa {kappa(human, judge):.2f} ["
    result = Store(stored).load("judged")
    # faithfulness is the share of its claims supported: claim labels correct it (Rogan-Gladen)
    error = with_judge_error(
        result, "faithfulness", claim_pairs(), method="rogan-gladen", n_resamples=2_000
    )
    assert error.ok
    for command in (("show", "judged"), ("runs", "show", "judged")):
        shown = invoke(*command, "--store", stored)
        assert shown.exit_code == 0, shown.output
        text = " ".join(shown.output.split())
        assert f"faithfulness: {expected}" in text
        assert f"faithfulness: {error.sentence()} (rogan-gladen, 20 labelled pairs)" in text
        assert "ragmeter labels queue" not in text  # every judged metric is validated


def test_sample_labels_give_a_prediction_powered_interval(stored: str, tmp_path: Path):
    rows = [
        {
            "sample_id": str(i),
            "sample_key": key(sample),
            "metric": "faithfulness",
            "level": "sample",
            "item": None,
            "value": score,
            "labeller": "ana",
        }
        for i, (sample, score) in enumerate(zip(samples(), SCORES))
    ]
    import_labels(stored, tmp_path, rows)
    judge = [((a >= 0.5) + (b >= 0.5)) / 2 for a, b in zip(P_A, P_B)]
    error = with_judge_error(
        Store(stored).load("judged"),
        "faithfulness",
        list(zip(judge, SCORES)),
        method="ppi",
        n_resamples=2_000,
    )
    shown = invoke("show", "judged", "--store", stored)
    text = " ".join(shown.output.split())
    assert "faithfulness: validated on 10 of your labels: Spearman" in text
    assert f"faithfulness: {error.sentence()} (ppi, 10 labelled pairs)" in text


def test_the_reports_say_it_too(stored: str, tmp_path: Path):
    import_labels(stored, tmp_path)
    out = tmp_path / "r.md"
    made = invoke("report", "judged", "--format", "markdown", "-o", str(out), "--store", stored)
    assert made.exit_code == 0, made.output
    text = out.read_text(encoding="utf-8")
    assert "On your labels (run store):" in text
    assert "- `faithfulness`: validated on 20 of your labels (claim level): kappa" in text
    assert "(rogan-gladen, 20 labelled pairs)" in text
    page = tmp_path / "r.html"
    made = invoke("report", "judged", "-o", str(page), "--store", stored)
    assert made.exit_code == 0, made.output
    html = page.read_text(encoding="utf-8")
    assert 'id="validation"' in html and "validated on 20 of your labels" in html
    bare = tmp_path / "bare.md"
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    invoke(
        "report", str(tmp_path / "run"), "--format", "markdown", "-o", str(bare), "--store", empty
    )
    assert "- `faithfulness`: not validated on your data" in bare.read_text(encoding="utf-8")


def gate_file(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(f'[[agreements]]\nmetric = "faithfulness"\n{rule}\n', encoding="utf-8")
    return path


def test_the_gate_fails_a_metric_not_validated_and_passes_once_it_is(stored, tmp_path: Path):
    gate = gate_file(tmp_path, "min_agreement = 0.5\nmin_labels = 20")
    junit, markdown = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ("gate", "judged", "--gate", str(gate), "--store", stored)
    failed = invoke(*args, "--junit", str(junit), "--markdown", str(markdown))
    assert failed.exit_code == 1, failed.output
    assert "not validated on your data" in " ".join(failed.output.split())
    assert 'classname="ragmeter.gate.agreement"' in junit.read_text(encoding="utf-8")
    assert "ragmeter labels queue" in markdown.read_text(encoding="utf-8")
    import_labels(stored, tmp_path)
    passed = invoke(*args)
    assert passed.exit_code == 0, passed.output  # kappa 0.70 on 20 labels
    gate_file(tmp_path, "min_agreement = 0.5\nmin_labels = 30")
    few = invoke(*args)
    assert few.exit_code == 1
    assert "fewer than the 30 labels the rule needs" in " ".join(few.output.split())
    gate_file(tmp_path, "min_agreement = 0.8\nmin_labels = 20")
    low = invoke(*args)
    assert low.exit_code == 1 and "below 0.8" in " ".join(low.output.split())


def test_eval_prints_the_validation_and_its_gate_reads_the_same_store(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
    with FakeOpenAIServer(responder=faithfulness_reply, api_key=KEY) as server:
        eval_with_the_gate(tmp_path, server)


def eval_with_the_gate(tmp_path: Path, server: FakeOpenAIServer) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    args = [a for a in eval_args(tmp_path, server) if a != "--no-store"]
    gate = gate_file(tmp_path, "min_agreement = 0.5\nmin_labels = 1")
    done = invoke(*args, "-o", str(tmp_path / "run"), "--store", url, "--gate", str(gate))
    assert done.exit_code == 1, done.output  # the gate: faithfulness is not validated
    text = " ".join(done.output.split())
    assert "faithfulness: not validated on your data" in text
    assert "rouge_l:" not in text.split("on your labels")[1].split("gate")[0]  # not judged
    assert "FAIL" in text and "gate failed" in text
    bare = invoke(*args, "-o", str(tmp_path / "bare"), "--no-store")  # no store, no claim
    assert bare.exit_code == 0, bare.output
    assert "validated" not in bare.output


def show_code(*args: str) -> str:
    return (
        "from typer.testing import CliRunner\n"
        "from ragmeter.cli import app\n"
        f"result = CliRunner().invoke(app, {list(args)!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'not validated on your data' in result.output, result.output\n"
    )


def test_without_labels_show_loads_no_agreement_code_and_a_run_folder_no_store(
    stored: str, tmp_path: Path
):
    store_layer = {"sqlalchemy", "ragmeter.store._store", "ragmeter.align"}
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    modules = _loaded(show_code("show", "run", "--store", missing), cwd=tmp_path)
    assert _found(modules, store_layer) == []
    # A store file holding runs (and labels of another metric), none of this run's metrics:
    # asked with sqlite3, so neither the database layer nor the agreement code loads.
    other = {"sample_id": "0", "sample_key": "0" * 16, "metric": "answer_relevancy"}
    import_labels(stored, tmp_path, [{**other, "level": "sample", "value": 1.0, "labeller": "a"}])
    modules = _loaded(show_code("show", "run", "--store", stored), cwd=tmp_path)
    assert _found(modules, store_layer) == []
    modules = _loaded(show_code("show", "judged", "--store", stored), cwd=tmp_path)
    assert "sqlalchemy" in modules  # the run is read from the store, then one COUNT query...
    assert _found(modules, {"ragmeter.align"}) == []  # ...and nothing more
