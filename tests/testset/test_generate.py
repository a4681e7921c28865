"""Generating test sets with the scripted judge: synthesizers, filters, languages, accounting,
seeds, resuming, and the round trip of chunk ids into retrieval metrics."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ragmeter import evaluate, load_dataset
from ragmeter.testing import (
    ScriptedEmbeddings,
    ScriptedJudge,
    generation_responder,
    scripted_testset_judge,
)
from ragmeter.testset import (
    LinkSettings,
    allocate,
    chunks_from_documents,
    documents_from_chunks,
    generate_testset,
    parse_mix,
)
from tests.testset._helpers import CHINESE, ENGLISH, chunk

SIMILAR = LinkSettings(similarity_threshold=0.9)


def alpha_vectors(text: str) -> list[float]:
    """Texts about "Alpha" plans are near-identical; every other text gets its own axis."""
    v = np.zeros(32)
    if "Alpha" in text and "?" not in text:
        v[0], v[1 + len(text) % 5] = 1.0, 0.05
    else:
        v[zlib.crc32(text.encode()) % 31 + 1] = 1.0
    return v.tolist()


def run(chunks=ENGLISH, judge=None, embeddings=None, **options):
    judge = judge or scripted_testset_judge()
    embeddings = embeddings or ScriptedEmbeddings()
    options.setdefault("personas", 2)
    return generate_testset(chunks, judge=judge, embeddings=embeddings, **options)


def kinds(result):
    return Counter(sample.synthesizer for sample in result.samples)


def test_single_hop_questions_come_from_one_chunk_about_its_keyphrases():
    result = run(n=4, mix="single=1")
    assert len(result) == 4
    for sample in result.samples:
        assert sample.synthesizer == "single_hop"
        assert len(sample.reference_context_ids) == 1
        node = result.graph.nodes[sample.reference_context_ids[0]]
        assert sample.reference_contexts == (node.text,)
        assert sample.focus in (*node.keyphrases, *node.entities, node.summary)
        assert sample.source_document_ids == (node.document_id,)
        assert sample.language == "en"
    # the first four questions spread over both documents
    assert {s.source_document_ids[0] for s in result.samples} == {"a", "b"}


def test_multi_hop_questions_bridge_chunks_through_a_shared_entity():
    result = run(n=4, mix="multi=1")
    assert kinds(result) == {"multi_hop": 4}
    for sample in result.samples:
        nodes = [result.graph.nodes[i] for i in sample.reference_context_ids]
        assert len(nodes) in (2, 3)
        assert all(sample.focus in node.entities for node in nodes)
    # cross-document pairs and the three chunks that mention Vega Labs come first
    first = result.samples[0]
    assert len(set(first.source_document_ids)) == 2
    assert any(len(s.reference_context_ids) == 3 for s in result.samples)


def test_comparison_questions_combine_similar_chunks():
    chunks = [
        chunk("x#0", "Plan Alpha Basic costs 10 dollars a month."),
        chunk("y#0", "Plan Alpha Pro costs 25 dollars a month."),
        chunk("z#0", "Our office is closed on Sundays."),
    ]
    judge = scripted_testset_judge()
    result = run(
        chunks,
        n=1,
        mix="compare=1",
        judge=judge,
        embeddings=ScriptedEmbeddings(alpha_vectors),
        link=SIMILAR,
    )
    assert kinds(result) == {"comparison": 1}
    assert set(result.samples[0].reference_context_ids) == {"x#0", "y#0"}
    assert any('Task "comparison"' in c.messages[0].content for c in judge.calls)


def test_the_mix_is_split_exactly_and_every_synthesizer_runs():
    chunks = [
        *ENGLISH,
        chunk("x#0", "Plan Alpha Basic costs 10 dollars a month."),
        chunk("y#0", "Plan Alpha Pro costs 25 dollars a month."),
    ]
    result = run(
        chunks,
        n=6,
        mix="single=0.5,multi=0.3,compare=0.2",
        embeddings=ScriptedEmbeddings(alpha_vectors),
        link=SIMILAR,
    )
    assert kinds(result) == {"single_hop": 3, "multi_hop": 2, "comparison": 1}
    accounts = result.accounting.synthesizers
    assert {name: a.requested for name, a in accounts.items()} == {
        "single": 3,
        "multi": 2,
        "compare": 1,
    }
    assert result.accounting.notes == []


def test_a_synthesizer_short_of_candidates_hands_its_share_to_the_others_and_says_why():
    result = run(n=6, mix="single=0.5,multi=0.3,compare=0.2")  # no similar chunks
    assert len(result) == 6
    compare = result.accounting.synthesizers["compare"]
    assert (compare.requested, compare.produced, compare.available) == (1, 0, 0)
    assert compare.gave == {"single": 1}
    assert result.accounting.synthesizers["single"].took == {"compare": 1}
    notes = " | ".join(result.accounting.notes)
    assert "compare: 0 of 1: no chunk pair(s) similar enough to compare" in notes
    assert "1 moved to single" in notes
    assert "single: 4 instead of 3 (1 from compare)" in notes


def test_when_every_synthesizer_runs_out_the_result_is_smaller_and_says_exactly_why():
    chunks = [chunk("p#0", "Orion X2 is sold by Vega Labs."), chunk("q#0", "Vega Labs is in Oslo.")]
    result = run(chunks, n=20, mix="multi=1")
    accounts = result.accounting.synthesizers
    assert len(result) == accounts["multi"].produced == 1
    assert accounts["multi"].available == 1
    assert result.accounting.produced == 1 and result.accounting.requested == 20
    assert "multi: 1 of 20: only 1 chunk pair(s) share an entity" in result.accounting.notes[0]
    assert result.accounting.notes[-1] == (
        "1 of 20 questions: the synthesizers ran out of candidates"
    )


def test_an_answer_the_passages_do_not_support_is_rejected_and_counted():
    judge = scripted_testset_judge(unanswerable=lambda q: "Orion X2" in q)
    result = run(n=4, mix="single=1", judge=judge)
    account = result.accounting.synthesizers["single"]
    assert len(result) == 4
    assert all("Orion X2" not in s.user_input for s in result.samples)
    assert account.rejected["not answerable"] >= 1
    assert account.attempted == account.produced + sum(account.rejected.values())


def test_an_answer_that_does_not_answer_its_question_is_rejected():
    judge = scripted_testset_judge(off_topic=lambda q: "Vega Labs" in q)
    result = run(n=3, mix="single=1", judge=judge)
    account = result.accounting.synthesizers["single"]
    assert account.rejected["not answerable"] >= 1
    assert all("Vega Labs" not in s.user_input for s in result.samples)
    assert len(result) == 3


def test_a_multi_hop_answer_that_needs_only_one_passage_is_rejected():
    respond = generation_responder()

    def one_sided(messages, schema):
        answer = respond(messages, schema)
        if "answer" in answer and "multi_hop" in messages[0].content:
            answer["answer"] = answer["answer"].split(". ")[0] + "."
        return answer

    result = run(n=2, mix="multi=1", judge=ScriptedJudge(one_sided), attempts_per_question=10)
    assert len(result) == 0
    assert result.accounting.synthesizers["multi"].rejected["not answerable"] >= 4
    attempts = result.accounting.synthesizers["multi"].attempted
    assert attempts == result.accounting.synthesizers["multi"].available


def test_chinese_documents_get_chinese_questions_from_chinese_prompts():
    judge = scripted_testset_judge()
    result = run(CHINESE, n=4, mix="single=0.5,multi=0.5", judge=judge)
    assert len(result) == 4
    assert all(s.language == "zh" for s in result.samples)
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in s.user_input) for s in result.samples)
    writer_calls = [c for c in judge.calls if "编写测试问题" in c.messages[0].content]
    assert writer_calls and all("问题和答案都用中文书写" in c.prompt for c in writer_calls)
    assert all(s.persona.startswith("Persona") for s in result.samples)


def test_a_question_in_the_wrong_language_is_rejected():
    judge = scripted_testset_judge(
        question_text=lambda focus, _, contexts: (
            "What does this company do?" if "听澜" in focus else f"{focus}是什么？"
        )
    )
    result = run(CHINESE, n=3, mix="single=1", judge=judge)
    account = result.accounting.synthesizers["single"]
    assert account.rejected["wrong language"] >= 1
    assert all("company" not in s.user_input for s in result.samples)


def test_near_duplicate_questions_are_dropped_in_candidate_order():
    # every question says the same thing in other words: their embeddings nearly coincide
    judge = scripted_testset_judge(question_text=lambda focus, _, c: f"Tell me about {focus}?")
    duplicates = ScriptedEmbeddings(
        lambda text: (
            [1.0, 0.01 * len(text)] + [0.0] * 14
            if text.startswith("Tell me")
            else alpha_vectors(text)[:16]
        )
    )
    result = run(n=3, mix="single=1", judge=judge, embeddings=duplicates, attempts_per_question=10)
    assert len(result) == 1
    account = result.accounting.synthesizers["single"]
    assert account.rejected["near-duplicate"] == account.available - 1


def test_exact_repeats_are_duplicates_even_with_unrelated_embeddings():
    judge = scripted_testset_judge(question_text=lambda focus, _, c: "What is Orion X2?")
    result = run(n=2, mix="single=1", judge=judge)
    assert len(result) == 1
    assert result.accounting.synthesizers["single"].rejected["near-duplicate"] >= 1


def test_personas_are_written_once_from_the_corpus_or_taken_as_given():
    judge = scripted_testset_judge()
    result = run(n=6, mix="single=1", judge=judge, personas=3)
    persona_calls = [c for c in judge.calls if "personas" in c.schema.model_fields]
    assert len(persona_calls) == 1
    assert [p.name for p in result.personas] == ["Persona 1", "Persona 2", "Persona 3"]
    assert {s.persona for s in result.samples} == {"Persona 1", "Persona 2", "Persona 3"}

    judge = scripted_testset_judge()
    given = run(n=2, mix="single=1", judge=judge, personas=["Lawyer: checks every clause"])
    assert not [c for c in judge.calls if "personas" in c.schema.model_fields]
    assert {s.persona for s in given.samples} == {"Lawyer"}
    assert any("Lawyer: checks every clause" in c.prompt for c in judge.calls)


def test_styles_and_lengths_rotate_and_reach_the_prompt():
    judge = scripted_testset_judge()
    result = run(n=8, mix="single=1", judge=judge, styles=["web", "typos"], lengths=["short"])
    assert {s.style for s in result.samples} == {"web", "typos"}
    assert {s.length for s in result.samples} == {"short"}
    prompts = [c.messages[0].content for c in judge.calls if "single_hop" in c.messages[0].content]
    assert any("search-engine query" in p for p in prompts)
    assert all("under 10 words" in p for p in prompts)
    with pytest.raises(ValueError, match="unknown style"):
        run(n=1, styles=["shouty"])


def test_the_same_seed_gives_the_same_test_set_and_another_seed_another_order():
    first = run(n=5, seed=7)
    again = run(n=5, seed=7)
    other = run(n=5, seed=8)
    assert first.to_records() == again.to_records()
    assert [s.id for s in first.samples] != [s.id for s in other.samples] or [
        (s.persona, s.style) for s in first.samples
    ] != [(s.persona, s.style) for s in other.samples]


def test_judge_calls_are_one_per_chunk_one_for_personas_and_three_per_attempt():
    judge = scripted_testset_judge()
    result = run(n=4, mix="single=1", judge=judge, personas=2)
    attempted = result.accounting.synthesizers["single"].attempted
    # per attempt: write; then, at once, attribute the answer and check it answers
    assert len(judge.calls) == len(ENGLISH) + 1 + 3 * attempted
    assert result.total_usage.calls == len(judge.calls)
    assert result.judge_calls_per_sample == pytest.approx(len(judge.calls) / 4)
    assert set(result.usage) == {"graph", "personas", "questions", "answerability"}
    assert result.usage["graph"].calls == len(ENGLISH)


class Interrupt(Exception):
    """Not a judge error: it stops the run, like a kill."""


def test_an_interrupted_generation_resumes_without_repeating_any_judge_call(tmp_path: Path):
    reference_judge = scripted_testset_judge()
    uninterrupted = run(n=6, judge=reference_judge, seed=3)
    respond = generation_responder()
    calls = {"n": 0}

    def dies_after_ten(messages, schema):
        calls["n"] += 1
        if calls["n"] > 10:
            return Interrupt("killed")
        return respond(messages, schema)

    work = tmp_path / "work"
    with pytest.raises(Interrupt):
        judge = ScriptedJudge(dies_after_ten, name="scripted-testset")
        run(n=6, judge=judge, seed=3, work_dir=work)
    judge = scripted_testset_judge()
    resumed = run(n=6, judge=judge, seed=3, work_dir=work, resume=True)
    assert resumed.to_records() == uninterrupted.to_records()
    # every call the first session completed was recorded, but for the few in flight
    assert 10 + len(judge.calls) <= len(reference_judge.calls) + 4
    assert len(judge.calls) < len(reference_judge.calls)
    # usage adds up every session's recorded calls: the work of one uninterrupted run
    assert resumed.total_usage.calls == uninterrupted.total_usage.calls
    assert {k: u.calls for k, u in resumed.usage.items()} == {
        k: u.calls for k, u in uninterrupted.usage.items()
    }
    assert (work / "graph.json").exists() and (work / "report.json").exists()
    report = json.loads((work / "report.json").read_text())
    assert report["accounting"]["produced"] == 6


def test_resuming_is_refused_when_the_inputs_changed_and_restarting_needs_a_clean_folder(
    tmp_path: Path,
):
    work = tmp_path / "work"
    run(n=2, work_dir=work)
    with pytest.raises(FileExistsError, match="resume=True"):
        run(n=2, work_dir=work)
    with pytest.raises(ValueError, match="corpus changed"):
        run(ENGLISH[:3], n=2, work_dir=work, resume=True)


def test_a_saved_graph_is_reused_without_reading_chunks_again(tmp_path: Path):
    first = run(n=2, work_dir=tmp_path / "one")
    judge = scripted_testset_judge()
    again = run([], n=2, judge=judge, graph=tmp_path / "one" / "graph.json")
    assert not [c for c in judge.calls if "passage" in c.prompt and "summary" in c.prompt]
    assert again.to_records() == first.to_records()
    assert "graph" not in again.usage


def test_generated_chunk_ids_round_trip_into_retrieval_metrics(tmp_path: Path):
    result = run(n=4, mix="single=0.5,multi=0.5")
    path = result.save(tmp_path / "testset.jsonl")
    dataset = load_dataset(path)
    assert [s.reference_context_ids for s in dataset] == [
        list(s.reference_context_ids) for s in result.samples
    ]
    assert dataset[0].metadata["synthesizer"] in ("single_hop", "multi_hop")
    # a retriever that finds the first reference chunk and one wrong chunk
    records = []
    for sample in result.samples:
        record = sample.to_record()
        record["retrieved_context_ids"] = [sample.reference_context_ids[0], "nowhere#9"]
        records.append(record)
    rows = tmp_path / "retrieved.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in records))
    scores = evaluate(rows, ["recall@2", "id_context_recall"], progress=False)
    recall = scores.scores("recall@2")
    expected = [1 / len(s.reference_context_ids) for s in result.samples]
    assert recall == pytest.approx(expected)
    assert "synthesizer" in scores.breakdowns()


def test_the_users_own_chunks_keep_their_ids():
    documents = documents_from_chunks(
        [
            {"id": "kb-17", "text": "Orion X2 was released by Vega Labs.", "document_id": "kb"},
            {"id": "kb-42", "text": "Vega Labs is based in Oslo.", "document_id": "faq"},
        ]
    )
    result = run(chunks_from_documents(documents), n=1, mix="multi=1")
    assert result.samples[0].reference_context_ids == ("kb-17", "kb-42")
    assert result.samples[0].source_document_ids == ("kb", "faq")


def test_paths_are_loaded_and_chunked(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "phones.md").write_text(
        "# Phones\n\nOrion X2 was released by Vega Labs in 2021.\n\n"
        "## Warranty\n\nVega Labs gives two years of warranty.\n"
    )
    result = run(tmp_path / "docs", n=2, mix="single=1", chunk_size=20, chunk_overlap=0)
    assert {s.reference_context_ids[0] for s in result.samples} <= {
        "phones.md#0",
        "phones.md#1",
    }


def test_mix_and_allocation_are_validated_and_exact():
    assert parse_mix("single_hop=1,comparison=1") == {"single": 0.5, "compare": 0.5}
    with pytest.raises(ValueError, match="unknown synthesizer 'triple'"):
        parse_mix("triple=1")
    with pytest.raises(ValueError, match="NAME=WEIGHT"):
        parse_mix("single")
    with pytest.raises(ValueError, match="at least one synthesizer"):
        parse_mix({"single": 0})
    for n in range(1, 40):
        assert sum(allocate(n, {"single": 0.5, "multi": 0.3, "compare": 0.2}).values()) == n


def test_statements_and_copied_sentences_are_not_questions():
    copied = "Vega Labs is based in Oslo?"  # a sentence of b#0 with a question mark
    judge = scripted_testset_judge(
        question_text=lambda focus, _, contexts: (
            copied if "Oslo" in contexts[0] else f"The facts about {focus}."
        )
    )
    result = run(n=2, mix="single=1", judge=judge, styles=["plain"], attempts_per_question=10)
    assert len(result) == 0
    account = result.accounting.synthesizers["single"]
    assert account.rejected == {"not a question": account.available}


def test_web_search_queries_need_no_question_mark():
    judge = scripted_testset_judge(question_text=lambda focus, _, c: f"{focus} details specs")
    result = run(n=2, mix="single=1", judge=judge, styles=["web"])
    assert len(result) == 2
    assert all(s.style == "web" and not s.user_input.endswith("?") for s in result.samples)


def test_a_synthesizer_stops_at_the_attempt_limit_and_hands_over_its_share():
    judge = scripted_testset_judge(unanswerable=lambda q: "relate through" in q)
    result = run(n=4, mix="single=0.5,multi=0.5", judge=judge, attempts_per_question=2)
    multi = result.accounting.synthesizers["multi"]
    assert len(result) == 4
    assert multi.produced == 0 and multi.stopped
    assert multi.attempted == 2 * 2 < multi.available
    assert multi.gave == {"single": 2}
    assert any(
        note.startswith("multi: 0 of 2: stopped after 4 attempts")
        for note in result.accounting.notes
    )


@pytest.mark.parametrize("reject_share", [0.0, 0.4, 0.8, 1.0])
@pytest.mark.parametrize(
    ("n", "mix"), [(1, "single=1"), (5, None), (12, "multi=0.5,compare=0.5"), (30, None)]
)
def test_the_accounting_always_adds_up(n, mix, reject_share):
    def unanswerable(question: str) -> bool:
        return zlib.crc32(question.encode()) % 100 < reject_share * 100

    chunks = [
        *ENGLISH,
        chunk("x#0", "Plan Alpha Basic costs 10 dollars a month."),
        chunk("y#0", "Plan Alpha Pro costs 25 dollars a month."),
    ]
    result = run(
        chunks,
        n=n,
        mix=mix,
        judge=scripted_testset_judge(unanswerable=unanswerable),
        embeddings=ScriptedEmbeddings(alpha_vectors),
        link=SIMILAR,
    )
    accounting = result.accounting
    accounts = accounting.synthesizers.values()
    assert accounting.produced == len(result) == sum(a.produced for a in accounts) <= n
    assert sum(a.requested for a in accounts) == n
    for name, account in accounting.synthesizers.items():
        assert account.attempted == account.produced + sum(account.rejected.values())
        assert account.attempted <= account.available
        assert account.produced <= account.planned
        if account.produced != account.requested:
            assert account.explain(name) in accounting.notes
    assert sum(sum(a.gave.values()) for a in accounts) == sum(
        sum(a.took.values()) for a in accounts
    )
    if len(result) < n:
        assert accounting.notes[-1].startswith(f"{len(result)} of {n} questions")
    else:
        assert not any("questions:" in note for note in accounting.notes)
