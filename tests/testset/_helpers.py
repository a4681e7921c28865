"""Small corpora and helpers shared by the test-set tests."""

from __future__ import annotations

from ragmeter.testset import Chunk


def chunk(chunk_id: str, text: str, *, document: str | None = None, index: int = 0) -> Chunk:
    document_id = document or chunk_id.split("#")[0]
    return Chunk(chunk_id, document_id, text, index, 0, len(text))


#: Four chunks in two documents: Vega Labs links a#0, a#2 and b#0 (a#1 sits between a#0
#: and a#2, so a#0-a#2 is not an overlap); Orion X2 links a#0 and b#1.
ENGLISH = [
    chunk("a#0", "Orion X2 was released by Vega Labs in March 2021. It costs 399 dollars."),
    chunk("a#1", "The battery of the phone lasts two days.", index=1),
    chunk("a#2", "Vega Labs opened a store in Bergen in 2023.", index=2),
    chunk("b#0", "Vega Labs is based in Oslo. It gives a two-year warranty."),
    chunk("b#1", "Orion X2 has a 6.1 inch screen. Support is open on weekdays.", index=1),
]

#: The same shape in Chinese; [[marked]] names are the scripted judge's entities.
CHINESE = [
    chunk("zh-a#0", "[[星河耳机]]由[[听澜科技]]于 2022 年 5 月发布。售价 499 元。"),
    chunk("zh-a#1", "耳机的电池续航为 30 小时。", index=1),
    chunk("zh-a#2", "[[听澜科技]]在 2023 年开设了上海门店。", index=2),
    chunk("zh-b#0", "[[听澜科技]]总部位于杭州。所有产品保修两年。"),
    chunk("zh-b#1", "[[星河耳机]]支持蓝牙 5.3。客服工作日在线。", index=1),
]
