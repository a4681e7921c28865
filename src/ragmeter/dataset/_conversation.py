"""Conversations: one record of several turns becomes one sample per assistant turn.

A record is a conversation when it holds its messages in one of three shapes:

* ``messages`` (ragmeter's and OpenAI's): ``{"role": "user" | "assistant", "content": ...}``,
  the per-turn fields (``retrieved_contexts``, ``retrieved_context_ids``, ``reference``,
  ``reference_contexts``, or other tools' names for them such as ``contexts`` and
  ``retrieval_context``) on each assistant message;
* ``turns`` (DeepEval's ``ConversationalTestCase``): ``Turn`` objects ``{"role", "content",
  "retrieval_context", ...}``, or the older turns that are each a whole ``LLMTestCase``
  (``{"input", "actual_output", "retrieval_context", "expected_output"}``);
* ``user_input`` given as a list of messages (RAGAS' ``MultiTurnSample``):
  ``{"content": ..., "type": "human" | "ai" | "tool"}``.

Each assistant reply is a turn: its sample's ``user_input`` is the user's message before it,
``response`` the reply, ``history`` every user and assistant message before that user
message. ``tool`` messages between the user message and the reply (RAGAS' ``ToolMessage``,
OpenAI's tool results) are the reply's ``retrieved_contexts`` unless the reply gives its own.
Two user messages in a row are one question (their texts joined by a new line); an
assistant message before any user message (a greeting) is history only; an assistant message
that only calls tools (``tool_calls``, no reply to the user) is no turn; ``system`` and
``developer`` messages are left out. A conversation that ends with a user message without
a reply leaves that message out (the dataset's :meth:`~Dataset.column_warnings` say so).

The turn's id is ``f"{conversation_id}#{turn}"`` and its metadata holds ``conversation_id``,
``turn`` (1-based, the number of the assistant reply) and every conversation-level field but
the messages (``scenario``, the conversation's ``reference``, tags...). The conversation's id
is its ``id`` (or ``conversation_id``, ``session_id``, ``thread_id``), else ``row-N``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.dataset._problems import Problem
from ragmeter.dataset._sample import LEGACY_NAMES, canonical_record

#: Record keys that hold a conversation's messages.
MESSAGE_KEYS: tuple[str, ...] = ("messages", "turns")
#: Record keys that name a conversation, in order of preference.
ID_KEYS: tuple[str, ...] = ("id", "conversation_id", "session_id", "thread_id", "sample_id")
#: Roles by the name each tool gives them (RAGAS' message types; DeepEval's and OpenAI's roles).
ROLES: dict[str, str] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "system": "system",
    "developer": "system",
}
#: Keys of a message that are not per-turn fields.
_MESSAGE_OWN_KEYS = frozenset({"role", "type", "content", "tool_calls", "name"})
#: DeepEval's older turns: each one a whole test case.
_TEST_CASE_KEYS = frozenset({"input", "actual_output"})

MESSAGES_FIX = (
    'give the conversation as a list of messages, e.g. [{"role": "user", "content": "..."}, '
    '{"role": "assistant", "content": "...", "retrieved_contexts": ["..."]}]'
)


@dataclass
class Expansion:
    """The turns of one conversation record (canonical records), the problems found in it,
    and whether it ends with a user message that has no reply."""

    records: list[dict[str, Any]] = field(default_factory=list)
    #: Each record's turn (1-based).
    turns: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unanswered: bool = False


def _key(key: Any, column_map: Mapping[str, str] | None) -> Any:
    return (column_map or {}).get(key, key)


def message_key(record: Mapping[Any, Any], column_map: Mapping[str, str] | None = None) -> Any:
    """The key of ``record`` that holds a conversation's messages, or ``None`` when the
    record is one sample: ``messages`` or ``turns`` holding a list, or ``user_input`` (or
    another tool's name for it) holding a list of message objects.

    >>> message_key({"messages": [{"role": "user", "content": "hi"}]})
    'messages'
    >>> message_key({"user_input": [{"content": "hi", "type": "human"}]})
    'user_input'
    >>> message_key({"user_input": "hi"}) is None
    True
    """
    if column_map or not record.keys().isdisjoint(MESSAGE_KEYS):
        for key, value in record.items():
            name = _key(key, column_map)
            if name in MESSAGE_KEYS and isinstance(value, list):
                return key
    for key, value in record.items():
        if (
            isinstance(value, list)
            and value
            and not isinstance(value[0], str)  # a list of texts or ids, the common case
            and isinstance(value[0], Mapping)
            and canonical_name(_key(key, column_map)) == "user_input"
            and all(isinstance(m, Mapping) for m in value)
            and all("content" in m and ("type" in m or "role" in m) for m in value)
        ):
            return key
    return None


def canonical_name(name: Any) -> Any:
    """The field another tool's name stands for (``question`` -> ``user_input``)."""
    return LEGACY_NAMES.get(name, name)


def _conversation_id(record: Mapping[Any, Any], column_map: Mapping[str, str] | None) -> Any:
    names = {canonical_name(_key(k, column_map)): v for k, v in record.items()}
    raw = {_key(k, column_map): v for k, v in record.items()}
    for key in ID_KEYS:
        value = names.get(key) if key == "id" else raw.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _conversation_metadata(
    record: Mapping[Any, Any], skip: Any, column_map: Mapping[str, str] | None
) -> dict[str, Any]:
    """Every conversation-level field but the messages and the id, for each turn's metadata
    (a ``metadata`` object, DeepEval's ``additional_metadata`` included, is spread)."""
    metadata: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for key, value in record.items():
        name = _key(key, column_map)
        if key == skip or canonical_name(name) == "id":
            continue
        if canonical_name(name) == "metadata" and isinstance(value, Mapping):
            spread.update({str(k): v for k, v in value.items()})
        else:
            metadata[str(name)] = value
    return {**spread, **metadata}


@dataclass
class _Message:
    role: str
    content: str
    extras: dict[str, Any]


def _content(value: Any) -> str | None:
    """A message's text: a string, or OpenAI's list of parts joined (``{"type": "text",
    "text": ...}``); ``None`` when it holds none."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in value
    ):
        return "\n".join(p["text"] for p in value)
    return None


@dataclass
class _Turns:
    """Cuts a conversation's messages into turns, collecting the problems (of the field
    ``key`` names)."""

    row: int
    conversation_id: str
    metadata: dict[str, Any]
    key: str
    column_map: Mapping[str, str] | None
    out: Expansion = field(default_factory=Expansion)
    history: list[dict[str, str]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # the user messages waiting for a reply
    tools: list[str] = field(default_factory=list)  # tool results since the last user message
    turn: int = 1  # the turn being read

    def problem(self, message: str, fix: str) -> None:
        self.out.problems.append(Problem(self.row, self.key, message, fix, turn=self.turn))

    def add(self, index: int, message: Any) -> None:
        where = f"message {index + 1}"
        if not isinstance(message, Mapping):
            self.problem(f"{where} is a {type(message).__name__}, not an object", MESSAGES_FIX)
            return
        if set(message) >= _TEST_CASE_KEYS and "role" not in message:
            self._test_case(where, message)
            return
        raw_role = message.get("role", message.get("type"))
        role = ROLES.get(raw_role) if isinstance(raw_role, str) else None
        if role is None:
            self.problem(
                f"{where} has role {raw_role!r}",
                'give each message a "role": "user" or "assistant" (RAGAS: a "type": '
                '"human", "ai" or "tool")',
            )
            return
        content = _content(message.get("content"))
        calls_tools = bool(message.get("tool_calls"))
        if role == "assistant" and calls_tools and not (content or "").strip():
            return  # a step that calls tools, not a reply
        if role == "system":
            return
        if content is None:
            got = message.get("content")
            self.problem(
                f"{where} ({raw_role}) has content {type(got).__name__} {got!r:.40}",
                "give each message's content as a string",
            )
            return
        extras = {k: v for k, v in message.items() if k not in _MESSAGE_OWN_KEYS}
        self._message(_Message(role, content, extras), where, calls_tools)

    def _test_case(self, where: str, case: Mapping[str, Any]) -> None:
        question, answer = case.get("input"), case.get("actual_output")
        if not isinstance(question, str) or not isinstance(answer, str):
            self.problem(
                f"{where} (a test case turn) has input {type(question).__name__} and "
                f"actual_output {type(answer).__name__}",
                "give each turn's input and actual_output as strings",
            )
            return
        extras = {k: v for k, v in case.items() if k not in _TEST_CASE_KEYS}
        self._message(_Message("user", question, {}), where, False)
        self._message(_Message("assistant", answer, extras), where, False)

    def _message(self, message: _Message, where: str, calls_tools: bool) -> None:
        if message.role == "tool":
            self.tools.append(message.content)
            return
        if message.role == "user":
            self.asked.append(message.content)
            return
        if calls_tools:
            return  # some text with tool calls: the reply comes after the tools
        if not self.asked:  # a greeting before the first question: history only
            self.history.append({"role": "assistant", "content": message.content})
            return
        self._turn(message, where)

    def _turn(self, reply: _Message, where: str) -> None:
        fields = {k: v for k, v in reply.extras.items() if canonical_name(k) != "id"}
        try:
            turn_fields = canonical_record(fields, self.column_map)
        except ValueError as error:  # two names of one field that differ
            self.problem(f"{where}: {error}", "keep one of the two names")
            turn_fields = {}
        turn_metadata = turn_fields.pop("metadata", None)
        if self.tools and "retrieved_contexts" not in turn_fields:
            turn_fields["retrieved_contexts"] = list(self.tools)
        metadata: dict[str, Any] = dict(self.metadata)
        if isinstance(turn_metadata, Mapping):
            metadata.update(turn_metadata)
        elif turn_metadata is not None:
            turn_fields["metadata"] = turn_metadata  # validation names the wrong type
        metadata["conversation_id"] = self.conversation_id
        metadata["turn"] = self.turn
        record = {
            "id": f"{self.conversation_id}#{self.turn}",
            "user_input": "\n".join(self.asked),
            "response": reply.content,
            "history": list(self.history),
            **turn_fields,
        }
        if "metadata" not in record:
            record["metadata"] = metadata
        self.out.records.append(record)
        self.out.turns.append(self.turn)
        self.history += [{"role": "user", "content": q} for q in self.asked]
        self.history.append({"role": "assistant", "content": reply.content})
        self.asked, self.tools = [], []
        self.turn += 1


def expand_conversation(
    record: Mapping[Any, Any], row: int, column_map: Mapping[str, str] | None = None
) -> Expansion | None:
    """The turns of a conversation record as sample records, or ``None`` when ``record`` is
    one sample (:func:`message_key`). See the module docstring for the rules.

    >>> turns = expand_conversation({"id": "c1", "messages": [
    ...     {"role": "user", "content": "What are the S3's?"},
    ...     {"role": "assistant", "content": "Earbuds.", "contexts": ["S3: earbuds"]},
    ...     {"role": "user", "content": "and its price?"},
    ...     {"role": "assistant", "content": "$99."}]}, row=1).records
    >>> [(t["id"], t["user_input"], len(t["history"]), t["metadata"]["turn"]) for t in turns]
    [('c1#1', "What are the S3's?", 0, 1), ('c1#2', 'and its price?', 2, 2)]
    >>> turns[0]["retrieved_contexts"]
    ['S3: earbuds']
    """
    key = message_key(record, column_map)
    if key is None:
        return None
    name = str(canonical_name(_key(key, column_map)))
    conversation_id = _conversation_id(record, column_map) or f"row-{row}"
    metadata = _conversation_metadata(record, key, column_map)
    turns = _Turns(row, conversation_id, metadata, name, column_map)
    messages = record[key]
    if not messages:
        turns.problem("the conversation has no messages", MESSAGES_FIX)
        return turns.out
    for index, message in enumerate(messages):
        turns.add(index, message)
    if not turns.out.records and not turns.out.problems:
        turns.problem("the conversation has no assistant reply to evaluate", MESSAGES_FIX)
    turns.out.unanswered = bool(turns.asked)
    return turns.out
