"""Agents, conversations and task runs (the turn pipeline lands in its own issue)."""
