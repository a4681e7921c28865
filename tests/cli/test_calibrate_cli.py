"""``ragmeter calibrate fit / list / show`` and ``ragmeter eval --calibration``."""

import hashlib
import json

import numpy as np
import pytest
from scipy import optimize
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.judge import BinaryVerdict
from ragmeter.testing import ScriptedJudge

runner = CliRunner()
#: Per sample i: two claims, the judge's P(yes) of each and the human label of each.
P_A = [0.95, 0.9, 0.85, 0.8, 0.7, 0.65, 0.6, 0.9, 0.75, 0.55]
P_B = [0.6, 0.7, 0.55, 0.8, 0.52, 0.9, 0.58, 0.62, 0.75, 0.51]
LABEL_A = [True, True, True, True, False, True, False, True, True, False]
LABEL_B = [False, False, False, True, False, True, False, False, False, False]


def samples():
    return [
        {
            "user_input": f"Question {i}?",
            "response": f"Fact {i} holds. Fact {i} also holds.",
            "retrieved_contexts": [f"Context {i}."],
        }
        for i in range(len(P_A))
    ]


def claims(i):
    return [f"Claim {i} a.", f"Claim {i} b."]


def scripted_judge(p_a=P_A, p_b=P_B):
    """The judge: claims(i) of sample i, with P(yes) ``p_a[i]`` and ``p_b[i]``."""
    p_of = {}
    for i in range(len(p_a)):
        a, b = claims(i)
        p_of[a], p_of[b] = p_a[i], p_b[i]
    last = {}

    def respond(messages, schema):
        text = "\n".join(m.content for m in messages)
        if schema is BinaryVerdict:
            claim = next(c for c in p_of if c in text)
            last["p"] = p_of[claim]
            return {"verdict": int(p_of[claim] >= 0.5)}
        i = next(i for i in range(len(P_A)) if f"Fact {i} holds." in text)
        return {"claims": claims(i)}

    judge = ScriptedJudge(
        respond, probabilities=lambda out: [last["p"]] if isinstance(out, BinaryVerdict) else None
    )
    judge.supports_batched_verdicts = False
    return judge


def key(sample):
    values = {k: sample[k] for k in ("user_input", "response", "retrieved_contexts")}
    text = json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def write_labels(path, label_a=LABEL_A, label_b=LABEL_B):
    lines = []
    for i, sample in enumerate(samples()):
        for claim, value in zip(claims(i), (label_a[i], label_b[i])):
            lines.append(
                {
                    "sample_id": str(i),
                    "sample_key": key(sample),
                    "metric": "faithfulness",
                    "level": "claim",
                    "item": claim,
                    "value": value,
                    "labeller": "alice",
                    "created_at": "2026-12-06T13:00:00Z",
                    "note": "",
                }
            )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


@pytest.fixture
def fitted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    evaluate(samples(), ["faithfulness"], judge=scripted_judge(), run_dir=tmp_path / "run")
    write_labels(tmp_path / "labels.jsonl")
    result = runner.invoke(
        app,
        ["calibrate", "fit", "run", "--labels", "labels.jsonl", "--name", "team"],
        env={"COLUMNS": "250"},
    )
    return result


def test_the_labels_key_matches_the_shared_label_format():
    # The example of the label format's sample_key (ragmeter.store.sample_key's doctest).
    sample = {"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}
    assert key(sample) == "90b9b04d26c502af"


def test_fit_lines_up_labels_with_the_runs_verdicts_and_saves_a_version(fitted, tmp_path):
    assert fitted.exit_code == 0, fitted.output
    assert "20 labelled verdicts matched" in fitted.output
    assert "supported" in fitted.output and "accuracy before" in fitted.output
    assert "saved team@v1 (sha256 " in fitted.output
    saved = json.loads((tmp_path / ".ragmeter/calibrations/team/v1.json").read_text())
    assert saved["method"] == "platt" and saved["n_labels"] == 20
    assert saved["judge"] == "kind=scripted name=scripted"
    # The map: a penalised logistic fit on logit(P), by scipy here.
    p = np.array(P_A + P_B)
    y = np.array(LABEL_A + LABEL_B, dtype=float)
    x = np.log(p / (1 - p))

    def loss(w):
        z = w[0] * x + w[1]
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * 1e-2 * w[0] ** 2

    slope, intercept = optimize.minimize(loss, np.zeros(2), options={"gtol": 1e-10}).x
    assert saved["tasks"]["supported"]["slope"] == pytest.approx(slope, abs=1e-4)
    assert saved["tasks"]["supported"]["intercept"] == pytest.approx(intercept, abs=1e-4)
    # Before: the judge's verdicts (P >= 0.5: all yes) against the labels.
    before = saved["cv"]["tasks"]["supported"]["before"]["accuracy"]
    assert before == pytest.approx(float(np.mean(y == 1)))
    assert saved["cv"]["tasks"]["supported"]["groups"] == 10


def test_list_and_show(fitted):
    listed = runner.invoke(app, ["calibrate", "list"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and "team" in listed.output and "v1" in listed.output
    shown = runner.invoke(app, ["calibrate", "show", "team@v1"], env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    assert "calibration: team@v1" in shown.output and "supported: P' = sigmoid(" in shown.output
    missing = runner.invoke(app, ["calibrate", "show", "other"])
    assert missing.exit_code == 2 and "available: team (v1)" in missing.output


def test_a_run_with_the_calibration_records_it_and_refuses_another_judge(fitted, tmp_path):
    from ragmeter.align import agreement_on_labels, read_labels

    result = evaluate(samples(), ["faithfulness"], judge=scripted_judge(), calibration="team")
    assert result.config["judges"]["faithfulness"]["verdict_calibration"].startswith("team@v1")
    # Its agreement with the labels the calibration was fitted on says it flatters.
    labels = read_labels(tmp_path / "labels.jsonl")
    said = agreement_on_labels(result, labels, "faithfulness", n_resamples=100).validation
    assert said.describe().endswith(
        "(judge calibrated with team@v1: optimistic on the labels it was fitted on; "
        "held-out: ragmeter calibrate show team)"
    )
    plain = evaluate(samples(), ["faithfulness"], judge=scripted_judge())
    assert (
        "calibrated" not in agreement_on_labels(plain, labels, "faithfulness").validation.describe()
    )
    refit = runner.invoke(
        app, ["calibrate", "fit", "run", "--labels", "labels.jsonl", "--name", "team"]
    )
    assert refit.exit_code == 0, refit.output
    assert "the same fit as the saved team@v1" in refit.output  # no second version of it


def test_eval_with_an_unknown_calibration_exits_2_listing_the_saved_ones(fitted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(samples()[0]) + "\n")
    result = runner.invoke(
        app,
        ["eval", str(data), "-m", "faithfulness", "--no-store", "--calibration", "nope"],
    )
    assert result.exit_code == 2, result.output
    assert "no calibration named 'nope'" in result.output and "team (v1)" in result.output


def test_a_bad_label_line_exits_2_naming_line_and_field(fitted, tmp_path):
    bad = tmp_path / "bad.jsonl"
    lines = (tmp_path / "labels.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    del record["labeller"]
    bad.write_text(lines[0] + "\n" + json.dumps(record) + "\n")
    result = runner.invoke(app, ["calibrate", "fit", "run", "--labels", str(bad), "--name", "x"])
    assert result.exit_code == 2
    assert "row 2, field 'labeller': is missing" in result.output
    assert "No calibration was fitted" in result.output
    assert "Traceback" not in result.output
    record = json.loads(lines[1])
    record["value"] = "maybe"
    bad.write_text(json.dumps(record) + "\n")
    result = runner.invoke(app, ["calibrate", "fit", "run", "--labels", str(bad), "--name", "x"])
    assert result.exit_code == 2 and "field 'value': 'maybe' is not a claim label" in result.output


def test_labels_matching_no_verdict_exit_2(fitted, tmp_path):
    other = tmp_path / "other.jsonl"
    record = json.loads((tmp_path / "labels.jsonl").read_text().splitlines()[0])
    record["item"] = "A claim the run never made."
    other.write_text(json.dumps(record) + "\n")
    result = runner.invoke(app, ["calibrate", "fit", "run", "--labels", str(other), "--name", "x"])
    assert result.exit_code == 2 and "matches a judge verdict" in result.output


def test_a_calibrated_run_is_not_fitted_on_again(fitted, tmp_path):
    evaluate(
        samples(),
        ["faithfulness"],
        judge=scripted_judge(),
        calibration="team",
        run_dir=tmp_path / "calibrated",
    )
    result = runner.invoke(
        app, ["calibrate", "fit", "calibrated", "--labels", "labels.jsonl", "--name", "x"]
    )
    assert result.exit_code == 2 and "fit on a run made without --calibration" in result.output


def test_isotonic_method(fitted):
    result = runner.invoke(
        app,
        ["calibrate", "fit", "run", "--labels", "labels.jsonl", "--name", "iso", "--method",
         "isotonic"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = runner.invoke(app, ["calibrate", "show", "iso"])
    assert "isotonic," in shown.output


def test_eval_records_the_calibration_for_resume(fitted, tmp_path):
    from ragmeter import EvaluationResult

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"response": "a", "reference": "a"}) + "\n")
    args = ["eval", str(data), "-m", "exact_match", "--no-store", "-q", "-o", "out"]
    result = runner.invoke(app, [*args, "--calibration", "team", "--force-calibration"])
    assert result.exit_code == 0, result.output
    invocation = EvaluationResult.load(tmp_path / "out").config["invocation"]
    assert (invocation["calibration"], invocation["force_calibration"]) == ("team", True)


def test_fit_without_labels_reads_those_kept_in_the_run_store(fitted, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    imported = runner.invoke(app, ["labels", "import", "labels.jsonl", "--store", url])
    assert imported.exit_code == 0, imported.output
    stored = runner.invoke(app, ["calibrate", "fit", "run", "--name", "kept", "--store", url])
    assert stored.exit_code == 0, stored.output
    assert "20 labelled verdicts matched" in stored.output
    kept = json.loads((tmp_path / ".ragmeter/calibrations/kept/v1.json").read_text())
    from_file = json.loads((tmp_path / ".ragmeter/calibrations/team/v1.json").read_text())
    assert kept["tasks"] == from_file["tasks"]
    assert "in the run store on run run" in kept["fitted_on"]
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    none = runner.invoke(app, ["calibrate", "fit", "run", "--name", "x", "--store", empty])
    assert none.exit_code == 2 and "none of the 0 claim/context labels" in none.output


def test_a_fit_worse_than_the_judge_on_held_out_folds_is_saved_with_a_warning(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    evaluate(samples(), ["faithfulness"], judge=scripted_judge(), run_dir=tmp_path / "run")
    # Labels nearly unrelated to the judge's P(yes): a map fitted on 4 folds misleads the 5th.
    a = [False, True, False, True, True, False, True, True, True, True]
    b = [False, True, False, False, False, False, False, True, True, True]
    write_labels(tmp_path / "noise.jsonl", a, b)
    result = runner.invoke(
        app,
        ["calibrate", "fit", "run", "--labels", "noise.jsonl", "--name", "noise"],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    assert "saved noise@v1" in result.output
    assert "on held-out folds the calibrated verdicts are less accurate" in result.output
    assert "label more (ragmeter labels queue)" in result.output
    write_labels(tmp_path / "labels.jsonl")  # the labels the judge's P(yes) does predict
    quiet = runner.invoke(
        app, ["calibrate", "fit", "run", "--labels", "labels.jsonl", "--name", "team"]
    )
    assert quiet.exit_code == 0 and "less accurate" not in quiet.output


def test_fit_and_show_as_json_give_the_saved_calibration(fitted, tmp_path):
    saved = json.loads((tmp_path / ".ragmeter/calibrations/team/v1.json").read_text())
    again = runner.invoke(
        app, ["calibrate", "fit", "run", "--labels", "labels.jsonl", "--name", "team", "--json"]
    )
    assert again.exit_code == 0, again.output
    document = json.loads(again.output)
    # the same labels fit the same map: the saved version is kept, not a new one
    assert document["new_version"] is False and document["matched"] == 20
    assert document["calibration"]["tasks"] == saved["tasks"]
    assert document["path"].endswith("team/v1.json") and document["warnings"] == []
    shown = runner.invoke(app, ["calibrate", "show", "team", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["tasks"] == saved["tasks"]
