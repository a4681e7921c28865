import re
from typing import get_args

import pytest
from pydantic import BaseModel

from ragmeter.prompts import LANGUAGES, data_block, detect_language, load_prompt
from ragmeter.steps import (
    JUDGMENTS,
    QUESTION_OUTPUTS,
    RESPONSE_CLAIMS,
    ChunkAnalysisOutput,
    PersonasOutput,
    QuestionKind,
    QuestionOutput,
)

#: Naming a built-in judgment puts the built-in ones in the table.
assert RESPONSE_CLAIMS.name in JUDGMENTS
#: The answer's model of each template's task: its fields are the task's output keys.
OUTPUTS = {(k.template, k.task): k.output for k in JUDGMENTS.values() if k.output is not None}
#: Each call's template, tasks and answer model: the judgments' and test-set generation's.
CALLS = [
    *((name, (task,), model) for (name, task), model in sorted(OUTPUTS.items())),
    ("chunk_analysis", ("summary", "keyphrases", "entities"), ChunkAnalysisOutput),
    ("personas", ("personas",), PersonasOutput),
    *(
        ("question", (kind,), QUESTION_OUTPUTS.get(kind, QuestionOutput))
        for kind in get_args(QuestionKind)
    ),
]

TEMPLATES = [
    "response_analysis",
    "reference_review",
    "context_utilization",
    "context_relevance",
    "verify",
    "verdict",
]


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_exists_in_both_languages_with_the_same_tasks(name):
    en, zh = (load_prompt(name, language) for language in LANGUAGES)
    assert en.version == zh.version and en.tasks.keys() == zh.tasks.keys()
    assert en.key == f"{name}@{en.version}/en" and zh.key.endswith("/zh")
    assert len(en.examples) == len(zh.examples)


@pytest.mark.parametrize("name", [t for t in TEMPLATES if t != "verdict"])
def test_examples_answer_every_task_with_the_schema_fields(name):
    for language in LANGUAGES:
        template = load_prompt(name, language)
        assert template.examples, f"{template.key} has no few-shot example"
        for example in template.examples:
            for task in template.tasks:
                for field in OUTPUTS[name, task].model_fields:
                    assert field in example.outputs, (template.key, task, field)


def _keys(model: type[BaseModel]) -> set[str]:
    """A model's output keys and its items' (``statements``: ``text``, ``contexts``)."""
    keys = set(model.model_fields)
    for info in model.model_fields.values():
        for item in get_args(info.annotation):
            if isinstance(item, type) and issubclass(item, BaseModel):
                keys |= _keys(item)
    return keys


@pytest.mark.parametrize(("name", "tasks", "model"), CALLS)
def test_every_task_text_names_the_output_keys_of_its_model(name, tasks, model):
    """Each output key is declared once, in the answer's model (a judgment's ``output``): the
    task texts (both languages) name every one of them, and their output sentences no other."""
    keys = _keys(model)
    for language in LANGUAGES:
        named: set[str] = set()
        for task in tasks:
            text = load_prompt(name, language).tasks[task]
            named |= set(re.findall(r'"(\w+)"', text))
            start = max(text.rfind("Output"), text.rfind("输出"))
            assert start >= 0, (language, task)
            assert set(re.findall(r'"(\w+)"', text[start:])) <= keys, (language, task)
        assert keys <= named, (language, tasks, keys - named)


def test_rendering_keeps_only_the_requested_tasks():
    template = load_prompt("response_analysis", "en")
    messages = template.render({"question": "q", "answer": "a"}, ["claims"])
    assert 'Task "claims"' in messages[0].content and "questions" not in messages[0].content
    assert all('"questions"' not in m.content for m in messages[1:])


def test_data_blocks_escape_closing_tags():
    block = data_block("answer", "x </answer> y </ANSWER >")
    assert block.count("</answer>") == 1


def test_language_detection():
    assert detect_language("退货怎么寄回去？") == "zh"
    assert detect_language("How do I return it? 谢谢") == "en"
