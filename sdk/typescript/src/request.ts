/** A decorated model request, and its conversion to OpenAI and Anthropic request bodies. */

import type { ThreadlessError } from "./errors.js";
import type { ContentPart, DecorateContext, DecorateUsage, Message } from "./types.js";

export interface AnthropicBlock {
  type: string;
  [key: string]: unknown;
}

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicRequest {
  system?: string;
  messages: AnthropicMessage[];
}

export interface DecoratedRequestInit {
  memoryId: string;
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
  readonly memoryId: string;
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
    this.turn = init.turn;
    this.instructions = init.instructions;
    this.contextText = init.contextText;
    this.messages = init.messages;
    this.context = init.context;
    this.usage = init.usage;
    this.degraded = init.degraded;
    this.error = init.error;
  }

  /** Messages for OpenAI-style chat completions: the instructions as a leading system message. */
  toOpenAI(): Message[] {
    const messages: Message[] = [];
    if (this.instructions) messages.push({ role: "system", content: this.instructions });
    for (const message of this.messages) messages.push({ ...message });
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
    if (data) return { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } };
    return { type: "image", source: { type: "url", url } };
  }
  return { ...part } as AnthropicBlock;
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
  if (blocks.length === 1 && blocks[0]!.type === "text") return { role, content: String(blocks[0]!.text) };
  return { role, content: blocks };
}
