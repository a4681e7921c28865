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
_STOP = {"The", "A", "An", "It", "In", "On", "Of", "And", "For", "This", "That", "What", "How"}


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


def _first_sentence(text: str) -> str:
    sentences = split_sentences(text)
    return (sentences[0] if sentences else text).strip()


def generation_responder(
    *,
    unanswerable: Callable[[str], bool] | None = None,
    question_text: Callable[[str, str, list[str]], str] | None = None,
    off_topic: Callable[[str], bool] | None = None,
) -> Callable[[Sequence[Message], type[BaseModel]], dict[str, Any]]:
    """The responder of :func:`scripted_testset_judge` (see the module docstring)."""

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
        if fields == {"usefulness"}:  # does the text (the answer) answer the question?
            question = blocks["question"]
            useful = 0 if off_topic is not None and off_topic(question) else 1
            return {"usefulness": [{"index": 1, "useful": useful, "reason": ""}]}
        if "statements" in fields:
            contexts = blocks.get("contexts", [])
            reference = blocks["reference"]
            return {
                "statements": [
                    {
                        "text": sentence,
                        "contexts": [
                            i
                            for i, context in enumerate(contexts, start=1)
                            if normalize(sentence) in normalize(context)
                        ],
                    }
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
