"""Template filters for the console. Every filter returns plain text, so autoescaping applies."""

from __future__ import annotations

import json

from django import template

from common.messages import text_of

register = template.Library()


@register.filter
def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


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
