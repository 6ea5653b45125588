"""The most specific reason in a failure's cause chain (SPEC 6.3), for exceptions and text traces.

* `innermost_message(exc)` walks `__cause__` / `__context__` to the innermost exception with a
  meaningful message ("[Errno -2] Name or service not known" → "Name or service not known";
  "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: … (_ssl.c:1006)" →
  "TLS: certificate verify failed: …").
* `innermost_text(trace)` does the same for a reported text trace: the message after the last
  Java-style `Caused by:`, or the first exception of a chained Python traceback.

Low-level: nothing here imports other apps. No regex: plain string operations only.
"""

from __future__ import annotations

import ssl

_PY_CHAIN_MARKERS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
MAX_CHAIN = 32


def _tidy(message: str) -> str:
    """Drop an `[Errno n] ` / `[SSL: X] ` prefix and a `(_ssl.c:1006)` suffix."""
    text = " ".join(message.split())
    tls = text.startswith("[SSL")
    while text.startswith("[") and "] " in text[:64]:
        text = text[text.index("] ") + 2 :]
    if text.endswith(")") and "(_ssl.c:" in text:
        text = text[: text.rindex("(_ssl.c:")].rstrip()
    return f"TLS: {text}" if tls and text else text


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    else:
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001 - a broken __str__ is no message
            return ""
    text = _tidy(text)
    # A bare class name or a repr of nothing is not a message.
    if text in ("", "None", exc.__class__.__name__):
        return ""
    if isinstance(exc, KeyError):
        return f"missing key {text}"
    if isinstance(exc, ssl.SSLError) and not text.startswith("TLS"):
        return f"TLS: {text}"
    return text


def chain_of(exc: BaseException) -> list[BaseException]:
    """The exception, then its causes, outermost first (explicit `__cause__` before `__context__`)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < MAX_CHAIN:
        seen.add(id(current))
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None
    return chain


def innermost_message(exc: BaseException, default: str = "") -> str:
    """The innermost meaningful message in `exc`'s cause chain (`default` when none has one)."""
    for link in reversed(chain_of(exc)):
        text = _message(link)
        if text:
            return text
    return default


def innermost_text(trace: str) -> str:
    """The most specific part of a reported text trace; other text is returned unchanged."""
    if not trace:
        return trace
    for marker in _PY_CHAIN_MARKERS:
        if marker in trace:
            # Python prints the root cause first: keep the first exception block.
            trace = trace.split(marker, 1)[0]
    cut = trace.rfind("Caused by:")
    if cut != -1:
        tail = trace[cut + len("Caused by:") :].strip()
        first = tail.split("\n", 1)[0].strip()
        if first:
            return first
    return trace
