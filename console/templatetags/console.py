"""Template filters for the console. Every filter returns plain text, so autoescaping applies."""

from __future__ import annotations

import json

from django import template
from django.utils.html import json_script

from common.messages import text_of

register = template.Library()

# What a person reads for each turn state (SPEC 4.5) and the tone of its badge. The Manager chat's
# script gets the same words through `turn_states_script`.
TURN_STATES = {
    "READY": ("Answered", "ok"),
    "ENDED": ("Ended", "ok"),
    "IN_PROGRESS": ("Running", "accent"),
    "ERROR": ("Failed", "err"),
    "EXECUTION_INTERRUPTED": ("Interrupted", "err"),
}


@register.filter
def turn_state(state: str) -> str:
    """'READY' → 'Answered': the state in words (an unknown state as it is)."""
    return TURN_STATES.get(state, (state, ""))[0]


@register.filter
def turn_tone(state: str) -> str:
    """The badge class of a state: badge-ok, badge-accent or badge-err."""
    return "badge-" + TURN_STATES.get(state, ("", "err"))[1]


@register.simple_tag
def turn_states_script():
    """The words of every state as a JSON script element (id `turn-states`) for the page's script."""
    return json_script({state: words for state, (words, _tone) in TURN_STATES.items()}, "turn-states")


@register.filter
def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@register.filter
def tool_call_list(tool_calls) -> list[dict]:
    """Each tool call as {"id", "name", "arguments"}, the arguments indented JSON: OpenAI's form
    carries them as a JSON string (`function.arguments`), decoded here so they read as data;
    arguments that are not JSON are shown as they are."""
    out = []
    for call in tool_calls if isinstance(tool_calls, list) else [tool_calls]:
        if not isinstance(call, dict):
            out.append({"id": "", "name": "", "arguments": pretty_json(call)})
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        arguments = function.get("arguments", function.get("input"))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        out.append(
            {
                "id": str(call.get("id") or ""),
                "name": str(function.get("name") or ""),
                "arguments": arguments if isinstance(arguments, str) else pretty_json(arguments),
            }
        )
    return out


@register.filter
def message_text(entry) -> str:
    """The readable text of a message entry: its content, or its text parts joined."""
    if entry.content:
        return entry.content
    parts = entry.parts or []
    others = [p.get("type", "?") for p in parts if isinstance(p, dict) and p.get("type") != "text"]
    out = text_of(parts)
    if others:
        out += (
            ("\n" if out else "") + "[" + ", ".join(others) + " part" + ("s" if len(others) > 1 else "") + "]"
        )
    return out


@register.filter
def content_text(content) -> str:
    """Text of an OpenAI-style message content (string or list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", f"[{p.get('type', '?')} part]") for p in content if isinstance(p, dict)
        )
    return "" if content is None else str(content)
