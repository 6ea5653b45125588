"""Writes for agents, conversations and turns, one module per concern; import them from here.

    agents  agent_create / agent_update / agent_delete / agent_ensure_demo (+ DEMO_CONFIG)
    turns   conversation_create / conversation_delete / conversation_thread_deleted (the receiver of
            memories.signals.thread_deleted) / check_input / turn_say / turn_rerun /
            turn_say_stream / turn_rerun_stream / turn_begin_streamed / turn_stream

The secret store and provider keys: `projects.services`, `memories.provider_keys`.
"""

from chat.services.agents import DEMO_CONFIG, agent_create, agent_delete, agent_ensure_demo, agent_update
from chat.services.turns import (
    check_input,
    conversation_create,
    conversation_delete,
    conversation_thread_deleted,
    turn_begin_streamed,
    turn_rerun,
    turn_rerun_stream,
    turn_say,
    turn_say_stream,
    turn_stream,
)

__all__ = [
    "DEMO_CONFIG",
    "agent_create",
    "agent_delete",
    "agent_ensure_demo",
    "agent_update",
    "check_input",
    "conversation_create",
    "conversation_delete",
    "conversation_thread_deleted",
    "turn_begin_streamed",
    "turn_rerun",
    "turn_rerun_stream",
    "turn_say",
    "turn_say_stream",
    "turn_stream",
]
