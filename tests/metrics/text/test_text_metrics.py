import pytest
import sacrebleu

from ragmeter import Sample, Status
from ragmeter.metrics.text import BLEU, ChrF, ExactMatch, Rouge, StringPresence, tokenize


def test_exact_match_normalises_width_case_and_spaces():
    assert ExactMatch().compare("ＰＡＲＩＳ ", "paris").score == 1.0
    assert ExactMatch().compare("Paris.", "Paris").score == 0.0


def test_string_presence():
    assert StringPresence().compare("It is Paris, France", "paris").score == 1.0
    assert StringPresence().compare("Lyon", "Paris").score == 0.0


def test_empty_reference_is_not_applicable():
    result = ExactMatch().score(Sample(response="x", reference="  "))
    assert result.status is Status.NOT_APPLICABLE


def test_tokenize_splits_chinese_into_characters_and_keeps_words():
    assert tokenize("检索增强 RAG-system，好！") == ["检", "索", "增", "强", "rag", "system", "好"]


def test_jieba_tokenizer_segments_words():
    pytest.importorskip("jieba")
    tokens = tokenize("检索增强生成技术", "jieba")
    assert "".join(tokens) == "检索增强生成技术"
    assert len(tokens) < 8  # words, not characters


def test_rouge_l_hand_computed():
    # candidate a b c d e, reference a x c y e: LCS = a c e -> P = R = F = 3/5
    result = Rouge().compare("a b c d e", "a x c y e")
    assert result.score == pytest.approx(0.6)
    assert Rouge(mode="recall").compare("a b", "a b c d").score == pytest.approx(0.5)
    assert Rouge(mode="precision").compare("a b", "a b c d").score == 1.0


def test_rouge_n_counts_clipped_ngrams():
    # unigrams: cand {the:2, cat:1}, ref {the:1, cat:1, sat:1} -> 2 matches; P 2/3, R 2/3
    assert Rouge("rouge_1").compare("the the cat", "the cat sat").score == pytest.approx(2 / 3)
    # bigrams: cand {the the, the cat}, ref {the cat, cat sat} -> 1 match of 2 and 2
    assert Rouge("rouge_2").compare("the the cat", "the cat sat").score == pytest.approx(0.5)


def test_rouge_on_chinese_scores_characters():
    assert Rouge().compare("巴黎是法国首都", "法国的首都是巴黎").score > 0.4


@pytest.mark.parametrize(
    ("hypothesis", "reference", "tokenize"),
    [
        ("The cat sat on the mat.", "The cat is sitting on the mat.", "13a"),
        ("RAG 通过检索外部知识增强回答。", "RAG 通过检索外部知识来增强 LLM 的回答质量。", "zh"),
    ],
)
def test_bleu_is_sacrebleu_sentence_bleu_with_the_right_tokenizer(hypothesis, reference, tokenize):
    expected = sacrebleu.sentence_bleu(hypothesis, [reference], tokenize=tokenize).score / 100
    result = BLEU().compare(hypothesis, reference)
    assert result.score == pytest.approx(expected)
    assert result.details["tokenize"] == tokenize


def test_bleu_on_chinese_is_not_zero_without_spaces():
    hypothesis, reference = "检索增强生成提高回答质量", "检索增强生成可以提高回答的质量"
    assert BLEU().compare(hypothesis, reference).score > 0.1
    # 13a would see one token per sentence and score (almost) nothing
    assert BLEU(tokenize="13a").compare(hypothesis, reference).score < 0.05


def test_chrf_is_sacrebleu_sentence_chrf():
    hypothesis, reference = "检索增强生成提高回答质量", "检索增强生成可以提高回答的质量"
    expected = sacrebleu.sentence_chrf(hypothesis, [reference]).score / 100
    assert ChrF().compare(hypothesis, reference).score == pytest.approx(expected)
    plus = sacrebleu.sentence_chrf(hypothesis, [reference], word_order=2).score / 100
    assert ChrF(word_order=2).compare(hypothesis, reference).score == pytest.approx(plus)
    assert ChrF(word_order=2).name == "chrf++"


def test_perfect_match_scores_exactly_one():
    for text in ("Paris", "The cat sat on the mat.", "检索增强生成"):
        assert BLEU().compare(text, text).score <= 1.0
        assert ChrF().compare(text, text).score <= 1.0
