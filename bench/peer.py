"""The peer most users would pick instead: LangGraph's standard messages-state graph with a
`SqliteSaver` checkpointer. Reading = `get_state` of the thread, then langchain-core's
`trim_messages(strategy="last", start_on="human")` with the same token estimate Threadless uses
(`threadless.window`). Writing = `graph.invoke` adding one exchange (the user's message and a
canned reply from a stand-in model node: no model is called).
"""

# No `from __future__ import annotations` here: trim_messages treats `token_counter` as a
# per-message counter only when its first parameter is annotated with the BaseMessage class itself.
import json
import sqlite3

from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages, trim_messages
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from threadless.window import MESSAGE_OVERHEAD, text_quarters

REPLY = "Noted. " * 20


def message_tokens(message: BaseMessage) -> int:
    """threadless.window.message_tokens for a LangChain message: its text, plus the compact JSON
    of its tool calls written back in the OpenAI shape they arrived in (same estimate)."""
    content = message.content
    quarters = (
        text_quarters(content)
        if isinstance(content, str)
        else sum(
            text_quarters(p.get("text", "")) if isinstance(p, dict) else text_quarters(str(p))
            for p in content
        )
    )
    calls = getattr(message, "tool_calls", None)
    if calls:
        openai_calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
            }
            for c in calls
        ]
        quarters += text_quarters(json.dumps(openai_calls, separators=(",", ":"), ensure_ascii=False))
    return (quarters + 3) // 4 + MESSAGE_OVERHEAD


def _model(state: MessagesState) -> dict:
    return {"messages": [AIMessage(content=REPLY)]}


class Peer:
    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        builder = StateGraph(MessagesState)
        builder.add_node("model", _model)
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        self.graph = builder.compile(checkpointer=self.saver)

    @staticmethod
    def config(thread: str) -> dict:
        return {"configurable": {"thread_id": thread}}

    def load(self, thread: str, messages: list[dict]) -> None:
        """The thread's history as one checkpoint (as if the graph had run all along)."""
        self.graph.update_state(
            self.config(thread), {"messages": convert_to_messages(messages)}, as_node="model"
        )

    def window(self, thread: str, new_messages: list[dict], reserved: int, budget: int) -> list[BaseMessage]:
        history = self.graph.get_state(self.config(thread)).values["messages"]
        kept = trim_messages(
            history,
            strategy="last",
            token_counter=message_tokens,
            max_tokens=budget - reserved,
            start_on="human",
            allow_partial=False,
        )
        return kept + convert_to_messages(new_messages)

    def turn(self, thread: str, user_message: dict) -> None:
        """One exchange: the user's message in, the stand-in model's reply appended."""
        self.graph.invoke({"messages": convert_to_messages([user_message])}, self.config(thread))

    def close(self) -> None:
        self.conn.close()


def as_openai(messages: list[BaseMessage]) -> list[dict]:
    """Back to OpenAI-chat dicts, for the window check only."""
    out = []
    for m in messages:
        role = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}[m.type]
        item: dict = {"role": role, "content": m.content}
        if getattr(m, "tool_calls", None):
            item["tool_calls"] = [{"id": c["id"]} for c in m.tool_calls]
        if m.type == "tool":
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out
