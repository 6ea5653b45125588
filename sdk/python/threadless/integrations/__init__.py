"""Framework adapters over the Threadless SDK (each one an optional extra).

* ``threadless.integrations.langchain``: ``ThreadlessChatMessageHistory`` (``threadless[langchain]``)
* ``threadless.integrations.openai_agents``: ``ThreadlessSession`` (``threadless[agents]``)
* ``threadless.integrations.anthropic``: ``ThreadlessMemoryTool`` / ``AsyncThreadlessMemoryTool``, the
  backend of Anthropic's memory tool (``threadless[anthropic]``)
* ``threadless.integrations.mcp_server``: the ``threadless mcp`` server (``threadless[mcp]``)

Every adapter keeps the SDK's promise: memory never fails the model call (decorate falls back
to the local tail) and reporting never raises; degradations reach ``on_error``.
"""
