"""Random, prefixed ids (`mem_…`, `prj_…`, `agt_…`): letters and digits from `secrets`."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def make_id(prefix: str, length: int = 20) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))
