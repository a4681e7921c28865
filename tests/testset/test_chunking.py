"""Chunking: sentence boundaries, sizes, overlap, heading paths, forced splits, determinism."""

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.judge import estimate_tokens
from ragmeter.testset import Chunk, Document, chunk_documents, split_sentences

ZH_SENTENCES = [
    "退货申请须在收货后七天内提交。",
    "商品应保持原包装完好，配件齐全！",
    "客服说：“退款会原路返回。”",
    "您确定要取消订单吗？",
    "优惠券不予退还；积分将被扣回。",
    "特殊商品……不支持无理由退货。",
]
ZH_ENDS = ("。", "！", "？", "；", "…", "”", "」")


def zh_document(repeat=6):
    paragraphs = ["".join(ZH_SENTENCES[i:] + ZH_SENTENCES[:i]) for i in range(repeat)]
    return Document("zh.md", "\n\n".join(paragraphs))


def check_invariants(document, chunks, size, overlap):
    previous = None
    for index, chunk in enumerate(chunks):
        assert chunk.id == f"{document.id}#{index}" and chunk.index == index
        assert chunk.text == document.text[chunk.start : chunk.end] == chunk.text.strip()
        assert chunk.tokens == estimate_tokens(chunk.text) <= size
        if previous is not None and previous.heading_path == chunk.heading_path:
            assert previous.start < chunk.start
            shared = document.text[chunk.start : previous.end] if chunk.start < previous.end else ""
            assert estimate_tokens(shared) <= overlap
        previous = chunk


def test_chinese_chunks_end_at_sentence_ends():
    document = zh_document()
    chunks = chunk_documents([document], size=40, overlap=12)
    assert len(chunks) > 5
    check_invariants(document, chunks, 40, 12)
    for chunk in chunks:
        assert chunk.text.endswith(ZH_ENDS), chunk.text
        # ； ends a sentence too, so a chunk may start after one
        starts = [t for s in ZH_SENTENCES for t in split_sentences(s)]
        assert any(chunk.text.startswith(t) for t in starts), chunk.text


def test_overlap_carries_whole_last_sentences():
    document = zh_document()
    chunks = chunk_documents([document], size=60, overlap=20)
    overlapping = [(a, b) for a, b in itertools.pairwise(chunks) if b.start < a.end]
    assert overlapping
    for a, b in overlapping:
        shared = document.text[b.start : a.end]
        assert a.text.endswith(shared) and b.text.startswith(shared)
        assert shared in split_sentences(a.text) or shared.endswith(ZH_ENDS)
        assert 0 < estimate_tokens(shared) <= 20 and shared != a.text
    no_overlap = chunk_documents([document], size=60, overlap=0)
    assert all(b.start >= a.end for a, b in itertools.pairwise(no_overlap))


def test_english_sentences_and_sizes():
    text = " ".join(
        f"Sentence {i} mentions Dr. Smith, e.g. in the U.S. office, and ends here."
        for i in range(40)
    )
    document = Document("en.txt", text)
    chunks = chunk_documents([document], size=50, overlap=15)
    check_invariants(document, chunks, 50, 15)
    for chunk in chunks:
        assert re.match(r"Sentence \d+ ", chunk.text) and chunk.text.endswith("ends here.")


def test_headings_become_heading_paths_and_are_not_crossed():
    text = (
        "Intro line.\n\n# Returns\n\nReturn within 7 days.\n\n## Refunds\n\nRefunds take 5 days."
        "\n\n```sh\n# a comment, not a heading\necho hi\n```\n\n### Empty\n\n## Exchanges ##\n\n"
        "- Size swaps are free.\n- Colour swaps cost 5 yuan.\n\n# 常见问题\n\n能退吗？能。"
    )
    chunks = chunk_documents([Document("faq.md", text)], size=400, overlap=50)
    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Intro line."),
        (("Returns",), "Return within 7 days."),
        (
            ("Returns", "Refunds"),
            "Refunds take 5 days.\n\n```sh\n# a comment, not a heading\necho hi\n```",
        ),
        (("Returns", "Exchanges"), "- Size swaps are free.\n- Colour swaps cost 5 yuan."),
        (("常见问题",), "能退吗？能。"),
    ]


def test_paragraphs_that_fit_are_kept_whole():
    first = "One two three four five six seven eight. " * 3
    second = "Nine ten eleven twelve thirteen. " * 3
    document = Document("p.txt", f"{first.strip()}\n\n{second.strip()}")
    size = estimate_tokens(first) + 4
    chunks = chunk_documents([document], size=size, overlap=0)
    assert [c.text for c in chunks] == [first.strip(), second.strip()]


def test_a_giant_sentence_is_split_at_commas_then_by_tokens():
    clauses = "，".join(f"第{i}条规定适用于所有订单" for i in range(30)) + "。"
    document = Document("long.txt", f"短句。{clauses}短句二。")
    chunks = chunk_documents([document], size=30, overlap=0)
    check_invariants(document, chunks, 30, 0)
    inner = [c.text for c in chunks if c.text not in ("短句。", "短句二。")]
    assert len(inner) > 3 and all(t.endswith(("，", "。")) for t in inner)

    word_salad = Document("w.txt", "x" * 500 + " " + "word " * 300)
    chunks = chunk_documents([word_salad], size=20, overlap=5)
    check_invariants(word_salad, chunks, 20, 5)
    assert "".join(c.text for c in chunks).replace(" ", "") == word_salad.text.replace(" ", "")
    # one sentence with no commas: a word too long is cut between characters, the rest
    # between words
    assert [c.text for c in chunks[:6]] == ["x" * 80] * 6
    assert chunks[6].text.startswith("x" * 20 + " word")
    assert all(re.fullmatch(r"word( word)*", c.text) for c in chunks[7:])


def test_empty_documents_and_heading_only_sections_give_no_chunks():
    docs = [Document("e", ""), Document("w", " \n\n\t"), Document("h", "# Title\n\n## Sub\n")]
    assert chunk_documents(docs) == []


def test_output_is_deterministic_and_ids_are_per_document():
    docs = [zh_document(), Document("b.md", "# B\n\nShort one. Short two.")]
    first = chunk_documents(docs, size=40, overlap=10)
    assert first == chunk_documents(docs, size=40, overlap=10)
    assert first[-1] == Chunk("b.md#0", "b.md", "Short one. Short two.", 0, 5, 26, ("B",), 6)


def test_custom_tokenizer_is_used():
    words = lambda text: len(text.split())  # noqa: E731
    document = Document("t", "a b c. d e f. g h i. j k l.")
    chunks = chunk_documents([document], size=6, overlap=3, tokenizer=words)
    assert [c.text for c in chunks] == ["a b c. d e f.", "d e f. g h i.", "g h i. j k l."]
    assert [c.tokens for c in chunks] == [6, 6, 6]


def test_invalid_sizes():
    with pytest.raises(ValueError, match="size must be at least 1"):
        chunk_documents([], size=0)
    with pytest.raises(ValueError, match="overlap must be between 0 and size - 1"):
        chunk_documents([], size=10, overlap=10)


def test_split_sentences():
    assert split_sentences("他问：「能退吗？」她说能。Version 2.5 is out! See e.g. the docs.") == [
        "他问：「能退吗？」",
        "她说能。",
        "Version 2.5 is out!",
        "See e.g. the docs.",
    ]


sentence = st.one_of(
    st.sampled_from(ZH_SENTENCES),
    st.from_regex(r"[A-Z][a-z]{1,8}( [a-z]{1,10}){0,12}[.!?]", fullmatch=True),
    st.from_regex(r"[\u4e00-\u4e20]{1,30}[，、]?[\u4e00-\u4e20]{0,30}[。！？]", fullmatch=True),
)
paragraph = st.lists(sentence, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    paragraphs=st.lists(paragraph, min_size=1, max_size=6),
    size=st.integers(min_value=8, max_value=80),
    overlap_share=st.floats(min_value=0, max_value=0.9),
)
def test_chunks_without_overlap_reproduce_the_sentences_in_order(paragraphs, size, overlap_share):
    document = Document("p.md", "\n\n".join(paragraphs))
    overlap = int(size * overlap_share)
    chunks = chunk_documents([document], size=size, overlap=overlap)
    check_invariants(document, chunks, size, overlap)
    pieces, covered = [], 0
    for chunk in chunks:
        pieces.append(document.text[max(chunk.start, covered) : chunk.end])
        covered = chunk.end
    squash = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    assert squash("".join(pieces)) == squash(document.text)
    assert squash("".join(split_sentences(" ".join(pieces)))) == squash(
        "".join(split_sentences(document.text))
    )
