"""Evidence selection for one-at-a-time verdicts (steps/_evidence.py)."""

from __future__ import annotations

from ragmeter.steps._evidence import GAP, select_evidence  # private: the embedded judge's evidence

VENICE = (
    "The 80th Venice International Film Festival will be held from 30 August to 9 September "
    "2023. Comandante, directed by Edoardo De Angelis, will serve as the opening film. "
    + "The festival is one of the oldest in the world and shows films from many countries. " * 8
    + "Tickets went on sale in July."
)


def test_a_passage_that_fits_is_returned_unchanged() -> None:
    assert select_evidence("anything", "Short passage. Two sentences.") == (
        "Short passage. Two sentences."
    )


def test_the_sentences_sharing_rare_words_with_the_claim_are_kept_in_order() -> None:
    evidence = select_evidence("Comandante opens the festival on 30 August 2023", VENICE, 200)
    assert evidence.startswith("The 80th Venice International Film Festival will be held")
    assert "Comandante, directed by Edoardo De Angelis" in evidence
    assert "Tickets" not in evidence
    assert len(evidence) <= 200


def test_non_adjacent_sentences_are_joined_with_a_gap_mark() -> None:
    evidence = select_evidence("Tickets sale July; Comandante Edoardo", VENICE, 200)
    assert evidence == (
        "Comandante, directed by Edoardo De Angelis, will serve as the opening film."
        f"{GAP}Tickets went on sale in July."
    )


def test_at_least_one_sentence_even_when_it_is_longer_than_the_budget() -> None:
    assert select_evidence("Comandante", VENICE, 20) == (
        "Comandante, directed by Edoardo De Angelis, will serve as the opening film."
    )


def test_chinese_is_matched_on_character_bigrams() -> None:
    passage = "。".join(
        ["香港立法会议员的宣誓仪式将在2022年1月3日举行", "宣誓前议员面向国旗肃立"]
        + ["会议厅主席位上方悬挂国徽，两旁立着国旗和区旗"] * 6
    )
    evidence = select_evidence("宣誓仪式的时间 1月3日", passage, 60)
    assert evidence.startswith("香港立法会议员的宣誓仪式将在2022年1月3日举行")


def test_line_breaks_separate_sentences() -> None:
    passage = (
        "Header line without a stop\n"
        + "Filler sentence here. " * 30
        + "\nMount Brown is 2,121 m high."
    )
    assert select_evidence("Mount Brown elevation 2,121 m", passage, 60) == (
        "Mount Brown is 2,121 m high."
    )
