/** A decorated model request, and its conversion to OpenAI and Anthropic request bodies. */

import type { ThreadlessError } from "./errors.js";
import type { ContentPart, DecorateContext, DecorateUsage, Message } from "./types.js";

// The request shapes below are the subsets of OpenAI's `ChatCompletionMessageParam` and
// Anthropic's `MessageParam` that the conversions produce, so `toOpenAI()` and `toAnthropic()`
// are assignable to the real SDKs' parameter types without depending on them (checked by
// `test/types/` against the `openai` and `@anthropic-ai/sdk` packages).

export interface OpenAITextPart {
  type: "text";
  text: string;
}

export interface OpenAIImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface OpenAISystemMessage {
  role: "system";
  content: string | OpenAITextPart[];
  name?: string;
}

export interface OpenAIUserMessage {
  role: "user";
  content: string | Array<OpenAITextPart | OpenAIImagePart>;
  name?: string;
}

export interface OpenAIAssistantMessage {
  role: "assistant";
  content?: string | OpenAITextPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[];
}

export interface OpenAIToolMessage {
  role: "tool";
  content: string | OpenAITextPart[];
  tool_call_id: string;
}

/** One message of OpenAI's chat completions request (assignable to `ChatCompletionMessageParam`). */
export type OpenAIMessage = OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage;

export interface AnthropicTextBlock {
  type: "text";
  text: string;
}

export interface AnthropicImageBlock {
  type: "image";
  source:
    | { type: "base64"; media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; data: string }
    | { type: "url"; url: string };
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
}

/** A content block of Anthropic's Messages API (other parts you stored pass through as they are). */
export type AnthropicBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

/** Assignable to Anthropic's `MessageParam`. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicRequest {
  system?: string;
  messages: AnthropicMessage[];
}

export interface DecoratedRequestInit {
  /** null only for a fallback by `externalId` before any successful decorate of it. */
  memoryId: string | null;
  externalId?: string | null;
  /** The conversation the request belongs to (default `"default"`). */
  thread?: string;
  turn: number | null;
  instructions: string;
  contextText: string;
  messages: Message[];
  context: DecorateContext | null;
  usage: DecorateUsage | null;
  degraded: boolean;
  error: ThreadlessError | null;
}

/**
 * What `decorate` answers: the full model request. `degraded` is true when it was built from the
 * local tail because the server could not answer (`error` says why; `turn`, `context` and `usage`
 * are then null).
 */
export class DecoratedRequest {
  readonly memoryId: string | null;
  readonly externalId: string | null;
  /** The thread whose window (or, degraded, whose local tail) this is. */
  readonly thread: string;
  readonly turn: number | null;
  readonly instructions: string;
  readonly contextText: string;
  readonly messages: Message[];
  readonly context: DecorateContext | null;
  readonly usage: DecorateUsage | null;
  readonly degraded: boolean;
  readonly error: ThreadlessError | null;

  constructor(init: DecoratedRequestInit) {
    this.memoryId = init.memoryId;
    this.externalId = init.externalId ?? null;
    this.thread = init.thread ?? "default";
    this.turn = init.turn;
    this.instructions = init.instructions;
    this.contextText = init.contextText;
    this.messages = init.messages;
    this.context = init.context;
    this.usage = init.usage;
    this.degraded = init.degraded;
    this.error = init.error;
  }

  /**
   * Messages for OpenAI's chat completions (`ChatCompletionMessageParam[]`): the instructions as
   * a leading system message, then the messages as they are (a tool message without an id gets
   * `tool_call_id: ""`, a user or tool message with null content gets "").
   */
  toOpenAI(): OpenAIMessage[] {
    const messages: OpenAIMessage[] = [];
    if (this.instructions) messages.push({ role: "system", content: this.instructions });
    for (const message of this.messages) messages.push(openAIMessage(message));
    return messages;
  }

  /**
   * `{ system, messages }` for Anthropic's Messages API: tool calls become `tool_use` blocks,
   * tool results `tool_result` blocks in a user message, image URLs `image` blocks, and
   * consecutive messages of one role are merged.
   */
  toAnthropic(): AnthropicRequest {
    const systems = this.instructions ? [this.instructions] : [];
    const out: AnthropicMessage[] = [];
    for (const message of this.messages) {
      if (message.role === "system") {
        const text = plainText(message.content);
        if (text) systems.push(text);
        continue;
      }
      const converted = anthropicMessage(message);
      if (!converted) continue;
      const last = out[out.length - 1];
      if (last && last.role === converted.role) {
        last.content = [...asBlocks(last.content), ...asBlocks(converted.content)];
      } else {
        out.push(converted);
      }
    }
    const request: AnthropicRequest = { messages: out };
    if (systems.length) request.system = systems.join("\n\n");
    return request;
  }
}

function openAIMessage(message: Message): OpenAIMessage {
  // The parts are passed through as stored: they are the OpenAI-shaped parts the caller sent.
  const { role, content } = message;
  if (role === "assistant") return { ...message, role, content } as OpenAIAssistantMessage;
  if (role === "tool") return { ...message, role, content: content ?? "", tool_call_id: message.tool_call_id ?? "" } as OpenAIToolMessage;
  if (role === "system") return { ...message, role, content: content ?? "" } as OpenAISystemMessage;
  return { ...message, role: "user", content: content ?? "" } as OpenAIUserMessage;
}

function plainText(content: Message["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((part) => part && part.type === "text")
      .map((part) => String((part as { text?: unknown }).text ?? ""))
      .join("\n");
  }
  return "";
}

function asBlocks(content: string | AnthropicBlock[]): AnthropicBlock[] {
  return typeof content === "string" ? (content ? [{ type: "text", text: content }] : []) : content;
}

function anthropicPart(part: ContentPart): AnthropicBlock {
  if (part.type === "text") return { type: "text", text: String((part as { text?: unknown }).text ?? "") };
  if (part.type === "image_url") {
    const raw = (part as { image_url?: unknown }).image_url;
    const url = typeof raw === "string" ? raw : String((raw as { url?: unknown } | undefined)?.url ?? "");
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (data) {
      const mediaType = data[1] as "image/jpeg" | "image/png" | "image/gif" | "image/webp";
      return { type: "image", source: { type: "base64", media_type: mediaType, data: data[2] ?? "" } };
    }
    return { type: "image", source: { type: "url", url } };
  }
  return { ...part } as unknown as AnthropicBlock; // stored as the caller sent it
}

function anthropicMessage(message: Message): AnthropicMessage | null {
  if (message.role === "tool") {
    return {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: message.tool_call_id ?? "", content: plainText(message.content) }],
    };
  }
  const blocks: AnthropicBlock[] =
    typeof message.content === "string"
      ? message.content
        ? [{ type: "text", text: message.content }]
        : []
      : Array.isArray(message.content)
        ? message.content.map(anthropicPart)
        : [];
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? []) {
      let input: unknown = {};
      const args: unknown = call.function?.arguments;
      if (typeof args === "string") {
        try {
          input = args.trim() ? JSON.parse(args) : {};
          if (input === null || typeof input !== "object" || Array.isArray(input)) input = { value: input };
        } catch {
          input = { arguments: args };
        }
      } else if (args !== null && typeof args === "object" && !Array.isArray(args)) {
        input = args;
      }
      blocks.push({ type: "tool_use", id: call.id, name: call.function?.name ?? "", input });
    }
  }
  if (!blocks.length) return null;
  const role = message.role === "assistant" ? "assistant" : "user";
  const only = blocks.length === 1 ? blocks[0] : undefined;
  if (only && only.type === "text") return { role, content: only.text };
  return { role, content: blocks };
}
