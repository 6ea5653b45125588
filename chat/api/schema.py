"""OpenAPI paths for the conversation routes (plain async views, which drf-spectacular cannot see).

A drf-spectacular postprocessing hook: it adds the routes to the generated schema, with the one
error shape for every error status.
"""

from __future__ import annotations

ERROR = {"$ref": "#/components/schemas/Error"}
TEXT = {
    400: "invalid_request",
    401: "unauthorized",
    404: "not_found",
    409: "conflict",
    429: "rate_limited or quota_exceeded",
    503: "unavailable",
}

SNAPSHOT = {
    "type": "object",
    "properties": {
        "conversationId": {"type": "string"},
        "turn": {"type": "integer"},
        "conversationState": {
            "type": "string",
            "enum": ["READY", "IN_PROGRESS", "ERROR", "EXECUTION_INTERRUPTED", "ENDED"],
        },
        "output": {"type": "array", "items": {"type": "object"}},
        "actions": {"type": "array", "items": {"type": "string"}},
        "taskErrors": {
            "type": "array",
            "items": {"type": "object"},
            "description": "errorDigest entries; for publishable keys {type: error, message} only",
        },
    },
}
CONVERSATION = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "agentId": {"type": "string"},
        "memoryId": {"type": "string"},
        "thread": {
            "type": "string",
            "description": "the conversation's thread in its memory: default (a memory of its own) or, "
            "created with external_id, the conversation's id",
        },
        "conversationState": {"type": "string"},
        "clientToken": {"type": "string", "description": "only when created with a publishable key"},
        "turns": {"type": "array", "items": SNAPSHOT},
    },
}
SSE = {
    "text/event-stream": {
        "schema": {
            "type": "string",
            "description": "turn_start, task_start, token, task_end, task_failed, rollback, output, done "
            "(and error); each with an id",
        }
    }
}

CLIENT_TOKEN = {
    "name": "X-Client-Token",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "Required with a publishable key: the conversation's clientToken.",
}


def _op(
    op_id: str,
    summary: str,
    ok: int,
    ok_content: dict,
    errors: tuple[int, ...],
    body: dict | None = None,
    params: list | None = None,
) -> dict:
    responses = {str(ok): {"description": "OK", "content": ok_content}}
    for status in (*errors, 401, 429):
        responses[str(status)] = {
            "description": TEXT.get(status, "error"),
            "content": {"application/json": {"schema": ERROR}},
        }
    op = {
        "operationId": op_id,
        "summary": summary,
        "tags": ["conversations"],
        "responses": responses,
        "security": [{"BearerKey": []}],
        "parameters": [CLIENT_TOKEN, *(params or [])],
    }
    if body is not None:
        op["requestBody"] = {"content": {"application/json": {"schema": body}}}
    return op


def _path_param(name: str, kind: str = "string") -> dict:
    return {"name": name, "in": "path", "required": True, "schema": {"type": kind}}


def conversation_paths(result, generator, request, public):
    json_of = {"application/json": {"schema": CONVERSATION}}
    snap = {"application/json": {"schema": SNAPSHOT}, **SSE}
    conv = [_path_param("conversation_id")]
    paths = result.setdefault("paths", {})
    paths["/v1/agents/{agent_id}/conversations"] = {
        "post": _op(
            "conversations_create",
            "Start a conversation with an agent (project key or its publishable key)",
            201,
            json_of,
            (400, 404),
            {
                "type": "object",
                "properties": {
                    "metadata": {
                        "type": "object",
                        "description": "Project keys only: with a publishable key, metadata is 400.",
                    },
                    "external_id": {
                        "type": "string",
                        "description": "Project keys only (with a publishable key it is 400): the "
                        "subject whose memory the conversation is a new thread of (created on first use).",
                    },
                },
            },
            [_path_param("agent_id")],
        )
    }
    receipt = {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"deleted": {"type": "object", "additionalProperties": {"type": "integer"}}},
            }
        }
    }
    paths["/v1/conversations/{conversation_id}"] = {
        "get": _op(
            "conversations_get", "The conversation with its turn snapshots", 200, json_of, (404,), None, conv
        ),
        "delete": _op(
            "conversations_delete",
            "Delete the conversation (project keys): its own memory, or its thread of a subject's memory",
            200,
            receipt,
            (404,),
            None,
            conv,
        ),
    }
    paths["/v1/conversations/{conversation_id}/say"] = {
        "post": _op(
            "conversations_say",
            "Run a turn; JSON snapshot, or SSE with Accept: text/event-stream",
            200,
            snap,
            (400, 404, 409, 503),
            {
                "type": "object",
                "required": ["input"],
                "properties": {
                    "input": {
                        "type": "string",
                        "description": "At most 100,000 characters; with a publishable key at most "
                        "THREADLESS_END_USER_MAX_INPUT_CHARS (4,000 by default).",
                    }
                },
            },
            conv,
        )
    }
    paths["/v1/conversations/{conversation_id}/rerun"] = {
        "post": _op(
            "conversations_rerun",
            "Retry the last turn if it ended ERROR or EXECUTION_INTERRUPTED",
            200,
            snap,
            (404, 409, 503),
            {"type": "object"},
            conv,
        )
    }
    paths["/v1/conversations/{conversation_id}/turns/{number}/events"] = {
        "get": _op(
            "conversations_turn_events",
            "Replay a turn's SSE events (Last-Event-ID), then live until done",
            200,
            SSE,
            (400, 404),
            None,
            [
                *conv,
                _path_param("number", "integer"),
                {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"}},
                {
                    "name": "key",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "A publishable key (EventSource cannot send headers); never a project key",
                },
                {"name": "client_token", "in": "query", "required": False, "schema": {"type": "string"}},
            ],
        )
    }
    return result
