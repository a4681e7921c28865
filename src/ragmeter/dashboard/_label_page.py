"""The labelling page (``/label``): one queue item at a time with the judge's verdict,
buttons and keyboard shortcuts to confirm or correct it, and the agreement panel. The only
page with a script: a small inline one that talks to ``/api/labels`` (same origin, nothing
fetched from elsewhere, so it works offline). Every UI string comes from :mod:`._i18n`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlencode

from ragmeter.align import Validation
from ragmeter.dashboard._i18n import Translator
from ragmeter.dashboard._pages import Ui, field_input, field_select, page
from ragmeter.report import Markup, el
from ragmeter.stats import statistic_name
from ragmeter.store import RunInfo

#: The UI strings the script writes (the page hands them over in its language).
SCRIPT_STRINGS = (
    "yes",
    "no",
    "answer_a",
    "answer_b",
    "question",
    "response",
    "contexts",
    "judge_says",
    "p_yes",
    "score",
    "reason",
    "your_label",
    "item_of",
    "no_items",
    "saved",
    "level_sample",
    "level_claim",
    "level_context",
    "level_preference",
    "statistic",
    "value",
    "ci",
    "n",
    "confusion",
    "human",
    "judge",
    "between_labellers",
    "name_first",
    "not_in_run",
    "imported",
)

LABEL_CSS = """
.labelling { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 20px; }
@media (max-width: 900px) { .labelling { grid-template-columns: 1fr; } }
#item .text { white-space: pre-wrap; border: 1px solid var(--line); border-radius: 6px;
  padding: 6px 10px; margin: 4px 0 10px; }
#item li.current { background: var(--soft); outline: 2px solid var(--accent, #36c); }
#item .judged { border-left: 4px solid var(--accent, #36c); padding: 6px 10px; margin: 10px 0; }
#buttons button { margin: 2px 4px 2px 0; padding: 4px 10px; }
#buttons button[hidden] { display: none; }
#message.error { color: var(--bad); }
#agreement table { margin-bottom: 10px; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; font-size: 12px; }
.side { border-left: 3px solid var(--line); padding-left: 10px; margin: 10px 0; }
"""

LABEL_JS = """
(() => {
const cfg = JSON.parse(document.getElementById('label-config').textContent);
const S = cfg.strings, $ = (id) => document.getElementById(id);
let items = [], at = 0;
const who = $('labeller');
who.value = localStorage.getItem('ragmeter_labeller') || '';
who.addEventListener('change', () => localStorage.setItem('ragmeter_labeller', who.value.trim()));
function h(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function say(text, bad) {
  const m = $('message'); m.textContent = text; m.className = bad ? 'error' : '';
}
function fmt(x) { return x === null || x === undefined ? '—' : Number(x).toFixed(3); }
async function call(url, options) {
  const r = await fetch(url, Object.assign({credentials: 'same-origin'}, options || {}));
  const body = await r.json().catch(() => ({error: r.statusText}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
function show() {
  const box = $('item'); box.replaceChildren();
  if (!items.length) {
    box.append(h('p', S.no_items, 'muted')); $('position').textContent = ''; return;
  }
  const it = items[at], judge = it.judge || {};
  $('position').textContent = S.item_of.replace('{i}', at + 1).replace('{n}', items.length)
    + ' · ' + it.sample_id + ' · ' + S['level_' + it.level];
  box.append(h('h3', S.question), h('div', it.user_input, 'text'));
  const preference = it.level === 'preference';
  document.querySelectorAll('.verdict').forEach((b) => { b.hidden = preference; });
  document.querySelectorAll('.prefer').forEach((b) => { b.hidden = !preference; });
  if (preference) {  // two answers side by side, blind: no score, no run named
    [[S.answer_a, it.response, it.retrieved_contexts],
     [S.answer_b, it.other_response, it.other_contexts]].forEach(([name, text, contexts]) => {
      const side = h('div', null, 'side');
      const list = h('ol'); list.start = 0;
      (contexts || []).forEach((c) => list.append(h('li', c)));
      side.append(h('h3', name), h('div', text, 'text'), h('h3', S.contexts), list);
      box.append(side);
    });
    if (it.done !== undefined) box.append(h('div', S.your_label + ': ' + it.done, 'done'));
    document.querySelectorAll('.score').forEach((b) => { b.hidden = true; });
    return;
  }
  box.append(h('h3', S.response), h('div', it.response, 'text'));
  const ol = h('ol'); ol.start = 0;
  (it.retrieved_contexts || []).forEach((c, i) => {
    ol.append(h('li', c, it.level === 'context' && it.item === i ? 'current' : ''));
  });
  box.append(h('h3', S.contexts), ol);
  const v = h('div', null, 'judged'); v.id = 'judged';
  if (it.level === 'claim') v.append(h('div', it.item, 'claim'));
  if (it.level === 'context') v.append(h('div', '#' + it.item + ': ' + (it.context || '')));
  const said = it.level === 'sample' ? S.score + ' ' + fmt(judge.score)
    : (judge.verdict ? S.yes : S.no) + ' (' + S.p_yes + ' ' + fmt(judge.probability) + ')';
  v.append(h('div', S.judge_says + ': ' + said, 'judge'));
  if (judge.reason) v.append(h('div', S.reason + ': ' + judge.reason, 'muted'));
  if (it.level === 'sample' && (it.verdicts || []).length) {
    const ul = h('ul', null, 'verdicts');
    it.verdicts.forEach((x) => ul.append(h('li', S['level_' + x.level] + ' ' + x.item + ': '
      + (x.verdict ? S.yes : S.no) + ' (' + S.p_yes + ' ' + fmt(x.probability) + ')'
      + (x.reason ? ' · ' + x.reason : ''))));
    v.append(ul);
  }
  if (it.done !== undefined) v.append(h('div', S.your_label + ': ' + it.done, 'done'));
  box.append(v);
  document.querySelectorAll('.score').forEach((b) => { b.hidden = it.level !== 'sample'; });
}
function move(step) {
  if (items.length) { at = Math.max(0, Math.min(items.length - 1, at + step)); show(); }
}
async function label(value) {
  if (!items.length) return;
  const name = who.value.trim();
  if (!name) { say(S.name_first, true); who.focus(); return; }
  localStorage.setItem('ragmeter_labeller', name);
  const it = items[at];
  const record = {sample_id: it.sample_id, sample_key: it.sample_key, metric: it.metric,
    level: it.level, item: it.item, value: value, labeller: name, note: ''};
  try {
    await call('/api/labels', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify(record)});
  } catch (e) { say(e.message, true); return; }
  it.done = String(value);
  say(S.saved + ' (' + (at + 1) + ')');
  const next = items.findIndex((x, i) => i > at && x.done === undefined);
  if (next >= 0) at = next;
  show();
  await agreement();
}
function stat(a) {
  const ci = a.ci ? ' [' + fmt(a.ci.low) + ', ' + fmt(a.ci.high) + ']' : '';
  return a.statistic + ' ' + fmt(a.value) + ci;
}
function table(head, rows) {
  const t = h('table'), tr = h('tr');
  head.forEach((x) => tr.append(h('th', x))); t.append(tr);
  rows.forEach((r) => {
    const row = h('tr'); r.forEach((x) => row.append(h('td', x))); t.append(row);
  });
  return t;
}
async function agreement() {
  const box = $('agreement');
  let a;
  const asked = new URLSearchParams({run: cfg.run, metric: cfg.metric, lang: cfg.lang});
  if (cfg.versus) asked.set('versus', cfg.versus);
  try { a = await call('/api/labels/agreement?' + asked); }
  catch (e) { say(e.message, true); return; }
  box.replaceChildren(h('p', a.validation.shown, 'validation'));
  box.dataset.labels = a.n_labels;
  Object.values(a.levels).forEach((lv) => {
    const part = h('div', null, 'level'); part.dataset.level = lv.level;
    part.append(h('h3', S['level_' + lv.level] + ' · ' + lv.n_labels));
    part.append(table([S.statistic, S.value, S.ci, S.n], Object.values(lv.agreement).map(
      (x) => [x.statistic, fmt(x.value), x.ci ? fmt(x.ci.low) + ' – ' + fmt(x.ci.high) : '—',
              x.n])));
    const humans = Object.keys(lv.confusion || {}).sort();
    if (humans.length) {
      const judges = [...new Set(humans.flatMap((k) => Object.keys(lv.confusion[k])))].sort();
      part.append(h('div', S.confusion, 'muted'), table([S.human + ' \\\\ ' + S.judge, ...judges],
        humans.map((k) => [k, ...judges.map((j) => lv.confusion[k][j] || 0)])));
    }
    if (lv.labellers) {
      const said = S.between_labellers.replace('{n}', lv.n_shared) + ': ' + stat(lv.labellers);
      part.append(h('p', said, 'labellers'));
    }
    box.append(part);
  });
}
async function load(request) {
  try { const q = await request; items = q.items; at = 0; show();
    if (q.not_in_run) say(S.not_in_run.replace('{n}', q.not_in_run)); }
  catch (e) { say(e.message, true); }
}
function upload(input, url, done) {
  const file = input.files[0]; if (!file) return;
  file.text().then((text) => done(call(url, {method: 'POST', body: text,
    headers: {'Content-Type': 'application/x-ndjson'}})));
}
$('queue-file').addEventListener('change', (e) => upload(e.target,
  '/api/labels/queue?' + new URLSearchParams({run: cfg.run, metric: cfg.metric}), load));
$('import-file').addEventListener('change', (e) => upload(e.target,
  '/api/labels/import?' + new URLSearchParams({metric: cfg.metric, labeller: who.value.trim()}),
  (p) => p.then((r) => { say(S.imported.replace('{n}', r.added)); agreement(); },
                 (err) => say(err.message, true))));
const keys = {y: () => label(true), n: () => label(false), s: () => move(1),
  j: () => move(1), k: () => move(-1), ArrowRight: () => move(1), ArrowLeft: () => move(-1)};
document.addEventListener('keydown', (e) => {
  if (e.target.closest('input, select, textarea') || e.ctrlKey || e.metaKey || e.altKey) return;
  const it = items[at];
  if (/^[1-5]$/.test(e.key) && it && it.level === 'sample') {
    label((Number(e.key) - 1) / 4); return;
  }
  const preferred = {a: 'better', b: 'worse', t: 'tie'}[e.key];
  if (it && it.level === 'preference' && (preferred || e.key === 'y' || e.key === 'n')) {
    if (preferred) { e.preventDefault(); label(preferred); }
    return;
  }
  if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
});
$('yes').onclick = () => label(true); $('no').onclick = () => label(false);
$('prefer-a').onclick = () => label('better'); $('prefer-b').onclick = () => label('worse');
$('prefer-tie').onclick = () => label('tie');
$('skip').onclick = () => move(1); $('next').onclick = () => move(1);
$('prev').onclick = () => move(-1);
document.querySelectorAll('.score').forEach((b) => {
  b.onclick = () => label((Number(b.dataset.score) - 1) / 4);
});
const params = new URLSearchParams(location.search); params.delete('lang'); params.delete('token');
params.set('run', cfg.run); params.set('metric', cfg.metric);
load(call('/api/labels/queue?' + params)).then(agreement);
})();
"""


def _config(t: Translator, info: RunInfo, metric: str, versus: str | None) -> Markup:
    """The script's settings and strings as JSON that cannot end the script element."""
    strings = {k: t(k) for k in SCRIPT_STRINGS}
    values = {
        "run": info.id,
        "metric": metric,
        "lang": t.language,
        "strings": strings,
        "versus": versus,
    }
    text = json.dumps(values, ensure_ascii=False).replace("<", "\\u003c")
    return Markup(f'<script type="application/json" id="label-config">{text}</script>')


def _queue_form(ui: Ui, info: RunInfo, metric: str, metrics: Sequence[str]) -> Markup:
    t = ui.t
    asked = dict(ui.query)
    strategies = [(s, t(f"strategy_{s}")) for s in ("uncertain", "worst", "random")]
    levels = [("", t("level_default"))] + [
        (v, t(f"level_{v}")) for v in ("sample", "claim", "context")
    ]
    return el(
        "form",
        el("input", type="hidden", name="run", value=info.id),
        field_select(t("metric"), "metric", metric, [(m, m) for m in metrics]),
        field_select(t("strategy"), "strategy", asked.get("strategy"), strategies),
        field_input(t("by_tag"), "by", asked.get("by"), placeholder="language"),
        field_select(t("level"), "level", asked.get("level"), levels),
        field_input(t("how_many"), "n", asked.get("n") or "20", type="number", min="1", max="500"),
        field_input(t("versus"), "versus", asked.get("versus"), placeholder="baseline"),
        el("button", t("load_queue"), type="submit", id="load-queue"),
        el(
            "label",
            f"{t('queue_file')} ",
            el("input", type="file", id="queue-file", accept=".jsonl"),
        ),
        method="get",
        action="/label",
        class_="filters",
    )


def _shortcuts(t: Translator) -> Markup:
    keys = [("y", "key_yes"), ("n", "key_no"), ("s", "key_skip"), ("j / →", "key_next"),
            ("k / ←", "key_previous"), ("1–5", "key_score"),
            ("a / b / t", "key_preference")]  # fmt: skip
    return el(
        "ul",
        [el("li", el("kbd", key), " ", t(name)) for key, name in keys],
        id="shortcuts",
    )


def label_page(
    ui: Ui, info: RunInfo, metric: str, metrics: Sequence[str], versus: str | None = None
) -> str:
    """The labelling page of ``metric`` in the run ``info`` (``versus``: another run whose
    answers the queue pairs with this run's, as preferences)."""
    t = ui.t
    title = t("label_title", metric=metric, name=info.name)
    buttons = el(
        "p",
        el("button", t("yes"), " ", el("kbd", "y"), id="yes", type="button", class_="verdict"),
        el("button", t("no"), " ", el("kbd", "n"), id="no", type="button", class_="verdict"),
        [
            el(
                "button",
                t(name),
                " ",
                el("kbd", key),
                id=f"prefer-{which}",
                type="button",
                class_="prefer",
                hidden=True,
            )
            for which, name, key in (
                ("a", "a_better", "a"),
                ("b", "b_better", "b"),
                ("tie", "tie", "t"),
            )
        ],
        [
            el("button", str(k), id=f"score-{k}", type="button", class_="score", data_score=k)
            for k in range(1, 6)
        ],
        el("button", t("key_previous"), id="prev", type="button"),
        el("button", t("key_skip"), id="skip", type="button"),
        el("button", t("key_next"), id="next", type="button"),
        id="buttons",
    )
    export = f"/api/labels/export?{urlencode({'metric': metric})}"
    left = el(
        "div",
        el("p", el("label", f"{t('labeller')} ", el("input", id="labeller", name="labeller"))),
        el("p", "", id="position", class_="muted"),
        el("div", id="item"),
        buttons,
        el("p", "", id="message", role="status"),
        el("h2", t("shortcuts")),
        _shortcuts(t),
    )
    right = el(
        "div",
        el("h2", t("agreement")),
        el("div", id="agreement"),
        el("h2", t("label_files")),
        el("p", el("a", t("export_labels"), href=export, id="export")),
        el(
            "p",
            el(
                "label",
                f"{t('import_labels')} ",
                el("input", type="file", id="import-file", accept=".jsonl"),
            ),
        ),
    )
    return page(
        ui,
        title,
        Markup(f"<style>{LABEL_CSS}</style>"),
        el("h1", title),
        el("p", t("label_intro"), class_="muted"),
        _queue_form(ui, info, metric, metrics),
        el("div", left, right, class_="labelling"),
        _config(t, info, metric, versus),
        Markup(f"<script>{LABEL_JS}</script>"),
        crumbs=[(info.name, f"/runs/{info.id}")],
    )


def validation_text(t: Translator, found: Validation) -> str:
    """:meth:`Validation.describe` in the page's language."""
    if t.language == "en":
        return found.describe()
    if not found.n_labels:
        return t("not_validated")
    level = "" if found.level == "sample" else t("validated_where", level=t(f"level_{found.level}"))
    name = statistic_name(found.statistic) or ""
    if found.value is None:
        return t("checked_on", n=found.n_labels, where=level, statistic=name)
    ci = "" if found.ci is None else f" [{found.ci[0]:.2f}, {found.ci[1]:.2f}]"
    value = f"{found.value:.2f}"
    shown = t("validated_on", n=found.n_labels, where=level, statistic=name, value=value, ci=ci)
    if found.calibration is None:
        return shown
    label = found.calibration.split(" (", 1)[0]
    return shown + t("calibrated_note", label=label, name=label.split("@", 1)[0])


def validation_block(ui: Ui, info: RunInfo, found: Sequence[Validation]) -> Markup | None:
    """Per judged metric of a run: on how many of the team's labels it was validated, with a
    link to label more of it (nothing for a run without a judged metric)."""
    if not found:
        return None
    t = ui.t
    rows = [
        el(
            "li",
            el("strong", v.metric),
            ": ",
            validation_text(t, v),
            " · ",
            el(
                "a",
                t("label_this"),
                href=f"/label?{urlencode({'run': info.id, 'metric': v.metric})}",
            ),
            data_metric=v.metric,
            class_="validated" if v.validated else "not-validated",
        )
        for v in found
    ]
    return el(
        "div", el("strong", t("validation")), el("ul", rows), class_="record", id="validation"
    )
