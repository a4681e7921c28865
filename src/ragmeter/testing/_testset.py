"""A scripted judge for test-set generation: it reads the prompt's data blocks and answers
every generation step deterministically, like a careful (if unimaginative) model.

* chunk analysis: the first sentence as summary; capitalised words and ``[[marked]]`` names
  as entities; the entities again as keyphrases;
* personas: ``n`` numbered personas;
* questions: built from the focus, in the passages' language; the answer is the first
  sentence of every passage, so it is supported by each of them;
* answerability (reference statements attributed to contexts): one statement per sentence
  of the answer, supported by the contexts that contain it.

* answer relevance (the answer as the passage): relevant.

``unanswerable`` (a predicate on the question) makes the answer invent a fact instead,
``off_topic`` makes the answer not answer its question, and ``question_text`` overrides the
question, to test the filters.

The adversarial tasks, each with a switch (a predicate on the question) that forces the
failure its check must catch:

* ``unanswerable``: asks which colours the focus comes in, and abstains; no passage answers
  it (``answer_in_corpus``: every passage does);
* ``false_premise``: asks why the focus was discontinued (premise "... was discontinued")
  and answers with the passage's first sentence (``supported_premise``: the premise is the
  passage's first sentence, so the passage supports it);
* ``calculation``: adds the first number of each passage (the first two of a single
  passage) and shows ``a + b = result`` (``misquoted_value``: the first value is not in its
  passage; ``wrong_arithmetic``: the result is off by one);
* ``temporal``: asks what happened at the focus (a date, version or condition phrase)
  (``no_temporal``, a predicate on the focus: the question names none);
* claims against passages (``verify``): supported by the passages that contain the claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from ragmeter._text import normalize
from ragmeter.judge import Message
from ragmeter.prompts import detect_language
from ragmeter.testing._scripted import ScriptedJudge
from ragmeter.testset import split_sentences

_BLOCK = re.compile(r"<(\w+)>\n(.*?)\n</\1>", re.DOTALL)
_ITEM = re.compile(r'<item index="\d+">(.*?)</item>', re.DOTALL)
_ENTITY = re.compile(r"\[\[(.+?)\]\]|\b([A-Z][A-Za-z0-9]+(?:[ -][A-Z0-9][A-Za-z0-9]*)*)")
_TASK = re.compile(r'(?:Task|任务) "(\w+)"')
_WRITTEN_NUMBER = re.compile(r"(?<![A-Za-z\d.])\d+(?:[.,]\d+)*")
_STOP = {"The", "A", "An", "It", "In", "On", "Of", "And", "For", "This", "That", "What", "How"}


_UNANSWERABLE = re.compile(r"^Which colours does .* come in\?$|有哪些颜色可选？$")
_ADVERSARIAL = ("unanswerable", "false_premise", "calculation", "temporal")


def data_blocks(messages: Sequence[Message]) -> dict[str, Any]:
    """The data blocks of the last user message: strings, or lists for numbered items."""
    text = messages[-1].content
    blocks: dict[str, Any] = {}
    for name, body in _BLOCK.findall(text):
        items = _ITEM.findall(body)
        blocks[name] = items if items else body
    return blocks


def entities_in(text: str) -> list[str]:
    """``[[marked]]`` names and capitalised words, in order, without repeats.

    >>> entities_in("[[听澜科技]] makes Orion X2 for Vega Labs. The end.")
    ['听澜科技', 'Orion X2', 'Vega Labs']
    """
    found: dict[str, None] = {}
    for marked, word in _ENTITY.findall(text):
        name = marked or word
        if name and name not in _STOP:
            found[name] = None
    return list(found)


def _containing(text: str, passages: Sequence[str]) -> list[int]:
    """The numbers (from 1) of the passages that contain ``text``, both normalised."""
    return [
        i for i, passage in enumerate(passages, start=1) if normalize(text) in normalize(passage)
    ]


def _first_sentence(text: str) -> str:
    sentences = split_sentences(text)
    return (sentences[0] if sentences else text).strip()


def _calculation(
    focus: str,
    contexts: list[str],
    zh: bool,
    misquoted_value: Callable[[str], bool] | None,
    wrong_arithmetic: Callable[[str], bool] | None,
) -> dict[str, Any]:
    """The calculation task's answer: the first two numbers of the contexts added up (one
    per context when there are several), a value or the sum made wrong where asked."""
    question = (
        f"{focus}相关的两个数字加起来是多少？"
        if zh
        else f"What do the two numbers about {focus} add up to?"
    )
    found = [
        (number, i)
        for i, context in enumerate(contexts, start=1)
        for number in _WRITTEN_NUMBER.findall(context)[: 1 if len(contexts) > 1 else 2]
    ][:2]
    values = [{"value": number, "passage": i} for number, i in found]
    numbers = [float(number.replace(",", "")) for number, _ in found]
    result = sum(numbers)
    if misquoted_value is not None and misquoted_value(question):
        values[0]["value"] = "987654"
    if wrong_arithmetic is not None and wrong_arithmetic(question):
        result += 1
    expression = " + ".join(str(v["value"]) for v in values)
    answer = f"{expression} = {result:g}。" if zh else f"{expression} = {result:g}."
    return {
        "question": question,
        "values": values,
        "expression": expression,
        "answer": answer,
    }


def generation_responder(
    *,
    unanswerable: Callable[[str], bool] | None = None,
    question_text: Callable[[str, str, list[str]], str] | None = None,
    off_topic: Callable[[str], bool] | None = None,
    answer_in_corpus: Callable[[str], bool] | None = None,
    supported_premise: Callable[[str], bool] | None = None,
    misquoted_value: Callable[[str], bool] | None = None,
    wrong_arithmetic: Callable[[str], bool] | None = None,
    no_temporal: Callable[[str], bool] | None = None,
) -> Callable[[Sequence[Message], type[BaseModel]], dict[str, Any]]:
    """The responder of :func:`scripted_testset_judge` (see the module docstring)."""

    def adversarial(task: str, focus: str, contexts: list[str], zh: bool) -> dict[str, Any]:
        first = _first_sentence(contexts[0])
        if task == "unanswerable":
            question = f"{focus}有哪些颜色可选？" if zh else f"Which colours does {focus} come in?"
            answer = (
                f"文档没有说明{focus}有哪些颜色可选。"
                if zh
                else f"The documents do not say which colours {focus} comes in."
            )
            return {"question": question, "answer": answer}
        if task == "false_premise":
            question = f"{focus}为什么停产了？" if zh else f"Why was {focus} discontinued?"
            premise = f"{focus}已经停产。" if zh else f"{focus} was discontinued."
            if supported_premise is not None and supported_premise(question):
                premise = first
            return {"question": question, "premise": premise, "answer": first}
        if task == "calculation":
            return _calculation(focus, contexts, zh, misquoted_value, wrong_arithmetic)
        # temporal
        if no_temporal is not None and no_temporal(f"{focus}"):
            names = entities_in(contexts[0]) or [focus]
            question = f"{names[0]}有什么新情况？" if zh else f"What is new about {names[0]}?"
        else:
            question = f"{focus}有什么变化？" if zh else f"What happened {focus}?"
        return {"question": question, "answer": " ".join(_first_sentence(c) for c in contexts)}

    def respond(messages: Sequence[Message], schema: type[BaseModel]) -> dict[str, Any]:
        blocks = data_blocks(messages)
        fields = set(schema.model_fields)
        if {"summary", "keyphrases", "entities"} <= fields:
            passage = blocks["passage"]
            names = entities_in(passage)
            return {
                "summary": _first_sentence(passage),
                "keyphrases": names[:5],
                "entities": names[:8],
            }
        if "personas" in fields:
            n = int(re.search(r"(\d+)", messages[0].content.split('"personas"')[1]).group(1))  # type: ignore[union-attr]
            return {
                "personas": [
                    {"name": f"Persona {i + 1}", "description": f"asks about topic {i + 1}"}
                    for i in range(n)
                ]
            }
        if {"question", "answer"} <= fields:
            focus = blocks["focus"]
            contexts = blocks["contexts"]
            zh = detect_language(*contexts) == "zh"
            task = _TASK.search(messages[0].content)
            if task is not None and task.group(1) in _ADVERSARIAL:
                return adversarial(task.group(1), focus, contexts, zh)
            if question_text is not None:
                question = question_text(focus, messages[0].content, contexts)
            elif len(contexts) == 1:
                question = f"{focus}有什么相关信息？" if zh else f"What is known about {focus}?"
            else:
                # Name every passage's first words, so questions from other pairs differ.
                starts = (
                    "、".join(c[:12] for c in contexts)
                    if zh
                    else " / ".join(" ".join(c.split()[:4]) for c in contexts)
                )
                question = (
                    f"{focus}在（{starts}）之间有什么联系？"
                    if zh
                    else f"How do {starts} relate through {focus}?"
                )
            answer = " ".join(_first_sentence(c) for c in contexts)
            if unanswerable is not None and unanswerable(question):
                answer = "这是编造的事实。" if zh else "This fact is made up."
            return {"question": question, "answer": answer}
        if fields == {"usefulness"}:  # does each text (the answer, or chunks) answer it?
            question = blocks["question"]
            if _UNANSWERABLE.search(question):  # written by the unanswerable task
                useful = int(answer_in_corpus is not None and answer_in_corpus(question))
            else:
                useful = 0 if off_topic is not None and off_topic(question) else 1
            return {
                "usefulness": [
                    {"index": i, "useful": useful, "reason": ""}
                    for i in range(1, len(blocks["contexts"]) + 1)
                ]
            }
        if fields == {"support"}:  # which passages state each claim
            passages = blocks["passages"]
            return {
                "support": [
                    {"claim": i, "passages": _containing(claim, passages), "reason": ""}
                    for i, claim in enumerate(blocks["claims"], start=1)
                ]
            }
        if "statements" in fields:
            contexts = blocks.get("contexts", [])
            reference = blocks["reference"]
            return {
                "statements": [
                    {"text": sentence, "contexts": _containing(sentence, contexts)}
                    for sentence in split_sentences(reference)
                ]
            }
        raise AssertionError(f"the scripted test-set judge has no answer for {schema.__name__}")

    return respond


def scripted_testset_judge(**options: Any) -> ScriptedJudge:
    """A :class:`ScriptedJudge` answering every test-set generation step (see the module
    docstring); ``options`` go to :func:`generation_responder`, ``record_calls`` to the judge."""
    record_calls = options.pop("record_calls", True)
    return ScriptedJudge(
        generation_responder(**options), name="scripted-testset", record_calls=record_calls
    )
