"""Judge calls, prompt tokens and wall time per sample: ragmeter vs ragas 0.4.3.

Both sides score the same seeded synthetic English dataset against their own
:class:`~ragmeter.testing.FakeOpenAIServer` (same latency, default 200 ms per request, chat
and embeddings alike) whose responder returns valid structured answers for whatever each side
asks, so that every answer parses and every score is real. The servers run in this process and
record every request; each side runs in its own subprocess (ragmeter with this interpreter,
ragas 0.4.3 in its own virtualenv), so neither shares the CPU with its server's Python threads.

* ragmeter: ``ragmeter.evaluate(..., concurrency=16)`` with ``OpenAIJudge`` (json_schema,
  ``max_concurrency=16``, no cache) and ``OpenAIEmbeddings`` (``max_concurrency=16``, no cache).
* ragas 0.4.3: legacy ``ragas.evaluate()`` with ``LangchainLLMWrapper(ChatOpenAI(...))``,
  ``LangchainEmbeddingsWrapper(OpenAIEmbeddings(...))`` and ``RunConfig(max_workers=16)``;
  metrics ``Faithfulness``, ``AnswerRelevancy``, ``ContextPrecision`` (with reference),
  ``ContextRecall`` and, separately, ``NoiseSensitivity`` (mode relevant). No telemetry
  (``RAGAS_DO_NOT_TRACK=true``).

Measured from the servers' request logs, per run: chat calls per sample (mean/min/max; each
request is attributed to its sample by the sample's unique made-up name, which every text of
the sample carries), prompt tokens per sample (the fake server's ``usage.prompt_tokens`` rule,
:func:`ragmeter.testing._fake_server.tokenize`, over the messages' text; the JSON schema that
ragmeter sends in ``response_format`` is counted apart), prompt characters, embedding calls,
parse-retry calls, and the longest chain of calls in sequence within a sample (a call is after
another when it arrives at least 0.9 x latency after it; exact in the *probe* runs, which have
so few samples that nothing queues). Wall time is taken around ``evaluate()`` in the worker.

    .venv/bin/python bench/judge_calls_vs_ragas.py --install-ragas   # once: ragas venv
    .venv/bin/python bench/judge_calls_vs_ragas.py --write          # ~15-25 min on 2 cores
    .venv/bin/python bench/judge_calls_vs_ragas.py --n 20 --sweep-n 8 --ks 1,5  # smoke run
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
        start = time.monotonic()
        result = ragmeter.evaluate(
            data, list(job["metrics"]), judge=judge, embeddings=embeddings, concurrency=CONCURRENCY
        )
        end = time.monotonic()
        scores = {}
        for name, agg in result.aggregates.items():
            scores[name] = {
                "mean": agg.mean,
                "n_ok": agg.n_ok,
                "n_failed": agg.n_failed,
                "n_not_applicable": agg.n_not_applicable,
            }
        out.append({**job, "start": start, "end": end, "wall_s": end - start, "scores": scores})
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
        start, end, scores = ragas_timed_evaluate(rows[: job["n"]], metrics, llm, embeddings)
        out.append(
            {
                **job,
                "start": start,
                "end": end,
                "wall_s": end - start,
                "scores": scores,
                "warnings": dict(warned),
            }
        )
        time.sleep(0.5)
    return out


def _worker_main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    work = _worker_ragmeter if spec["side"] == "ragmeter" else _worker_ragas
    results = work(spec)
    Path(spec["out"]).write_text(json.dumps(results))


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
    per_sample_calls: Counter[int] = Counter()
    per_sample_times: dict[int, list[float]] = defaultdict(list)
    per_type: dict[str, Counter[str]] = defaultdict(Counter)
    unmapped = 0
    totals: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for r in chat:
        body = r.body or {}
        seen[json.dumps(body.get("messages"), sort_keys=True)] += 1
        text = " ".join(_content(m) for m in body.get("messages", []))
        found = Counter(w for w in re.findall(r"\b[A-Z][a-z]+\b", text) if w in names)
        sample = names[found.most_common(1)[0][0]] if len(found) == 1 else -1
        if sample < 0:
            unmapped += 1
        per_sample_calls[sample] += 1
        per_sample_times[sample].append(r.received_at)
        kind = ragmeter_call_type(body) if side == "ragmeter" else ragas_call_type(body)
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
    # answer) or its HTTP layer retries; ragas legitimately repeats NLI prompts in
    # noise_sensitivity (response and reference with the same statements), so its retries
    # are its fix_output_format (StringIO) calls and the job exceptions it logs.
    repeated = sum(c - 1 for c in seen.values())
    parse_retries = per_type.get("StringIO", Counter())["calls"]
    errors = sum(n for message, n in job.get("warnings", {}).items() if "Exception" in message)
    retries = repeated if side == "ragmeter" else parse_retries + errors
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
        "retries": retries,
        "repeated_prompts": repeated,
        "wall_s": job["wall_s"],
        "floor_s": len(chat) * latency_s / CONCURRENCY,
        "floor_all_s": (len(chat) + len(embed)) * latency_s / CONCURRENCY,
        "per_type": {kind: dict(c) for kind, c in per_type.items()},
        "scores": job["scores"],
        "warnings": job.get("warnings", {}),
    }


def run_side(
    side: str,
    k: int,
    jobs: list[dict[str, Any]],
    dataset: list[dict[str, Any]],
    args: argparse.Namespace,
    tmp: Path,
) -> list[dict[str, Any]]:
    from ragmeter.testing import FakeOpenAIServer

    responder = ragmeter_reply if side == "ragmeter" else ragas_reply
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
        python = sys.executable if side == "ragmeter" else args.ragas_python
        env = {
            **os.environ,
            "RAGAS_DO_NOT_TRACK": "true",
            "HF_HUB_OFFLINE": "1",
            "OPENAI_API_KEY": "x",
            "PYTHONWARNINGS": "ignore",
        }
        log = tmp / f"log_{side}_k{k}.txt"
        began = time.perf_counter()
        with log.open("w") as stream:
            done = subprocess.run(
                [str(python), str(Path(__file__).resolve()), "--worker", str(spec_path)],
                env=env,
                stdout=stream,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0:
            sys.exit(f"{side} worker (k={k}) failed:\n{log.read_text()[-4000:]}")
        requests = srv.requests
        ran = json.loads(Path(spec["out"]).read_text())
    print(
        f"  {side:8s} k={k:<2d} {len(ran)} jobs, {len(requests)} requests, "
        f"{time.perf_counter() - began:.0f} s (incl. start-up)",
        flush=True,
    )
    return [analyse(side, requests, job, names, latency) for job in ran]


def plan_jobs(k: int, args: argparse.Namespace, side: str) -> list[dict[str, Any]]:
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
    return jobs


def attach_floors(runs: list[dict[str, Any]], latency_s: float) -> None:
    """``chain_s``: the probe's longest in-sequence chain x latency (one sample alone cannot
    finish faster); ``best_s``: the larger of that and the throughput floor."""
    for run in runs:
        kind = "noise" if run["name"] == "noise" else "suite"
        probe = _find(runs, run["side"], f"probe_{kind}", run["k"])
        known = run["name"] in ("suite", "noise", "headline_suite", "headline_suite_json_object")
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


def _ragas_versions(python: str) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
        "['ragas', 'langchain-openai', 'langchain-community', 'langchain-core', 'openai']}))"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def install_ragas(venv: Path) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *RAGAS_REQUIREMENTS], check=True)


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


def render(report: dict[str, Any]) -> str:
    runs = report["runs"]
    meta = report["meta"]
    ks = meta["ks"]
    hk = meta["headline_k"]
    lines: list[str] = []
    add = lines.append
    add("# Judge calls and prompt tokens: ragmeter vs ragas 0.4.3")
    add("")
    add(
        "Produced by `bench/judge_calls_vs_ragas.py` (method in its docstring). Both sides "
        "score the same seeded synthetic English dataset against a `FakeOpenAIServer` each "
        f"(latency {meta['latency_ms']} ms on every chat and embeddings request), at the same "
        f"concurrency ({CONCURRENCY}); counts come from the servers' request logs."
    )
    add("")
    add("```sh")
    add(meta["command"].strip() + "   # the measurements, saved to bench/.cache/*.json")
    add("python bench/judge_calls_vs_ragas.py --render-only --write   # this file from the json")
    add("```")
    add("")
    add(f"- Date: {meta['date']}")
    add(
        f"- Machine: {meta['machine']}, nproc {meta['nproc']}; load average before "
        f"{meta['load_before']}, after {meta['load_after']} (other jobs were running; wall "
        "times are indicative, call and token counts are exact)"
    )
    add(f"- ragmeter: commit `{meta['commit']}`, Python {meta['python']}")
    add(
        "- ragas: "
        + ", ".join(f"{k} {v}" for k, v in meta["ragas_versions"].items())
        + " (own venv, legacy `ragas.evaluate()`, `LangchainLLMWrapper(ChatOpenAI)`, "
        "`RunConfig(max_workers=16)`, `RAGAS_DO_NOT_TRACK=true`)"
    )
    add(
        f"- Data: headline N={meta['n']} samples at k={hk}; k sweep and per-metric runs "
        f"N={meta['sweep_n']}; probe runs (depth) N={meta['probe_n']}. Each sample: a question, "
        "a 3-sentence response, a 3-5 sentence reference, k contexts of 60-100 words."
    )
    add(
        "- Tokens: the fake server's `usage.prompt_tokens` rule (a token is a word or a single "
        "punctuation character) over the messages' text, the same rule for both sides. "
        "ragmeter's json_schema mode also sends the output schema in `response_format`; "
        'those tokens are listed apart ("+schema").'
    )
    add("")

    head_rm = _find(runs, "ragmeter", "headline_suite", hk)
    head_rg = _find(runs, "ragas", "headline_suite", hk)
    head_jo = _find(runs, "ragmeter", "headline_suite_json_object", hk)
    add(f"## Headline: the standard suite, k={hk} contexts, N={meta['n']}")
    add("")
    add(
        "| side | chat calls/sample (min-max) | in sequence (probe) | prompt tokens/sample "
        "| +schema | prompt chars/sample | embedding calls/sample | wall s | floor s: "
        "throughput / chain | retries |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|")
    probe = {s: _find(runs, s, "probe_suite", hk) for s in ("ragmeter", "ragas")}
    for label, run, side in (
        ("ragmeter (json_schema)", head_rm, "ragmeter"),
        ("ragmeter (json_object)", head_jo, "ragmeter"),
        ("ragas 0.4.3", head_rg, "ragas"),
    ):
        if run is None:
            continue
        add(
            f"| {label} | {_f(run['calls_per_sample'], 2)} ({run['calls_min']}-"
            f"{run['calls_max']}) | {_depth(probe[side])} | {_f(run['tokens_per_sample'], 0)} | "
            f"{_f(run['schema_tokens_per_sample'], 0)} | {_f(run['chars_per_sample'], 0)} | "
            f"{_f(run['embedding_calls_per_sample'], 2)} | {_f(run['wall_s'])} | "
            f"{_f(run['floor_s'])} / {_f(run['chain_s'])} | {run['retries']} |"
        )
    add("")
    add(
        "Floors: throughput = chat calls x latency / 16 (the least time the chat calls can "
        "take at concurrency 16); chain = calls in sequence x latency (the least time one "
        "sample takes). Totals: "
        + "; ".join(
            f"{lbl} {r['chat_calls']:,} chat calls, {r['tokens_per_sample'] * r['n']:,.0f} "
            f"prompt tokens, {r['chars_per_sample'] * r['n'] / 1e6:.2f} M prompt characters"
            for lbl, r in (("ragmeter", head_rm), ("ragas", head_rg))
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

    for title, name in (
        ("the standard suite", "suite"),
        ("noise_sensitivity (mode relevant)", "noise"),
    ):
        add(f"## k sweep: {title}, N={meta['sweep_n']}")
        add("")
        add(
            "Floor: the larger of the throughput and chain floors. Ratio: ragmeter's prompt "
            "tokens per sample over ragas's; +schema: with the JSON schema ragmeter sends in "
            "`response_format` counted too."
        )
        add("")
        add(
            "| k | ragmeter calls/sample | ragas calls/sample | ragmeter in sequence | "
            "ragas in sequence | ragmeter tokens/sample | ragas tokens/sample | ratio | "
            "ratio +schema | ragmeter wall s (floor) | ragas wall s (floor) |"
        )
        add("|---|---|---|---|---|---|---|---|---|---|---|")
        for k in ks:
            a, b = _find(runs, "ragmeter", name, k), _find(runs, "ragas", name, k)
            pa, pb = (
                _find(runs, "ragmeter", f"probe_{name}", k),
                _find(runs, "ragas", f"probe_{name}", k),
            )
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
        "| metric | k | ragmeter calls/sample | ragas calls/sample | ragmeter tokens/sample | "
        "ragas tokens/sample | ratio | ragmeter wall s | ragas wall s |"
    )
    add("|---|---|---|---|---|---|---|---|---|")
    for metric in (*SUITE, "noise"):
        for k in ks:
            a, b = _find(runs, "ragmeter", metric, k), _find(runs, "ragas", metric, k)
            if not a or not b:
                continue
            add(
                f"| {metric} | {k} | {_f(a['calls_per_sample'], 2)} | "
                f"{_f(b['calls_per_sample'], 2)} | {_f(a['tokens_per_sample'], 0)} | "
                f"{_f(b['tokens_per_sample'], 0)} | "
                f"{_pct(a['tokens_per_sample'], b['tokens_per_sample'])} | {_f(a['wall_s'])} | "
                f"{_f(b['wall_s'])} |"
            )
    add("")

    low = _find(runs, "ragmeter", "suite", min(ks)), _find(runs, "ragas", "suite", min(ks))
    add(
        f"## Where the prompt tokens go: the suite at k={hk} (N={meta['n']}) and k={min(ks)} "
        f"(N={meta['sweep_n']})"
    )
    add("")
    add(
        "Per call type: calls per sample, prompt tokens per call, and per call its "
        "instructions (system prompt or ragas instruction + JSON schema), few-shot examples "
        "and the sample's own data."
    )
    add("")
    add(
        "| k | side | call | calls/sample | tokens/call | instructions | examples | data | "
        "tokens/sample | share |"
    )
    add("|---|---|---|---|---|---|---|---|---|---|")
    for label, run in (
        ("ragmeter", head_rm),
        ("ragas", head_rg),
        ("ragmeter", low[0] if min(ks) != hk else None),
        ("ragas", low[1] if min(ks) != hk else None),
    ):
        if run is None:
            continue
        total = sum(c["tokens"] for c in run["per_type"].values())
        for kind, c in sorted(run["per_type"].items(), key=lambda kv: -kv[1]["tokens"]):
            calls = c["calls"]
            add(
                f"| {run['k']} | {label} | {kind} | {calls / run['n']:.2f} | "
                f"{c['tokens'] / calls:,.0f} | "
                f"{c.get('instructions', 0) / calls:,.0f} | {c.get('examples', 0) / calls:,.0f} | "
                f"{c.get('data', 0) / calls:,.0f} | {c['tokens'] / run['n']:,.0f} | "
                f"{_pct(c['tokens'], total)} |"
            )
    add("")

    add("## Scores (sanity: every answer parsed, no NaN)")
    add("")
    add("| run | k | N | side | metric | mean | ok | failed/NaN | unmapped requests | retries |")
    add("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        if run["name"] not in ("headline_suite", "noise", "suite"):
            continue
        for metric, s in run["scores"].items():
            add(
                f"| {run['name']} | {run['k']} | {run['n']} | {run['side']} | {metric} | "
                f"{_f(s['mean'], 3)} | {s['n_ok']} | {s['n_failed']} | {run['unmapped']} | "
                f"{run['retries']} |"
            )
    add("")
    failures = [
        (r["side"], r["name"], r["k"], m, s["n_failed"])
        for r in runs
        for m, s in r["scores"].items()
        if s["n_failed"]
    ]
    add(
        "All runs: "
        + (
            "no failed or NaN score, "
            if not failures
            else f"{len(failures)} (run, metric) pairs with failed/NaN scores: {failures[:8]}, "
        )
        + f"{sum(r['retries'] for r in runs)} retries (ragmeter: repeated prompts, i.e. "
        "re-asks or HTTP retries; ragas: fix_output_format calls and job exceptions), "
        f"{sum(r['unmapped'] for r in runs)} requests not attributed to one sample."
    )
    warned: Counter[str] = Counter()
    for run in runs:
        warned.update(run.get("warnings", {}))
    if warned:
        add("")
        add(
            "Warnings ragas logged (all runs): "
            + "; ".join(f"{n} x `{m}`" for m, n in warned.most_common(5))
        )
    add("")
    add("## Notes")
    add("")
    for paragraph in report["notes"]:
        add(paragraph)
        add("")
    return "\n".join(lines).rstrip() + "\n"


def targets_and_notes(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    runs = report["runs"]
    meta = report["meta"]
    ks, hk = meta["ks"], meta["headline_k"]

    def ok(flag: bool) -> str:
        return "**met**" if flag else "**MISSED**"

    targets = []
    suite = [
        r for r in runs if r["side"] == "ragmeter" and r["name"] in ("suite", "headline_suite")
    ]
    worst = max((r["calls_max"] for r in suite), default=0)
    targets.append(
        f"ragmeter suite <= 3 judge calls per sample at every k: {ok(worst <= 3)} (max "
        f"{worst} per sample; mean "
        + ", ".join(
            f"k={r['k']}: {r['calls_per_sample']:.2f}" for r in suite if r["name"] == "suite"
        )
        + ")"
    )
    probes = [r for r in runs if r["side"] == "ragmeter" and r["name"] == "probe_suite"]
    depth = max((r["depth_max"] or 0 for r in probes), default=0)
    targets.append(
        f"at most 2 of them in sequence: {ok(depth <= 2)} (longest chain in the probe runs: "
        f"{depth}; by construction: response_analysis and reference_review in parallel, then "
        "verify)"
    )
    ratios = []
    for k in ks:
        a = _find(runs, "ragmeter", "headline_suite" if k == hk else "suite", k)
        b = _find(runs, "ragas", "headline_suite" if k == hk else "suite", k)
        if a and b:
            ratios.append((k, a["tokens_per_sample"] / b["tokens_per_sample"]))
    head = dict(ratios).get(hk)
    above = [(k, r) for k, r in ratios if r > 0.40]
    targets.append(
        f"ragmeter prompt tokens per sample <= 40% of ragas's, the suite at k={hk} (the issue's "
        f"setting): {ok(head is not None and head <= 0.40)} "
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
    schema_ratio = None
    a, b = _find(runs, "ragmeter", "headline_suite", hk), _find(runs, "ragas", "headline_suite", hk)
    if a and b:
        schema_ratio = (a["tokens_per_sample"] + a["schema_tokens_per_sample"]) / b[
            "tokens_per_sample"
        ]
        targets.append(
            f"the same with ragmeter's response_format schema counted as prompt tokens, k={hk}: "
            f"{100 * schema_ratio:.0f}%; with json_object mode (schema inside the system prompt): "
            + (
                f"{100 * j['tokens_per_sample'] / b['tokens_per_sample']:.0f}%"
                if (j := _find(runs, "ragmeter", "headline_suite_json_object", hk))
                else "n/a"
            )
        )
    noise = [_find(runs, "ragmeter", "noise", k) for k in ks]
    noise_calls = sorted(
        {r["calls_max"] for r in noise if r} | {r["calls_min"] for r in noise if r}
    )
    ragas_noise = [_find(runs, "ragas", "noise", k) for k in ks]
    targets.append(
        f"noise_sensitivity: a constant number of calls: {ok(len(noise_calls) == 1)} (ragmeter "
        f"{'/'.join(map(str, noise_calls))} per sample at k={', '.join(map(str, ks))}; ragas "
        + ", ".join(f"{r['calls_per_sample']:.0f}" for r in ragas_noise if r)
        + " = 3 + 2k)"
    )
    walls = [r for r in runs if r["name"] in ("headline_suite", "suite", "noise") and r["best_s"]]
    targets.append(
        "wall time vs the floor (the larger of chat calls x latency / 16 and calls in "
        "sequence x latency), ragmeter: "
        + ", ".join(
            f"{r['name']} k={r['k']} {r['wall_s']:.1f} s vs {r['best_s']:.1f} s "
            f"(x{r['wall_s'] / r['best_s']:.1f})"
            for r in walls
            if r["side"] == "ragmeter"
        )
        + "; ragas: "
        + ", ".join(
            f"{r['name']} k={r['k']} {r['wall_s']:.1f} s vs {r['best_s']:.1f} s "
            f"(x{r['wall_s'] / r['best_s']:.1f})"
            for r in walls
            if r["side"] == "ragas"
        )
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
    if b:
        notes.append(
            f"Cross-check against the product owner's measurement of ragas 0.4.3 (200 samples x "
            f"5 contexts: 1,800 calls, 9.0 M prompt characters): here ragas made "
            f"{b['chat_calls']:,} calls and sent {b['chars_per_sample'] * b['n'] / 1e6:.1f} M "
            f"prompt characters for N={b['n']} at k={hk} (our contexts average about 86 words). "
            "ragas's collections API (11 calls per sample by the same measurement) was not run "
            "here; only its legacy evaluate()."
        )
    if a and b:
        same = [
            (m, a["scores"][m]["mean"], b["scores"][m]["mean"])
            for m in SUITE
            if m in a["scores"] and m in b["scores"]
        ]
        notes.append(
            "Both sides were judged by the same rule (a passage supports a statement it "
            f"contains word for word), and their suite means at k={hk} agree: "
            + ", ".join(f"{m} {x:.3f} vs {y:.3f}" for m, x, y in same)
            + " (ragmeter vs ragas; answer_relevancy differs because ragmeter embeds 3 "
            "generated questions and ragas scores the single one the fake server returns)."
        )
    low_k = min(ks)
    la, lb = _find(runs, "ragmeter", "suite", low_k), _find(runs, "ragas", "suite", low_k)
    if la and lb and low_k != hk:
        fixed = sum(
            c.get("instructions", 0) + c.get("examples", 0) for c in la["per_type"].values()
        )
        fixed_examples = sum(c.get("examples", 0) for c in la["per_type"].values())
        ragas_fixed = sum(
            c.get("instructions", 0) + c.get("examples", 0) for c in lb["per_type"].values()
        )
        ratio = la["tokens_per_sample"] / lb["tokens_per_sample"]
        without = la["tokens_per_sample"] - fixed_examples / la["n"]
        notes.append(
            f"At k={low_k} the ratio is {100 * ratio:.0f}%: ragas then makes only "
            f"{lb['calls_per_sample']:.0f} calls, and ragmeter's fixed part (system prompts "
            f"and few-shot examples, {fixed / la['n']:,.0f} of its "
            f"{la['tokens_per_sample']:,.0f} tokens per sample, of which few-shot examples "
            f"{fixed_examples / la['n']:,.0f}) weighs more than the data, against "
            f"{ragas_fixed / lb['n']:,.0f} fixed tokens of ragas's "
            f"{lb['tokens_per_sample']:,.0f}. Dropping the examples from ragmeter's three "
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
            "Counted as prompt tokens, the suite's ratio is " + ", ".join(with_schema) + ": like "
            "the few-shot examples it is a fixed cost per call, which is what pushes the small-k "
            "ratios up."
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
        "the measured chain by one."
    )
    notes.append(
        "Caveats. The fake server answers every request after the same latency whatever its "
        "length; a real judge's latency grows with prompt and answer length, and ragmeter's "
        "calls are fewer but each longer than ragas's (reference_review and verify carry every "
        "context), so per-call latency would be somewhat higher for ragmeter. ragas's "
        "answer_relevancy asks for n=3 completions in one request; the fake server returns one "
        "choice (ragas logs a warning and scores from one question), which does not change the "
        "call or prompt-token counts (an OpenAI endpoint bills the prompt once for n "
        "completions). ragas's answer_relevancy embeds synchronously inside its event loop (two"
        " blocking embedding requests per sample), which stalls every other job of the run for "
        "their latency and accounts for much of its wall time above the floors. Completion "
        "tokens are not compared: they depend on the fake answers. The wall times were taken on"
        " a shared 2-core machine."
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
    parser.add_argument("--sides", default="ragmeter,ragas")
    parser.add_argument("--ragas-python", default=str(DEFAULT_RAGAS_VENV / "bin" / "python"))
    parser.add_argument("--install-ragas", action="store_true", help="create the ragas venv")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MD.name}")
    parser.add_argument("--out", type=Path, default=DEFAULT_MD)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker_main(args.worker)
        return
    if args.install_ragas:
        install_ragas(DEFAULT_RAGAS_VENV)
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
        load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        runs: list[dict[str, Any]] = []
        began = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ragmeter-judge-bench-") as name:
            tmp = Path(name)
            for k in ks:
                dataset = make_dataset(max(args.n, args.sweep_n, args.probe_n), k, args.seed)
                for side in sides:
                    runs.extend(run_side(side, k, plan_jobs(k, args, side), dataset, args, tmp))
        meta = {
            "command": "python bench/judge_calls_vs_ragas.py " + " ".join(sys.argv[1:]),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.system()} {platform.machine()}",
            "nproc": os.cpu_count(),
            "load_before": load_before,
            "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "commit": _git("rev-parse", "--short", "HEAD"),
            "python": platform.python_version(),
            "ragas_versions": _ragas_versions(args.ragas_python) if "ragas" in sides else {},
            "ks": ks,
            "headline_k": args.headline_k,
            "n": args.n,
            "sweep_n": args.sweep_n,
            "probe_n": args.probe_n,
            "latency_ms": args.latency_ms,
            "total_s": time.perf_counter() - began,
        }
        report = {"meta": meta, "runs": runs}
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
