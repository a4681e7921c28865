"""The dashboard's UI strings: one table per language, and how a request picks its language.

The language comes from ``?lang=zh|en`` (then kept in a cookie), else the cookie, else the
browser's ``Accept-Language`` (the first of its languages the dashboard speaks), else English.

>>> pick_language(None, None, "zh-CN,zh;q=0.9,en;q=0.8")
'zh'
>>> pick_language("en", "zh", "zh-CN")
'en'
>>> pick_language(None, None, "fr-FR,de;q=0.5")
'en'
>>> Translator("zh")("samples")
'样本'
"""

from __future__ import annotations

from typing import Final, Literal

Language = Literal["en", "zh"]
LANGUAGES: Final[tuple[Language, ...]] = ("en", "zh")
DEFAULT: Final[Language] = "en"
COOKIE: Final = "ragmeter_lang"
#: Each language by its own name, the same on every page (the language switch).
ENDONYMS: Final[dict[Language, str]] = {"en": "English", "zh": "中文"}

EN: Final[dict[str, str]] = {
    "all_runs": "All runs",
    "trends": "Trends",
    "runs": "Runs",
    "runs_title": "ragmeter runs",
    "run": "run",
    "recorded": "recorded",
    "samples": "samples",
    "all_samples": "All samples",
    "trends_of": "Trends of {name}",
    "compare_previous": "Compare with the previous run",
    "params": "params",
    "tags": "tags",
    "tag": "tag",
    "notes": "notes",
    "git": "git",
    "name": "name",
    "compare": "compare",
    "filter": "Filter",
    "partial": "partial",
    "complete": "complete",
    "bad_query": "This query cannot be answered",
    "no_runs": "No run recorded yet.",
    "compare_ticked": "Compare the two ticked runs (the older one is the baseline)",
    "dashboard": "dashboard",
    "language": "Language",
    "baseline": "baseline",
    "the_same": "the same",
    "uncommitted": "uncommitted changes",
    # trends
    "trends_title": "Trends",
    "trends_intro": (
        "Each metric's mean per run, oldest to newest, with its 95% confidence interval "
        "(whiskers) and the gate's thresholds (dashed lines); runs of different datasets "
        "get a line each, named under the chart."
    ),
    "dataset": "dataset",
    "metric": "metric",
    "all_metrics": "all metrics",
    "since": "since",
    "until": "until",
    "show": "Show",
    "no_trend": "No run matches these filters.",
    "threshold_min": "floor",
    "threshold_max": "ceiling",
    "more_metrics": "More metrics, one chart each:",
    "no_gate": "No gate file given (ragmeter serve --gate FILE draws its thresholds).",
    "gate_from": "Thresholds from",
    "mean": "mean",
    "ci": "95% CI",
    "no_score": "no score",
    # samples
    "samples_of": "{name}: {n} of {total} samples",
    "sample": "sample",
    "question": "question",
    "status": "status",
    "any_status": "any status",
    "status_ok": "ok",
    "status_failed": "failed",
    "status_not_applicable": "n/a",
    "status_not_started": "not started",
    "sort": "sort by",
    "order": "order",
    "asc": "ascending",
    "desc": "descending",
    "dataset_order": "dataset order",
    "search": "search",
    "no_sample": "No sample matches these filters.",
    "previous": "← previous",
    "next": "next →",
    "sample_of": "{name}: sample {id}",
    # conversations
    "conversations": "Conversations",
    "conversation": "conversation",
    "conversations_of": "{name}: {n} conversations",
    "conversation_of": "{name}: conversation {id}",
    "no_conversation": "This run has no conversation (no sample has a conversation_id).",
    "turn": "turn",
    "turns": "turns",
    "response": "response",
    "worst": "worst",
    "worst_turn": "worst: turn {turn}",
    "per_conversation": "per conversation",
    "per_turn": "per turn",
    "conversations_scored": "conversations scored",
    "turns_scored": "turns scored",
    "turns_scored_of": "{n} of {total} turns scored",
    "conversation_levels": "Conversation-level and turn-level means",
    "levels_note": (
        "Per conversation: each conversation's mean over its scored turns, averaged over the "
        "conversations, so that a long conversation counts once (95% bootstrap interval over "
        "conversations). Per turn: every scored turn counts once."
    ),
    "worst_conversations": "Conversations, worst first",
    "no_such_conversation": "No such conversation",
    "conversation_missing": "run {name} has no conversation {id}",
    # compare
    "compare_title": "{candidate} vs {baseline}",
    "paired_title": "Paired changes",
    "paired_intro": (
        "Candidate minus baseline per metric on the samples scored in both runs, with its "
        "95% bootstrap interval and a paired permutation test (Holm-adjusted across metrics)."
    ),
    "delta": "Δ",
    "p_value": "p",
    "p_adjusted": "p (Holm)",
    "pairs": "pairs",
    "verdict": "verdict",
    "change_better": "better",
    "change_worse": "worse",
    "change_no significant change": "no significant change",
    "change_not comparable": "not comparable",
    "changed_title": "Samples that changed most",
    "no_changed": "No sample's score changed.",
    "status_change": "status changed",
    "compare_two": "Compare two runs",
    "tick_two": "Tick exactly two runs to compare ({n} ticked).",
    "full_report": "The report's full comparison (means, distributions, every changed sample)",
    "measured_differently": "The runs were measured differently:",
    # labelling
    "label_title": "Label {metric} of {name}",
    "label_intro": (
        "Confirm or correct the judge's verdicts, one item at a time: is the claim supported "
        "by the contexts, is the context useful for the question, is the answer relevant (or "
        "its score, 1 to 5). Labels are kept in the run store with your name and the time."
    ),
    "labeller": "Your name",
    "yes": "yes",
    "no": "no",
    "contexts": "contexts",
    "judge_says": "the judge says",
    "p_yes": "P(yes)",
    "score": "score",
    "reason": "reason",
    "your_label": "your label",
    "item_of": "item {i} of {n}",
    "no_items": "Nothing to label: every item of this queue is labelled.",
    "saved": "label kept",
    "level": "level",
    "level_sample": "sample",
    "level_claim": "claim",
    "level_context": "context",
    "level_preference": "preference between two samples",
    "level_default": "claims and contexts (else samples)",
    "statistic": "statistic",
    "value": "value",
    "n": "n",
    "confusion": "confusion matrix (rows: people, columns: the judge)",
    "human": "people",
    "judge": "judge",
    "between_labellers": "between labellers, on {n} item(s)",
    "name_first": "Write your name first: it is kept with each label.",
    "not_in_run": "{n} item(s) of the file were not judged in this run and are left out.",
    "imported": "{n} new label(s) kept",
    "strategy": "choose",
    "strategy_uncertain": "most uncertain (P(yes) near 0.5)",
    "strategy_worst": "worst samples",
    "strategy_random": "at random",
    "by_tag": "spread over tag",
    "how_many": "how many",
    "load_queue": "Make the queue",
    "queue_file": "or a queue / mine file (JSONL):",
    "shortcuts": "Keyboard shortcuts",
    "key_yes": "yes: supported / useful / relevant",
    "key_no": "no",
    "key_skip": "skip",
    "key_next": "next",
    "key_previous": "previous",
    "key_score": "a score for the whole sample (1 worst, 5 best)",
    "answer_a": "Answer A",
    "answer_b": "Answer B",
    "a_better": "A is better",
    "b_better": "B is better",
    "tie": "as good",
    "key_preference": "of two answers (--versus): A better, B better, as good",
    "versus": "versus run (pairs its answers with this run's)",
    "agreement": "Agreement with your labels",
    "label_files": "Label files",
    "export_labels": "Export the labels (JSONL)",
    "import_labels": "Import labels (JSONL):",
    "validation": "validation",
    "label_this": "label",
    "not_validated": "not validated on your data",
    "validated_on": "validated on {n} of your labels{where}: {statistic} {value}{ci}",
    "validated_where": " ({level} level)",
    "checked_on": "checked on {n} of your labels{where}: {statistic} undefined",
    "calibrated_note": (
        " (judge calibrated with {label}: optimistic on the labels it was fitted on; "
        "held-out: ragmeter calibrate show {name})"
    ),
    # errors
    "no_such_run": "No such run",
    "no_such_sample": "No such sample",
    "sample_range": "run {name} has samples 0 to {last}",
    "token_needed": "Token needed",
    "token_hint": "Open the address with ?token=YOUR_TOKEN.",
}

ZH: Final[dict[str, str]] = {
    "all_runs": "全部运行",
    "trends": "趋势",
    "runs": "运行",
    "runs_title": "ragmeter 运行",
    "run": "运行",
    "recorded": "记录时间",
    "samples": "样本",
    "all_samples": "全部样本",
    "trends_of": "{name} 的趋势",
    "compare_previous": "与上一次运行对比",
    "params": "参数",
    "tags": "标签",
    "tag": "标签",
    "notes": "备注",
    "git": "git",
    "name": "名称",
    "compare": "对比",
    "filter": "筛选",
    "partial": "不完整",
    "complete": "完整",
    "bad_query": "无法执行此查询",
    "no_runs": "还没有记录任何运行。",
    "compare_ticked": "对比勾选的两个运行（较早的作为基线）",
    "dashboard": "仪表盘",
    "language": "语言",
    "baseline": "基线",
    "the_same": "相同",
    "uncommitted": "有未提交的修改",
    "trends_title": "趋势",
    "trends_intro": (
        "每个指标在各次运行中的均值（从旧到新），须线为 95% 置信区间，虚线为门禁阈值；"
        "不同数据集的运行各画一条线，图下注明数据集。"
    ),
    "dataset": "数据集",
    "metric": "指标",
    "all_metrics": "全部指标",
    "since": "起始",
    "until": "截止",
    "show": "显示",
    "no_trend": "没有符合筛选条件的运行。",
    "threshold_min": "下限",
    "threshold_max": "上限",
    "more_metrics": "更多指标（每个单独成图）：",
    "no_gate": "未指定门禁文件（ragmeter serve --gate FILE 可画出其阈值）。",
    "gate_from": "阈值来自",
    "mean": "均值",
    "ci": "95% 置信区间",
    "no_score": "无分数",
    "samples_of": "{name}：{total} 个样本中的 {n} 个",
    "sample": "样本",
    "question": "问题",
    "status": "状态",
    "any_status": "任意状态",
    "status_ok": "正常",
    "status_failed": "失败",
    "status_not_applicable": "不适用",
    "status_not_started": "未开始",
    "sort": "排序",
    "order": "顺序",
    "asc": "升序",
    "desc": "降序",
    "dataset_order": "数据集顺序",
    "search": "搜索",
    "no_sample": "没有符合筛选条件的样本。",
    "previous": "← 上一个",
    "next": "下一个 →",
    "sample_of": "{name}：样本 {id}",
    "conversations": "对话",
    "conversation": "对话",
    "conversations_of": "{name}：{n} 个对话",
    "conversation_of": "{name}：对话 {id}",
    "no_conversation": "此运行没有对话（没有样本带 conversation_id）。",
    "turn": "轮次",
    "turns": "轮数",
    "response": "回答",
    "worst": "最差",
    "worst_turn": "最差：第 {turn} 轮",
    "per_conversation": "按对话",
    "per_turn": "按轮次",
    "conversations_scored": "有分数的对话",
    "turns_scored": "有分数的轮次",
    "turns_scored_of": "{total} 轮中 {n} 轮有分数",
    "conversation_levels": "对话级与轮次级均值",
    "levels_note": (
        "按对话：先求每个对话在有分数轮次上的均值，再对各对话取平均，长对话只算一次"
        "（对话上的 95% 自助法置信区间）。按轮次：每个有分数的轮次各算一次。"
    ),
    "worst_conversations": "对话（最差的在前）",
    "no_such_conversation": "没有这个对话",
    "conversation_missing": "运行 {name} 中没有对话 {id}",
    "compare_title": "{candidate} 对比 {baseline}",
    "paired_title": "配对变化",
    "paired_intro": (
        "每个指标在两次运行都有分数的样本上的差值（候选减基线），"
        "附 95% 自助法置信区间与配对置换检验（跨指标 Holm 校正）。"
    ),
    "delta": "Δ",
    "p_value": "p",
    "p_adjusted": "p（Holm）",
    "pairs": "配对数",
    "verdict": "结论",
    "change_better": "变好",
    "change_worse": "变差",
    "change_no significant change": "无显著变化",
    "change_not comparable": "不可比较",
    "changed_title": "变化最大的样本",
    "no_changed": "没有样本的分数发生变化。",
    "status_change": "状态变化",
    "compare_two": "对比两个运行",
    "tick_two": "请恰好勾选两个运行进行对比（已勾选 {n} 个）。",
    "full_report": "报告中的完整对比（均值、分布、每个变化的样本）",
    "measured_differently": "两次运行的度量方式不同：",
    "label_title": "标注 {name} 的 {metric}",
    "label_intro": (
        "逐条确认或纠正评审模型的结论：论断是否有上下文支持、上下文对问题是否有用、回答是否相关"
        "（或给整个样本打分，1 到 5）。标注连同你的名字和时间保存在运行库中。"
    ),
    "labeller": "你的名字",
    "yes": "是",
    "no": "否",
    "contexts": "上下文",
    "judge_says": "评审结论",
    "p_yes": "P(是)",
    "score": "分数",
    "reason": "理由",
    "your_label": "你的标注",
    "item_of": "第 {i} 条，共 {n} 条",
    "no_items": "没有要标注的内容：这个队列的每一条都已标注。",
    "saved": "标注已保存",
    "level": "层级",
    "level_sample": "样本",
    "level_claim": "论断",
    "level_context": "上下文",
    "level_preference": "两个样本之间的偏好",
    "level_default": "论断和上下文（否则为样本）",
    "statistic": "统计量",
    "value": "值",
    "n": "数量",
    "confusion": "混淆矩阵（行：人工，列：评审模型）",
    "human": "人工",
    "judge": "评审",
    "between_labellers": "标注者之间，共 {n} 条",
    "name_first": "请先填写你的名字：每条标注都会保存它。",
    "not_in_run": "文件中有 {n} 条在本次运行中没有评审结论，已略过。",
    "imported": "新保存 {n} 条标注",
    "strategy": "选取方式",
    "strategy_uncertain": "最不确定（P(是) 接近 0.5）",
    "strategy_worst": "最差的样本",
    "strategy_random": "随机",
    "by_tag": "按标签分层",
    "how_many": "数量",
    "load_queue": "生成队列",
    "queue_file": "或上传队列 / mine 文件（JSONL）：",
    "shortcuts": "键盘快捷键",
    "key_yes": "是：有支持 / 有用 / 相关",
    "key_no": "否",
    "key_skip": "跳过",
    "key_next": "下一条",
    "key_previous": "上一条",
    "key_score": "给整个样本打分（1 最差，5 最好）",
    "answer_a": "回答 A",
    "answer_b": "回答 B",
    "a_better": "A 更好",
    "b_better": "B 更好",
    "tie": "一样好",
    "key_preference": "两个回答之间（对比运行）：A 更好、B 更好、一样好",
    "versus": "对比运行（与本次运行的回答成对比较）",
    "agreement": "与你的标注的一致性",
    "label_files": "标注文件",
    "export_labels": "导出标注（JSONL）",
    "import_labels": "导入标注（JSONL）：",
    "validation": "验证",
    "label_this": "标注",
    "not_validated": "未在你的数据上验证",
    "validated_on": "已在你的 {n} 条标注上验证{where}：{statistic} {value}{ci}",
    "validated_where": "（{level}层级）",
    "checked_on": "已在你的 {n} 条标注上检查{where}：{statistic} 无法计算",
    "calibrated_note": (
        "（评审模型使用了校准 {label}：在拟合它的标注上结果偏乐观；"
        "留出数据上的结果：ragmeter calibrate show {name}）"
    ),
    "no_such_run": "没有这个运行",
    "no_such_sample": "没有这个样本",
    "sample_range": "运行 {name} 的样本编号为 0 到 {last}",
    "token_needed": "需要令牌",
    "token_hint": "请在地址后加上 ?token=你的令牌 打开。",
}

TABLES: Final[dict[Language, dict[str, str]]] = {"en": EN, "zh": ZH}


def _as_language(value: str | None) -> Language | None:
    if not value:
        return None
    primary = value.strip().lower().replace("_", "-").split("-")[0]
    return "zh" if primary == "zh" else "en" if primary == "en" else None


def from_accept_language(header: str | None) -> Language | None:
    """The first language of an ``Accept-Language`` header (by q-value) that the dashboard
    speaks, or None."""
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate((header or "").split(",")):
        tag, _, rest = part.strip().partition(";")
        quality = 1.0
        if rest.strip().startswith("q="):
            try:
                quality = float(rest.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, position, tag))
    for negative_quality, _, tag in sorted(ranked):
        language = _as_language(tag)
        if language is not None and negative_quality < 0:
            return language
    return None


def pick_language(query: str | None, cookie: str | None, accept: str | None) -> Language:
    """The page's language: ``?lang=``, else the cookie, else ``Accept-Language``."""
    return _as_language(query) or _as_language(cookie) or from_accept_language(accept) or DEFAULT


class Translator:
    """``t(key, **values)``: the UI string ``key`` in ``language``, formatted with ``values``."""

    def __init__(self, language: Language) -> None:
        self.language = language
        self.table = TABLES[language]

    def __call__(self, key: str, **values: object) -> str:
        text = self.table.get(key) or EN[key]
        return text.format(**values) if values else text
