"""Data as other tools leave it: pandas-written CSV, RAGAS / DeepEval / Langfuse / TruLens
names and objects, dicts of columns. Expected values are worked out by hand in comments."""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from ragmeter import DatasetError, evaluate, load_dataset
from ragmeter.dataset import Dataset

pd = pytest.importorskip("pandas")


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


# -- 1. pandas-written CSV: list cells as Python reprs ---------------------------------------
RAGAS_ROWS = [
    {
        "user_input": "What is the capital of France?",
        "retrieved_contexts": ["Paris is the capital of France.", "zzzz zzzz zzzz"],
        "reference_contexts": ["Paris is the capital of France."],
        "response": "Paris",
        "reference": "Paris",
        "faithfulness": 1.0,
    },
    {
        "user_input": "Qu'est-ce que « RAG » ?",  # a quote inside: repr switches to "..."
        "retrieved_contexts": ["it's retrieval-augmented generation", "naïve – café"],
        "reference_contexts": ["qqqq qqqq qqqq", "it's retrieval-augmented generation"],
        "response": "Retrieval",
        "reference": "Retrieval-augmented generation",
        "faithfulness": 0.5,
    },
    {
        "user_input": "Empty?",
        "retrieved_contexts": [],
        "reference_contexts": ["xxxx"],
        "response": "no",
        "reference": "no",
        "faithfulness": 0.0,
    },
]


def pandas_csv(tmp_path, rows=RAGAS_ROWS):
    path = tmp_path / "ragas_export.csv"
    pd.DataFrame(rows).to_csv(path)  # as users do: the index first, under an empty name
    return path


def test_pandas_to_csv_writes_python_reprs_that_load_as_lists(tmp_path):
    path = pandas_csv(tmp_path)
    text = path.read_text("utf-8")
    assert text.startswith(",user_input,retrieved_contexts,")  # the index column, unnamed
    # The file really holds reprs, not JSON: single quotes, and double ones around "it's".
    assert "['Paris is the capital of France.', 'zzzz zzzz zzzz']" in text
    assert '"[""it\'s retrieval-augmented generation"", \'naïve – café\']"' in text
    dataset = load_dataset(path)
    assert [s.retrieved_contexts for s in dataset] == [r["retrieved_contexts"] for r in RAGAS_ROWS]
    assert [s.reference_contexts for s in dataset] == [r["reference_contexts"] for r in RAGAS_ROWS]
    assert dataset[1].user_input == "Qu'est-ce que « RAG » ?"


def test_evaluate_a_pandas_csv_from_the_file_and_from_read_csv(tmp_path):
    path = pandas_csv(tmp_path)
    # string_context_recall: share of reference contexts that a retrieved one matches
    # row 1: the one reference is retrieved -> 1.0; row 2: one of two -> 0.5;
    # row 3: nothing retrieved -> 0.0. exact_match: 1, 0, 1.
    expected = {"string_context_recall": [1.0, 0.5, 0.0], "exact_match": [1.0, 0.0, 1.0]}
    # The score column is text in the file, a float once pandas has read it; the index that
    # to_csv wrote ("" in the file, "Unnamed: 0" after read_csv) is left out.
    for source, faithfulness in ((path, "0.0"), (pd.read_csv(path), 0.0)):
        result = evaluate(source, list(expected))
        assert {m: result.scores(m) for m in expected} == expected
        assert result.samples[2].sample.metadata == {"faithfulness": faithfulness}


def test_the_score_column_of_a_ragas_export_is_kept_as_text_not_a_tag(tmp_path):
    result = evaluate(pandas_csv(tmp_path), ["exact_match"])
    assert [s.sample.metadata for s in result] == [
        {"faithfulness": "1.0"},
        {"faithfulness": "0.5"},
        {"faithfulness": "0.0"},
    ]
    assert result.breakdowns() == {}  # numeric text is a score, not a grouping


def test_numpy_array_cells_written_by_to_csv_are_split_into_their_items(tmp_path):
    # A frame read from Parquet or a HF dataset holds numpy arrays; to_csv writes them as
    # ['a' 'b'], with no commas (Python would read that as one string, 'ab').
    np = pytest.importorskip("numpy")
    frame = pd.DataFrame(
        {
            "question": ["q1"],
            "contexts": [np.array(["first chunk", "second chunk"], dtype=object)],
            "retrieved_context_ids": [np.array([3, 7])],
        }
    )
    path = tmp_path / "arrays.csv"
    frame.to_csv(path, index=False)
    assert "['first chunk' 'second chunk']" in path.read_text("utf-8")
    sample = load_dataset(path)[0]
    assert sample.retrieved_contexts == ["first chunk", "second chunk"]
    assert sample.retrieved_context_ids == ["3", "7"]


def test_a_cell_neither_json_nor_a_literal_gets_a_hint_that_fits(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "question,contexts\n"
        'q1,"[chunk one, chunk two]"\n'  # unquoted words
        "q2,\"['a', 3]\"\n"  # a number among texts
        "q3,one chunk\n",  # plain text: the fix is to wrap it
        "utf-8",
    )
    with pytest.raises(DatasetError) as error:
        load_dataset(path)
    fixes = {p.row: p.fix for p in error.value.problems}
    assert fixes[1] == (
        "neither JSON nor a Python list: it holds unquoted words (quote each text); write "
        'the list as JSON, e.g. ["chunk 1", "chunk 2"]'
    )
    assert fixes[2] == (
        'its items must be texts, not int (3); write the list as JSON, e.g. ["chunk 1", "chunk 2"]'
    )
    assert fixes[3] == 'wrap a single item in a list, e.g. ["one chunk"]'
    assert "wrap" not in fixes[1] + fixes[2]


def test_a_literal_is_never_evaluated_as_code(tmp_path):
    path = tmp_path / "evil.csv"
    path.write_text("question,contexts\nq,\"[__import__('os').getcwd()]\"\n", "utf-8")
    with pytest.raises(DatasetError, match="it holds unquoted words"):
        load_dataset(path)
    path.write_text("question,contexts\nq,\"['a', 1 + 2j]\"\n", "utf-8")
    with pytest.raises(DatasetError, match="its items must be texts, not complex"):
        load_dataset(path)


def test_ground_truths_and_metadata_reprs_are_read_too(tmp_path):
    frame = pd.DataFrame(
        {
            "question": ["q"],
            "ground_truths": [["first answer", "second answer"]],
            "metadata": [{"topic": "geo", "hops": 2}],
        }
    )
    path = tmp_path / "v01.csv"
    frame.to_csv(path, index=False)
    sample = load_dataset(path)[0]
    assert sample.reference == "first answer"
    assert sample.metadata == {
        "topic": "geo",
        "hops": 2,
        "ground_truths": ["first answer", "second answer"],
    }


# -- 2. RAGAS objects (0.2+ / 0.3 shapes, duck-typed: no ragas dependency) -------------------
class SingleTurnSample(BaseModel):
    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None


class EvaluationDataset(BaseModel):
    samples: list[SingleTurnSample]

    def to_list(self) -> list[dict[str, Any]]:
        return [s.model_dump(exclude_none=True) for s in self.samples]

    def to_pandas(self) -> Any:
        return pd.DataFrame(self.to_list())


class OldEvaluationDataset(BaseModel):  # ragas 0.2.0: no to_list() yet
    samples: list[SingleTurnSample]


class TestsetSample(BaseModel):  # what ragas' test set generator returns
    __test__ = False
    eval_sample: SingleTurnSample
    synthesizer_name: str


class Testset(BaseModel):
    __test__ = False
    samples: list[TestsetSample]


RAGAS_SAMPLES = [
    SingleTurnSample(
        user_input="q1",
        retrieved_contexts=["alpha text", "zzzz"],
        reference_contexts=["alpha text"],
        response="A",
        reference="A",
        rubrics={"score1_description": "bad"},
    ),
    SingleTurnSample(
        user_input="q2",
        retrieved_contexts=["qqqq"],
        reference_contexts=["beta text"],
        response="B",
        reference="C",
    ),
]


def test_a_ragas_evaluation_dataset_evaluates():
    # string_context_recall: q1 finds its one reference context (1.0), q2 not (0.0);
    # exact_match: A == A (1.0), B != C (0.0).
    for data in (
        EvaluationDataset(samples=RAGAS_SAMPLES),
        OldEvaluationDataset(samples=RAGAS_SAMPLES),
    ):
        result = evaluate(data, ["string_context_recall", "exact_match"])
        assert result.scores("string_context_recall") == [1.0, 0.0]
        assert result.scores("exact_match") == [1.0, 0.0]
        assert result.samples[0].sample.metadata == {"rubrics": {"score1_description": "bad"}}


def test_a_list_of_samples_and_a_single_sample_load():
    dataset = load_dataset(RAGAS_SAMPLES)
    assert [s.user_input for s in dataset] == ["q1", "q2"]
    single = load_dataset(RAGAS_SAMPLES[1])
    assert len(single) == 1 and single[0].reference_contexts == ["beta text"]


def test_a_ragas_testset_is_flattened_with_its_synthesizer_as_a_tag():
    testset = Testset(
        samples=[
            TestsetSample(eval_sample=RAGAS_SAMPLES[0], synthesizer_name="single_hop"),
            TestsetSample(eval_sample=RAGAS_SAMPLES[1], synthesizer_name="multi_hop"),
        ]
    )
    dataset = load_dataset(testset)
    assert [s.user_input for s in dataset] == ["q1", "q2"]
    assert dataset[1].metadata == {"synthesizer_name": "multi_hop"}


@dataclass
class Row:
    question: str
    answer: str
    tags: list[str] = field(default_factory=list)


class ToDict:
    def __init__(self, **values: Any) -> None:
        self.values = values

    def to_dict(self) -> dict[str, Any]:
        return dict(self.values)


def test_dataclasses_and_objects_with_to_dict_load():
    dataset = load_dataset([Row("q", "a", ["x"]), ToDict(question="q2", answer="a2")])
    assert [(s.user_input, s.response) for s in dataset] == [("q", "a"), ("q2", "a2")]
    assert dataset[0].metadata == {"tags": ["x"]}


# -- 3. other tools' column names -----------------------------------------------------------
def test_a_deepeval_named_jsonl_evaluates(tmp_path):
    rows = [
        {
            "input": "How long is the refund window?",
            "actual_output": "30 days",
            "expected_output": "30 days",
            "retrieval_context": ["Refunds within 30 days.", "zzzz"],
            "context": ["Refunds within 30 days."],
            "additional_metadata": {"category": "refunds"},
        },
        {
            "input": "Do you ship abroad?",
            "actual_output": "Yes",
            "expected_output": "Only to the EU",
            "retrieval_context": ["qqqq"],
            "context": ["We ship to the EU."],
        },
    ]
    result = evaluate(
        write_jsonl(tmp_path / "deepeval.jsonl", rows), ["exact_match", "string_context_recall"]
    )
    assert result.scores("exact_match") == [1.0, 0.0]
    assert result.scores("string_context_recall") == [1.0, 0.0]
    first = result.samples[0].sample
    assert first.user_input == "How long is the refund window?"
    assert first.metadata == {"category": "refunds"}


def test_a_langfuse_named_jsonl_unwraps_one_obvious_text_key(tmp_path):
    rows = [
        {
            "id": "item-1",
            "input": {"question": "What is RAG?", "language": "en"},
            "expected_output": {"answer": "Retrieval-augmented generation"},
            "output": "Retrieval-augmented generation",
            "metadata": {"source": "docs"},
            "source_trace_id": "t-9",
        },
        {
            "id": "item-2",
            "input": "Plain text input",
            "expected_output": "x",
            "output": "y",
        },
    ]
    result = evaluate(write_jsonl(tmp_path / "langfuse.jsonl", rows), ["exact_match"])
    assert result.scores("exact_match") == [1.0, 0.0]
    first = result.samples[0].sample
    assert (first.id, first.user_input, first.reference) == (
        "item-1",
        "What is RAG?",
        "Retrieval-augmented generation",
    )
    assert first.metadata == {"input.language": "en", "source": "docs", "source_trace_id": "t-9"}


def test_an_object_with_several_text_keys_is_not_guessed_and_the_fix_says_why():
    with pytest.raises(DatasetError) as error:
        Dataset.from_records([{"input": {"question": "q", "query": "q2"}, "output": "a"}])
    (problem,) = error.value.problems
    assert problem.field == "user_input"
    assert "not an object (keys 'question', 'query')" in problem.fix


def test_trulens_ground_truth_names_and_chunk_objects():
    rows = [
        {
            "query": "what is AI?",
            "query_id": "3",
            "expected_response": "Artificial Intelligence",
            "expected_chunks": [{"text": "AI is the simulation of intelligence.", "title": "AI"}],
        }
    ]
    sample = load_dataset(rows)[0]
    assert sample.user_input == "what is AI?"
    assert sample.reference == "Artificial Intelligence"
    assert sample.reference_contexts == ["AI is the simulation of intelligence."]
    assert sample.metadata == {"query_id": "3"}


def test_seed_004_ground_truth_contexts_are_the_reference_contexts(tmp_path):
    rows = [
        {
            "question": "q",
            "contexts": ["Paris is the capital of France."],
            "ground_truth_contexts": ["Paris is the capital of France."],
            "ground_truth_context_ids": ["doc-1"],
        }
    ]
    result = evaluate(write_jsonl(tmp_path / "seed.jsonl", rows), ["string_context_recall"])
    assert result.scores("string_context_recall") == [1.0]
    sample = result.samples[0].sample
    assert sample.reference_context_ids == ["doc-1"] and sample.metadata == {}


def test_two_names_for_one_field_that_disagree_are_one_problem():
    with pytest.raises(DatasetError) as error:
        Dataset.from_records([{"question": "a", "input": "b"}])
    (problem,) = error.value.problems
    assert problem.message == (
        "columns 'question' and 'input' both map to 'user_input' and differ; drop one or "
        "rename it with column_map"
    )


# -- 4. dicts of columns --------------------------------------------------------------------
def test_a_dict_of_lists_evaluates_as_columns():
    data = {
        "question": ["q1", "q2", "q3"],
        "answer": ["a", "b", "c"],
        "ground_truth": ["a", "x", "c"],
        "contexts": [["c1"], [], ["c3", "c4"]],
    }
    result = evaluate(data, ["exact_match"])
    assert result.scores("exact_match") == [1.0, 0.0, 1.0]
    assert [s.sample.retrieved_contexts for s in result] == [["c1"], [], ["c3", "c4"]]


def test_a_single_sample_dict_is_not_columns():
    one = load_dataset({"user_input": "q", "retrieved_context_ids": ["d1", "d2"]})
    assert len(one) == 1 and one[0].retrieved_context_ids == ["d1", "d2"]
    ids_only = load_dataset(
        {"retrieved_context_ids": ["d1", "d2"], "reference_context_ids": ["d2"]}
    )
    assert len(ids_only) == 1 and ids_only[0].reference_context_ids == ["d2"]
    nested = load_dataset({"retrieved_context_ids": [["d1"], ["d2"]]})
    assert [s.retrieved_context_ids for s in nested] == [["d1"], ["d2"]]


def test_columns_of_different_lengths_are_named_with_their_lengths():
    with pytest.raises(ValueError) as error:
        load_dataset({"question": ["q1", "q2", "q3"], "answer": ["a", "b"]})
    assert str(error.value) == (
        "the columns of this dict have different lengths ('question' 3, 'answer' 2). Fix: "
        "give every column one value per sample, in the same order"
    )


def test_columns_in_part_and_an_ambiguous_dict_are_errors():
    with pytest.raises(ValueError, match=r"column 'source' holds a single value"):
        load_dataset({"question": ["q1", "q2"], "answer": ["a", "b"], "source": "wiki"})
    with pytest.raises(ValueError, match="cannot tell whether this dict"):
        load_dataset({"topic": ["a", "b"], "persona": ["x", "y"]})


def test_columns_may_be_numpy_arrays_or_series():
    np = pytest.importorskip("numpy")
    data = {"question": np.array(["q1", "q2"]), "answer": pd.Series(["a", "b"])}
    assert [(s.user_input, s.response) for s in load_dataset(data)] == [("q1", "a"), ("q2", "b")]


# -- 5. what cannot be read -----------------------------------------------------------------
def test_a_hf_dataset_dict_asks_for_a_split():
    datasets = pytest.importorskip("datasets")
    splits = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_list([{"question": "q"}]),
            "test": datasets.Dataset.from_list([{"question": "r"}]),
        }
    )
    with pytest.raises(ValueError) as error:
        load_dataset(splits)
    assert str(error.value) == (
        "a Hugging Face DatasetDict holds several splits ('train', 'test'); evaluate one of "
        "them, e.g. dataset['train']"
    )
    assert load_dataset(splits["test"])[0].user_input == "r"


def test_an_unsupported_object_names_its_type_and_what_is_accepted():
    with pytest.raises(TypeError) as error:
        load_dataset(42)
    message = str(error.value)
    assert message.startswith("cannot read samples from an object of type int; give a path to")
    assert "RAGAS EvaluationDataset" in message and "a dict of columns" in message


def test_repr_cells_in_parquet_and_hugging_face_datasets(tmp_path):
    pytest.importorskip("pyarrow")
    datasets = pytest.importorskip("datasets")
    rows = [{"question": "q", "contexts": "['a', \"it's\"]", "retrieved_context_ids": "(1, 2)"}]
    path = tmp_path / "d.parquet"
    pd.DataFrame(rows).to_parquet(path)
    for source in (path, datasets.Dataset.from_list(rows)):
        sample = load_dataset(source)[0]
        assert sample.retrieved_contexts == ["a", "it's"]
        assert sample.retrieved_context_ids == ["1", "2"]


class Golden(BaseModel):  # DeepEval's Golden / LLMTestCase fields (a subset)
    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    retrieval_context: list[str] | None = None
    context: list[str] | None = None


class DeepEvalDataset:  # deepeval.dataset.EvaluationDataset: goldens, test_cases once run
    def __init__(self, goldens: list[Golden], test_cases: list[Golden] | None = None) -> None:
        self.goldens = goldens
        self.test_cases = test_cases or []


def test_a_deepeval_dataset_reads_its_test_cases_else_its_goldens():
    goldens = [Golden(input="q1", expected_output="a"), Golden(input="q2", expected_output="b")]
    dataset = load_dataset(DeepEvalDataset(goldens))
    assert [(s.user_input, s.reference, s.response) for s in dataset] == [
        ("q1", "a", None),
        ("q2", "b", None),
    ]
    ran = [Golden(input="q1", actual_output="a", expected_output="a", retrieval_context=["c"])]
    (sample,) = load_dataset(DeepEvalDataset(goldens, ran))
    assert (sample.response, sample.retrieved_contexts) == ("a", ["c"])
