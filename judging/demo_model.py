"""The demo model of the embedded default: answers with no model server, deterministically.

Pure (no Django, no litellm): `judging.llm` hands its answer to litellm's `mock_response`, so a
demo call still takes litellm's path. Two models: `echo` writes (it repeats the last user
message, so whoever tries the demo chooses what the policy sees) and `judge` judges (it knows
two house-style rules a machine can check — exclamation marks and the numbers one to twelve
written as digits — and answers a chat judge's verdict for them; every other rule passes).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

ECHO = "echo"
JUDGE = "judge"
MODELS = (ECHO, JUDGE)

_RULES = re.compile(r"<rules>\n(.*?)\n</rules>", re.DOTALL)
_RULE_LINE = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)
_TEXT = re.compile(r"<<<TEXT (?P<value>[0-9a-f]+)>>>\n(?P<text>.*)\n<<<END (?P=value)>>>", re.DOTALL)

# What the demo judge can see, by a word of the rule it checks: the passage that breaks it.
_CHECKS = (
    # "Headlines carry no exclamation mark." — any sentence or line ending in "!".
    (re.compile(r"exclamation", re.IGNORECASE), re.compile(r"[^.!?\n]*[^\s.!?][^.!?\n]*!")),
    # "Write the numbers one to twelve as words." — a digit 1 to 12 standing alone.
    (re.compile(r"one to twelve", re.IGNORECASE), re.compile(r"(?<![\w.,])(?:1[0-2]|[1-9])(?![\w.,%])")),
)


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(list(messages)):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def echo(messages: Sequence[Mapping[str, Any]]) -> str:
    """The last user message. litellm turns the exact texts ``litellm.RateLimitError`` and
    ``litellm.InternalServerError`` into those errors, which is how the demo shows a failed task."""
    return _last_user_text(messages)


def judge(messages: Sequence[Mapping[str, Any]]) -> str:
    """A chat judge's verdict (JSON) for the rules and the text of a judge prompt."""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), "") or ""
    rules = _RULES.search(system)
    text = _TEXT.search(_last_user_text(messages))
    violations = []
    if rules and text:
        judged = text.group("text")
        for number, line in _RULE_LINE.findall(rules.group(1)):
            for about, breaks in _CHECKS:
                if about.search(line):
                    found = breaks.search(judged)
                    if found:
                        violations.append({"rule": int(number), "passage": found.group(0).strip()})
    return json.dumps({"violations": violations})


def answer(model: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """What demo model `model` answers to `messages`; an unknown model echoes."""
    if model == JUDGE:
        return judge(messages)
    return echo(messages)
