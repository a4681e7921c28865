"""Judge calls, tokens, client CPU, wall time: ragmeter vs ragas 0.4.3 vs DeepEval 4.3.0.

Every side scores the same seeded synthetic English dataset against its own
:class:`~ragmeter.testing.FakeOpenAIServer` (same latency, default 200 ms per request, chat
and embeddings alike) whose responder returns valid structured answers for whatever that side
asks, so that every answer parses and every score is real. The servers run in this process and
record every request; each side runs in its own subprocess (ragmeter with this interpreter,
ragas 0.4.3 and DeepEval 4.3.0 each in its own virtualenv under ``bench/.cache/``), so none
shares the CPU with its server's Python threads.

* ragmeter: ``ragmeter.evaluate(..., concurrency=16)`` with ``OpenAIJudge`` (json_schema,
  ``max_concurrency=16``, no cache) and ``OpenAIEmbeddings`` (``max_concurrency=16``, no cache);
  at the headline k also in json_object mode, and with ``context_relevance`` added to the suite
  (five metrics, like DeepEval's side).
* ragas 0.4.3: legacy ``ragas.evaluate()`` with ``LangchainLLMWrapper(ChatOpenAI(...))``,
  ``LangchainEmbeddingsWrapper(OpenAIEmbeddings(...))`` and ``RunConfig(max_workers=16)``;
  metrics ``Faithfulness``, ``AnswerRelevancy``, ``ContextPrecision`` (with reference),
  ``ContextRecall`` and, separately, ``NoiseSensitivity`` (mode relevant). No telemetry
  (``RAGAS_DO_NOT_TRACK=true``).
* DeepEval 4.3.0 (``bench/_deepeval_side.py``): ``deepeval.evaluate()`` with
  ``AsyncConfig(max_concurrent=16)`` (test cases in flight) and its five RAG metrics,
  ``FaithfulnessMetric``, ``AnswerRelevancyMetric``, ``ContextualPrecisionMetric``,
  ``ContextualRecallMetric`` and ``ContextualRelevancyMetric``, with their defaults
  (``include_reason=True``) and one ``OpenAIModel`` (DeepEval's default model name, the fake
  server's ``base_url``, a dummy key; structured outputs, i.e. ``beta.chat.completions.parse``
  with a strict json_schema). No telemetry (``DEEPEVAL_TELEMETRY_OPT_OUT=YES``), no dotenv, no
  Confident AI key, no cache; its home, cache folder and working directory are in a temporary
  folder. Its responder (:func:`deepeval_reply`) reads each prompt's kind from its opening
  words and its data from the blocks after the instructions; it has no noise-sensitivity
  metric, and its ContextualRelevancy has no counterpart in ragmeter's standard suite.

Measured from the servers' request logs, per run: chat calls per sample (mean/min/max; each
request is attributed to its sample by the sample's unique made-up name, which every text of
the sample carries; DeepEval's faithfulness reason prompt carries no text of its sample when
there is no contradiction, and those calls are attributed by elimination), prompt tokens per
sample (the fake server's ``usage.prompt_tokens`` rule, ``tokenize`` of
``ragmeter.testing._fake_server``, over the messages' text; the JSON schema that ragmeter and
DeepEval send in ``response_format`` is counted apart), prompt characters, embedding calls,
parse-retry calls, the most requests in flight, and the longest chain of calls in sequence
within a sample (a call is after another when it arrives at least 0.9 x latency after it;
exact in the *probe* runs, which have so few samples that nothing queues). Wall time and
client CPU (``time.process_time()`` of the worker process, all threads) are taken around
``evaluate()`` in the worker; the whole worker process's CPU from ``getrusage(RUSAGE_CHILDREN)``
here.

    .venv/bin/python bench/judge_calls_vs_ragas.py --install-ragas --install-deepeval  # once
    .venv/bin/python bench/judge_calls_vs_ragas.py --write          # ~15 min on 2 cores
    .venv/bin/python bench/judge_calls_vs_ragas.py --n 20 --sweep-n 8 --ks 1,5  # smoke run
    .venv/bin/python bench/judge_calls_vs_ragas.py --sides ragmeter,deepeval  # a subset
    .venv/bin/python bench/judge_calls_vs_ragas.py --render-only --write  # md from the json
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"  # gitignored
DEFAULT_RAGAS_VENV = CACHE / "ragas-venv"
DEFAULT_JSON = CACHE / "judge_calls_results.json"
DEFAULT_MD = ROOT / "bench" / "RESULTS_judge_calls.md"
RAGAS_REQUIREMENTS = ("ragas==0.4.3", "langchain-community<0.4")

SUITE = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
NOISE = ("noise_sensitivity",)
# DeepEval's five RAG metrics, and the ragmeter metric each corresponds to (None: no
# counterpart in ragmeter's standard suite; ragmeter's nearest is context_relevance, which
# judges whole contexts, not statements: run apart as "headline_suite_relevance").
DEEPEVAL_SUITE = (
    "faithfulness",
    "answer_relevancy",
    "contextual_precision",
    "contextual_recall",
    "contextual_relevancy",
)
DEEPEVAL_COUNTERPART = {
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevancy",
    "contextual_precision": "context_precision",
    "contextual_recall": "context_recall",
    "contextual_relevancy": None,
}
DEFAULT_DEEPEVAL_VENV = CACHE / "deepeval-venv"
DEEPEVAL_REQUIREMENTS = ("deepeval==4.3.0",)
CONCURRENCY = 16
CHAT = "/chat/completions"
EMBED = "/embeddings"

# -- the synthetic dataset ----------------------------------------------------------------

# Word lists as text, split once (easier to read and edit than long list literals).
_HEADS = (  # noqa: SIM905
    "Var Tel Mor Quin Sal Dro Fen Lur Bex Cor Nim Pra Zel Hal Ost Wyn Kes Tam Gor Bel Rud Vis "
    "Jor Pel Brin Cald Dun Esk Frel Grav Hest Ilv"
).split()
_TAILS = (  # noqa: SIM905
    "ano ella ith ora uvo enta isk amar eth ond avia ubo erin ost alda umi"
).split()
_KINDS = (  # noqa: SIM905
    "Observatory Institute Museum Foundation Laboratory Library Academy Conservatory Archive "
    "Aquarium Planetarium Seminary"
).split()
_CITIES = (  # noqa: SIM905
    "Lyon Porto Ghent Graz Utrecht Bergen Turku Aarhus Bologna Leipzig Krakow Tartu Split "
    "Seville Basel Lille Malmo Tampere Coimbra Brno"
).split()
_PEOPLE = (  # noqa: SIM905
    "Anna Keller|Tomas Varga|Ines Duarte|Lukas Berg|Marta Nowak|Pieter de Vries|Sofia Rossi|"
    "Jonas Lind|Clara Moreau|Emil Hansen|Nora Schmid|Oskar Petrov|Lea Novak|Hugo Laurent"
).split("|")
_FIELDS = (  # noqa: SIM905
    "marine biology|medieval manuscripts|radio astronomy|soil chemistry|early music|"
    "glacier research|urban history|textile conservation|seismology|folk languages|"
    "rare plants|maritime archaeology"
).split("|")
_TOPICS = (  # noqa: SIM905
    "regional history|water quality|public lectures|school programmes|digital archives|"
    "energy use|local crafts|bird migration|old maps|open data"
).split("|")
_ADJS = "quiet bright modern historic spacious narrow wooden restored".split()  # noqa: SIM905
_PLACES = (  # noqa: SIM905
    "reading room|courtyard|entrance hall|garden|rooftop terrace|cafe|lecture hall"
).split("|")

# (attribute, sentence template, what the question asks about it)
_FACTS = (
    ("founded", "{s} was founded in {v}.", "when it was founded"),
    ("city", "{s} is located in {v}.", "where it is located"),
    ("staff", "{s} employs about {v} people.", "how many people work there"),
    ("director", "{s} is directed by {v}.", "who directs it"),
    ("budget", "{s} has an annual budget of {v} million euros.", "what its budget is"),
    ("field", "{s} specialises in {v}.", "what it specialises in"),
    ("site", "{s} opened a second site in {v}.", "where its second site is"),
    ("visitors", "{s} welcomes around {v} visitors a year.", "how many visitors it has"),
)
_FILLER = (
    "{s} publishes a yearly report on {t}.",
    "Visitors to {s} often praise its {a} {p}.",
    "The collections of {s} include letters about {t}.",
    "A guided tour of {s} lasts about {m} minutes.",
    "{s} takes part in a regional network on {t}.",
    "Local newspapers have written about {s} several times.",
    "The website of {s} lists events on {t}.",
    "Students sometimes volunteer at {s} during the summer.",
    "The {p} of {s} was renovated after a long campaign.",
    "Several partner schools send classes to {s} every spring.",
    "The board of {s} meets four times a year to review {t}.",
    "Nearby cafes fill up quickly when {s} hosts an evening talk.",
    "Some older guidebooks describe the {a} {p} of {s} in detail.",
    "Volunteers at {s} help to catalogue material on {t}.",
)


def _value(attribute: str, rng: random.Random) -> str:
    if attribute == "founded":
        return str(rng.randint(1850, 2015))
    if attribute in ("city", "site"):
        return rng.choice(_CITIES)
    if attribute == "staff":
        return str(rng.randint(4, 240) * 10)
    if attribute == "director":
        return rng.choice(_PEOPLE)
    if attribute == "budget":
        return str(rng.randint(2, 95))
    if attribute == "field":
        return rng.choice(_FIELDS)
    return str(rng.randint(2, 90) * 1000)


def _codenames(n: int, rng: random.Random) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        parts = [rng.choice(_HEADS), rng.choice(_TAILS)]
        if len(seen) > len(_HEADS) * len(_TAILS) // 2:
            parts.insert(1, rng.choice(("l", "r", "v", "n", "d")) + rng.choice("aeiou"))
        name = "".join(parts).capitalize()
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _words(text: str) -> int:
    return len(text.split())


def make_dataset(n: int, k: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` English samples with ``k`` retrieved contexts of 60-100 words each.

    Sample ``i`` is the same for every ``k`` (its name, facts, question, reference and
    response); only its contexts depend on ``k``. Each sample is about one made-up place whose
    unique name appears in every one of its texts. The reference states 3-5 facts, the response
    3 sentences (about a third of responses get their third fact wrong); each reference fact is
    in one of the contexts with probability 0.85 (top ranks favoured), a wrong response fact
    sits in some context with probability 0.6 (noise), the rest is filler about the place.
    """
    rng = random.Random(seed)
    names = _codenames(n, rng)
    samples = []
    for i in range(n):
        srng = random.Random(f"{seed}:{i}")
        subject = f"{names[i]} {srng.choice(_KINDS)}"
        attributes = srng.sample(_FACTS, len(_FACTS))
        n_ref = srng.randint(3, 5)
        facts = [(a, t.format(s=subject, v=_value(a, srng)), q) for a, t, q in attributes[:n_ref]]
        question = (
            f"What do you know about {subject}, in particular {facts[0][2]} and {facts[1][2]}?"
        )
        reference = " ".join(f for _, f, _ in facts)
        third = facts[2][1]
        wrong = None
        if srng.random() < 0.35:
            attribute, template, _ = attributes[2]
            value = _value(attribute, srng)
            while template.format(s=subject, v=value) == third:
                value = _value(attribute, srng)
            wrong = third = template.format(s=subject, v=value)
        response = " ".join([facts[0][1], facts[1][1], third])

        crng = random.Random(f"{seed}:{i}:{k}")
        placed: list[list[str]] = [[] for _ in range(k)]
        weights = [1.0 / (rank + 1) for rank in range(k)]
        for _, fact, _ in facts:
            if crng.random() < 0.85:
                placed[crng.choices(range(k), weights)[0]].append(fact)
        if wrong is not None and crng.random() < 0.6:
            placed[crng.randrange(k)].append(wrong)
        contexts = []
        for inserted in placed:
            target = crng.randint(60, 100)
            fillers = crng.sample(_FILLER, len(_FILLER))
            body = list(inserted)
            while _words(" ".join(body)) < target:
                template = fillers.pop() if fillers else crng.choice(_FILLER)
                sentence = template.format(
                    s=subject,
                    t=crng.choice(_TOPICS),
                    a=crng.choice(_ADJS),
                    p=crng.choice(_PLACES),
                    m=crng.choice((30, 45, 60, 90)),
                )
                body.insert(crng.randint(0, len(body)), sentence)
            contexts.append(" ".join(body))
        samples.append(
            {
                "user_input": question,
                "response": response,
                "reference": reference,
                "retrieved_contexts": contexts,
                "name": names[i],
            }
        )
    return samples


# -- text helpers shared by the responders ---------------------------------------------------

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text.strip()) if s.strip()]


def _norm(text: str) -> str:
    return " " + " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split()) + " "


def supports(passage: str, statement: str) -> bool:
    """The fake judge's rule: a passage supports a statement that it contains verbatim."""
    return _norm(statement) in _norm(passage)


_STOPWORDS = frozenset(
    (  # noqa: SIM905
        "a an and at about by for in is it of on the to was what when where which who with you "
        "do know particular that true"
    ).split()
)
EMBEDDING_DIMENSIONS = 256


def bow_embedding(text: str) -> list[float]:
    """The fake servers' embeddings: a hashed bag of content words, so that texts sharing
    words are similar (the fake server's default hash vectors are unrelated for any two
    texts, which would make every answer_relevancy score ~0)."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        if word not in _STOPWORDS:
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "big") % EMBEDDING_DIMENSIONS] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def questions_for(answer: str, n: int) -> list[str]:
    claims = sentences(answer) or [answer]
    return [f"Is it true that {claims[i % len(claims)].rstrip('.')}?" for i in range(n)]


def _decode_at(text: str, start: int) -> Any:
    return json.JSONDecoder().raw_decode(text, start)[0]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


# -- ragmeter's questions -------------------------------------------------------------------

_SCHEMA_IN_PROMPT = "valid against this JSON schema:\n"
_BLOCK = re.compile(r"<(\w+)>\n(.*?)\n</\1>", re.S)
_ITEM = re.compile(r'<item index="(\d+)">(.*?)</item>', re.S)
_N_QUESTIONS = re.compile(r"write (\d+) different questions")


def ragmeter_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a ragmeter request: in ``response_format`` (json_schema) or at the
    end of the system prompt (json_object / text)."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return dict(rf["json_schema"]["schema"])
    system = _content(body["messages"][0])
    at = system.find(_SCHEMA_IN_PROMPT)
    return dict(_decode_at(system, at + len(_SCHEMA_IN_PROMPT))) if at >= 0 else {}


def _data_blocks(text: str) -> dict[str, Any]:
    blocks: dict[str, Any] = {}
    for name, inner in _BLOCK.findall(text):
        items = _ITEM.findall(inner)
        blocks[name] = [t for _, t in sorted(items, key=lambda x: int(x[0]))] if items else inner
    return blocks


def ragmeter_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to any ragmeter step call, read from its schema and its data blocks."""
    props = ragmeter_schema(body).get("properties", {})
    data = _data_blocks(_content(body["messages"][-1]))
    answer = data.get("answer", "")
    reference = data.get("reference", "")
    contexts = data.get("contexts", [])
    out: dict[str, Any] = {}
    if "claims" in props:
        out["claims"] = sentences(answer)
    if "questions" in props:
        found = _N_QUESTIONS.search(_content(body["messages"][0]))
        out["questions"] = questions_for(answer, int(found.group(1)) if found else 3)
        out["noncommittal"] = 0
    if "statements" in props:
        out["statements"] = [
            {"text": s, "contexts": [j for j, c in enumerate(contexts, 1) if supports(c, s)]}
            for s in sentences(reference)
        ]
    if "usefulness" in props:
        target = sentences(reference or answer)
        if not target:  # context_relevance: the question alone; a context stating one of the
            # place's facts is relevant (the question asks what is known about the place)
            target = [s for c in contexts for s in sentences(c) if fact_of(s)]
        out["usefulness"] = [
            {
                "index": j,
                "useful": int(useful),
                "reason": "It states a fact of the answer." if useful else "No fact of the answer.",
            }
            for j, c in enumerate(contexts, 1)
            for useful in [any(supports(c, s) for s in target)]
        ]
    if "entities" in props:
        names = sorted(set(re.findall(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", reference)))
        out["entities"] = [
            {"entity": e, "in_contexts": int(any(e in c for c in contexts))} for e in names
        ]
    if "support" in props:
        claims, passages = data.get("claims", []), data.get("passages", [])
        out["support"] = [
            {
                "claim": i,
                "passages": [j for j, p in enumerate(passages, 1) if supports(p, claim)],
                "reason": "Checked word for word against the passages.",
            }
            for i, claim in enumerate(claims, 1)
        ]
    return out


def ragmeter_call_type(body: dict[str, Any]) -> str:
    return str(ragmeter_schema(body).get("title", "?"))


# -- ragas's questions ----------------------------------------------------------------------

_RAGAS_SCHEMA = "following schema as specified in JSON Schema:\n"
_RAGAS_INPUT = "\ninput: "
_RAGAS_EXAMPLES = "\n--------EXAMPLES-----------\n"
_RAGAS_END = "\n-----------------------------\n"


def _ragas_prompt(body: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    text = _content(body["messages"][-1])
    schema = _decode_at(text, text.index(_RAGAS_SCHEMA) + len(_RAGAS_SCHEMA))
    data = _decode_at(text, text.rindex(_RAGAS_INPUT) + len(_RAGAS_INPUT))
    return str(schema.get("title", "?")), schema, data


def ragas_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to any ragas 0.4.3 PydanticPrompt used by the benchmarked metrics."""
    title, _, data = _ragas_prompt(body)
    if title == "StatementGeneratorOutput":
        return {"statements": sentences(data["answer"])}
    if title == "NLIStatementOutput":
        return {
            "statements": [
                {
                    "statement": s,
                    "reason": "Checked word for word against the context.",
                    "verdict": int(supports(data["context"], s)),
                }
                for s in data["statements"]
            ]
        }
    if title == "ResponseRelevanceOutput":
        return {"question": questions_for(data["response"], 1)[0], "noncommittal": 0}
    if title == "Verification":
        useful = any(supports(data["context"], s) for s in sentences(data["answer"]))
        reason = "It states a fact of the answer." if useful else "No fact of the answer."
        return {"reason": reason, "verdict": int(useful)}
    if title == "ContextRecallClassifications":
        return {
            "classifications": [
                {
                    "statement": s,
                    "reason": "Checked word for word against the context.",
                    "attributed": int(supports(data["context"], s)),
                }
                for s in sentences(data["answer"])
            ]
        }
    if title == "StringIO":  # fix_output_format: a parse retry
        return {"text": data.get("output_string", "{}")}
    raise ValueError(f"unknown ragas prompt {title!r}")


def ragas_call_type(body: dict[str, Any]) -> str:
    return _ragas_prompt(body)[0]


# -- DeepEval's questions -------------------------------------------------------------------

# The opening words of each prompt DeepEval 4.3's five RAG metrics send (its templates.json),
# and the call's kind: "<metric>/<step>".
_DEEPEVAL_KINDS = (
    ("Based on the given text, please generate a comprehensive list of", "faithfulness/truths"),
    ("Based on the given text, please extract a comprehensive list of", "faithfulness/claims"),
    ("Based on the given claims", "faithfulness/verdicts"),
    ("Below is a list of Contradictions", "faithfulness/reason"),
    ("Given the text, breakdown and generate a list of statements", "answer_relevancy/statements"),
    ("For the provided list of statements", "answer_relevancy/verdicts"),
    ("Given the answer relevancy score", "answer_relevancy/reason"),
    ("Given the input, expected output, and retrieval context", "contextual_precision/verdicts"),
    (
        "Given the input, retrieval contexts, and contextual precision",
        "contextual_precision/reason",
    ),
    ("For EACH sentence in the given expected output", "contextual_recall/verdicts"),
    ("Given the original expected output", "contextual_recall/reason"),
    ("Based on the input and context", "contextual_relevancy/verdicts"),
    ("Based on the given input, reasons for why", "contextual_relevancy/reason"),
)
# A DeepEval prompt ends with its instructions' closing "**" line, then the data: "Header:"
# lines each followed by its value, the last one "JSON:".
_DEEPEVAL_CLOSE = re.compile(r"^\*\*[ \t]*$", re.M)
_DEEPEVAL_HEADER = re.compile(r"^([A-Z][^\n]{0,160}?):[ \t]*$", re.M)


def _fact_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{s\}|\{v\})", template)
    body = "".join(
        "(?P<s>.+?)" if p == "{s}" else "(?P<v>.+?)" if p == "{v}" else re.escape(p) for p in parts
    )
    return re.compile(f"^{body}$")


_FACT_PATTERNS = tuple((attribute, _fact_pattern(t), ask) for attribute, t, ask in _FACTS)


def fact_of(sentence: str) -> tuple[str, str, str] | None:
    """(attribute, subject, value) of a sentence that states one of a place's facts."""
    for attribute, pattern, _ in _FACT_PATTERNS:
        found = pattern.match(sentence.strip())
        if found:
            return attribute, found["s"], found["v"]
    return None


def deepeval_call_type(body: dict[str, Any]) -> str:
    text = _content(body["messages"][-1]).lstrip()
    for opening, kind in _DEEPEVAL_KINDS:
        if text.startswith(opening):
            return kind
    return "?"


def _deepeval_data(text: str) -> dict[str, Any]:
    """The data part of a DeepEval prompt: header (without a "(n documents)" count) -> value;
    Python list reprs (DeepEval renders lists with str()) are read back as lists."""
    import ast
    import contextlib

    closes = list(_DEEPEVAL_CLOSE.finditer(text))
    data = text[closes[-1].end() :] if closes else text
    headers = list(_DEEPEVAL_HEADER.finditer(data))
    out: dict[str, Any] = {}
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(data)
        value: Any = data[header.end() : end].strip()
        if value.startswith("[") and value.endswith("]"):
            with contextlib.suppress(ValueError, SyntaxError):
                value = ast.literal_eval(value)
        out[re.sub(r"\s*\(.*\)$", "", header.group(1)).strip()] = value
    return out


def deepeval_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to any call of DeepEval 4.3's five RAG metrics, by the same verbatim rule
    as the other sides, applied as DeepEval's prompts define each verdict."""
    kind = deepeval_call_type(body)
    data = _deepeval_data(_content(body["messages"][-1]))
    step = kind.split("/")[-1]
    if step == "reason":
        score = next((str(v).split()[0] for h, v in data.items() if h.endswith("Score")), "?")
        return {"reason": f"The score is {score} because of the verdicts listed above."}
    if kind == "faithfulness/truths":
        return {"truths": sentences(data["Text"])}
    if kind == "faithfulness/claims":
        return {"claims": sentences(data["AI Output"])}
    if kind == "answer_relevancy/statements":
        return {"statements": sentences(data["Text"])}
    if kind == "faithfulness/verdicts":
        # 'no' only where the context states the same fact with another value (a
        # contradiction); a claim it does not mention is 'borderline' (DeepEval's own rule).
        context = data["Retrieval Contexts"]
        stated = [f for f in map(fact_of, sentences(context)) if f]
        verdicts = []
        for claim in data["Claims"]:
            fact = fact_of(claim)
            if supports(context, claim):
                verdicts.append({"verdict": "yes", "reason": None})
            elif fact and any(f[:2] == fact[:2] and f[2] != fact[2] for f in stated):
                verdicts.append({"verdict": "no", "reason": f"The context contradicts '{claim}'."})
            else:
                verdicts.append(
                    {"verdict": "borderline", "reason": f"The context does not mention '{claim}'."}
                )
        return {"verdicts": verdicts}
    if kind == "answer_relevancy/verdicts":
        # 'yes' for a statement that answers what the question asks in particular, else
        # 'borderline' (about the place, "could be supporting information").
        question = data["Input"]
        verdicts = []
        for statement in data["Statements"]:
            fact = fact_of(statement)
            asked = fact is not None and any(
                a == fact[0] and ask in question for a, _, ask in _FACT_PATTERNS
            )
            verdicts.append(
                {"verdict": "yes", "reason": None}
                if asked
                else {"verdict": "borderline", "reason": f"'{statement}' is not what is asked."}
            )
        return {"verdicts": verdicts}
    if kind == "contextual_precision/verdicts":
        target = sentences(data["Expected output"])
        verdicts = []
        for node in data["Retrieval Context"]:
            useful = [s for s in target if supports(node, s)]
            verdicts.append(
                {"verdict": "yes", "reason": f"It states '{useful[0]}'"}
                if useful
                else {"verdict": "no", "reason": "It states no sentence of the expected output."}
            )
        return {"verdicts": verdicts}
    if kind == "contextual_recall/verdicts":
        nodes = data["Retrieval Context"]
        verdicts = []
        for s in sentences(data["Expected Output"]):
            found = [j for j, node in enumerate(nodes, 1) if supports(node, s)]
            verdicts.append(
                {"verdict": "yes", "reason": f"Node {found[0]} in the retrieval context says so."}
                if found
                else {"verdict": "no", "reason": "No node in the retrieval context says so."}
            )
        return {"verdicts": verdicts}
    if kind == "contextual_relevancy/verdicts":
        # A statement is relevant when it states one of the place's facts (the question asks
        # what is known about it); the rest (tours, volunteers, cafes...) is not.
        return {
            "verdicts": [
                {"statement": s, "verdict": "yes", "reason": None}
                if fact_of(s)
                else {"statement": s, "verdict": "no", "reason": f"'{s}' is not asked about."}
                for s in sentences(data["Context"])
            ]
        }
    raise ValueError(f"unknown DeepEval prompt {kind!r}")


# -- workers (run in subprocesses) -----------------------------------------------------------


def _worker_ragmeter(spec: dict[str, Any]) -> list[dict[str, Any]]:
    import ragmeter
    from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
    from ragmeter.judge import JudgeConfig, NullCache, OpenAIJudge

    rows = json.loads(Path(spec["dataset"]).read_text())
    out = []
    for job in spec["jobs"]:
        judge = OpenAIJudge(
            JudgeConfig(
                model="fake-judge",
                base_url=spec["base_url"],
                api_key="x",
                structured_output=job.get("mode", "json_schema"),
                max_concurrency=CONCURRENCY,
            ),
            cache=NullCache(),
        )
        embeddings = OpenAIEmbeddings(
            EmbeddingsConfig(
                model="fake-embed",
                base_url=spec["base_url"],
                api_key="x",
                max_concurrency=CONCURRENCY,
            ),
            cache=NullCache(),
        )
        data = [{k: v for k, v in r.items() if k != "name"} for r in rows[: job["n"]]]
        cpu0 = time.process_time()
        start = time.monotonic()
        result = ragmeter.evaluate(
            data, list(job["metrics"]), judge=judge, embeddings=embeddings, concurrency=CONCURRENCY
        )
        end = time.monotonic()
        cpu = time.process_time() - cpu0
        scores = {}
        for name, agg in result.aggregates.items():
            scores[name] = {
                "mean": agg.mean,
                "n_ok": agg.n_ok,
                "n_failed": agg.n_failed,
                "n_not_applicable": agg.n_not_applicable,
            }
        out.append(
            {
                **job,
                "start": start,
                "end": end,
                "wall_s": end - start,
                "cpu_s": cpu,
                "scores": scores,
            }
        )
        time.sleep(0.5)  # a clean gap between the jobs' request windows
    return out


def ragas_timed_evaluate(
    rows: list[dict[str, Any]], metrics: list[Any], llm: Any, embeddings: Any
) -> tuple[float, float, dict[str, dict[str, Any]]]:
    """ragas 0.4.3's legacy ``evaluate()`` over ``rows`` (their made-up names dropped) at
    ``max_workers=CONCURRENCY``: its start and end times, and per metric the mean of the
    finite scores with the counts of finite and NaN ones."""
    import math

    from ragas import EvaluationDataset, evaluate
    from ragas.run_config import RunConfig

    dataset = EvaluationDataset.from_list(
        [{k: v for k, v in r.items() if k != "name"} for r in rows]
    )
    start = time.monotonic()
    result = evaluate(
        dataset,
        metrics=metrics,
        llm=llm,
        embeddings=embeddings,
        run_config=RunConfig(max_workers=CONCURRENCY),
        show_progress=False,
        raise_exceptions=False,
    )
    end = time.monotonic()
    frame = result.to_pandas()
    scores = {}
    inputs = {"user_input", "response", "reference", "retrieved_contexts"}
    for column in [c for c in frame.columns if c not in inputs]:
        values = [float(v) for v in frame[column]]
        finite = [v for v in values if not math.isnan(v)]
        scores[column] = {
            "mean": statistics.fmean(finite) if finite else None,
            "n_ok": len(finite),
            "n_failed": len(values) - len(finite),
            "n_not_applicable": 0,
        }
    return start, end, scores


def _worker_ragas(spec: dict[str, Any]) -> list[dict[str, Any]]:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    import httpx
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics._answer_relevance import AnswerRelevancy
    from ragas.metrics._context_precision import ContextPrecision
    from ragas.metrics._context_recall import ContextRecall
    from ragas.metrics._faithfulness import Faithfulness
    from ragas.metrics._noise_sensitivity import NoiseSensitivity

    warned: Counter[str] = Counter()

    class _Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned[record.getMessage()[:90]] += 1

    logging.getLogger("ragas").addHandler(_Count(logging.WARNING))
    factories = {
        "faithfulness": Faithfulness,
        "answer_relevancy": AnswerRelevancy,
        "context_precision": ContextPrecision,
        "context_recall": ContextRecall,
        "noise_sensitivity": NoiseSensitivity,
    }
    rows = json.loads(Path(spec["dataset"]).read_text())
    out = []
    for job in spec["jobs"]:
        warned.clear()
        # Fresh HTTP clients per job: langchain-openai caches its default async client across
        # event loops, and each evaluate() runs in a new loop (connection errors, retries).
        llm = LangchainLLMWrapper(
            ChatOpenAI(
                model="fake-judge",
                base_url=spec["base_url"],
                api_key="x",
                http_client=httpx.Client(),
                http_async_client=httpx.AsyncClient(),
            )
        )
        embeddings = LangchainEmbeddingsWrapper(
            OpenAIEmbeddings(
                model="fake-embed",
                base_url=spec["base_url"],
                api_key="x",
                check_embedding_ctx_length=False,  # no tiktoken download
                http_client=httpx.Client(),
                http_async_client=httpx.AsyncClient(),
            )
        )
        metrics = [factories[m]() for m in job["metrics"]]
        cpu0 = time.process_time()
        start, end, scores = ragas_timed_evaluate(rows[: job["n"]], metrics, llm, embeddings)
        cpu = time.process_time() - cpu0
        out.append(
            {
                **job,
                "start": start,
                "end": end,
                "wall_s": end - start,
                "cpu_s": cpu,
                "scores": scores,
                "warnings": dict(warned),
            }
        )
        time.sleep(0.5)
    return out


def _process_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _worker_main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    work = _worker_ragmeter if spec["side"] == "ragmeter" else _worker_ragas
    results = work(spec)
    Path(spec["out"]).write_text(json.dumps({"jobs": results, "process_cpu_s": _process_cpu_s()}))


# -- the parent: servers, request logs, analysis -------------------------------------------


def _prompt_parts(side: str, body: dict[str, Any]) -> dict[str, str]:
    """The prompt cut into instructions (+ schema), few-shot examples and the sample's data."""
    messages = body.get("messages", [])
    if side == "ragmeter":
        return {
            "instructions": _content(messages[0]),
            "examples": "".join(_content(m) for m in messages[1:-1]),
            "data": _content(messages[-1]),
        }
    text = "".join(_content(m) for m in messages)
    if side == "deepeval":
        # One user message: instructions with a worked example inside, then (after the
        # closing "**" line) the data. The example runs from the first line that starts with
        # "Example" to DeepEval's END OF EXAMPLE marker, else to the last "}" line before
        # the data.
        closes = list(_DEEPEVAL_CLOSE.finditer(text))
        cut = closes[-1].end() if closes else len(text)
        head, data = text[:cut], text[cut:]
        found = re.search(r"^Example", head, re.M)
        if not found:
            return {"instructions": head, "examples": "", "data": data}
        marker = "===== END OF EXAMPLE ======"
        end = head.find(marker, found.start())
        end = end + len(marker) if end >= 0 else head.rfind("\n}") + 2
        if end <= found.start():
            end = len(head)
        return {
            "instructions": head[: found.start()] + head[end:],
            "examples": head[found.start() : end],
            "data": data,
        }
    at_examples = text.find(_RAGAS_EXAMPLES)
    at_end = text.find(_RAGAS_END)
    if at_examples < 0 or at_end < 0:
        return {"instructions": text, "examples": "", "data": ""}
    return {
        "instructions": text[:at_examples],
        "examples": text[at_examples:at_end],
        "data": text[at_end:],
    }


def _chain_depth(times: list[float], gap: float) -> int:
    """The longest chain of calls each arriving ``gap`` or more after the previous one."""
    times = sorted(times)
    depth: list[int] = []
    for i, t in enumerate(times):
        depth.append(1 + max((depth[j] for j in range(i) if t - times[j] >= gap), default=0))
    return max(depth, default=0)


_CALL_TYPE = {
    "ragmeter": ragmeter_call_type,
    "ragas": ragas_call_type,
    "deepeval": deepeval_call_type,
}


def _attribute_by_elimination(
    kinds: list[str], samples: list[int], times: list[float], n: int, latency_s: float
) -> int:
    """DeepEval's faithfulness reason prompt carries only the score and the contradictions:
    without a contradiction it holds nothing of its sample. Each sample that ran faithfulness
    makes exactly one such call, so the calls left unattributed go to the samples that lack
    one, each to the one whose faithfulness verdicts call came back just before it. Returns
    how many were attributed so; ``samples`` is updated in place."""
    reason, verdicts = "faithfulness/reason", "faithfulness/verdicts"
    have = {s for s, k in zip(samples, kinds, strict=True) if k == reason and s >= 0}
    last_verdicts: dict[int, float] = {}
    for s, k, t in zip(samples, kinds, times, strict=True):
        if k == verdicts and s >= 0:
            last_verdicts[s] = max(t, last_verdicts.get(s, t))
    missing = {s for s in range(n) if s not in have}
    done = 0
    for i in sorted(range(len(kinds)), key=lambda i: times[i]):
        if kinds[i] != reason or samples[i] >= 0 or not missing:
            continue
        before = [s for s in missing if last_verdicts.get(s, -1e9) <= times[i] - 0.5 * latency_s]
        pool = before or sorted(missing)
        best = max(pool, key=lambda s: last_verdicts.get(s, -1e9))
        samples[i] = best
        missing.discard(best)
        done += 1
    return done


def _peak_in_flight(times: list[float], latency_s: float) -> int:
    """The most requests received within one latency of each other: with a server that answers
    every request after the same latency, the most requests in flight at once."""
    times = sorted(times)
    peak, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= latency_s:
            lo += 1
        peak = max(peak, hi - lo + 1)
    return peak


def analyse(
    side: str,
    requests: list[Any],
    job: dict[str, Any],
    names: dict[str, int],
    latency_s: float,
) -> dict[str, Any]:
    from ragmeter.testing._fake_server import tokenize

    window = [r for r in requests if job["start"] - 0.05 <= r.received_at <= job["end"] + 0.05]
    chat = [r for r in window if r.path.endswith(CHAT)]
    embed = [r for r in window if r.path.endswith(EMBED)]
    n = job["n"]
    call_type = _CALL_TYPE[side]
    kinds = [call_type(r.body or {}) for r in chat]
    samples = []
    for r in chat:
        text = " ".join(_content(m) for m in (r.body or {}).get("messages", []))
        found = Counter(w for w in re.findall(r"\b[A-Z][a-z]+\b", text) if w in names)
        samples.append(names[found.most_common(1)[0][0]] if len(found) == 1 else -1)
    eliminated = 0
    if side == "deepeval":
        eliminated = _attribute_by_elimination(
            kinds, samples, [r.received_at for r in chat], n, latency_s
        )
    per_sample_calls: Counter[int] = Counter()
    per_sample_times: dict[int, list[float]] = defaultdict(list)
    per_type: dict[str, Counter[str]] = defaultdict(Counter)
    unmapped = 0
    totals: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for r, kind, sample in zip(chat, kinds, samples, strict=True):
        body = r.body or {}
        seen[f"{sample}:" + json.dumps(body.get("messages"), sort_keys=True)] += 1
        if sample < 0:
            unmapped += 1
        per_sample_calls[sample] += 1
        per_sample_times[sample].append(r.received_at)
        tokens = sum(len(tokenize(_content(m))) for m in body.get("messages", []))
        chars = sum(len(_content(m)) for m in body.get("messages", []))
        schema_tokens = 0
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            schema_tokens = len(tokenize(json.dumps(rf["json_schema"])))
        parts = {k: len(tokenize(v)) for k, v in _prompt_parts(side, body).items()}
        entry = per_type[kind]
        entry["calls"] += 1
        entry["tokens"] += tokens
        entry["schema_tokens"] += schema_tokens
        for part, count in parts.items():
            entry[part] += count
        totals["tokens"] += tokens
        totals["chars"] += chars
        totals["schema_tokens"] += schema_tokens
    calls = [per_sample_calls.get(i, 0) for i in range(n)]
    gap = 0.9 * latency_s
    depths = (
        [_chain_depth(per_sample_times[i], gap) for i in range(n) if per_sample_times[i]]
        if latency_s > 0
        else []
    )
    # ragmeter never sends the same prompt twice for a sample unless it re-asks (an incomplete
    # answer) or its HTTP layer retries; nor does DeepEval (whose retries are tenacity's, on
    # errors); ragas legitimately repeats NLI prompts in noise_sensitivity (response and
    # reference with the same statements), so its retries are its fix_output_format
    # (StringIO) calls and the job exceptions it logs. DeepEval's metric errors are counted
    # in the scores (failed).
    repeated = sum(c - 1 for key, c in seen.items() if not key.startswith("-1:"))
    parse_retries = per_type.get("StringIO", Counter())["calls"]
    errors = sum(n for message, n in job.get("warnings", {}).items() if "Exception" in message)
    retries = parse_retries + errors if side == "ragas" else repeated
    cpu = job.get("cpu_s")
    return {
        "side": side,
        "name": job["name"],
        "k": job["k"],
        "n": n,
        "metrics": list(job["metrics"]),
        "mode": job.get("mode"),
        "chat_calls": len(chat),
        "embedding_calls": len(embed),
        "calls_per_sample": len(chat) / n,
        "calls_min": min(calls),
        "calls_max": max(calls),
        "depth_max": max(depths, default=None),
        "depth_mean": statistics.fmean(depths) if depths else None,
        "tokens_per_sample": totals["tokens"] / n,
        "chars_per_sample": totals["chars"] / n,
        "schema_tokens_per_sample": totals["schema_tokens"] / n,
        "embedding_calls_per_sample": len(embed) / n,
        "unmapped": unmapped,
        "attributed_by_elimination": eliminated,
        "retries": retries,
        "repeated_prompts": repeated,
        "wall_s": job["wall_s"],
        "cpu_s": cpu,
        "cpu_ms_per_sample": None if cpu is None else 1000 * cpu / n,
        "cpu_ms_per_call": None if cpu is None or not chat else 1000 * cpu / len(chat),
        "peak_in_flight": _peak_in_flight([r.received_at for r in window], latency_s)
        if latency_s > 0
        else None,
        "floor_s": len(chat) * latency_s / CONCURRENCY,
        "floor_all_s": (len(chat) + len(embed)) * latency_s / CONCURRENCY,
        "per_type": {kind: dict(c) for kind, c in per_type.items()},
        "scores": job["scores"],
        "warnings": job.get("warnings", {}),
    }


def _worker_env(side: str, tmp: Path) -> dict[str, str]:
    """The worker's environment: no analytics, nothing read from or written to the repository
    by DeepEval (its home, cache and working directory are in ``tmp``), no hub downloads."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CONFIDENT_", "DEEPEVAL_"))
    }
    env |= {
        "RAGAS_DO_NOT_TRACK": "true",
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": "x",
        "PYTHONWARNINGS": "ignore",
    }
    if side == "deepeval":
        env |= {
            "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
            "DEEPEVAL_DISABLE_DOTENV": "1",
            "DEEPEVAL_NO_INSPECT_PROMPT": "1",
            "DEEPEVAL_HOME": str(tmp / "deepeval-home"),
            "DEEPEVAL_CACHE_FOLDER": str(tmp / "deepeval-cwd" / ".deepeval"),
        }
    return env


def _children_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_side(
    side: str,
    k: int,
    jobs: list[dict[str, Any]],
    dataset: list[dict[str, Any]],
    args: argparse.Namespace,
    tmp: Path,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The side's jobs at ``k`` in one worker process against a fresh fake server: the
    analysed runs, and the worker process's own figures (its CPU time in all, from the
    parent's ``RUSAGE_CHILDREN``, and what it reported)."""
    from ragmeter.testing import FakeOpenAIServer

    responder = {"ragmeter": ragmeter_reply, "ragas": ragas_reply, "deepeval": deepeval_reply}[side]
    names = {row["name"]: i for i, row in enumerate(dataset)}
    data_path = tmp / f"data_k{k}.json"
    data_path.write_text(json.dumps(dataset))
    latency = args.latency_ms / 1000
    server = FakeOpenAIServer(latency_s=latency, responder=responder, embedder=bow_embedding)
    with server as srv:
        spec = {
            "side": side,
            "base_url": srv.base_url,
            "dataset": str(data_path),
            "jobs": [{**job, "k": k} for job in jobs],
            "out": str(tmp / f"out_{side}_k{k}.json"),
        }
        spec_path = tmp / f"spec_{side}_k{k}.json"
        spec_path.write_text(json.dumps(spec))
        if side == "deepeval":
            argv = [
                args.deepeval_python,
                str(Path(__file__).resolve().parent / "_deepeval_side.py"),
            ]
            cwd = tmp / "deepeval-cwd"
        else:
            python = sys.executable if side == "ragmeter" else args.ragas_python
            argv = [python, str(Path(__file__).resolve()), "--worker"]
            cwd = tmp
        cwd.mkdir(exist_ok=True)
        log = tmp / f"log_{side}_k{k}.txt"
        began = time.perf_counter()
        cpu_before = _children_cpu_s()
        with log.open("w") as stream:
            done = subprocess.run(
                [*map(str, argv), str(spec_path)],
                env=_worker_env(side, tmp),
                cwd=cwd,
                stdout=stream,
                stderr=subprocess.STDOUT,
                check=False,
            )
        cpu_whole = _children_cpu_s() - cpu_before
        if done.returncode != 0:
            sys.exit(f"{side} worker (k={k}) failed:\n{log.read_text()[-4000:]}")
        requests = srv.requests
        reported = json.loads(Path(spec["out"]).read_text())
    ran = reported.pop("jobs")
    process = {
        "side": side,
        "k": k,
        "cpu_s": cpu_whole,
        "cpu_in_evaluate_s": sum(job.get("cpu_s") or 0.0 for job in ran),
        "samples": sum(job["n"] for job in ran),
        "wall_s": time.perf_counter() - began,
        **{f"reported_{key}": value for key, value in reported.items()},
    }
    print(
        f"  {side:8s} k={k:<2d} {len(ran)} jobs, {len(requests)} requests, "
        f"{process['wall_s']:.0f} s (incl. start-up), CPU {cpu_whole:.1f} s "
        f"({process['cpu_in_evaluate_s']:.1f} s in evaluate)",
        flush=True,
    )
    return [analyse(side, requests, job, names, latency) for job in ran], process


def plan_jobs(k: int, args: argparse.Namespace, side: str) -> list[dict[str, Any]]:
    if side == "deepeval":
        jobs = [
            {"name": "probe_suite", "metrics": DEEPEVAL_SUITE, "n": args.probe_n},
            {"name": "suite", "metrics": DEEPEVAL_SUITE, "n": args.sweep_n},
        ]
        if args.deepeval_per_metric:
            jobs += [{"name": m, "metrics": (m,), "n": args.sweep_n} for m in DEEPEVAL_SUITE]
        if k == args.headline_k:
            jobs.append({"name": "headline_suite", "metrics": DEEPEVAL_SUITE, "n": args.n})
        return jobs
    jobs = [
        {"name": "probe_suite", "metrics": SUITE, "n": args.probe_n},
        {"name": "probe_noise", "metrics": NOISE, "n": args.probe_n},
        {"name": "suite", "metrics": SUITE, "n": args.sweep_n},
        {"name": "noise", "metrics": NOISE, "n": args.sweep_n},
        *({"name": m, "metrics": (m,), "n": args.sweep_n} for m in SUITE),
    ]
    if k == args.headline_k:
        jobs.append({"name": "headline_suite", "metrics": SUITE, "n": args.n})
        if side == "ragmeter":
            jobs.append(
                {"name": "headline_suite_json_object", "metrics": SUITE, "n": args.n}
                | {"mode": "json_object"}
            )
            jobs.append(
                {
                    "name": "headline_suite_relevance",
                    "metrics": (*SUITE, "context_relevance"),
                    "n": args.n,
                }
            )
    return jobs


def attach_floors(runs: list[dict[str, Any]], latency_s: float) -> None:
    """``chain_s``: the probe's longest in-sequence chain x latency (one sample alone cannot
    finish faster); ``best_s``: the larger of that and the throughput floor."""
    for run in runs:
        kind = "noise" if run["name"] == "noise" else "suite"
        probe = _find(runs, run["side"], f"probe_{kind}", run["k"])
        known = run["name"] in ("suite", "noise", "headline_suite", "headline_suite_json_object")
        known = known or run["name"] == "headline_suite_relevance"
        depth = probe["depth_max"] if probe and known else None
        run["chain_s"] = depth * latency_s if depth else None
        run["best_s"] = max(run["floor_s"], run["chain_s"] or 0.0)


def _git(*argv: str) -> str:
    try:
        return subprocess.run(
            ["git", *argv], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _versions(python: str, packages: list[str]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "def v(p):\n"
        "    try:\n"
        "        return m.version(p)\n"
        "    except m.PackageNotFoundError:\n"
        "        return None\n"
        "print(json.dumps({p: v(p) for p in sys.argv[1:] if v(p)}))"
    )
    done = subprocess.run(
        [python, "-c", code, *packages], capture_output=True, text=True, check=False
    )
    return json.loads(done.stdout) if done.returncode == 0 else {}


def _ragas_versions(python: str) -> dict[str, str]:
    return _versions(
        python, ["ragas", "langchain-openai", "langchain-community", "langchain-core", "openai"]
    )


def _ragmeter_version() -> str:
    import ragmeter

    return str(getattr(ragmeter, "__version__", "?"))


def _deepeval_versions(python: str) -> dict[str, str]:
    return _versions(python, ["deepeval", "openai", "pydantic", "httpx", "httpx2"])


def _install(venv: Path, requirements: tuple[str, ...]) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *requirements], check=True)


def install_ragas(venv: Path) -> None:
    _install(venv, RAGAS_REQUIREMENTS)


def install_deepeval(venv: Path) -> None:
    _install(venv, DEEPEVAL_REQUIREMENTS)


# -- report ------------------------------------------------------------------------------------


def _find(runs: list[dict[str, Any]], side: str, name: str, k: int) -> dict[str, Any] | None:
    for run in runs:
        if run["side"] == side and run["name"] == name and run["k"] == k:
            return run
    return None


def _f(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:.0f}%" if b else "n/a"


def _depth(run: dict[str, Any] | None) -> str:
    return str(run["depth_max"]) if run and run["depth_max"] is not None else "n/a"


SIDES = ("ragmeter", "ragas", "deepeval")
# The committed figures this file's targets compare with: bench/RESULTS_judge_calls.md of
# 2026-11-30 (commit 735d158), when ragmeter's standard suite made 3 calls per sample.
PREVIOUS = {
    "date": "2026-11-30",
    "commit": "735d158",
    "calls": 3,
    "json_schema": 2424,
    "json_object": 3188,
}
TOKENS_GROWTH_TARGET = 1.25  # at most +25% prompt tokens per sample at the headline k


def _label(side: str, meta: dict[str, Any]) -> str:
    if side == "ragas":
        return f"ragas {meta.get('ragas_versions', {}).get('ragas', '0.4.3')}"
    if side == "deepeval":
        return f"DeepEval {meta.get('deepeval_versions', {}).get('deepeval', '4.3.0')}"
    return "ragmeter"


def _cells(values: list[str]) -> str:
    return " / ".join(values)


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def _sweep_run(runs: list[dict[str, Any]], side: str, k: int) -> dict[str, Any] | None:
    return _find(runs, side, "suite", k)


def _without(run: dict[str, Any], prefix: str) -> tuple[float, float]:
    """Calls and prompt tokens per sample of ``run`` without the call kinds that start with
    ``prefix`` (DeepEval's suite less ContextualRelevancy)."""
    calls = sum(c["calls"] for kind, c in run["per_type"].items() if not kind.startswith(prefix))
    tokens = sum(c["tokens"] for kind, c in run["per_type"].items() if not kind.startswith(prefix))
    return calls / run["n"], tokens / run["n"]


def render(report: dict[str, Any]) -> str:
    runs = report["runs"]
    meta = report["meta"]
    processes = report.get("processes", [])
    ks = meta["ks"]
    hk = meta["headline_k"]
    sides = [s for s in SIDES if any(r["side"] == s for r in runs)]
    lines: list[str] = []
    add = lines.append
    add("# Judge calls, prompt tokens and client CPU: ragmeter vs ragas 0.4.3 vs DeepEval 4.3.0")
    add("")
    add(
        "Produced by `bench/judge_calls_vs_ragas.py` (method in its docstring). Every side "
        "scores the same seeded synthetic English dataset against a `FakeOpenAIServer` of its "
        f"own (latency {meta['latency_ms']:g} ms on every chat and embeddings request) whose "
        "responder returns a valid structured answer to each of that side's prompts, at "
        f"concurrency {CONCURRENCY}; counts come from the servers' request logs, client CPU "
        "from the side's worker process."
    )
    add("")
    add("```sh")
    add(meta["command"].strip() + "   # the measurements, saved to bench/.cache/*.json")
    add("python bench/judge_calls_vs_ragas.py --render-only --write   # this file from the json")
    add("```")
    add("")
    add(f"- Date: {meta['date']}; the whole run took {meta.get('total_s', 0) / 60:.1f} min")
    add(
        f"- Machine: {meta['machine']}, nproc {meta['nproc']}; load average before "
        f"{meta['load_before']}, after {meta['load_after']} (other jobs were running; wall "
        "times are indicative, call and token counts are exact; the fake servers run in the "
        "parent process and share the 2 cores with the worker)"
    )
    add(
        f"- ragmeter {meta.get('ragmeter_version', '?')}: commit `{meta['commit']}`"
        + (" with uncommitted changes under src/" if meta.get("src_modified") else "")
        + f", Python {meta['python']}; `ragmeter.evaluate(..., concurrency=16)`, `OpenAIJudge` "
        "(json_schema unless marked json_object, `max_concurrency=16`, no cache), "
        "`OpenAIEmbeddings` (no cache)"
    )
    if meta.get("ragas_versions"):
        add(
            "- ragas: "
            + ", ".join(f"{k} {v}" for k, v in meta["ragas_versions"].items())
            + " (own venv, legacy `ragas.evaluate()`, `LangchainLLMWrapper(ChatOpenAI)`, "
            "`RunConfig(max_workers=16)`, `RAGAS_DO_NOT_TRACK=true`)"
        )
    if meta.get("deepeval_versions"):
        model = next((r.get("model") for r in runs if r["side"] == "deepeval"), None)
        add(
            "- DeepEval: "
            + ", ".join(f"{k} {v}" for k, v in meta["deepeval_versions"].items())
            + " (own venv, `bench/_deepeval_side.py`: `deepeval.evaluate()` with "
            "`AsyncConfig(max_concurrent=16)` (a limit on test cases in flight, not on "
            "requests), the five metrics with their defaults (`include_reason=True`, "
            "`async_mode=True`), one `OpenAIModel` on the fake server "
            + (f"(model name `{model}`, DeepEval's default, " if model else "(")
            + "structured outputs: `beta.chat.completions.parse` with a strict json_schema), "
            "`DEEPEVAL_TELEMETRY_OPT_OUT=YES`, no dotenv, no Confident AI key, its home, cache "
            "and working directory in a temporary folder; no cache read or written)"
        )
    add(
        f"- Data: headline N={meta['n']} samples at k={hk}; k sweep and per-metric runs "
        f"N={meta['sweep_n']}; probe runs (depth) N={meta['probe_n']}. Each sample: a question, "
        "a 3-sentence response, a 3-5 sentence reference, k contexts of 60-100 words."
    )
    add(
        "- Tokens: the fake server's `usage.prompt_tokens` rule (a token is a word or a single "
        "punctuation character) over the messages' text, the same rule for every side. "
        "ragmeter (json_schema mode) and DeepEval also send the output schema in "
        '`response_format`; those tokens are listed apart ("+schema").'
    )
    add(
        "- Client CPU: the worker process's CPU time (user + system, all threads: "
        "`time.process_time()`) around its `evaluate()` call, per sample and per chat request; "
        "the whole worker process's (imports and start-up included) from the parent's "
        "`getrusage(RUSAGE_CHILDREN)`."
    )
    add("")

    add("## Which metric is which")
    add("")
    add("| ragmeter | ragas 0.4.3 | DeepEval 4.3.0 | same definition? |")
    add("|---|---|---|---|")
    add(
        "| faithfulness | Faithfulness | FaithfulnessMetric | no: ragmeter and ragas count "
        "the response's claims the contexts support; DeepEval counts the claims the contexts "
        "do not contradict (a claim they do not mention is 'borderline' and passes) |"
    )
    add(
        "| answer_relevancy | AnswerRelevancy | AnswerRelevancyMetric | no: ragmeter and ragas "
        "embed questions generated back from the response and compare them with the question; "
        "DeepEval asks which of the response's statements are relevant to the input (no "
        "embeddings) |"
    )
    add(
        "| context_precision | ContextPrecision (with reference) | ContextualPrecisionMetric "
        "| yes: rank-weighted precision of the contexts useful for the reference |"
    )
    add(
        "| context_recall | ContextRecall | ContextualRecallMetric | yes: share of the "
        "reference's sentences attributable to the contexts |"
    )
    add(
        "| none in the standard suite (nearest: context_relevance, run apart below) | not run "
        "| ContextualRelevancyMetric | no counterpart in ragmeter's standard suite: DeepEval "
        "scores the share of the contexts' statements relevant to the input; ragmeter's "
        "context_relevance (not in the suite) judges whole contexts |"
    )
    add("| noise_sensitivity_relevant | NoiseSensitivity (mode relevant) | none | yes (ragas) |")
    add("")
    add(
        "ragmeter's standard suite is its first four metrics; DeepEval's side runs all five of "
        "its RAG metrics, as a DeepEval user would. So that the comparison is like for like "
        "both ways, the headline also shows ragmeter with context_relevance added (five "
        "metrics) and DeepEval's figures without ContextualRelevancy (its four counterpart "
        "metrics, read from the same run's per-call breakdown)."
    )
    add("")

    heads = {s: _find(runs, s, "headline_suite", hk) for s in SIDES}
    head_jo = _find(runs, "ragmeter", "headline_suite_json_object", hk)
    head_rel = _find(runs, "ragmeter", "headline_suite_relevance", hk)
    probe = {s: _find(runs, s, "probe_suite", hk) for s in SIDES}
    add(f"## Headline: the standard suite, k={hk} contexts, N={meta['n']}")
    add("")
    add(
        "| side | metrics | chat calls/sample (min-max) | in sequence (probe) | prompt "
        "tokens/sample | +schema | embedding calls/sample | client CPU ms/sample | CPU ms/chat "
        "request | wall s | floor s: throughput / chain | peak in flight | retries |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = (
        ("ragmeter (json_schema)", "4", heads["ragmeter"], "ragmeter"),
        ("ragmeter (json_object)", "4", head_jo, "ragmeter"),
        ("ragmeter + context_relevance", "5", head_rel, "ragmeter"),
        (_label("ragas", meta), "4", heads["ragas"], "ragas"),
        (_label("deepeval", meta), "5", heads["deepeval"], "deepeval"),
    )
    for label, count, run, side in rows:
        if run is None:
            continue
        add(
            f"| {label} | {count} | {_f(run['calls_per_sample'], 2)} ({run['calls_min']}-"
            f"{run['calls_max']}) | {_depth(probe[side])} | {_f(run['tokens_per_sample'], 0)} | "
            f"{_f(run['schema_tokens_per_sample'], 0)} | "
            f"{_f(run['embedding_calls_per_sample'], 2)} | {_ms(run.get('cpu_ms_per_sample'))} | "
            f"{_ms(run.get('cpu_ms_per_call'))} | {_f(run['wall_s'])} | "
            f"{_f(run['floor_s'])} / {_f(run['chain_s'])} | {run.get('peak_in_flight', 'n/a')} | "
            f"{run['retries']} |"
        )
    de = heads["deepeval"]
    if de:
        calls4, tokens4 = _without(de, "contextual_relevancy/")
        add(
            f"| {_label('deepeval', meta)} without ContextualRelevancy (from the same run) | 4 | "
            f"{calls4:.2f} | {_depth(probe['deepeval'])} | {tokens4:,.0f} | | | | | | | | |"
        )
    add("")
    add(
        "Floors: throughput = chat calls x latency / 16 (the least time the chat calls can "
        "take at 16 in flight); chain = calls in sequence x latency (the least time one "
        "sample takes). Peak in flight: the most chat and embedding requests received within "
        "one latency (200 ms) of each other. Totals: "
        + "; ".join(
            f"{_label(s, meta)} {r['chat_calls']:,} chat calls, "
            f"{r['tokens_per_sample'] * r['n']:,.0f} prompt tokens, "
            f"{r['chars_per_sample'] * r['n'] / 1e6:.2f} M prompt characters"
            for s, r in heads.items()
            if r
        )
        + "."
    )
    add("")

    add("## Targets")
    add("")
    for line in report["targets"]:
        add(f"- {line}")
    add("")

    add("## Client CPU")
    add("")
    add(
        "CPU time of each side's worker process inside `evaluate()` (`time.process_time()`, "
        "all threads), per sample and per chat request; x ragmeter: per sample, against "
        "ragmeter's json_schema run of the same job."
    )
    add("")
    add(
        "| run | k | N | "
        + " | ".join(f"{_label(s, meta)} ms/sample" for s in sides)
        + " | "
        + " | ".join(f"{_label(s, meta)} ms/request" for s in sides)
        + " | "
        + " | ".join(f"{_label(s, meta)} x ragmeter" for s in sides if s != "ragmeter")
        + " |"
    )
    add("|---" * (3 + 2 * len(sides) + len(sides) - 1) + "|")
    cpu_rows = [("headline_suite", hk)] + [("suite", k) for k in ks]
    for name, k in cpu_rows:
        found = {s: _find(runs, s, name, k) for s in sides}
        if not found.get("ragmeter"):
            continue
        base = found["ragmeter"].get("cpu_ms_per_sample")
        add(
            f"| {name} | {k} | {found['ragmeter']['n']} | "
            + " | ".join(_ms(r.get("cpu_ms_per_sample")) if r else "n/a" for r in found.values())
            + " | "
            + " | ".join(_ms(r.get("cpu_ms_per_call")) if r else "n/a" for r in found.values())
            + " | "
            + " | ".join(
                f"{r['cpu_ms_per_sample'] / base:.0f}x"
                if r and base and r.get("cpu_ms_per_sample")
                else "n/a"
                for s, r in found.items()
                if s != "ragmeter"
            )
            + " |"
        )
    add("")
    if processes:
        add(
            "Whole worker processes (one per side and k; every job of that k: probes, sweep, "
            "per-metric and headline runs), CPU seconds: in all / inside `evaluate()` / the rest "
            "(interpreter start-up, imports, building metrics and clients, teardown)."
        )
        add("")
        add("| k | " + " | ".join(_label(s, meta) for s in sides) + " |")
        add("|---" * (1 + len(sides)) + "|")
        for k in ks:
            cells = []
            for s in sides:
                p = next((p for p in processes if p["side"] == s and p["k"] == k), None)
                cells.append(
                    "n/a"
                    if p is None
                    else f"{p['cpu_s']:.1f} / {p['cpu_in_evaluate_s']:.1f} / "
                    f"{p['cpu_s'] - p['cpu_in_evaluate_s']:.1f}"
                )
            add(f"| {k} | " + " | ".join(cells) + " |")
        add("")

    add(f"## k sweep: the standard suite, N={meta['sweep_n']}")
    add("")
    add(
        "Cells are ragmeter / ragas / DeepEval (DeepEval: its five metrics). Ratios: "
        "ragmeter's prompt tokens per sample over the other side's; +schema: with the JSON "
        "schema ragmeter sends in `response_format` counted too (DeepEval's own schema tokens "
        "are listed in the headline)."
    )
    add("")
    add(
        "| k | calls/sample | in sequence (probe) | prompt tokens/sample | ragmeter ÷ ragas | "
        "÷ ragas +schema | ragmeter ÷ DeepEval | wall s | floor s (best) | client CPU "
        "ms/sample |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        r = {s: _find(runs, s, "suite", k) for s in SIDES}
        p = {s: _find(runs, s, "probe_suite", k) for s in SIDES}
        a, b, c = r["ragmeter"], r["ragas"], r["deepeval"]
        if not a:
            continue

        def col(key: str, digits: int, r: dict[str, Any] = r) -> str:
            return _cells([_f(x[key], digits) if x else "n/a" for x in r.values()])

        with_schema = a["tokens_per_sample"] + a["schema_tokens_per_sample"]
        add(
            f"| {k} | {col('calls_per_sample', 2)} | "
            f"{_cells([_depth(x) for x in p.values()])} | {col('tokens_per_sample', 0)} | "
            f"{_pct(a['tokens_per_sample'], b['tokens_per_sample']) if b else 'n/a'} | "
            f"{_pct(with_schema, b['tokens_per_sample']) if b else 'n/a'} | "
            f"{_pct(a['tokens_per_sample'], c['tokens_per_sample']) if c else 'n/a'} | "
            f"{col('wall_s', 1)} | {col('best_s', 1)} | "
            f"{_cells([_ms(x.get('cpu_ms_per_sample')) if x else 'n/a' for x in r.values()])} |"
        )
    add("")

    add(f"## k sweep: noise_sensitivity (mode relevant), N={meta['sweep_n']}")
    add("")
    add("DeepEval has no noise-sensitivity metric; ragmeter / ragas.")
    add("")
    add(
        "| k | ragmeter calls/sample | ragas calls/sample | ragmeter in sequence | "
        "ragas in sequence | ragmeter tokens/sample | ragas tokens/sample | ratio | "
        "ratio +schema | ragmeter wall s (floor) | ragas wall s (floor) |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        a, b = _find(runs, "ragmeter", "noise", k), _find(runs, "ragas", "noise", k)
        pa, pb = _find(runs, "ragmeter", "probe_noise", k), _find(runs, "ragas", "probe_noise", k)
        if not a or not b:
            continue
        with_schema = a["tokens_per_sample"] + a["schema_tokens_per_sample"]
        add(
            f"| {k} | {_f(a['calls_per_sample'], 2)} | {_f(b['calls_per_sample'], 2)} | "
            f"{_depth(pa)} | {_depth(pb)} | {_f(a['tokens_per_sample'], 0)} | "
            f"{_f(b['tokens_per_sample'], 0)} | "
            f"{_pct(a['tokens_per_sample'], b['tokens_per_sample'])} | "
            f"{_pct(with_schema, b['tokens_per_sample'])} | "
            f"{_f(a['wall_s'])} ({_f(a['best_s'])}) | {_f(b['wall_s'])} ({_f(b['best_s'])}) |"
        )
    add("")

    add(f"## Each metric alone, N={meta['sweep_n']}")
    add("")
    add(
        "Cells are ragmeter / ragas / DeepEval, each side's metric of that row (see \"Which "
        'metric is which"); n/a where a side has none.'
    )
    add("")
    add("| metric | k | calls/sample | prompt tokens/sample | ragmeter ÷ ragas | wall s |")
    add("|---|---|---|---|---|---|")
    counterpart = {v: k for k, v in DEEPEVAL_COUNTERPART.items() if v}
    for metric in (*SUITE, "noise", "contextual_relevancy"):
        for k in ks:
            if metric == "contextual_relevancy":
                r = {
                    "ragmeter": None,
                    "ragas": None,
                    "deepeval": _find(runs, "deepeval", metric, k),
                }
            else:
                de_name = counterpart.get(metric)
                r = {
                    "ragmeter": _find(runs, "ragmeter", metric, k),
                    "ragas": _find(runs, "ragas", metric, k),
                    "deepeval": _find(runs, "deepeval", de_name, k) if de_name else None,
                }
            if not any(r.values()):
                continue
            a, b = r["ragmeter"], r["ragas"]
            add(
                f"| {metric} | {k} | "
                f"{_cells([_f(x['calls_per_sample'], 2) if x else 'n/a' for x in r.values()])} | "
                f"{_cells([_f(x['tokens_per_sample'], 0) if x else 'n/a' for x in r.values()])} | "
                f"{_pct(a['tokens_per_sample'], b['tokens_per_sample']) if a and b else 'n/a'} | "
                f"{_cells([_f(x['wall_s']) if x else 'n/a' for x in r.values()])} |"
            )
    add("")

    low_k = min(ks)
    add(
        f"## Where the prompt tokens go: the suite at k={hk} (N={meta['n']}) and k={low_k} "
        f"(N={meta['sweep_n']})"
    )
    add("")
    add(
        "Per call type: calls per sample, prompt tokens per call, and per call its "
        "instructions (system prompt; ragas: instruction + JSON schema; DeepEval: the prompt "
        "less its worked example and data), few-shot examples (DeepEval: its worked example) "
        "and the sample's own data (DeepEval: everything after the instructions' closing `**`, "
        "including the verdicts and reasons its reason calls carry). DeepEval's kinds are "
        "metric/step."
    )
    add("")
    add(
        "| k | side | call | calls/sample | tokens/call | instructions | examples | data | "
        "tokens/sample | share |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|")
    table = [(s, heads[s]) for s in SIDES]
    if low_k != hk:
        table += [(s, _find(runs, s, "suite", low_k)) for s in SIDES]
    for side, run in table:
        if run is None:
            continue
        total = sum(c["tokens"] for c in run["per_type"].values())
        for kind, c in sorted(run["per_type"].items(), key=lambda kv: -kv[1]["tokens"]):
            calls = c["calls"]
            add(
                f"| {run['k']} | {_label(side, meta)} | {kind} | {calls / run['n']:.2f} | "
                f"{c['tokens'] / calls:,.0f} | "
                f"{c.get('instructions', 0) / calls:,.0f} | {c.get('examples', 0) / calls:,.0f} | "
                f"{c.get('data', 0) / calls:,.0f} | {c['tokens'] / run['n']:,.0f} | "
                f"{_pct(c['tokens'], total)} |"
            )
    add("")

    add("## Scores (sanity: every answer parsed, no NaN, no metric error)")
    add("")
    add(
        "| run | k | N | side | metric | mean | ok | failed/NaN/error | unattributed requests | "
        "retries |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        if run["name"] not in ("headline_suite", "headline_suite_relevance", "noise", "suite"):
            continue
        for metric, s in run["scores"].items():
            add(
                f"| {run['name']} | {run['k']} | {run['n']} | {_label(run['side'], meta)} | "
                f"{metric} | {_f(s['mean'], 3)} | {s['n_ok']} | {s['n_failed']} | "
                f"{run['unmapped']} | {run['retries']} |"
            )
    add("")
    failures = [
        (r["side"], r["name"], r["k"], m, s["n_failed"])
        for r in runs
        for m, s in r["scores"].items()
        if s["n_failed"]
    ]
    eliminated = sum(r.get("attributed_by_elimination", 0) for r in runs)
    add(
        "All runs: "
        + (
            "no failed, NaN or errored score, "
            if not failures
            else f"{len(failures)} (run, metric) pairs with failed/NaN scores: {failures[:8]}, "
        )
        + f"{sum(r['retries'] for r in runs)} retries (ragmeter and DeepEval: repeated prompts "
        "within a sample, i.e. re-asks or HTTP retries; ragas: fix_output_format calls and job "
        f"exceptions), {sum(r['unmapped'] for r in runs)} requests not attributed to one "
        f"sample; {eliminated:,} DeepEval faithfulness reason calls, which carry no text of "
        "their sample when it has no contradiction, were attributed by elimination (see the "
        "notes)."
    )
    warned: Counter[str] = Counter()
    for run in runs:
        if run["side"] == "ragas":
            warned.update(run.get("warnings", {}))
    if warned:
        add("")
        add(
            "Warnings ragas logged (all runs): "
            + "; ".join(f"{n} x `{m}`" for m, n in warned.most_common(5))
        )
    errors: Counter[str] = Counter()
    for run in runs:
        if run["side"] == "deepeval":
            errors.update(run.get("warnings", {}))
    add("")
    add(
        "DeepEval metric errors (all runs): "
        + ("none." if not errors else "; ".join(f"{n} x `{m}`" for m, n in errors.most_common(5)))
    )
    add("")
    add("## Notes")
    add("")
    for paragraph in report["notes"]:
        add(paragraph)
        add("")
    add("## Earlier runs")
    add("")
    add(
        f"- {PREVIOUS['date']}, commit `{PREVIOUS['commit']}` (this file's previous version, "
        f"ragmeter and ragas only): ragmeter's standard suite made {PREVIOUS['calls']} calls "
        f"per sample (2 in sequence) and {PREVIOUS['json_schema']:,} prompt tokens per sample "
        f"at k=5, N=200 (json_schema; {PREVIOUS['json_object']:,} json_object), against "
        "ragas 0.4.3's 9 calls and 8,853 tokens. Since then the suite gained a fourth call, "
        "reverse_questions (answer relevancy's questions, generated from the response alone)."
    )
    add(
        "- 2026-12-01, ragmeter only, before and after issue 14 (judgments as a table, two "
        "metric protocols, typed details; commits `ae19e48` and its successor): calls, calls in "
        "sequence, prompt tokens and characters were identical at every k, per call kind "
        "(byte-identical prompts, pinned by `tests/steps/test_calls_unchanged.py`)."
    )
    return "\n".join(lines).rstrip() + "\n"


def targets_and_notes(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    runs = report["runs"]
    meta = report["meta"]
    ks, hk = meta["ks"], meta["headline_k"]

    def ok(flag: bool) -> str:
        return "**met**" if flag else "**MISSED**"

    targets = []
    suite = [
        r
        for r in runs
        if r["side"] == "ragmeter"
        and r["name"] in ("suite", "headline_suite", "headline_suite_json_object")
    ]
    worst = max((r["calls_max"] for r in suite), default=0)
    targets.append(
        f"ragmeter standard suite <= 4 judge calls per sample at every k: {ok(worst <= 4)} (max "
        f"{worst} per sample over the sweep and the headline runs; mean "
        + ", ".join(
            f"k={r['k']}: {r['calls_per_sample']:.2f}" for r in suite if r["name"] == "suite"
        )
        + f"; it was {PREVIOUS['calls']} on {PREVIOUS['date']}, before reverse_questions)"
    )
    probes = [r for r in runs if r["side"] == "ragmeter" and r["name"] == "probe_suite"]
    depth = max((r["depth_max"] or 0 for r in probes), default=0)
    targets.append(
        f"at most 2 of them in sequence: {ok(depth <= 2)} (longest chain in the probe runs: "
        f"{depth}; by construction: response_analysis, reverse_questions and reference_review "
        "in parallel, then verify)"
    )
    a = _find(runs, "ragmeter", "headline_suite", hk)
    jo = _find(runs, "ragmeter", "headline_suite_json_object", hk)
    if a:
        limit = PREVIOUS["json_schema"] * TOKENS_GROWTH_TARGET
        grown = a["tokens_per_sample"] / PREVIOUS["json_schema"] - 1
        line = (
            f"ragmeter prompt tokens per sample at k={hk} at most +25% over {PREVIOUS['date']} "
            f"(json_schema {PREVIOUS['json_schema']:,}, so <= {limit:,.0f}): "
            f"{ok(a['tokens_per_sample'] <= limit)} ({a['tokens_per_sample']:,.0f}, "
            f"{100 * grown:+.1f}%"
        )
        if jo:
            line += (
                f"; json_object {jo['tokens_per_sample']:,.0f} against "
                f"{PREVIOUS['json_object']:,}, "
                f"{100 * (jo['tokens_per_sample'] / PREVIOUS['json_object'] - 1):+.1f}%"
            )
        targets.append(line + ")")
    ratios = []
    for k in ks:
        x = _find(runs, "ragmeter", "headline_suite" if k == hk else "suite", k)
        y = _find(runs, "ragas", "headline_suite" if k == hk else "suite", k)
        if x and y:
            ratios.append((k, x["tokens_per_sample"] / y["tokens_per_sample"]))
    head = dict(ratios).get(hk)
    above = [(k, r) for k, r in ratios if r > 0.40]
    if ratios:
        targets.append(
            f"ragmeter prompt tokens per sample <= 40% of ragas's, the suite at k={hk}: "
            f"{ok(head is not None and head <= 0.40)} "
            f"({'n/a' if head is None else f'{100 * head:.0f}%'}); over the k sweep: "
            + ", ".join(f"k={k}: {100 * r:.0f}%" for k, r in ratios)
            + (
                " ("
                + ", ".join(f"k={k} above 40% by {100 * r - 40:.0f} points" for k, r in above)
                + ")"
                if above
                else " (all within 40%)"
            )
        )
    b = _find(runs, "ragas", "headline_suite", hk)
    if a and b:
        schema_ratio = (a["tokens_per_sample"] + a["schema_tokens_per_sample"]) / b[
            "tokens_per_sample"
        ]
        targets.append(
            f"the same with ragmeter's response_format schema counted as prompt tokens, k={hk}: "
            f"{100 * schema_ratio:.0f}%; with json_object mode (schema inside the system prompt): "
            + (f"{100 * jo['tokens_per_sample'] / b['tokens_per_sample']:.0f}%" if jo else "n/a")
        )
    noise = [_find(runs, "ragmeter", "noise", k) for k in ks]
    noise_calls = sorted(
        {r["calls_max"] for r in noise if r} | {r["calls_min"] for r in noise if r}
    )
    ragas_noise = [_find(runs, "ragas", "noise", k) for k in ks]
    if any(noise):
        targets.append(
            f"noise_sensitivity: a constant number of calls: {ok(len(noise_calls) == 1)} "
            f"(ragmeter {'/'.join(map(str, noise_calls))} per sample at "
            f"k={', '.join(map(str, ks))}; ragas "
            + ", ".join(f"{r['calls_per_sample']:.0f}" for r in ragas_noise if r)
            + " = 3 + 2k)"
        )
    walls = [r for r in runs if r["name"] in ("headline_suite", "suite", "noise") and r["best_s"]]
    parts = []
    for side in SIDES:
        mine = [r for r in walls if r["side"] == side]
        if mine:
            parts.append(
                f"{_label(side, meta)}: "
                + ", ".join(
                    f"{r['name']} k={r['k']} {r['wall_s']:.1f} s vs {r['best_s']:.1f} s "
                    f"(x{r['wall_s'] / r['best_s']:.1f})"
                    for r in mine
                )
            )
    targets.append(
        "wall time vs the floor (the larger of chat calls x latency / 16 and calls in "
        "sequence x latency), " + "; ".join(parts)
    )

    notes = []
    if head is not None and a and b:
        rm_types = sorted(a["per_type"].items(), key=lambda kv: -kv[1]["tokens"])
        examples = sum(c.get("examples", 0) for _, c in rm_types) / a["n"]
        instructions = sum(c.get("instructions", 0) for _, c in rm_types) / a["n"]
        data = sum(c.get("data", 0) for _, c in rm_types) / a["n"]
        top_kind, top = rm_types[0]
        notes.append(
            f"At k={hk} ragmeter sends {a['calls_per_sample']:.2f} calls and "
            f"{a['tokens_per_sample']:,.0f} prompt tokens per sample against ragas's "
            f"{b['calls_per_sample']:.2f} calls and {b['tokens_per_sample']:,.0f} tokens "
            f"({100 * head:.0f}%). ragmeter's tokens per sample split into instructions "
            f"{instructions:,.0f}, few-shot examples {examples:,.0f} and the sample's data "
            f"{data:,.0f}; the largest call is {top_kind} ({top['tokens'] / top['calls']:,.0f} "
            "tokens per call). ragas repeats its instruction, JSON schema and few-shot examples "
            "in every one of its calls and re-sends the question and reference with each "
            "context for context_precision, which is why its cost grows with k in both calls "
            "and tokens, while ragmeter sends each context once to reference_review and once "
            "to verify."
        )
    c = _find(runs, "deepeval", "headline_suite", hk)
    if c:
        de_types = c["per_type"]
        per_metric: Counter[str] = Counter()
        per_metric_calls: Counter[str] = Counter()
        reasons = 0.0
        for kind, x in de_types.items():
            per_metric[kind.split("/")[0]] += x["tokens"] / c["n"]
            per_metric_calls[kind.split("/")[0]] += x["calls"] / c["n"]
            if kind.endswith("/reason"):
                reasons += x["calls"] / c["n"]
        calls4, tokens4 = _without(c, "contextual_relevancy/")
        text = (
            f"DeepEval at k={hk} sends {c['calls_per_sample']:.2f} calls and "
            f"{c['tokens_per_sample']:,.0f} prompt tokens per sample (+"
            f"{c['schema_tokens_per_sample']:,.0f} schema tokens in `response_format`) for its "
            "five metrics: "
            + ", ".join(
                f"{m} {per_metric_calls[m]:.0f} calls / {per_metric[m]:,.0f} tokens"
                for m in DEEPEVAL_SUITE
                if m in per_metric
            )
            + f". That is 12 + k calls: faithfulness 4 (truths from the contexts and claims "
            "from the response in parallel, then verdicts, then a reason), answer relevancy 3 "
            "(statements, verdicts, reason), contextual precision and recall 2 each (verdicts, "
            "reason) and contextual relevancy one per context plus a reason; "
            f"{reasons:.0f} of them are the reason calls that `include_reason=True` (the "
            "default) adds, one per metric. Its longest chain is 3 calls (faithfulness and "
            f"answer relevancy). Without ContextualRelevancy (the four metrics ragmeter's suite "
            f"covers) it is {calls4:.0f} calls and {tokens4:,.0f} tokens per sample"
        )
        if a:
            text += (
                f", against ragmeter's {a['calls_per_sample']:.0f} calls and "
                f"{a['tokens_per_sample']:,.0f} tokens "
                f"({100 * a['tokens_per_sample'] / tokens4:.0f}%)"
            )
        if head_rel := _find(runs, "ragmeter", "headline_suite_relevance", hk):
            text += (
                f"; all five against ragmeter with context_relevance added: "
                f"{head_rel['calls_per_sample']:.0f} calls and "
                f"{head_rel['tokens_per_sample']:,.0f} tokens "
                f"({100 * head_rel['tokens_per_sample'] / c['tokens_per_sample']:.0f}%)"
            )
        notes.append(text + ".")
        de_runs = [_find(runs, "deepeval", "suite", k) for k in ks]
        if a and c.get("cpu_ms_per_sample") and a.get("cpu_ms_per_sample"):
            cpu_ratio = c["cpu_ms_per_sample"] / a["cpu_ms_per_sample"]
            call_ratio = c["cpu_ms_per_call"] / a["cpu_ms_per_call"]
            notes.append(
                "Cross-check against an earlier measurement of DeepEval at 5 contexts (17 calls "
                "per sample = 12 + k, 8,351 prompt tokens per sample, 11x ragmeter's client "
                f"CPU): here DeepEval made {c['calls_per_sample']:.0f} calls per sample at k={hk} "
                "("
                + ", ".join(f"k={r['k']}: {r['calls_per_sample']:.0f}" for r in de_runs if r)
                + " in the sweep: 12 + k reproduced) and sent "
                f"{c['tokens_per_sample']:,.0f} prompt tokens per sample "
                f"({100 * (c['tokens_per_sample'] / 8351 - 1):+.0f}% against 8,351: close; "
                "part of DeepEval's prompt is the verdicts and reasons its reason calls carry, "
                "whose length depends on the judge's answers). Its client CPU was "
                f"{c['cpu_ms_per_sample']:,.0f} ms per sample against ragmeter's "
                f"{a['cpu_ms_per_sample']:,.1f} ms, {cpu_ratio:.0f}x, and "
                f"{c['cpu_ms_per_call']:,.1f} ms against {a['cpu_ms_per_call']:,.1f} ms per chat "
                f"request, {call_ratio:.0f}x: "
                + (
                    "close to the 11x"
                    if 11 / 1.5 <= cpu_ratio <= 11 * 1.5
                    else "the 11x is not reproduced, the gap here is "
                    + ("larger" if cpu_ratio > 11 else "smaller")
                )
                + " (DeepEval makes "
                f"{c['calls_per_sample'] / a['calls_per_sample']:.1f}x the calls, each costing "
                f"{call_ratio:.0f}x the CPU). CPU time inside evaluate(), both sides in the same "
                "run on the same machine; the whole worker processes, imports included, are in "
                "the Client CPU section."
            )
        builds = [
            p["reported_client_build_ms"]
            for p in report.get("processes", [])
            if p["side"] == "deepeval" and p.get("reported_client_build_ms")
        ]
        if builds and c.get("cpu_ms_per_call"):
            build = statistics.fmean(builds)
            rest_per_sample = (c["cpu_ms_per_call"] - build) * c["calls_per_sample"]
            notes.append(
                "Where DeepEval's client CPU goes: its `OpenAIModel.a_generate()` calls "
                "`load_model()` for every request, which builds a new `AsyncOpenAI` client, "
                "and with it an httpx transport and a fresh SSL context that loads the CA "
                "bundle, even for the fake server's plain-http URL. Building one costs "
                f"{build:.1f} ms of CPU on this machine (measured by `_deepeval_side.py` after "
                f"its jobs, mean of 20), {100 * build / c['cpu_ms_per_call']:.0f}% of the "
                f"{c['cpu_ms_per_call']:.1f} ms DeepEval spends per request at k={hk} (a "
                "one-off cProfile of a N=20, k=5 run put `load_verify_locations` alone at 20 ms "
                "a request). The rest is the OpenAI SDK's request building and `parse()` "
                "(pydantic), DeepEval's template rendering and its test-run bookkeeping. "
                "ragmeter and ragas keep one HTTP client per run."
                + (
                    " Less those client builds, DeepEval would spend about "
                    f"{c['cpu_ms_per_call'] - build:.1f} ms per request and "
                    f"{rest_per_sample:.0f} ms per sample, still "
                    f"{rest_per_sample / a['cpu_ms_per_sample']:.0f}x ragmeter's (an estimate "
                    "from these two measurements, not a run)."
                    if a and a.get("cpu_ms_per_sample") and c["cpu_ms_per_call"] > build
                    else ""
                )
            )
        peak = c.get("peak_in_flight")
        notes.append(
            "Concurrency. ragmeter's 16 is a cap on judge requests in flight (and another 16 "
            "on embedding requests: its peak of "
            f"{a['peak_in_flight'] if a else 'n/a'} counts both); ragas's "
            "`max_workers=16` on (sample, metric) jobs, each of which awaits its calls one "
            "after another, so also at most 16 requests; DeepEval's `max_concurrent=16` caps "
            "test cases in flight, and each test case runs its five metrics concurrently "
            "(up to k + 5 requests at once: truths, claims, statements, the contextual "
            "precision and recall verdicts, and one per context), so it may have many more "
            f"requests in flight (peak {peak} at k={hk}, N={c['n']}; "
            + ", ".join(f"{r['peak_in_flight']} at k={r['k']}, N={r['n']}" for r in de_runs if r)
            + "). A real provider's rate limits would see that burst. At "
            f"N={c['n']} DeepEval's wall time ({c['wall_s']:.0f} s) is bound by its own client "
            f"CPU ({(c['cpu_s'] or 0):.0f} s inside evaluate()), not by the fake server's "
            f"latency (floor {c['best_s']:.0f} s)."
        )
        notes.append(
            "Attributing DeepEval's calls. Every DeepEval prompt carries its sample's text "
            "(and so its made-up name) except faithfulness's reason prompt, which carries only "
            "the score and the contradictions found: with no contradiction it holds nothing of "
            "its sample. The analysis gives each such call to the sample that still lacks one, "
            "the one whose faithfulness verdicts call came back just before it; every sample "
            "makes exactly one, so calls per sample are exact, and its chain depth in the probe "
            "runs is right up to samples whose calls were simultaneous (which have the same "
            "depth). "
            + (
                "No other request went unattributed."
                if not any(r["unmapped"] for r in runs)
                else f"{sum(r['unmapped'] for r in runs)} requests stayed unattributed."
            )
        )
    if b:
        notes.append(
            f"Cross-check against the product owner's measurement of ragas 0.4.3 (200 samples x "
            f"5 contexts: 1,800 calls, 9.0 M prompt characters): here ragas made "
            f"{b['chat_calls']:,} calls and sent {b['chars_per_sample'] * b['n'] / 1e6:.1f} M "
            f"prompt characters for N={b['n']} at k={hk} (our contexts average about 86 words). "
            "ragas's collections API (11 calls per sample by the same measurement) was not run "
            "here; only its legacy evaluate()."
        )
    if a and (b or c):
        parts = []
        for metric in SUITE:
            x = a["scores"].get(metric, {}).get("mean")
            y = b["scores"].get(metric, {}).get("mean") if b else None
            de_name = next((d for d, m in DEEPEVAL_COUNTERPART.items() if m == metric), None)
            z = c["scores"].get(de_name, {}).get("mean") if c and de_name else None
            parts.append(f"{metric} {_f(x, 3)} / {_f(y, 3)} / {_f(z, 3)}")
        relevancy = c["scores"].get("contextual_relevancy", {}).get("mean") if c else None
        rel = _find(runs, "ragmeter", "headline_suite_relevance", hk)
        rm_rel = rel["scores"].get("context_relevance", {}).get("mean") if rel else None
        notes.append(
            "Scores. Every side's fake judge applies one rule, as each side's prompt defines "
            "its verdicts: a passage supports a statement it contains word for word; DeepEval's "
            "faithfulness verdict is 'no' only where the context states the same fact with "
            "another value and 'borderline' where it does not mention it (DeepEval's own "
            "instruction); a context sentence is relevant to the question when it states one "
            "of the place's facts (DeepEval's contextual relevancy; ragmeter's context_relevance "
            "judges whole contexts by the same rule); a response statement is relevant to the "
            "question when it answers what the question asks in particular, else 'borderline' "
            f"(DeepEval's answer relevancy). Means at k={hk}, N={a['n']}, ragmeter / ragas / "
            "DeepEval: "
            + ", ".join(parts)
            + f"; DeepEval contextual_relevancy {_f(relevancy, 3)} (ragmeter context_relevance "
            f"{_f(rm_rel, 3)}). Context precision and recall agree across the three sides (the "
            "same definitions); faithfulness is higher for DeepEval because an unmentioned "
            "claim passes; answer relevancy differs by definition (ragmeter and ragas compare "
            "embeddings of generated questions, with the fake server's bag-of-words vectors; "
            "ragmeter embeds 3 generated questions, ragas the single one the fake server "
            "returns; DeepEval's statements all count as relevant or borderline here)."
        )
    low_k = min(ks)
    la, lb = _find(runs, "ragmeter", "suite", low_k), _find(runs, "ragas", "suite", low_k)
    if la and lb and low_k != hk:
        fixed = sum(
            x.get("instructions", 0) + x.get("examples", 0) for x in la["per_type"].values()
        )
        fixed_examples = sum(x.get("examples", 0) for x in la["per_type"].values())
        ragas_fixed = sum(
            x.get("instructions", 0) + x.get("examples", 0) for x in lb["per_type"].values()
        )
        ratio = la["tokens_per_sample"] / lb["tokens_per_sample"]
        without = la["tokens_per_sample"] - fixed_examples / la["n"]
        notes.append(
            f"At k={low_k} the ratio to ragas is {100 * ratio:.0f}%: ragas then makes only "
            f"{lb['calls_per_sample']:.0f} calls, and ragmeter's fixed part (system prompts "
            f"and few-shot examples, {fixed / la['n']:,.0f} of its "
            f"{la['tokens_per_sample']:,.0f} tokens per sample, of which few-shot examples "
            f"{fixed_examples / la['n']:,.0f}) weighs more than the data, against "
            f"{ragas_fixed / lb['n']:,.0f} fixed tokens of ragas's "
            f"{lb['tokens_per_sample']:,.0f}. Dropping the examples from ragmeter's "
            f"prompts would bring k={low_k} to about "
            f"{100 * without / lb['tokens_per_sample']:.0f}%."
        )
    with_schema = []
    for k in ks:
        x = _find(runs, "ragmeter", "headline_suite" if k == hk else "suite", k)
        y = _find(runs, "ragas", "headline_suite" if k == hk else "suite", k)
        if x and y:
            total = x["tokens_per_sample"] + x["schema_tokens_per_sample"]
            with_schema.append(f"{100 * total / y['tokens_per_sample']:.0f}% at k={k}")
    if a and with_schema:
        notes.append(
            "The JSON schema ragmeter sends in `response_format` (json_schema mode, "
            f"{a['schema_tokens_per_sample'] / a['calls_per_sample']:,.0f} tokens per call under "
            "this token rule, which counts every JSON punctuation character as a token) is not "
            "in the messages, so the fake server's usage leaves it out; a provider that turns "
            "the schema into prompt text may bill it, as json_object mode does explicitly. "
            "Counted as prompt tokens, the suite's ratio to ragas is "
            + ", ".join(with_schema)
            + ": like the few-shot examples it is a fixed cost per call, which is what pushes "
            "the small-k ratios up. DeepEval sends its schema the same way ("
            + (
                f"{c['schema_tokens_per_sample'] / c['calls_per_sample']:,.0f} tokens per call"
                if c
                else "n/a"
            )
            + ")."
        )
    notes.append(
        "How the in-sequence figures were obtained: per sample, the longest chain of chat "
        "calls each of which arrived at least 0.9 x latency after the previous one, measured in "
        f"the probe runs (N={meta['probe_n']}, few enough samples that no call waits for a "
        "concurrency slot, so a chain means a real dependency). For ragas this matches its "
        "code: legacy evaluate() runs each (sample, metric) as one job, metrics in parallel; "
        "inside a job the calls are awaited one after another (faithfulness 2, "
        "answer_relevancy 1, context_precision 1 per context, context_recall 1; "
        "noise_sensitivity 2 + 2k + 1), so a sample's chain is the longest metric's. Its "
        "synchronous embedding calls (answer_relevancy) block the event loop and may lengthen "
        "the measured chain by one. For DeepEval: faithfulness's truths and claims in "
        "parallel, then verdicts, then reason; answer relevancy's statements, verdicts, "
        "reason; 3 in all."
    )
    notes.append(
        "Caveats. The fake server answers every request after the same latency whatever its "
        "length; a real judge's latency grows with prompt and answer length, and ragmeter's "
        "calls are fewer but each longer than ragas's and DeepEval's (reference_review and "
        "verify carry every context), so per-call latency would be somewhat higher for "
        "ragmeter. ragas's answer_relevancy asks for n=3 completions in one request; the fake "
        "server returns one choice (ragas logs a warning and scores from one question), which "
        "does not change the call or prompt-token counts (an OpenAI endpoint bills the prompt "
        "once for n completions). ragas's answer_relevancy embeds synchronously inside its "
        "event loop (two blocking embedding requests per sample), which stalls every other job "
        "of the run for their latency and accounts for much of its wall time above the floors. "
        "DeepEval's reason prompts carry the verdicts' reasons, written here by the fake judge "
        "(short quotes); a real judge's may be longer. Completion tokens are not compared: they "
        "depend on the fake answers. Client CPU depends on the machine and on the Python "
        "packages; the fake server's own CPU (in the parent process) is not counted for any "
        "side. The wall times were taken on a shared 2-core machine."
    )
    return targets, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="samples in the headline run")
    parser.add_argument("--sweep-n", type=int, default=50, help="samples in k-sweep runs")
    parser.add_argument("--probe-n", type=int, default=4, help="samples in the depth probes")
    parser.add_argument("--ks", default="1,3,5,10", help="context counts")
    parser.add_argument("--headline-k", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sides", default="ragmeter,ragas,deepeval")
    parser.add_argument("--ragas-python", default=str(DEFAULT_RAGAS_VENV / "bin" / "python"))
    parser.add_argument("--install-ragas", action="store_true", help="create the ragas venv")
    parser.add_argument("--deepeval-python", default=str(DEFAULT_DEEPEVAL_VENV / "bin" / "python"))
    parser.add_argument("--install-deepeval", action="store_true", help="create the DeepEval venv")
    parser.add_argument(
        "--deepeval-per-metric",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run each DeepEval metric alone at every k (default: yes)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MD.name}")
    parser.add_argument("--out", type=Path, default=DEFAULT_MD)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker_main(args.worker)
        return
    if args.install_ragas or args.install_deepeval:
        if args.install_ragas:
            install_ragas(DEFAULT_RAGAS_VENV)
        if args.install_deepeval:
            install_deepeval(DEFAULT_DEEPEVAL_VENV)
        if not args.write:
            return

    if args.render_only:
        report = json.loads(args.json.read_text())
    else:
        ks = [int(k) for k in args.ks.split(",")]
        if args.headline_k not in ks:
            ks.append(args.headline_k)
        sides = args.sides.split(",")
        if "ragas" in sides and not Path(args.ragas_python).exists():
            sys.exit(f"no ragas python at {args.ragas_python}: run with --install-ragas first")
        if "deepeval" in sides and not Path(args.deepeval_python).exists():
            sys.exit(
                f"no DeepEval python at {args.deepeval_python}: run with --install-deepeval first"
            )
        load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        runs: list[dict[str, Any]] = []
        processes: list[dict[str, Any]] = []
        began = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ragmeter-judge-bench-") as name:
            tmp = Path(name)
            for k in ks:
                dataset = make_dataset(max(args.n, args.sweep_n, args.probe_n), k, args.seed)
                for side in sides:
                    done, process = run_side(side, k, plan_jobs(k, args, side), dataset, args, tmp)
                    runs.extend(done)
                    processes.append(process)
        meta = {
            "command": "python bench/judge_calls_vs_ragas.py " + " ".join(sys.argv[1:]),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.system()} {platform.machine()}",
            "nproc": os.cpu_count(),
            "load_before": load_before,
            "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "commit": _git("rev-parse", "--short", "HEAD"),
            "src_modified": bool(_git("status", "--porcelain", "--", "src")),
            "ragmeter_version": _ragmeter_version(),
            "python": platform.python_version(),
            "ragas_versions": _ragas_versions(args.ragas_python) if "ragas" in sides else {},
            "deepeval_versions": (
                _deepeval_versions(args.deepeval_python) if "deepeval" in sides else {}
            ),
            "sides": sides,
            "ks": ks,
            "headline_k": args.headline_k,
            "n": args.n,
            "sweep_n": args.sweep_n,
            "probe_n": args.probe_n,
            "latency_ms": args.latency_ms,
            "total_s": time.perf_counter() - began,
        }
        report = {"meta": meta, "runs": runs, "processes": processes}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
    attach_floors(report["runs"], report["meta"]["latency_ms"] / 1000)
    report["targets"], report["notes"] = targets_and_notes(report)
    text = render(report)
    print(text)
    if args.write:
        args.out.write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
