"""Unknown metric names: every one reported at once, each with the closest known names."""

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.metrics import SPECS, UnknownMetricError, get_metric, resolve_metrics, suggest_names
from ragmeter.metrics.retrieval import ranking_metric

runner = CliRunner()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("faithfulnes", ["faithfulness"]),
        ("FAITHFULNES", ["faithfulness"]),
        ("contxt_recall", ["context_recall"]),
        ("precsion@5", ["precision@5"]),
        ("ndgc@10", ["ndcg@10"]),
        ("ndcg_ex@3", ["ndcg_exp@3"]),
        ("precison", ["precision@K"]),
        ("hit_rte@3", ["hit_rate@3"]),  # an alias is suggested as the user spells it
        ("faithfulnes@5", ["faithfulness"]),  # no cutoff where the metric takes none
        ("blah", []),
        ("xyz@3", []),
    ],
)
def test_closest_known_names_are_suggested(name, expected):
    assert suggest_names(name, SPECS) == expected


def test_every_unknown_name_is_reported_at_once_with_its_suggestions():
    with pytest.raises(UnknownMetricError) as error:
        resolve_metrics("faithfulnes,contxt_recall,ndcg@x,precsion@5,mrr,blah")
    message = str(error.value)
    assert message.startswith("5 metric names not understood:")
    assert "unknown metric 'faithfulnes': did you mean 'faithfulness'?" in message
    assert "unknown metric 'contxt_recall': did you mean 'context_recall'?" in message
    assert "the cutoff in 'ndcg@x' must be a positive integer, e.g. ndcg@5" in message
    assert "unknown metric 'precsion@5': did you mean 'precision@5'?" in message
    assert "unknown metric 'blah': no known metric is close" in message
    assert "'mrr'" not in message
    assert "known metrics:" not in message  # the command lists them instead
    assert "`ragmeter metrics` lists every metric" in message


def test_one_unknown_name_names_the_listing_command():
    names = [m.name for m in resolve_metrics("Faithfulness,HIT_RATE@3,rougeL,ap@5")]
    assert names == ["faithfulness", "hit@3", "rouge_l", "map@5"]  # known names, any case
    with pytest.raises(UnknownMetricError) as error:
        resolve_metrics(["Faithfulness", "Faithfulnes", "rougeL"])
    assert str(error.value) == (
        "unknown metric 'Faithfulnes': did you mean 'faithfulness'? "
        "(`ragmeter metrics` lists every metric)"
    )


def test_nothing_close_lists_every_known_name_for_a_single_lookup():
    with pytest.raises(UnknownMetricError) as error:
        get_metric("blah")
    assert "no known metric is close; known metrics: faithfulness," in str(error.value)
    with pytest.raises(UnknownMetricError, match="did you mean 'map@3'"):
        ranking_metric("mapp@3")


def test_evaluate_reports_every_unknown_name():
    with pytest.raises(UnknownMetricError) as error:
        evaluate([{"question": "q", "answer": "a"}], ["faithfulnes", "exact_mach"])
    assert "'faithfulness'" in str(error.value) and "'exact_match'" in str(error.value)


def test_cli_shows_every_unknown_metric_as_one_error_with_exit_2(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"question": "q", "answer": "a", "ground_truth": "a"}\n', encoding="utf-8")
    result = runner.invoke(
        app, ["eval", str(data), "-m", "faithfulnes,contxt_recall,ndcg@x", "--no-store"]
    )
    assert result.exit_code == 2
    assert result.output.count("error:") == 1
    assert "did you mean 'faithfulness'?" in result.output
    assert "did you mean 'context_recall'?" in result.output
    assert "'ndcg@x'" in result.output
    assert "ragmeter metrics" in result.output
