"""The ids the proxy hands out that name a memory and a thread (SPEC 4.8, 4.10).

* Issued ids: a Responses `resp_tl…` id and an Anthropic Messages `msg_tl…` id. Each names its
  memory and, when it is not the default one, its thread, under an HMAC of the server's
  SECRET_KEY (one issued before a key rotation verifies while its key is in SECRET_KEY_FALLBACKS),
  so a client sends back only ids this proxy made. A default-thread id has no thread part and
  keeps the form ids had before threads.
* Conversation ids: `mem_…` (or `conv_…`) names a memory's default thread; `conv_<memory>_<thread>`
  a named thread of it. They carry no secret: the key's project scopes every lookup.

A thread's name (1 to 200 printable characters) travels as unpadded base64url of its UTF-8.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from common.errors import InvalidRequest
from memories.models import DEFAULT_THREAD
from memories.services import external_id_check

_THREAD = r"[A-Za-z0-9_-]{1,1100}"  # base64url of at most 200 characters of 4 UTF-8 bytes each
ISSUED = re.compile(
    rf"\A(resp|msg)_tl([A-Za-z0-9]{{1,40}})x([0-9a-f]{{8}})x([0-9a-f]{{16}})(?:t({_THREAD}))?\Z"
)
CONVERSATION = re.compile(rf"\A(?:mem|conv)_([A-Za-z0-9]{{1,40}})(?:_({_THREAD}))?\Z")


@dataclass(frozen=True)
class Target:
    memory_id: str
    thread: str | None  # None: the memory's default thread


def _named(thread: str | None) -> str | None:
    return None if thread in (None, DEFAULT_THREAD) else thread


def thread_token(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode()).rstrip(b"=").decode()


def thread_of_token(token: str) -> str | None:
    """The thread name a token carries; None when it is not one (bad base64, not a thread name)."""
    try:
        name = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        return external_id_check(name, field="thread")
    except (binascii.Error, UnicodeDecodeError, ValueError, InvalidRequest):
        return None


# --- issued ids ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _id_key(secret: str) -> bytes:
    return hashlib.sha256(b"threadless.proxy.response-id:" + secret.encode()).digest()


def _mac(memory_id: str, unique: str, thread: str | None, secret: str) -> str:
    signed = f"{memory_id}:{unique}" if thread is None else f"{memory_id}:{unique}:{thread}"
    return hmac.new(_id_key(secret), signed.encode(), hashlib.sha256).hexdigest()[:16]


def issued_id(kind: str, memory_id: str, upstream_id: str, turn: int | None, thread: str | None) -> str:
    """The id the client sees (`kind` "resp" or "msg"): names its memory and thread, verifiable,
    stable for one answer (the same in every event of a stream), distinct per upstream id and turn."""
    return _issued(kind, memory_id, upstream_id, turn, _named(thread), settings.SECRET_KEY)


@functools.lru_cache(maxsize=256)  # a stream's events carry the same id several times
def _issued(
    kind: str, memory_id: str, upstream_id: str, turn: int | None, thread: str | None, secret: str
) -> str:
    unique = hashlib.sha256(f"{upstream_id}:{turn}".encode()).hexdigest()[:8]
    suffix = memory_id.split("_", 1)[1]
    named = "" if thread is None else "t" + thread_token(thread)
    return f"{kind}_tl{suffix}x{unique}x{_mac(memory_id, unique, thread, secret)}{named}"


def issued_target(kind: str, value: Any) -> Target | None:
    """The memory and thread an issued id of `kind` names; None for any id this proxy did not issue."""
    match = ISSUED.match(value) if isinstance(value, str) else None
    if match is None or match[1] != kind:
        return None
    thread = None if match[5] is None else thread_of_token(match[5])
    if match[5] is not None and thread is None:
        return None
    memory_id = f"mem_{match[2]}"
    for secret in (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS):
        if hmac.compare_digest(_mac(memory_id, match[3], thread, secret), match[4]):
            return Target(memory_id, thread)
    return None


# --- conversation ids -----------------------------------------------------------------------------


def conversation_id(memory_id: str, thread: str | None) -> str:
    """A memory's default thread is the memory's own id; a named thread's id names both."""
    thread = _named(thread)
    return memory_id if thread is None else f"conv_{memory_id.split('_', 1)[1]}_{thread_token(thread)}"


def conversation_target(value: Any) -> Target | None:
    """The memory and thread of a `conversation` value (an id or `{"id": …}`); None for no such id."""
    if isinstance(value, dict):
        value = value.get("id")
    match = CONVERSATION.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    thread = None if match[2] is None else thread_of_token(match[2])
    if match[2] is not None and thread is None:
        return None
    return Target(f"mem_{match[1]}", _named(thread))
