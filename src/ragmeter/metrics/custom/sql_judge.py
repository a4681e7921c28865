"""The judge that :class:`SQLEquivalence` falls back to when a query cannot be executed."""

from __future__ import annotations

from typing import Any

from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.custom._prompt import PromptMetric

INSTRUCTION = {
    "en": "The question was answered with the SQL query in <response>; <reference> is a "
    "correct query. Would the two queries return the same rows on any database with this "
    "schema? Ignore formatting, aliases, column order differences only when the question "
    "does not fix them, and row order unless the reference sorts.",
    "zh": "<response> 中是为回答问题生成的 SQL 查询，<reference> 是正确的查询。在任何具有该表结构的"
    "数据库上，两条查询会返回相同的结果行吗？忽略格式和别名；只有在问题没有规定时才忽略列的顺序；"
    "除非参考查询排序，否则忽略行的顺序。",
}


@builtin_metric(
    "sql_equivalence_judge",
    family="custom",
    rank=410,
    summary="judged: would the generated and the reference SQL return the same rows?",
)
def sql_equivalence_judge(**judged: Any) -> PromptMetric:
    """A discrete prompt metric: are the generated and the reference SQL equivalent?

    Meant as ``SQLEquivalence(fallback=sql_equivalence_judge())``, that is
    ``Fallback(SQLExecution(), sql_equivalence_judge())``: the judge is asked only when the
    queries cannot be executed (no database, or the reference itself fails).

    >>> sql_equivalence_judge().spec.labels
    ('equivalent', 'different')
    """
    return PromptMetric(
        "sql_equivalence_judge",
        kind="discrete",
        instruction=INSTRUCTION,
        inputs=("user_input", "response", "reference"),
        labels=("equivalent", "different"),
        description="judged equivalence of a generated and a reference SQL query",
        **judged,
    )
