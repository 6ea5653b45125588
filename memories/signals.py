"""What the memory core tells the apps above it, which keep rows about a memory's parts (a chat
conversation is a thread of its memory). The core never imports them: they connect here."""

from django.dispatch import Signal

# Sent by `services.thread_delete` inside its transaction, with `memory_id` and `thread` (the name),
# so whatever is that thread goes with it.
thread_deleted = Signal()
