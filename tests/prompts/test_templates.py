import pytest

from ragmeter.prompts import LANGUAGES, data_block, detect_language, load_prompt
from ragmeter.steps import JUDGMENTS

#: The output fields of each built-in task, from the public table of judgments.
TASK_FIELDS = {kind.task: dict(kind.fields) for kind in JUDGMENTS.values() if kind.task}

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
                for field in TASK_FIELDS[task]:
                    assert field in example.outputs, (template.key, task, field)


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
