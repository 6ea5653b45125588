"""A real local upstream (a socket on 127.0.0.1) that speaks OpenAI's Chat Completions and
Responses and Anthropic's Messages protocols: JSON answers, SSE streams (the Responses API's typed
events with their sequence numbers), tool calls and provider-shaped errors.

By default it answers "Hello from the stub." — or, when the request offers tools and its last
message is not a tool result, a `get_weather` tool call; after a tool result it answers with the
result's text. Tests queue other answers with `push(...)`. Every request is recorded, and a
stream told to `hold_after` n frames waits for the peer to close the connection and records it
(`closed_early`), which is how a test sees that the proxy closed its upstream stream.

A stream ends by closing its connection, unless the stub is made with `chunked_streams`: then its
frames go in chunked transfer encoding and the connection stays open for the next request, as real
providers keep it (the benches use that; a test's `hold_after` and `error_after` keep the default).
"""

from __future__ import annotations

import json
import select
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from harness.stubhttp import StubHandler


@dataclass
class Answer:
    text: str | None = None
    tool: tuple[str, dict] | None = None
    status: int = 200
    error: dict | None = None  # the provider-shaped error body (with status >= 400)
    headers: dict = field(default_factory=dict)
    hold_after: int | None = None  # stream: send this many frames, then wait for the peer to close
    error_after: int | None = None  # stream: send this many frames, then an error event, then close
    hold_after_error: bool = False  # with error_after: after the error event, wait for the peer to close
    reasoning: str | None = None  # Responses: a reasoning item (with this summary) before the output
    refusal: str | None = None  # Responses: a refusal instead of text
    frames: list[str] | None = None  # stream: these raw SSE frames instead of the generated ones


@dataclass
class Seen:
    path: str
    headers: dict
    body: dict


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


class ProviderStub:
    def __init__(self, port: int = 0, *, chunked_streams: bool = False) -> None:
        self.requests: list[Seen] = []
        self.queue: list[Answer] = []
        self.closed_early = 0
        self.closed = threading.Event()
        self.lock = threading.Lock()
        stub = self

        class Handler(StubHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?", 1)[0]
                with stub.lock:
                    stub.requests.append(Seen(path, {k.lower(): v for k, v in self.headers.items()}, body))
                    answer = stub.queue.pop(0) if stub.queue else Answer()
                kind = (
                    "openai"
                    if path.endswith("/chat/completions")
                    else "anthropic"
                    if path.endswith("/messages")
                    else "responses"
                    if path.endswith("/responses")
                    else None
                )
                if kind is None:
                    return self._json(
                        404, {"error": {"message": "no such route", "type": "invalid_request_error"}}
                    )
                if answer.status >= 400:
                    return self._json(answer.status, answer.error or {}, answer.headers)
                text, tool = stub.decide(kind, body, answer)
                if kind == "responses":
                    if body.get("stream"):
                        return self._sse(responses_frames(body, text, tool, answer), answer, kind)
                    return self._json(200, responses_object(body, text, tool, answer), answer.headers)
                if body.get("stream"):
                    frames = (openai_frames if kind == "openai" else anthropic_frames)(body, text, tool)
                    return self._sse(frames, answer, kind)
                reply = (openai_completion if kind == "openai" else anthropic_message)(body, text, tool)
                return self._json(200, reply, answer.headers)

            def _json(self, status: int, data: dict, headers: dict | None = None):
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _sse(self, frames: list[str], answer: Answer, kind: str):
                frames = frames if answer.frames is None else answer.frames
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                if chunked_streams and answer.hold_after is None and answer.error_after is None:
                    return self._chunked(frames)
                self.send_header("Connection", "close")
                self.end_headers()
                for i, frame in enumerate(frames):
                    if answer.hold_after is not None and i == answer.hold_after:
                        return self._hold()
                    if answer.error_after is not None and i == answer.error_after:
                        error = (
                            {
                                "error": {
                                    "message": "The server had an error while processing your request.",
                                    "type": "server_error",
                                }
                            }
                            if kind == "openai"
                            else {
                                "type": "error",
                                "error": {"type": "overloaded_error", "message": "Overloaded"},
                            }
                        )
                        if kind == "responses":
                            error = {
                                "type": "error",
                                "code": "server_error",
                                "param": None,
                                "sequence_number": i,
                                "message": "The server had an error while processing your request.",
                            }
                        prefix = "" if kind == "openai" else "event: error\n"
                        self.wfile.write(f"{prefix}data: {json.dumps(error)}\n\n".encode())
                        self.wfile.flush()
                        return self._hold() if answer.hold_after_error else None
                    try:
                        self.wfile.write(frame.encode())
                        self.wfile.flush()
                    except OSError:
                        return
                self.close_connection = True

            def _chunked(self, frames: list[str]):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for frame in frames:
                    raw = frame.encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _hold(self):
                """Wait (up to 20 s) for the peer to close; record it."""
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable:
                        try:
                            if self.connection.recv(1) == b"":
                                with stub.lock:
                                    stub.closed_early += 1
                                stub.closed.set()
                                return
                        except OSError:
                            with stub.lock:
                                stub.closed_early += 1
                            stub.closed.set()
                            return
                self.close_connection = True

        self.server = _Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def push(self, **kwargs) -> None:
        with self.lock:
            self.queue.append(Answer(**kwargs))

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.queue.clear()
            self.closed_early = 0
            self.closed.clear()

    @staticmethod
    def decide(kind: str, body: dict, answer: Answer) -> tuple[str, tuple[str, dict] | None]:
        if answer.text is not None or answer.tool is not None:
            return answer.text or "", answer.tool
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if kind == "responses":
            items = body.get("input") if isinstance(body.get("input"), list) else []
            last = items[-1] if items else {}
            if last.get("type") == "function_call_output":
                return f"The tool said: {last.get('output')}", None
        elif kind == "openai":
            if last.get("role") == "tool":
                return f"The tool said: {last.get('content')}", None
        else:
            content = last.get("content")
            results = (
                [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
                if isinstance(content, list)
                else []
            )
            if results:
                inner = results[-1].get("content")
                text = inner if isinstance(inner, str) else " ".join(b.get("text", "") for b in inner or [])
                return f"The tool said: {text}", None
        if body.get("tools"):
            return "", ("get_weather", {"city": "Paris"})
        return "Hello from the stub.", None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- OpenAI -------------------------------------------------------------------------------------


def openai_completion(body: dict, text: str, tool) -> dict:
    message: dict = {"role": "assistant", "content": text or None, "refusal": None}
    if tool:
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool[0], "arguments": json.dumps(tool[1])},
            }
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1764547200,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(body: dict, delta: dict, finish: str | None = None) -> str:
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1764547200,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data)}\n\n"


def openai_frames(body: dict, text: str, tool) -> list[str]:
    frames = [_chunk(body, {"role": "assistant", "content": ""})]
    if tool:
        args = json.dumps(tool[1])
        frames.append(
            _chunk(
                body,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": tool[0], "arguments": ""},
                        }
                    ]
                },
            )
        )
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            frames.append(_chunk(body, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    for word in _words(text) if text else []:
        frames.append(_chunk(body, {"content": word}))
    frames.append(_chunk(body, {}, "tool_calls" if tool else "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1764547200,
            "model": body.get("model", ""),
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        frames.append(f"data: {json.dumps(usage)}\n\n")
    frames.append("data: [DONE]\n\n")
    return frames


# --- Anthropic ----------------------------------------------------------------------------------


def anthropic_message(body: dict, text: str, tool) -> dict:
    content = [{"type": "text", "text": text}] if text else []
    if tool:
        content.append({"type": "tool_use", "id": "toolu_1", "name": tool[0], "input": tool[1]})
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _event(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


def anthropic_frames(body: dict, text: str, tool) -> list[str]:
    frames = [
        _event(
            "message_start",
            {
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", ""),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                }
            },
        )
    ]
    index = 0
    if text:
        frames.append(
            _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
        )
        frames.append(_event("ping", {}))
        for word in _words(text):
            frames.append(
                _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": word}})
            )
        frames.append(_event("content_block_stop", {"index": 0}))
        index = 1
    if tool:
        args = json.dumps(tool[1])
        frames.append(
            _event(
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "tool_use", "id": "toolu_1", "name": tool[0], "input": {}},
                },
            )
        )
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            frames.append(
                _event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
            )
        frames.append(_event("content_block_stop", {"index": index}))
    frames.append(
        _event(
            "message_delta",
            {
                "delta": {"stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    frames.append(_event("message_stop", {}))
    return frames


# --- OpenAI Responses ---------------------------------------------------------------------------


def _responses_output(text: str, tool, answer: Answer) -> list[dict]:
    output: list[dict] = []
    if answer.reasoning:
        output.append(
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": answer.reasoning}],
                "encrypted_content": "opaque-reasoning-state",
            }
        )
    if answer.refusal:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": answer.refusal}],
            }
        )
    elif text:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
            }
        )
    if tool:
        output.append(
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": f"call_{tool[0]}_1",
                "name": tool[0],
                "arguments": json.dumps(tool[1]),
                "status": "completed",
            }
        )
    return output


def responses_object(
    body: dict, text: str, tool, answer: Answer, *, status: str = "completed", output: list | None = None
) -> dict:
    return {
        "id": "resp_upstream_1",
        "object": "response",
        "created_at": 1764547200,
        "status": status,
        "model": body.get("model", ""),
        "output": _responses_output(text, tool, answer) if output is None else output,
        "instructions": body.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "top_p": 1.0,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "error": None,
        "incomplete_details": None,
        "previous_response_id": None,
        "store": body.get("store"),
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


def responses_frames(body: dict, text: str, tool, answer: Answer) -> list[str]:
    """The typed events of one response, in OpenAI's order, numbered by `sequence_number`."""
    events: list[tuple[str, dict]] = [
        (
            "response.created",
            {"response": responses_object(body, text, tool, answer, status="in_progress", output=[])},
        ),
        (
            "response.in_progress",
            {"response": responses_object(body, text, tool, answer, status="in_progress", output=[])},
        ),
    ]
    for index, item in enumerate(_responses_output(text, tool, answer)):
        if item["type"] == "message":
            events.append(
                (
                    "response.output_item.added",
                    {"output_index": index, "item": {**item, "status": "in_progress", "content": []}},
                )
            )
            part = item["content"][0]
            empty = {**part, "text": ""} if part["type"] == "output_text" else {**part, "refusal": ""}
            events.append(
                (
                    "response.content_part.added",
                    {"item_id": item["id"], "output_index": index, "content_index": 0, "part": empty},
                )
            )
            if part["type"] == "output_text":
                for word in _words(part["text"]):
                    events.append(
                        (
                            "response.output_text.delta",
                            {
                                "item_id": item["id"],
                                "output_index": index,
                                "content_index": 0,
                                "delta": word,
                                "logprobs": [],
                            },
                        )
                    )
                events.append(
                    (
                        "response.output_text.done",
                        {
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "text": part["text"],
                            "logprobs": [],
                        },
                    )
                )
            else:
                events.append(
                    (
                        "response.refusal.delta",
                        {
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": part["refusal"],
                        },
                    )
                )
                events.append(
                    (
                        "response.refusal.done",
                        {
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "refusal": part["refusal"],
                        },
                    )
                )
            events.append(
                (
                    "response.content_part.done",
                    {"item_id": item["id"], "output_index": index, "content_index": 0, "part": part},
                )
            )
        elif item["type"] == "function_call":
            events.append(
                (
                    "response.output_item.added",
                    {"output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}},
                )
            )
            args = item["arguments"]
            for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
                events.append(
                    (
                        "response.function_call_arguments.delta",
                        {"item_id": item["id"], "output_index": index, "delta": piece},
                    )
                )
            events.append(
                (
                    "response.function_call_arguments.done",
                    {"item_id": item["id"], "output_index": index, "arguments": args},
                )
            )
        else:
            events.append(("response.output_item.added", {"output_index": index, "item": item}))
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    events.append(("response.completed", {"response": responses_object(body, text, tool, answer)}))
    return [
        f"event: {name}\ndata: {json.dumps({'type': name, **data, 'sequence_number': i})}\n\n"
        for i, (name, data) in enumerate(events)
    ]
