/**
 * Vercel AI SDK: `threadlessMemory({ client, memoryId | externalId, thread? })`, a language-model
 * middleware for `wrapLanguageModel`.
 *
 * `transformParams` decorates: the prompt's new messages (those after its last assistant
 * message) are stored and the model gets the memory's window, led by the instructions with the
 * context block. `wrapGenerate` / `wrapStream` report the reply (text and tool calls) in the
 * background. Like the SDK, it never fails the model call for a transport problem: with the
 * service down the model gets the local tail plus the caller's own turn, and `onError` hears why.
 *
 * Only types are imported from `@ai-sdk/provider` (an optional peer dependency).
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Message,
  LanguageModelV4Middleware,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import type { MemoryRef, Threadless } from "../client.js";
import { ThreadlessError } from "../errors.js";
import type { ContentPart, Message, ToolCall } from "../types.js";

export interface ThreadlessMemoryOptions {
  /** The Threadless client (its `onError` hears about every decorate fallback and failed report). */
  client: Threadless;
  /** The memory to use… */
  memoryId?: string;
  /** …or your own id for it (get-or-create; the local tail is keyed by it, so a new user's first turn answers during an outage too). */
  externalId?: string;
  /**
   * The conversation (a chat's id, say; default `"default"`): the model gets that thread's window,
   * with facts and recall from every thread of the memory.
   */
  thread?: string;
  /** Your instructions; absent: the prompt's system messages, else the memory's latest. */
  instructions?: string;
  budgetTokens?: number;
  recall?: boolean;
}

/** Part type for AI SDK file parts kept in a stored message (passed through by the service). */
const FILE_PART = "ai_sdk_file";

type V4ToolResultPart = Extract<Extract<LanguageModelV4Message, { role: "tool" }>["content"][number], { type: "tool-result" }>;

function toJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value ?? null);
  } catch {
    return String(value);
  }
}

type V4FilePart = Extract<Extract<LanguageModelV4Message, { role: "user" }>["content"][number], { type: "file" }>;

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A file part's data in a JSON-safe form (bytes as base64, a URL as its string). */
function storedFile(data: V4FilePart["data"]): unknown {
  if (data.type === "url") return { type: "url", url: data.url.toString() };
  if (data.type === "data" && data.data instanceof Uint8Array) return { type: "data", data: base64(data.data) };
  return data;
}

function restoredFile(data: unknown): V4FilePart["data"] {
  const stored = data as { type?: string; url?: string };
  if (stored?.type === "url") return { type: "url", url: new URL(String(stored.url)) };
  return data as V4FilePart["data"];
}

function outputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return toJson(output.value);
    case "execution-denied":
      return output.reason ?? "Tool execution denied.";
    case "content":
      return output.value.map((p) => (p.type === "text" ? p.text : "")).join("");
    default:
      return toJson(output);
  }
}

/** The AI SDK prompt (system messages aside) as OpenAI-chat messages, and the system text. */
export function fromPrompt(prompt: LanguageModelV4Prompt): { messages: Message[]; system: string[] } {
  const messages: Message[] = [];
  const system: string[] = [];
  for (const message of prompt) {
    if (message.role === "system") {
      system.push(message.content);
    } else if (message.role === "user") {
      const parts: ContentPart[] = message.content.map((part) =>
        part.type === "text"
          ? { type: "text", text: part.text }
          : { type: FILE_PART, mediaType: part.mediaType, data: storedFile(part.data), filename: part.filename },
      );
      const allText = parts.every((p) => p.type === "text");
      messages.push({ role: "user", content: allText ? parts.map((p) => (p as { text: string }).text).join("") : parts });
    } else if (message.role === "assistant") {
      let text = "";
      const calls: ToolCall[] = [];
      for (const part of message.content) {
        if (part.type === "text") text += part.text;
        else if (part.type === "tool-call" && !part.providerExecuted) {
          calls.push({ id: part.toolCallId, type: "function", function: { name: part.toolName, arguments: toJson(part.input) } });
        }
      }
      const out: Message = { role: "assistant", content: text };
      if (calls.length) out.tool_calls = calls;
      messages.push(out);
    } else {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue;
        messages.push({ role: "tool", tool_call_id: part.toolCallId, name: part.toolName, content: outputText(part.output) });
      }
    }
  }
  return { messages, system };
}

function parseInput(text: string): unknown {
  try {
    return text.trim() ? JSON.parse(text) : {};
  } catch {
    return text;
  }
}

function textOf(content: Message["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p.type === "text" ? String((p as { text?: unknown }).text ?? "") : "")).join("");
}

/** OpenAI-chat messages (a decorated window) as an AI SDK prompt. */
export function toPrompt(instructions: string, messages: Message[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = instructions ? [{ role: "system", content: instructions }] : [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "user") {
      const content: Extract<LanguageModelV4Message, { role: "user" }>["content"] =
        typeof message.content === "string" || message.content == null
          ? [{ type: "text", text: message.content ?? "" }]
          : message.content.map((part): Extract<LanguageModelV4Message, { role: "user" }>["content"][number] => {
              if (part.type !== FILE_PART) return { type: "text", text: String((part as { text?: unknown }).text ?? "") };
              const file: V4FilePart = { type: "file", mediaType: String(part.mediaType), data: restoredFile(part.data) };
              if (typeof part.filename === "string") file.filename = part.filename;
              return file;
            });
      prompt.push({ role: "user", content });
    } else if (message.role === "assistant") {
      const content: Extract<LanguageModelV4Message, { role: "assistant" }>["content"] = [];
      const text = textOf(message.content);
      if (text) content.push({ type: "text", text });
      for (const call of message.tool_calls ?? []) {
        toolNames.set(call.id, call.function?.name ?? "");
        content.push({ type: "tool-call", toolCallId: call.id, toolName: call.function?.name ?? "", input: parseInput(call.function?.arguments ?? "") });
      }
      prompt.push({ role: "assistant", content });
    } else if (message.role === "tool") {
      const id = message.tool_call_id ?? "";
      const part: V4ToolResultPart = {
        type: "tool-result",
        toolCallId: id,
        toolName: message.name ?? toolNames.get(id) ?? "",
        output: { type: "text", value: textOf(message.content) },
      };
      const last = prompt[prompt.length - 1];
      if (last?.role === "tool") last.content.push(part);
      else prompt.push({ role: "tool", content: [part] });
    }
  }
  return prompt;
}

/** What the model answered (text and client-side tool calls) as one assistant message, or null. */
export function replyMessage(content: readonly LanguageModelV4Content[]): Message | null {
  let text = "";
  const calls: ToolCall[] = [];
  for (const part of content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "tool-call" && !part.providerExecuted) {
      calls.push({ id: part.toolCallId, type: "function", function: { name: part.toolName, arguments: part.input } });
    }
  }
  if (!text && !calls.length) return null;
  const message: Message = { role: "assistant", content: text };
  if (calls.length) message.tool_calls = calls;
  return message;
}

/** The messages after the prompt's last assistant message: what this call adds to the memory. */
function newMessages(messages: Message[]): Message[] {
  let i = messages.length;
  while (i > 0 && messages[i - 1]!.role !== "assistant") i -= 1;
  return messages.slice(i);
}

/** From the prompt's last user message on: the caller's own turn, kept whole when degraded. */
function ownTurn(messages: Message[]): Message[] {
  for (let i = messages.length - 1; i >= 0; i -= 1) if (messages[i]!.role === "user") return messages.slice(i);
  return messages;
}

/** A `wrapLanguageModel` middleware that gives the model a Threadless memory. */
export function threadlessMemory(options: ThreadlessMemoryOptions): LanguageModelV4Middleware {
  const { client } = options;
  if ((options.memoryId == null) === (options.externalId == null)) {
    throw new ThreadlessError({ status: null, code: "invalid_request", message: "Pass exactly one of memoryId or externalId.", retryable: false });
  }
  // A memory id, or the app's own id: the SDK's get-or-create routes, with the tail keyed by it.
  const ref: MemoryRef = options.memoryId ?? { externalId: options.externalId! };
  const decorated = new WeakSet<object>();

  function report(params: LanguageModelV4CallOptions, message: Message | null): void {
    if (message && decorated.has(params)) void client.report(ref, { messages: [message], thread: options.thread });
  }

  return {
    specificationVersion: "v4",

    async transformParams({ params }) {
      const { messages, system } = fromPrompt(params.prompt);
      const instructions = options.instructions ?? (system.length ? system.join("\n\n") : undefined);
      const fresh = newMessages(messages);
      const request = await client.decorate(ref, {
        messages: fresh,
        instructions,
        budgetTokens: options.budgetTokens,
        recall: options.recall,
        thread: options.thread,
      });
      let window = request.messages;
      if (request.degraded) {
        // Tail history, then the caller's whole turn (a tool result needs its call, which a
        // report during the outage could not store); the tail may hold the start of that turn.
        const turn = ownTurn(messages);
        let history = window.slice(0, window.length - fresh.length);
        const start = turn[0] ? JSON.stringify(turn[0]) : null;
        for (let i = history.length - 1; i >= 0; i -= 1) {
          if (history[i]!.role === "user" && JSON.stringify(history[i]) === start) {
            history = history.slice(0, i);
            break;
          }
        }
        window = [...history, ...turn];
      }
      const transformed: LanguageModelV4CallOptions = { ...params, prompt: toPrompt(request.instructions, window) };
      decorated.add(transformed);
      return transformed;
    },

    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      report(params, replyMessage(result.content));
      return result;
    },

    async wrapStream({ doStream, params }) {
      const { stream, ...rest } = await doStream();
      const content: LanguageModelV4Content[] = [];
      let text = "";
      const collect = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        transform(part, controller) {
          if (part.type === "text-delta") text += part.delta;
          else if (part.type === "tool-call") content.push(part);
          controller.enqueue(part);
        },
        flush() {
          report(params, replyMessage([{ type: "text", text }, ...content]));
        },
      });
      return { stream: stream.pipeThrough(collect), ...rest };
    },
  };
}
