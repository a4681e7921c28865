"""A new provider whose API is not OpenAI-compatible is one module plus one registry line.

The module below is that module, for Ollama's native chat API (``POST /api/chat`` with a
JSON schema as ``format``, the answer in ``message.content``, ``done_reason: "length"`` when
the token limit cut it off): a config (the shared endpoint settings, its own sampling
settings, how it is read from the environment and from a settings file) and a judge (the
dialect's hooks of the one structured-output loop). docs/extending.md shows it with its line
count. The tests then use it as a user would: a settings file naming ``provider = "ollama"``,
the standard metrics on it, a cut-off answer, an invalid one repaired, pickling."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ragmeter import evaluate
from ragmeter.judge import (
    EndpointJudge,
    EndpointLimits,
    JudgeOutputError,
    Message,
    Price,
    Reply,
    Usage,
    default_judge,
    endpoint_client,
    env_settings,
    estimate_tokens,
    judge_config,
    register_provider,
    repair_request,
)
from tests.metrics.llm import scripts

# -- the provider: this is the whole module ------------------------------------------------


class OllamaConfig(EndpointLimits):
    """Ollama's native API: where it is, the model, its sampling settings."""

    base_url: str = "http://127.0.0.1:11434"
    temperature: float = 0.0
    max_tokens: int = 1024
    price: Price | None = None

    def generation_params(self) -> dict[str, Any]:
        """Every setting that can change an answer (part of every cache key)."""
        return {
            "api": "ollama-chat",
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> OllamaConfig:
        env = os.environ if env is None else env  # RAGMETER_JUDGE_MODEL, _BASE_URL, _API_KEY
        return cls(**env_settings(env, overrides, judge="ollama", model_hint="(qwen2.5:7b)"))

    @classmethod
    def from_file(cls, path: str | Path, section: str = "judge", **overrides: Any) -> OllamaConfig:
        return cls(**cls.file_settings(Path(path), section, overrides, provider="ollama"))


class OllamaJudge(EndpointJudge[OllamaConfig]):
    """Structured output through ``format`` (a JSON schema); the repair is one more turn."""

    dialect = "ollama"
    supports_batched_verdicts = True

    def _open(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.http = endpoint_client(self.config, transport=transport)
        self.limiter = self.http.limiter

    def describe(self) -> dict[str, Any]:
        return {"kind": "ollama", **self.config.describe()}

    def _conversation(self, messages: Sequence[Message], schema: dict[str, Any]) -> Any:
        return [{"role": m.role, "content": m.content} for m in messages]

    def _repair(self, conversation: Any, reply: Reply, error: Exception, schema: Any) -> Any:
        return repair_request(conversation, reply.text, error, schema)

    async def _exchange(
        self, conversation: Any, schema: dict[str, Any], max_tokens: int, usage: Usage
    ) -> Reply | None:
        options = {"temperature": self.config.temperature, "num_predict": max_tokens}
        body = {"model": self.config.model, "messages": conversation, "format": schema}
        body |= {"stream": False, "options": options}
        estimated = sum(estimate_tokens(turn["content"]) for turn in conversation)
        data = await self.http.post("api/chat", body, usage, estimated_tokens=estimated)
        prompt, completion = data.get("prompt_eval_count", 0), data.get("eval_count", 0)
        self._settle(usage, estimated, prompt, completion, cost=0.0)
        cut_off = "done_reason=length" if data.get("done_reason") == "length" else None
        return Reply(data["message"]["content"], cut_off=cut_off)


register_provider("ollama", OllamaConfig, OllamaJudge)

# -- a fake Ollama server ------------------------------------------------------------------


class _Schema:
    """What ``scripts.answer`` reads of a schema class, from the JSON schema sent."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.__name__ = schema["title"]
        self.model_fields = schema["properties"]


class FakeOllama:
    """``POST /api/chat`` answered by ``answer(request body) -> (content, done_reason)``."""

    def __init__(self, answer: Callable[[dict[str, Any]], tuple[str, str]]) -> None:
        self.bodies: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                assert self.path == "/api/chat", self.path
                fake.bodies.append(body)
                content, reason = answer(body)
                reply = {"message": {"role": "assistant", "content": content}, "done": True}
                reply |= {"done_reason": reason, "prompt_eval_count": 100, "eval_count": 10}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def scripted(body: dict[str, Any]) -> tuple[str, str]:
    """The AirPods example's answers (tests/metrics/llm/scripts.py), by the schema sent."""
    messages = [Message(turn["role"], turn["content"]) for turn in body["messages"]]
    return json.dumps(scripts.answer(messages, _Schema(body["format"]))), "stop"


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama(scripted) as server:
        yield server


def settings_file(tmp_path: Path, server: FakeOllama) -> Path:
    path = tmp_path / "judge.toml"
    path.write_text(
        f'[judge]\nprovider = "ollama"\nmodel = "qwen2.5:7b"\nbase_url = "{server.base_url}"\n'
    )
    return path


# -- the tests -------------------------------------------------------------------------------


class Claims(BaseModel):
    claims: list[str]


def ask(judge: OllamaJudge, schema: type[BaseModel] = Claims) -> Any:
    messages = [Message("user", "List the claims.")]
    return asyncio.run(judge.generate(messages, schema, prompt_version="test@1"))


def judge_for(tmp_path: Path, server: FakeOllama) -> OllamaJudge:
    judge = default_judge(judge_config(settings_file(tmp_path, server)))
    assert isinstance(judge, OllamaJudge)
    return judge


def test_a_settings_file_naming_the_provider_makes_its_judge(tmp_path, ollama):
    config = judge_config(settings_file(tmp_path, ollama))
    assert isinstance(config, OllamaConfig) and config.max_retries == 5  # the shared limits
    judge = judge_for(tmp_path, ollama)
    assert judge.identity == f"{ollama.base_url}|qwen2.5:7b"


def test_the_environment_chooses_the_provider_too(ollama):
    env = {"RAGMETER_JUDGE_PROVIDER": "ollama", "RAGMETER_JUDGE_MODEL": "qwen2.5:7b"}
    config = judge_config(env=env | {"RAGMETER_JUDGE_BASE_URL": ollama.base_url})
    assert isinstance(config, OllamaConfig) and config.base_url == ollama.base_url
    with pytest.raises(ValueError, match="the ollama judge needs a model"):
        judge_config(env={"RAGMETER_JUDGE_PROVIDER": "ollama"})


METRICS = ("faithfulness", "context_recall", "context_precision")


def test_the_standard_metrics_score_through_the_new_provider(tmp_path, ollama):
    result = evaluate(
        [scripts.SAMPLE],
        list(METRICS),
        judge=judge_for(tmp_path, ollama),
        embeddings=scripts.embeddings(),
        run_dir=tmp_path / "run",
    )
    scores = {name: result.scores(name)[0] for name in METRICS}
    # the AirPods example's figures: 2 of 3 claims supported, 4 of 5 statements found,
    # contexts 1 and 3 of 5 useful (AP (1/1 + 2/3) / 2)
    assert scores["faithfulness"] == pytest.approx(2 / 3)
    assert scores["context_recall"] == pytest.approx(0.8)
    assert scores["context_precision"] == pytest.approx((1 + 2 / 3) / 2)
    first = ollama.bodies[0]
    assert first["model"] == "qwen2.5:7b" and first["stream"] is False
    assert first["format"]["type"] == "object" and first["options"]["num_predict"] == 1024


def test_a_cut_off_answer_is_asked_again_with_a_doubled_budget_and_an_invalid_one_repaired(
    tmp_path,
):
    answers = iter([("{", "length"), ("not json", "stop"), ('{"claims": ["a"]}', "stop")])
    with FakeOllama(lambda body: next(answers)) as server:
        judgment = ask(judge_for(tmp_path, server))
    assert judgment.output.claims == ["a"]
    assert [body["options"]["num_predict"] for body in server.bodies] == [1024, 2048, 1024]
    assert server.bodies[2]["messages"][-2] == {"role": "assistant", "content": "not json"}
    assert judgment.usage.calls == 3 and judgment.usage.prompt_tokens == 300


def test_an_answer_still_invalid_after_the_repair_fails_with_the_output_error(tmp_path):
    with FakeOllama(lambda body: ("not json", "stop")) as server:
        with pytest.raises(JudgeOutputError):
            ask(judge_for(tmp_path, server))
        assert len(server.bodies) == 2  # the answer and one repair, no more


def test_the_judge_travels_to_another_process(tmp_path):
    with FakeOllama(lambda body: ('{"claims": ["a", "b"]}', "stop")) as server:
        copy = pickle.loads(pickle.dumps(judge_for(tmp_path, server)))
        assert ask(copy).output.claims == ["a", "b"]
