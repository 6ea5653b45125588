"""Token estimates: the server's only way to count tokens, a thin wrapper over the SDK's
`threadless.window`, so the server and the SDK can never disagree about a window's size.

Never write `(len(text) + 3) // 4` elsewhere: wide characters (CJK, emoji) count more.
"""

from __future__ import annotations

from threadless.window import MESSAGE_OVERHEAD, message_tokens, text_quarters

__all__ = ["MESSAGE_OVERHEAD", "message_tokens", "text_tokens"]


def text_tokens(text: str) -> int:
    """Tokens of a bare text (no message overhead)."""
    return (text_quarters(text) + 3) // 4
