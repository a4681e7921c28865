"""A deterministic offline judge for CI: every built-in judgment and test-set generation call
answered with a plausible, schema-valid answer, from word overlap alone.

It is no judge of quality: it checks a pipeline's *wiring* (the data reaches the metrics, every
metric is computed, the gate and the report run) without a paid endpoint or a model download.
The answer to a chat request fills the request's JSON schema (``response_format:
json_schema``) from the data blocks of the **last** user message (few-shot examples reuse
the same tags in earlier messages):

* ``claims``: the answer's sentences; ``questions``: the answer's sentences turned into
  questions; ``noncommittal`` / ``abstains``: hedge phrases ("I don't know", "没有说明");
* ``support`` (claims against passages), ``statements`` (the reference's sentences against
  the contexts), ``verdict``: a text supports a claim when most of the claim's words occur
  in it;
* ``usefulness``: a context is useful when it shares enough words with the reference, else
  the answer, else the question;
* ``entities``: the reference's names and numbers, found in the contexts or not;
* custom prompt metrics: a label, score or rubric level from the share of the response's
  words found in the other fields; a ranking by overlap with the question;
* test-set generation (chunk analysis, personas, questions): :func:`generation_responder`;
* ``ragmeter judge check``: its four yes/no questions from a table of their known answers
  (:data:`JUDGE_CHECK_ANSWERS`), its claims check from the message's sentences.

Words are lower-cased Latin words and digits, and pairs of adjacent CJK characters.
Embeddings (:func:`fake_embedding`) are hashed bags of those words, so texts sharing words
are close. :class:`FakeJudgeServer` serves both (``ragmeter judge serve --fake``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from ragmeter.testing._fake_server import FakeOpenAIServer
from ragmeter.testing._testset import entities_in, generation_responder
from ragmeter.testset import split_sentences

#: The model name the fake judge and its embeddings answer as.
FAKE_JUDGE_MODEL = "ragmeter-fake-judge"
FAKE_EMBEDDINGS_MODEL = "ragmeter-fake-embeddings"
#: The API key the server accepts (any key is accepted; clients want one to send).
FAKE_API_KEY = "fake-key"

_BLOCK = re.compile(r"<(\w+)>\n(.*?)\n</\1>", re.DOTALL)
_ITEM = re.compile(r'<item index="\d+">(.*?)</item>', re.DOTALL)
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+|\d+(?:[.,]\d+)*|[\u3400-\u9fff\uf900-\ufaff]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:\s?[A-Za-z%]+|\s?[\u4e00-\u9fff])?")
_STOP_WORDS = (
    "a an the is are was were be been it its this that of to in on at for and or but with by "
    "as from do does did can could will would should may might i you we they he she what "
    "which who when where how why about any all there their your our not no yes"
)
_STOP = frozenset(_STOP_WORDS.split())
_HEDGES = (
    "i don't know",
    "i do not know",
    "not sure",
    "cannot find",
    "can't find",
    "could not find",
    "couldn't find",
    "do not say",
    "does not say",
    "don't say",
    "no information",
    "not mentioned",
    "not provided",
    "i'm sorry",
    "unable to",
    "没有说明",
    "没有提到",
    "不知道",
    "不确定",
    "无法回答",
    "无法确定",
    "没有相关",
    "抱歉",
)
#: Share of a claim's words a passage must hold to support it.
SUPPORT_SHARE = 0.6
#: Share of words a context and its target must share to be useful.
USEFUL_SHARE = 0.3
_generate = generation_responder()
#: The known answers of ``ragmeter judge check``'s yes/no questions (knowledge no word
#: overlap gives), so that the check passes against the fake judge too; any other question
#: without data blocks is answered no.
JUDGE_CHECK_ANSWERS = {
    "Is Paris the capital of France?": 1,
    "Is the Pacific the smallest ocean?": 0,
    "北京是中国的首都吗？": 1,
    "太阳从西边升起吗？": 0,
}


def words(text: str) -> list[str]:
    """The words overlap is counted on: lower-cased Latin words and numbers (stop words
    left out), and every pair of adjacent CJK characters (a lone one as itself).

    >>> words("The warranty lasts 1 year; 保修一年")
    ['warranty', 'lasts', '1', 'year', '保修', '修一', '一年']
    """
    found: list[str] = []
    for run in _WORD.findall(text):
        if _CJK.match(run):
            found.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        elif run.lower() not in _STOP:
            found.append(run.lower())
    return found


def share(part: str, whole: str) -> float:
    """The share of ``part``'s distinct words that occur in ``whole`` (0 when it has none)."""
    mine = set(words(part))
    return len(mine & set(words(whole))) / len(mine) if mine else 0.0


def fake_embedding(text: str, dimensions: int = 256) -> list[float]:
    """A unit vector: the hashed bag of ``text``'s :func:`words` (texts sharing words are
    close); a text without words gets a vector from its hash."""
    vector = [0.0] * dimensions
    for word in words(text):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "big") % dimensions
        vector[index] += 1.0 if digest[4] % 2 else -1.0
    if not any(vector):
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        vector[int.from_bytes(digest[:4], "big") % dimensions] = 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


def _blocks(text: str) -> dict[str, Any]:
    blocks: dict[str, Any] = {}
    for name, body in _BLOCK.findall(text):
        items = _ITEM.findall(body)
        blocks[name] = items if items or body.startswith("<item") else body
    return blocks


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return ""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in split_sentences(text) if s.strip()] or [text.strip()]


def _hedges(text: str) -> bool:
    lowered = text.lower().replace("’", "'")
    return any(h in lowered for h in _HEDGES)


def _question_from(sentence: str) -> str:
    core = sentence.strip().rstrip(".!?。！？")
    if _CJK.search(core):
        return f"{core}吗？"
    return f"Is it true that {core[:1].lower()}{core[1:]}?"


def _supporting(claim: str, passages: Sequence[str]) -> list[int]:
    """The passages holding most of ``claim``'s words; else, for a claim drawn from several
    passages (multi-hop), the passages holding a part of them that together hold most."""
    shares = [share(claim, p) for p in passages]
    alone = [i for i, s in enumerate(shares, start=1) if s >= SUPPORT_SHARE]
    # the passages may come from several sources (the reference, the contexts): the parts
    # are looked for among the passages that do not support it alone
    parts = [i for i, s in enumerate(shares, start=1) if USEFUL_SHARE <= s < SUPPORT_SHARE]
    together = "\n".join(passages[i - 1] for i in parts)
    if len(parts) > 1 and share(claim, together) >= SUPPORT_SHARE:
        return sorted(alone + parts)
    return alone


def _joined(value: Any) -> str:
    return "\n".join(value) if isinstance(value, list) else str(value or "")


class _Task:
    """One request: its data blocks, its system text and its schema's definitions."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        self.data = _text_of(users[-1].get("content")) if users else ""
        self.system = " ".join(
            _text_of(m.get("content")) for m in messages if m.get("role") == "system"
        )
        self.blocks = _blocks(self.data)
        self.answer = _joined(self.blocks.get("answer", self.blocks.get("response", "")))
        self.question = _joined(self.blocks.get("question", self.blocks.get("user_input", "")))
        self.reference = _joined(self.blocks.get("reference", ""))
        contexts = self.blocks.get("contexts", self.blocks.get("retrieved_contexts", []))
        self.contexts: list[str] = contexts if isinstance(contexts, list) else [contexts]
        self.defs: dict[str, Any] = {}

    def questions_wanted(self) -> int:
        at = self.system.find('"questions"')
        found = re.search(r"\d+", self.system[at:]) if at >= 0 else None
        return int(found.group()) if found else 3

    def usefulness(self) -> list[dict[str, Any]]:
        target = self.reference or self.answer or self.question
        verdicts = []
        for i, context in enumerate(self.contexts, start=1):
            overlap = max(share(target, context), share(context, target))
            useful = int(bool(target) and overlap >= USEFUL_SHARE)
            reason = f"It shares {overlap:.0%} of its words with the text it is checked against."
            verdicts.append({"index": i, "useful": useful, "reason": reason})
        return verdicts

    def support(self) -> list[dict[str, Any]]:
        claims = self.blocks.get("claims", [])
        claims = claims if isinstance(claims, list) else [claims]
        passages = self.blocks.get("passages", [])
        passages = passages if isinstance(passages, list) else [passages]
        out = []
        for i, claim in enumerate(claims, start=1):
            found = _supporting(claim, passages)
            reason = f"Passage {found[0]} holds most of its words." if found else "No passage does."
            out.append({"claim": i, "passages": found, "reason": reason})
        return out

    def statements(self) -> list[dict[str, Any]]:
        return [
            {"text": s, "contexts": _supporting(s, self.contexts)}
            for s in _sentences(self.reference)
            if self.reference.strip()
        ]

    def entities(self) -> list[dict[str, Any]]:
        names = entities_in(self.reference) + [n.strip() for n in _NUMBER.findall(self.reference)]
        if not names:
            names = sorted(set(words(self.reference)), key=words(self.reference).index)[:2]
        context = " ".join(self.contexts).lower()
        unique = list(dict.fromkeys(names))
        return [{"entity": n, "in_contexts": int(n.lower() in context)} for n in unique]

    def verdict(self) -> int:
        if not self.blocks:  # a bare question: only those of ``ragmeter judge check``
            return JUDGE_CHECK_ANSWERS.get(self.data.strip(), 0)
        claim = _joined(self.blocks.get("statement", "")) or self.answer or self.question
        text = _joined(self.blocks.get("text", "")) or " ".join(self.contexts)
        return int(bool(claim) and share(claim, text) >= SUPPORT_SHARE)

    def quality(self) -> float:
        """For custom metrics: the share of the response's words found in the other
        fields (the reference, contexts, question)."""
        others = [_joined(v) for k, v in self.blocks.items() if k not in ("answer", "response")]
        if not self.answer:
            return 0.5
        return share(self.answer, "\n".join(others)) if others else 0.5

    def ranking(self) -> list[int]:
        items = next((v for v in self.blocks.values() if isinstance(v, list)), [])
        target = self.question or self.answer
        order = sorted(range(len(items)), key=lambda i: -share(target, items[i]))
        return [i + 1 for i in order]


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
            return _resolve(usable[0] if usable else options[0], defs)
    return schema


def _generic(schema: Mapping[str, Any], task: _Task) -> Any:
    """A valid value of ``schema`` when no field name says what it means."""
    schema = _resolve(schema, task.defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {name: _generic(sub, task) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 1)))
        middle = (low + high) / 2
        return int(middle) if kind == "integer" else middle
    if kind == "boolean":
        return True
    return _sentences(task.answer or task.question or task.data or "ok")[0]


def _scaled(schema: Mapping[str, Any], task: _Task, quality: float) -> Any:
    """A custom metric's ``label`` / ``score``: best-first labels and rubric levels picked,
    a number placed, by ``quality`` (0 to 1)."""
    schema = _resolve(schema, task.defs)
    if "enum" in schema:
        values = list(schema["enum"])
        if all(isinstance(v, (int, float)) for v in values):  # rubric levels
            low, high = min(values), max(values)
            goal = low + quality * (high - low)
            return min(values, key=lambda v: (abs(v - goal), -v))
        return values[round((1.0 - quality) * (len(values) - 1))]  # labels, best first
    if schema.get("type") in ("number", "integer"):
        low = float(schema.get("minimum", 0.0))
        high = float(schema.get("maximum", max(low + 1.0, 1.0)))
        value = round(low + quality * (high - low), 2)
        return round(value) if schema.get("type") == "integer" else value
    return _generic(schema, task)


def _field(name: str, schema: Mapping[str, Any], task: _Task) -> Any:
    """The answer to one top-level field, by what its name means in ragmeter's prompts."""
    if name == "claims":
        text = task.answer if task.blocks else task.data  # no blocks: the message is the text
        return [] if _hedges(text) or not text.strip() else _sentences(text)
    if name == "questions":
        sentences = _sentences(task.answer or task.question)
        wanted = task.questions_wanted()
        return [_question_from(sentences[i % len(sentences)]) for i in range(wanted)]
    if name == "noncommittal":
        return int(_hedges(task.answer))
    if name == "abstains":
        return int(_hedges(task.answer) or not task.answer.strip())
    if name == "abstains_reason":
        return "It says it does not know." if _hedges(task.answer) else "It answers."
    if name == "standalone":
        return task.question
    if name == "usefulness":
        return task.usefulness()
    if name == "support":
        return task.support()
    if name == "statements":
        return task.statements()
    if name == "entities" and "reference" in task.blocks:
        return task.entities()
    if name == "verdict":
        return task.verdict()
    if name in ("label", "score"):
        return _scaled(schema, task, task.quality())
    if name == "ranking":
        return task.ranking()
    if name == "reason":
        return "Scored by word overlap (ragmeter's fake judge)."
    return _generic(schema, task)


def fake_judge_answer(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fake judge's answer (a JSON object) to an OpenAI chat-completions request body."""
    task = _Task(body)
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if not isinstance(schema, dict):
        return {"verdict": task.verdict(), "reason": "no schema was given"}
    task.defs = dict(schema.get("$defs") or schema.get("definitions") or {})
    properties: dict[str, Any] = dict(_resolve(schema, task.defs).get("properties") or {})
    fields = set(properties)
    generation = (
        {"summary", "keyphrases"} <= fields
        or "personas" in fields
        or ({"question", "answer"} <= fields and "focus" in task.blocks)
    )
    if generation:
        messages = [
            SimpleNamespace(content=_text_of(m.get("content")))
            for m in body.get("messages") or []
            if isinstance(m, dict)
        ]
        shim = SimpleNamespace(__name__=schema.get("title", "answer"), model_fields=properties)
        return dict(_generate(messages, shim))  # type: ignore[arg-type]
    return {name: _field(name, sub, task) for name, sub in properties.items()}


def fake_judge_responder(body: dict[str, Any]) -> str:
    """A :class:`FakeOpenAIServer` responder answering every built-in judgment and test-set
    generation call (see the module docstring): ``FakeOpenAIServer(responder=
    fake_judge_responder)``."""
    return json.dumps(fake_judge_answer(body), ensure_ascii=False)


class FakeJudgeServer(FakeOpenAIServer):
    """A deterministic offline judge and embeddings endpoint for CI (OpenAI-compatible):
    :func:`fake_judge_responder` answers the chat calls, :func:`fake_embedding` the
    embeddings. ``host``/``port`` choose where it listens (default ``127.0.0.1``, a free
    port); :meth:`environment` gives the variables that point ragmeter at it.

    >>> import http.client, json
    >>> with FakeJudgeServer() as server:
    ...     env = server.environment()
    >>> env["RAGMETER_JUDGE_MODEL"], env["RAGMETER_EMBEDDINGS_MODEL"]
    ('ragmeter-fake-judge', 'ragmeter-fake-embeddings')
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        embedding_dimensions: int = 256,
        **settings: Any,
    ) -> None:
        settings.setdefault("responder", fake_judge_responder)
        settings.setdefault("model", FAKE_JUDGE_MODEL)
        settings.setdefault("embedder", lambda text: fake_embedding(text, embedding_dimensions))
        super().__init__(embedding_dimensions=embedding_dimensions, **settings)
        #: Where the server listens (read by the fake server's HTTP layer).
        self.bind_to = (host, port)

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1`` (``127.0.0.1`` when it listens on every interface)."""
        host, port = self.address
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeJudgeServer:
        self.start()
        return self

    def environment(self) -> dict[str, str]:
        """The ``RAGMETER_JUDGE_*`` and ``RAGMETER_EMBEDDINGS_*`` variables that make
        ragmeter judge and embed with this server."""
        return fake_judge_environment(self.base_url)


def fake_judge_environment(base_url: str) -> dict[str, str]:
    """The variables pointing ragmeter's judge and embeddings at a fake judge at
    ``base_url`` (``http://HOST:PORT/v1``)."""
    return {
        "RAGMETER_JUDGE_BASE_URL": base_url,
        "RAGMETER_JUDGE_MODEL": FAKE_JUDGE_MODEL,
        "RAGMETER_JUDGE_API_KEY": FAKE_API_KEY,
        "RAGMETER_EMBEDDINGS_BASE_URL": base_url,
        "RAGMETER_EMBEDDINGS_MODEL": FAKE_EMBEDDINGS_MODEL,
        "RAGMETER_EMBEDDINGS_API_KEY": FAKE_API_KEY,
    }
