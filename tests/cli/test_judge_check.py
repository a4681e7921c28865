"""``ragmeter judge check``: five known-answer checks (yes/no in English and Chinese, a claims
list through a step schema), reported per check, ending with PASS (exit 0) or FAIL (exit 1)."""

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.judge import BinaryVerdict, JudgeConfigError, JudgeTransientError
from ragmeter.testing import FakeOpenAIServer, ScriptedJudge

runner = CliRunner()
KEY = "sk-check-secret-0123456789"
VERDICTS = {"Paris the capital": 1, "Pacific": 0, "北京": 1, "太阳": 0}
CLAIMS = {"claims": ["Paris is the capital of France.", "Paris has two million inhabitants."]}


def question_of(body):
    return body["messages"][-1]["content"]


def right(body):
    question = question_of(body)
    for words, verdict in VERDICTS.items():
        if words in question:
            return {"verdict": verdict}
    return CLAIMS


def always_no(body):
    return right(body) if "claims" in right(body) else {"verdict": 0}


def no_structured_output(body):
    return right(body) if "verdict" in right(body) else "I would rather not list claims."


def check(server, *extra):
    args = ["judge", "check", "--judge-model", "tiny", "--judge-base-url", server.base_url]
    return runner.invoke(
        app, [*args, *extra], env={"COLUMNS": "200", "RAGMETER_JUDGE_API_KEY": KEY}
    )


def chats(server):
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def test_a_judge_answering_right_passes_with_exit_0():
    with FakeOpenAIServer(responder=right, api_key=KEY) as server:
        result = check(server)
        assert result.exit_code == 0, result.output
        assert len(chats(server)) == 5
        assert check(server).exit_code == 0
        assert len(chats(server)) == 10  # nothing is cached
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("PASS: the judge answered 5 of 5 checks right (json_schema, ")
    assert last.endswith(" s median)")
    for name in ("en yes", "en no", "zh yes", "zh no", "structured"):
        assert name in result.output
    assert "北京是中国的首都吗？" in result.output and "WRONG" not in result.output
    assert KEY not in result.output


def test_a_judge_answering_no_to_everything_fails_with_exit_1_naming_the_checks():
    with FakeOpenAIServer(responder=always_no, api_key=KEY) as server:
        result = check(server)
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("FAIL: the judge answered 3 of 5 checks right")
    assert "en yes: answered no (0), expected yes (1)" in last
    assert "zh yes: answered no (0), expected yes (1)" in last
    assert "en no:" not in last and "larger or better model" in last
    assert KEY not in result.output


def test_broken_structured_output_fails_with_what_to_do():
    with FakeOpenAIServer(responder=no_structured_output, api_key=KEY) as server:
        result = check(server)
        assert len(chats(server)) == 6  # the claims check got its one repair re-ask
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("FAIL: the judge answered 4 of 5 checks right")
    assert "structured: no answer fitting the schema" in last
    assert "structured_output" in last and "--judge-config" in last


def test_logprobs_are_asked_for_and_reported_when_the_endpoint_returns_them():
    with FakeOpenAIServer(responder=right, api_key=KEY) as server:
        result = check(server)
        assert all(r.body.get("logprobs") is True for r in chats(server))
    assert result.exit_code == 0, result.output
    assert "P(yes) for 4 of 4 verdicts" in result.output
    assert "0.990" in result.output and "0.010" in result.output  # the fake's P(yes)
    assert "logprobs yes" in result.output.strip().splitlines()[-1]


def test_the_structured_output_mode_is_the_one_used_after_the_fallback():
    with FakeOpenAIServer(responder=right, supports_json_schema=False, api_key=KEY) as server:
        result = check(server)
    assert result.exit_code == 0, result.output
    assert "(json_object, logprobs yes," in result.output.strip().splitlines()[-1]


# -- the scripted judge (what JudgeOptions.build returns is replaced) ----------------------


def scripted_right(messages, schema):
    return right({"messages": [{"content": messages[-1].content}]})


@pytest.fixture
def build_scripted(monkeypatch):
    """Make ``judge check`` use ``judge_for(options)``; returns the options it was built with."""
    built = []

    def use(judge_for):
        def build(self, cache=None):
            built.append(self)
            assert cache is not None and cache.disabled
            return judge_for(self)

        monkeypatch.setattr("ragmeter.cli._judging.JudgeOptions.build", build)
        return built

    return use


def test_a_judge_without_token_probabilities_passes_but_fails_with_logprobs(build_scripted):
    build_scripted(lambda options: ScriptedJudge(scripted_right))
    result = runner.invoke(app, ["judge", "check"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "not returned" in result.output
    assert "(n/a, logprobs no," in result.output.strip().splitlines()[-1]

    result = runner.invoke(app, ["judge", "check", "--logprobs"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("FAIL: the judge answered 5 of 5 checks right")
    assert "--logprobs: the endpoint returned no token probabilities" in last


def test_a_judge_refusing_logprobs_is_checked_without_them(build_scripted):
    def judge_for(options):
        if options.logprobs:
            return ScriptedJudge(lambda m, s: JudgeConfigError("HTTP 400: logprobs refused"))
        return ScriptedJudge(scripted_right, probabilities=lambda output: None)

    built = build_scripted(judge_for)
    result = runner.invoke(app, ["judge", "check"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert [options.logprobs for options in built] == [True, False]
    assert "refused by the judge" in result.output
    assert "logprobs no" in result.output.strip().splitlines()[-1]

    # Asked for with --logprobs, a refusal is a configuration error.
    result = runner.invoke(app, ["judge", "check", "--logprobs"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert "logprobs refused" in result.output


def test_an_endpoint_that_stops_answering_fails_and_the_rest_is_not_run(build_scripted):
    judge = ScriptedJudge(
        [BinaryVerdict(verdict=1), JudgeTransientError("connection refused after 5 attempts")]
    )
    build_scripted(lambda options: judge)
    result = runner.invoke(app, ["judge", "check"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert judge.n_calls == 2
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("FAIL: the judge answered 1 of 5 checks right")
    assert "en no: no answer (connection refused after 5 attempts)" in last
    assert "zh yes: not run" in last and "structured: not run" in last
    assert "running and reachable" in last
