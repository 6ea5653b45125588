"""OpenAI's Responses API on the proxy: the protocol of `POST /v1/openai/responses` (SPEC 4.8).

The route is the chat-completions call (`proxy.views.proxy_call`: decorate, forward, relay,
report) with this protocol plugged in; the views are `proxy.views` (the call) and
`proxy.openai_api` (what a response id leads to). What differs lives here:

* translation between Responses items and the memory's chat-shaped messages (input items in,
  window messages out as input items, a response's output items into the reported message);
* which memory and thread a call uses: besides the headers and `user`, a `conversation` (proxy.ids)
  or a `previous_response_id` this proxy issued (it encodes its memory and thread under an HMAC;
  one that does not verify is a 400 that says what to do). Neither goes upstream; `store` goes
  as `false` unless the caller set it, since the memory is the state;
* the response ids handed to the client are rewritten into such ids, in the JSON answer and in
  every streamed event that carries the response object.

Reasoning items (and any other item type the memory does not model, such as built-in tool
calls) are forwarded in the request that carries them. A reply's reasoning items are reported as
parts of its assistant message, and the report keeps them only when the memory's policy says so
(`reasoningItems: "keep"`, memories.policy): then the window gives them back upstream where they
stood, before the item that followed them; by default they are dropped, and the model's future
view never contains them. Facts and recall read text only, so they never see them either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from common.errors import InvalidRequest, NotFound
from common.messages import text_of
from memories.selectors import memory_get, thread_get
from proxy.ids import conversation_id, conversation_target, issued_id, issued_target
from proxy.protocols import Protocol, Reference, frame_with_object_rewritten, openai_error_body, stream_index

# Items the memory stores as messages; every other item type passes through unstored (reasoning
# items of a reply are kept with it when the memory's policy says so).
MODELLED = frozenset({"message", "function_call", "function_call_output"})
REASONING = "reasoning"


class UnknownPreviousResponse(InvalidRequest):
    code = "previous_response_not_found"
    hint = (
        "Memory is the state on this proxy: send only the new input, naming the memory with "
        "X-Threadless-Memory, X-Threadless-External-Id or conversation, or pass a response id this "
        "proxy returned."
    )


# --- response ids the proxy issues (proxy.ids) ------------------------------------------------


def issued_response_id(
    memory_id: str, upstream_id: str, turn: int | None = None, thread: str | None = None
) -> str:
    """The response id the client sees: names its memory and thread (proxy.ids)."""
    return issued_id("resp", memory_id, upstream_id, turn, thread)


def memory_of_response_id(value: Any) -> str | None:
    """The memory id an issued response id names; None for any id this proxy did not issue."""
    target = issued_target("resp", value)
    return target.memory_id if target else None


# --- items in ------------------------------------------------------------------------------------


def _part_in(part: Any) -> dict | None:
    """A Responses content part as a memory (chat-shaped) part."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str) and not part.get("file_id"):
            return None
        image: dict[str, Any] = {"url": url} if isinstance(url, str) else {"file_id": part["file_id"]}
        if part.get("detail"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    return dict(part) if isinstance(kind, str) else None  # input_file, input_audio…: kept as sent


def _content_in(content: Any) -> str | list:
    if isinstance(content, str):
        return content
    parts = [p for p in (_part_in(p) for p in content or []) if p] if isinstance(content, list) else []
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _output_text(content: Any) -> str:
    return text_of(_content_in(content)) if not isinstance(content, str) else content


def input_items(body: dict) -> list[dict]:
    """`input` as a list of items (a string is one user message)."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    return [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []


def item_kind(item: dict) -> str:
    return item.get("type") or ("message" if "role" in item else "")


def items_to_messages(items: list[dict]) -> list[dict]:
    """Responses items as memory messages: a function_call joins the assistant message before it
    (or opens one), a function_call_output is a tool message with its call id; item types the
    memory does not model are skipped."""
    out: list[dict] = []
    for item in items:
        kind = item_kind(item)
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                out.append({"role": "system", "content": text_of(_content_in(item.get("content")))})
            elif role == "user":
                out.append({"role": "user", "content": _content_in(item.get("content"))})
            elif role == "assistant":
                out.append({"role": "assistant", "content": _output_text(item.get("content"))})
        elif kind == "function_call":
            args = item.get("arguments", "")
            call = {
                "id": str(item.get("call_id") or item.get("id") or ""),
                "type": "function",
                "function": {
                    "name": str(item.get("name") or ""),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            if out and out[-1]["role"] == "assistant":
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id") or ""),
                    "content": output if isinstance(output, str) else text_of(_content_in(output)),
                }
            )
    return out


def request_messages(body: dict) -> list[dict]:
    """The request's messages for decorate: `instructions` as the system part, then the input."""
    messages = items_to_messages(input_items(body))
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.insert(0, {"role": "system", "content": body["instructions"]})
    return messages


# --- items out (the upstream request, conversation items) -------------------------------------------


def part_out(part: dict, role: str) -> dict:
    if part.get("type") == "text":
        return {"type": "output_text" if role == "assistant" else "input_text", "text": part.get("text", "")}
    if part.get("type") == "image_url":
        image = part.get("image_url") or {}
        out = {"type": "input_image", "detail": image.get("detail") or "auto"}
        out.update({"image_url": image["url"]} if image.get("url") else {"file_id": image.get("file_id")})
        return out
    return part


def message_items(message: dict) -> list[dict]:
    """One memory message as Responses input items (no ids: nothing upstream knows them). An
    assistant message kept with its reasoning items gives each back where it stood: before the
    text that followed it, or before the function calls when it came after the text."""
    role, content = message["role"], message.get("content")
    if role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.get("tool_call_id", ""),
                "output": content if isinstance(content, str) else text_of(content),
            }
        ]
    items: list[dict] = []
    said: list[dict] = []

    def say() -> None:
        if said:
            items.append({"type": "message", "role": role, "content": list(said)})
            said.clear()

    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == REASONING for p in content):
        for part in content:
            if part.get("type") == REASONING:
                say()
                items.append(part)
            else:
                said.append(part_out(part, role))
        say()
    elif role in ("user", "assistant") and (content or not message.get("tool_calls")):
        items.append(
            {
                "type": "message",
                "role": role,
                "content": content
                if isinstance(content, str)
                else [part_out(p, role) for p in content or []],
            }
        )
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id", ""),
                "name": fn.get("name", ""),
                "arguments": fn.get("arguments", ""),
            }
        )
    return items


def _anchor(item: dict) -> tuple | None:
    kind = item_kind(item)
    if kind == "function_call":
        return ("call", str(item.get("call_id") or ""))
    if kind == "message" and item.get("role") == "assistant":
        return ("said", _output_text(item.get("content")))
    return None


def _with_passthrough(items: list[dict], sent: list[dict]) -> list[dict]:
    """Put the caller's unmodelled items (reasoning…) back in front of the item that followed them
    in the caller's input (a function call by call id, an assistant message by its text); one
    whose anchor is not in the upstream input is dropped, as its item is no longer there."""
    pending: list[dict] = []
    placed: dict[tuple, list[dict]] = {}
    for item in sent:
        if item_kind(item) not in MODELLED:
            pending.append(item)
            continue
        anchor = _anchor(item)
        if pending and anchor is not None:
            placed.setdefault(anchor, []).extend(pending)
            pending = []
        elif anchor is None and item_kind(item) == "message":
            pending = []  # a user message between them: the reasoning belonged to an earlier turn
    if not placed:
        return items
    kept = {i["id"] for i in items if item_kind(i) == REASONING and isinstance(i.get("id"), str)}
    out: list[dict] = []
    for item in items:
        anchor = _anchor(item)
        if anchor in placed:
            # a reasoning item the memory kept is in the window already: not sent twice
            out.extend(
                i for i in placed.pop(anchor) if not (item_kind(i) == REASONING and i.get("id") in kept)
            )
        out.append(item)
    return out


def _strip_ids(items: list[dict]) -> list[dict]:
    """Without upstream storage no item id is known there: only reasoning items keep theirs."""
    return [{k: v for k, v in i.items() if k != "id"} if item_kind(i) != "reasoning" else i for i in items]


def forwardable(body: dict) -> dict:
    """The caller's body as it may go upstream: no memory references, `store: false` unless set."""
    out = {k: v for k, v in body.items() if k not in ("previous_response_id", "conversation")}
    out.setdefault("store", False)
    if out["store"] is not True and isinstance(out.get("input"), list):
        out["input"] = _strip_ids([i for i in out["input"] if isinstance(i, dict)])
    return out


def responses_body(body: dict, *, instructions: str, messages: list[dict]) -> dict:
    """The upstream request: decorate's instructions and window as input items, plus the caller's
    reasoning (and other unmodelled) items where they stood."""
    items: list[dict] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if (
            role in ("user", "assistant")
            and isinstance(content, str)
            and content
            and not message.get("tool_calls")
        ):
            items.append({"type": "message", "role": role, "content": content})  # most of a window
        elif role != "system":
            items.extend(message_items(message))
    items = _with_passthrough(items, input_items(body))
    upstream = {**forwardable(body), "input": items}
    if instructions:
        upstream["instructions"] = instructions
    else:
        upstream.pop("instructions", None)
    return upstream


# --- the reply -----------------------------------------------------------------------------------


def _function_call(item: dict) -> dict:
    args = item.get("arguments", "")
    return {
        "id": str(item.get("call_id") or ""),
        "type": "function",
        "function": {
            "name": str(item.get("name") or ""),
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }


def reply_message(parts: list[dict], calls: list[dict]) -> dict | None:
    """The assistant message to report from a reply's parts in output order (text parts, reasoning
    items as parts) and its function calls. Without reasoning its content is the plain text, as
    every other reply's; the memory's policy decides later whether reasoning parts are kept."""
    merged: list[dict] = []
    for part in parts:
        if part["type"] == "text" and merged and merged[-1]["type"] == "text":
            merged[-1] = {"type": "text", "text": merged[-1]["text"] + part["text"]}
        else:
            merged.append(part)
    if not any(p["type"] != "text" or p["text"] for p in merged) and not calls:
        return None
    reasoning = any(p["type"] == REASONING for p in merged)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": merged if reasoning else "".join(p["text"] for p in merged),
    }
    if calls:
        message["tool_calls"] = calls
    return message


def output_message(output: Any) -> dict | None:
    """A response's output items as the assistant message to report: its text (a refusal's text
    included), its function calls as tool calls, its reasoning items as parts where they stood;
    other item types (built-in tool calls…) are left out."""
    if not isinstance(output, list):
        return None
    parts: list[dict] = []
    calls: list[dict] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if (
                    isinstance(part, dict)
                    and part.get("type") == "output_text"
                    and isinstance(part.get("text"), str)
                ):
                    parts.append({"type": "text", "text": part["text"]})
                elif (
                    isinstance(part, dict)
                    and part.get("type") == "refusal"
                    and isinstance(part.get("refusal"), str)
                ):
                    parts.append({"type": "text", "text": part["refusal"]})
        elif item.get("type") == "function_call":
            calls.append(_function_call(item))
        elif item.get("type") == REASONING:
            parts.append(item)
    return reply_message(parts, calls)


# The streamed events the reply is built from; the others (response.created, content_part.added,
# output_text.done…) repeat what these carry.
FED_EVENTS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.output_item.added",
        "response.output_item.done",
        "response.function_call_arguments.delta",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
    }
)


@dataclass
class ResponsesStream:
    """Accumulates the typed Responses events into the assistant message.

    The terminal event's response object (completed, incomplete or failed) carries the whole
    output, which wins; the deltas serve a stream cut before it. Deltas are kept as pieces and
    joined once, in message(): a string grown per event costs quadratic time on the event loop.
    An index that is not a small non-negative integer counts as 0 (`stream_index`).
    """

    text: dict[tuple, list[str]] = field(default_factory=dict)
    calls: dict[int, dict] = field(default_factory=dict)
    reasoning: dict[int, dict] = field(default_factory=dict)
    final: dict | None = None
    error: str | None = None
    done: bool = False

    def _call(self, payload: dict) -> dict:
        return self.calls.setdefault(stream_index(payload.get("output_index")), {"arguments": []})

    def feed(self, event: str, data: str) -> None:
        if event and event not in FED_EVENTS:
            return  # named by its event line as one that adds nothing to the reply: not parsed
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or event
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            key = (stream_index(payload.get("output_index")), stream_index(payload.get("content_index")))
            self.text.setdefault(key, []).append(str(payload.get("delta") or ""))
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = payload.get("item") or {}
            if isinstance(item, dict) and item.get("type") == REASONING and kind.endswith(".done"):
                self.reasoning[stream_index(payload.get("output_index"))] = item
            elif isinstance(item, dict) and item.get("type") == "function_call":
                slot = self._call(payload)
                slot.update({k: str(item[k]) for k in ("call_id", "name") if item.get(k)})
                if kind.endswith(".done") and isinstance(item.get("arguments"), str):
                    slot["arguments"] = [item["arguments"]]
        elif kind == "response.function_call_arguments.delta":
            self._call(payload)["arguments"].append(str(payload.get("delta") or ""))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.done = True
            response = payload.get("response") or {}
            self.final = response if isinstance(response, dict) else None
            error = (self.final or {}).get("error")
            if kind == "response.failed":
                self.error = str(
                    error.get("message") if isinstance(error, dict) else error or "the response failed"
                )
        elif kind == "error" or payload.get("error"):
            error = payload.get("error") if isinstance(payload.get("error"), dict) else payload
            self.error = str(error.get("message") or error.get("code") or "error")

    def message(self) -> dict | None:
        if self.final is not None and self.final.get("output"):
            return output_message(self.final["output"])
        placed = [((index, -1), item) for index, item in self.reasoning.items()]
        placed += [(key, {"type": "text", "text": "".join(pieces)}) for key, pieces in self.text.items()]
        calls = [
            {
                "id": c.get("call_id", ""),
                "type": "function",
                "function": {"name": c.get("name", ""), "arguments": "".join(c["arguments"])},
            }
            for _, c in sorted(self.calls.items())
        ]
        return reply_message([part for _, part in sorted(placed, key=lambda p: p[0])], calls)


# --- the protocol ------------------------------------------------------------------------------------


def _rewrite_response(response: dict, call) -> dict:
    if call.memory is None or call.degraded or not isinstance(response.get("id"), str):
        return response
    out = {**response, "id": issued_response_id(call.memory.id, response["id"], call.turn, call.thread)}
    if call.conversation is not None:
        out["conversation"] = {"id": call.conversation}
    return out


@dataclass(frozen=True)
class ResponsesProtocol(Protocol):
    """OpenAI Responses: the upstream settings, key and `user` rules of the OpenAI route."""

    def messages_in(self, body: dict) -> list[dict]:
        return request_messages(body)

    def upstream_body(self, body: dict, *, instructions: str, messages: list[dict]) -> dict:
        return responses_body(body, instructions=instructions, messages=messages)

    def reply(self, data: Any) -> dict | None:
        return output_message(data.get("output")) if isinstance(data, dict) else None

    def stream(self) -> ResponsesStream:
        return ResponsesStream()

    def error_body(self, message: str, *, status: int) -> dict:
        return openai_error_body(
            message, code="upstream_timeout" if status == 504 else "upstream_unreachable"
        )

    # What the Responses route adds to the shared call.

    def forwardable(self, body: dict) -> dict:
        return forwardable(body)

    def referenced(self, *, project, body: dict, memory_named: bool) -> Reference | None:
        """The memory and thread a `conversation` or an issued `previous_response_id` names."""
        if body.get("conversation") is not None:
            target = conversation_target(body["conversation"])
            if target is None:
                raise NotFound(
                    "conversation: no such conversation.",
                    hint="Use an id that POST /v1/openai/conversations returned.",
                )
            memory = memory_get(project=project, memory_id=target.memory_id)
            if target.thread is not None:
                thread_get(memory=memory, name=target.thread)  # a deleted conversation is gone
            return Reference(memory, target.thread)
        previous = body.get("previous_response_id")
        if previous is None:
            return None
        target = issued_target("resp", previous)
        unknown = UnknownPreviousResponse(
            f"previous_response_id: '{str(previous)[:80]}' was not issued by this Threadless proxy."
        )
        if target is None:
            raise unknown
        try:
            return Reference(memory_get(project=project, memory_id=target.memory_id), target.thread)
        except NotFound:
            raise unknown from None

    def issues_ids(self, body: dict) -> bool:
        return True

    def conversation_of(self, body: dict) -> str | None:
        value = body.get("conversation")
        value = value.get("id") if isinstance(value, dict) else value
        return value if isinstance(value, str) else None

    def answer_json(self, raw: bytes, call) -> bytes:
        """The upstream's response object with its id issued by this proxy."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        return orjson.dumps(_rewrite_response(data, call)) if isinstance(data, dict) else raw

    def answer_frame(self, frame: bytes, call) -> bytes:
        """A streamed event, its response object's id issued by this proxy (deltas pass untouched)."""
        if b'"response"' not in frame or call.memory is None or call.degraded:
            return frame
        return frame_with_object_rewritten(
            frame, "response", lambda response: _rewrite_response(response, call)
        )


RESPONSES = ResponsesProtocol("openai", "https://api.openai.com/v1", "/responses", "api.openai.com")


# --- retrieve, delete, input items, cancel: what a response id leads to ----------------------------


class ResponseNotStored(NotFound):
    code = "response_not_stored"


def response_lookup(*, project, response_id: str):
    """Why a response id has no stored response object here, as the 404 that says what to do.

    The proxy keeps no response objects: it sends `store: false` upstream (unless the caller set
    `store`) and keeps the conversation in the memory the id names. So an id it issued leads to that
    memory's conversation routes; any other id was never seen here.
    """
    target = issued_target("resp", response_id)
    shown = str(response_id)[:80]
    try:
        memory = memory_get(project=project, memory_id=target.memory_id) if target else None
    except NotFound:
        memory = None
    if memory is None:
        raise ResponseNotStored(
            f"No response '{shown}': it was not issued by this Threadless proxy.",
            hint="Response ids the proxy answers (resp_tl…) name the memory that holds the conversation; "
            "OpenAI's own ids are only known to OpenAI.",
        )
    conversation = conversation_id(memory.id, target.thread)
    raise ResponseNotStored(
        f"Response '{shown}' is not stored as a response object: this proxy keeps the conversation in "
        f"memory {memory.id} instead (the upstream gets store: false).",
        hint=f"Read its items with GET /v1/openai/conversations/{conversation}/items "
        f"(client.conversations.items.list('{conversation}')), continue it with previous_response_id or "
        f"conversation='{conversation}', delete one item with DELETE …/items/{{item_id}} or all of it with "
        f"DELETE /v1/openai/conversations/{conversation}.",
    )
