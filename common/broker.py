"""The embedded default's broker: kombu's filesystem transport, made safe for several processes.

kombu's own `_put` creates the message file with `open(name, "wb")` and only then writes it,
while its `_get` takes any file it lists (it never looks at the writer's lock) and decodes it.
A consumer that lists the file between the producer's open and write reads zero bytes and the
`JSONDecodeError` ends the worker ("Unrecoverable error"); the producer then writes into a
file the consumer already moved away, so that message is lost even when the worker survives.
Upstream: https://github.com/celery/kombu/issues/1551 (open since 2022).

Here:
* a message is written under a temporary name in the queue folder that no consumer picks up
  (`<name>.msg.tmp`), flushed to disk (fsync), then renamed to its real name: it becomes
  visible only complete;
* a consumer takes a file by renaming it into the processed folder (atomic on one filesystem:
  exactly one consumer gets it; kombu moved it to the system temp folder, a copy and a delete
  when /tmp is another filesystem), and a file it cannot read or decode goes to the `dead`
  folder next to the queue, with one log line naming it — never a crash, never a silent loss.

Registered as the `threadless-fs://` broker URL (`register()`, called by the Celery app), the
embedded default of `CELERY_BROKER_URL`. Delete this module (and go back to `filesystem://`)
once kombu's filesystem transport writes atomically and survives an unreadable file: run
`tests/common/test_broker.py` against `kombu.transport.filesystem.Transport`; its race and
dead-letter tests are marked to fail there today.

Low level on purpose: no imports from the apps (it lives in `common/`).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections import deque
from functools import cached_property
from pathlib import Path
from queue import Empty

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger("threadless.broker")

SCHEME = "threadless-fs"
TEMP_SUFFIX = ".tmp"


def _message_names(folder: str, queue: str) -> list[str]:
    """The queue's complete message files, oldest first (kombu's naming: `<ms>_<uuid>.<queue>.msg`;
    a temporary `….msg.tmp` does not match)."""
    wanted = f"{queue}.msg"
    return sorted(name for name in os.listdir(folder) if name.partition(".")[2] == wanted)


class Channel(filesystem.Channel):
    """kombu's filesystem channel with an atomic `_put` and a `_get` that parks what it cannot read."""

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        temporary = final + TEMP_SUFFIX
        try:
            with open(temporary, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
                f.flush()
                os.fsync(f.fileno())
            os.rename(temporary, final)
        except OSError as exc:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _get(self, queue):
        # The folder is listed once per batch, not once per message (kombu lists and sorts it for
        # every message: quadratic in a backlog); a file another consumer took is skipped.
        pending = self._listed.get(queue)
        if not pending:
            pending = self._listed[queue] = deque(_message_names(self.data_folder_in, queue))
        while pending:
            name = pending.popleft()
            taken = os.path.join(self.processed_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), taken)
            except OSError:
                continue  # another consumer took it first (or it went away): the next one
            try:
                with open(taken, "rb") as f:
                    payload = loads(bytes_to_str(f.read()))
                self.Message(payload, channel=self)  # what delivery will build: fails here, not in the loop
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                self._park(taken, name, exc)
                continue
            if not self.store_processed:
                os.remove(taken)
            return payload
        raise Empty()

    def _park(self, taken: str, name: str, exc: Exception) -> None:
        dead = self.dead_folder
        try:
            os.makedirs(dead, exist_ok=True)
            os.rename(taken, os.path.join(dead, name))
            where = os.path.join(dead, name)
        except OSError:
            where = taken
        log.error(
            "broker: unreadable message file set aside: %s (%s: %s)",
            where,
            exc.__class__.__name__,
            str(exc)[:200],
        )

    @cached_property
    def _listed(self) -> dict[str, deque]:
        return {}

    @property
    def dead_folder(self) -> str:
        default = Path(self.data_folder_in).resolve().parent / "dead"
        return str(self.transport_options.get("dead_folder") or default)

    @cached_property
    def processed_folder(self):
        # Never the system temp folder (kombu's default): a rename must stay on one filesystem.
        folder = self.transport_options.get("processed_folder")
        if not folder:
            folder = str(Path(self.data_folder_in).resolve().parent / "processed")
        os.makedirs(folder, exist_ok=True)
        return folder


class Transport(filesystem.Transport):
    Channel = Channel
    driver_type = "filesystem"
    driver_name = SCHEME


def register() -> None:
    """Make `threadless-fs://` a broker URL kombu knows."""
    TRANSPORT_ALIASES.setdefault(SCHEME, "common.broker:Transport")


def queue_stats(folder: str | Path, queue: str) -> dict:
    """Messages waiting in a filesystem queue folder: how many, and how old the oldest is
    (from its file's modification time: our files are renamed into place once written)."""
    folder = str(folder)
    try:
        names = _message_names(folder, queue)
    except OSError:
        return {"depth": None, "oldestAgeSeconds": None}
    oldest = None
    for name in names[:5]:  # the first may be taken while we look
        try:
            oldest = round(max(0.0, time.time() - os.stat(os.path.join(folder, name)).st_mtime), 1)
            break
        except OSError:
            continue
    return {"depth": len(names), "oldestAgeSeconds": oldest}
