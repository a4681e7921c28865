"""Metrics by every name users know: RAGAS and DeepEval names and class names, any case, the
shipped custom metrics; names that mean something else are refused with the difference."""

import sqlite3
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ragmeter import evaluate
from ragmeter.cli import app
from ragmeter.metrics import (
    SPECS,
    UnknownMetricError,
    get_metric,
    normalize_name,
    resolve_metrics,
    suggest_names,
)
from ragmeter.testing import ScriptedJudge

# (name as typed, the metric's name, its class): RAGAS 0.1-0.3 names and class names,
# DeepEval's class names where ragmeter computes the same, and ragmeter's own class names.
ALIASES = [
    ("context_precision_without_reference", "context_utilization", "ContextUtilization"),
    ("llm_context_precision_without_reference", "context_utilization", "ContextUtilization"),
    ("LLMContextPrecisionWithoutReference", "context_utilization", "ContextUtilization"),
    ("ContextUtilization", "context_utilization", "ContextUtilization"),
    ("context_entities_recall", "context_entity_recall", "ContextEntityRecall"),
    ("ContextEntityRecall", "context_entity_recall", "ContextEntityRecall"),
    ("response_relevancy", "answer_relevancy", "AnswerRelevancy"),
    ("ResponseRelevancy", "answer_relevancy", "AnswerRelevancy"),
    ("AnswerRelevancy", "answer_relevancy", "AnswerRelevancy"),
    ("NoiseSensitivity", "noise_sensitivity_relevant", "NoiseSensitivity"),
    ("Faithfulness", "faithfulness", "Faithfulness"),
    ("LLMContextRecall", "context_recall", "ContextRecall"),
    ("ContextRecall", "context_recall", "ContextRecall"),
    ("NonLLMContextRecall", "string_context_recall", "StringContextRecall"),
    ("LLMContextPrecisionWithReference", "context_precision", "ContextPrecision"),
    ("ContextPrecision", "context_precision", "ContextPrecision"),
    ("NonLLMContextPrecisionWithReference", "string_context_precision", "StringContextPrecision"),
    ("IDBasedContextPrecision", "id_context_precision", "IDContextPrecision"),
    ("IDBasedContextRecall", "id_context_recall", "IDContextRecall"),
    ("FactualCorrectness", "factual_correctness", "FactualCorrectness"),
    ("SemanticSimilarity", "semantic_similarity", "SemanticSimilarity"),
    ("AnswerSimilarity", "semantic_similarity", "SemanticSimilarity"),
    ("answer_similarity", "semantic_similarity", "SemanticSimilarity"),
    ("AnswerCorrectness", "answer_correctness", "AnswerCorrectness"),
    ("RougeScore", "rouge_l", "Rouge"),
    ("rouge_score", "rouge_l", "Rouge"),
    ("BleuScore", "bleu", "BLEU"),
    ("bleu_score", "bleu", "BLEU"),
    ("ChrfScore", "chrf", "ChrF"),
    ("ExactMatch", "exact_match", "ExactMatch"),
    ("StringPresence", "string_presence", "StringPresence"),
    ("string_present", "string_presence", "StringPresence"),
    ("ContextRelevance", "context_relevance", "ContextRelevance"),
    ("ContextualPrecisionMetric", "context_precision", "ContextPrecision"),
    ("contextual_precision", "context_precision", "ContextPrecision"),
    ("ContextualRecallMetric", "context_recall", "ContextRecall"),
    ("contextual_recall", "context_recall", "ContextRecall"),
    ("SQLEquivalence", "sql_equivalence", "SQLEquivalence"),
    ("MultiHopCompleteness", "multihop_completeness", "MultiHopCompleteness"),
    # any case, hyphens for underscores
    ("CONTEXT_ENTITIES_RECALL", "context_entity_recall", "ContextEntityRecall"),
    ("context-recall", "context_recall", "ContextRecall"),
    ("mAP", "map", "MAP"),
]


@pytest.mark.parametrize(("typed", "name", "cls"), ALIASES)
def test_each_alias_selects_the_metric_that_computes_the_same(typed, name, cls):
    metric = get_metric(typed)
    assert (metric.name, type(metric).__name__) == (name, cls)


def test_class_names_take_a_cutoff_like_the_names():
    assert get_metric("NDCG@10").name == "ndcg@10"
    assert get_metric("HitRate@3").name == "hit@3"
    with pytest.raises(UnknownMetricError, match="takes no @K"):
        get_metric("NoiseSensitivity@3")


@pytest.mark.parametrize(
    ("typed", "name", "cls"),
    [
        ("sql_equivalence", "sql_equivalence", "SQLEquivalence"),
        ("sql_execution", "sql_execution", "SQLExecution"),
        ("sql_equivalence_judge", "sql_equivalence_judge", "PromptMetric"),
        ("multihop_completeness", "multihop_completeness", "MultiHopCompleteness"),
        ("tone_zh", "tone_zh", "PromptMetric"),
    ],
)
def test_the_shipped_custom_metrics_are_chosen_by_name(typed, name, cls):
    metric = get_metric(typed)
    assert (metric.name, type(metric).__name__) == (name, cls)


def test_a_run_without_the_shipped_metrics_does_not_import_them():
    code = (
        "import sys\n"
        "from ragmeter import evaluate\n"
        "evaluate([{'retrieved_context_ids': ['a'], 'reference_context_ids': ['a']}], 'mrr')\n"
        "from ragmeter.metrics import get_metric\n"
        "get_metric('faithfulness'); get_metric('ContextualRecallMetric')\n"
        "print(sorted(m for m in sys.modules if m.startswith('ragmeter.metrics.custom')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_sql_equivalence_by_name_scores_a_run(tmp_path):
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as connection:
        connection.executescript(
            "CREATE TABLE item(name TEXT, price REAL);"
            "INSERT INTO item VALUES ('pen', 1.5), ('ink', 4.0);"
        )
    connection.close()
    reference = "SELECT name FROM item WHERE price > 2"
    rows = [
        {"response": "select name from item where price >= 4", "reference": reference},
        {"response": "select name from item", "reference": reference},
    ]
    for row in rows:
        row["db_path"] = str(db)
    result = evaluate(rows, "sql_equivalence")
    # the first returns ('ink',) as the reference does; the second also returns ('pen',)
    assert result.scores("sql_equivalence") == [1.0, 0.0]


def test_tone_zh_by_name_is_judged_on_its_rubric():
    judge = ScriptedJudge(lambda messages, schema: {"reason": "友好得体", "score": 4})
    result = evaluate(
        [{"user_input": "退款什么时候到账？", "response": "抱歉久等，3 个工作日内到账。"}],
        ["tone_zh"],
        judge=judge,
    )
    assert result.scores("tone_zh") == [pytest.approx(0.75)]  # level 4 of 1-5: (4 - 1) / 4


@pytest.mark.parametrize(
    ("typed", "says", "closest"),
    [
        ("FaithfulnessMetric", "does not contradict", "'faithfulness'"),
        ("AnswerRelevancyMetric", "share of the output's statements", "'answer_relevancy'"),
        ("ContextualRelevancyMetric", "statements in the contexts", "'context_relevance'"),
        ("context_relevancy", "sentences relevant", "'context_relevance'"),
        ("LLMSQLEquivalence", "given the schema", "'sql_equivalence'"),
        ("AspectCritic", 'kind = "discrete"', None),
    ],
)
def test_names_of_other_computations_are_refused_with_the_difference(typed, says, closest):
    with pytest.raises(UnknownMetricError) as error:
        get_metric(typed)
    message = str(error.value)
    assert message.startswith(f"unknown metric {typed!r}: ")
    assert says in message
    if closest:
        assert f"did you mean {closest}" in message
    with pytest.raises(UnknownMetricError) as listed:  # also in a list, with the others
        resolve_metrics([typed, "mrr", "contxt_recall"])
    assert says in str(listed.value) and "'context_recall'" in str(listed.value)


def test_no_alias_means_something_else():
    """Every name or alias selects exactly one metric, and no explained name is an alias."""
    from ragmeter.metrics._registry import EXPLAINED  # private: the table of explained names

    owners: dict[str, str] = {}
    for spec in SPECS:
        for key in (spec.name, *spec.aliases):
            normalized = normalize_name(key)
            assert owners.setdefault(normalized, spec.name) == spec.name, key
            assert normalized not in EXPLAINED, key


def test_camel_case_typos_get_suggestions():
    assert suggest_names("NoiseSensitivty", SPECS) == ["noise_sensitivity"]
    assert suggest_names("ContextEntitiesRecal", SPECS) == ["context_entities_recall"]


def test_the_listing_shows_the_shipped_metrics_and_the_aliases():
    output = CliRunner().invoke(app, ["metrics"], env={"COLUMNS": "300"}).output
    for name in ("sql_equivalence", "sql_execution", "multihop_completeness", "tone_zh"):
        assert name in output
    assert "context_precision_without_reference" in output
    assert "context_entities_recall" in output
    assert "ContextualPrecisionMetric" in output
    tone = next(line for line in output.splitlines() if "tone_zh" in line)
    assert "user_input, response" in tone and "1-5 rubric" in tone
