// Type test (tsc --noEmit, run by `npm test`): the conversions fit the real provider SDKs' types,
// and the real response types are accepted by reportOpenAI / reportAnthropic. Never executed.
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { ChatCompletion, ChatCompletionMessage, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Threadless, type DecoratedRequest } from "threadless";

export function openaiMessages(req: DecoratedRequest): ChatCompletionMessageParam[] {
  return req.toOpenAI();
}

export function openaiBody(req: DecoratedRequest): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return { model: "gpt-4o-mini", messages: req.toOpenAI() };
}

export function anthropicBody(req: DecoratedRequest): Anthropic.MessageCreateParamsNonStreaming {
  return { model: "claude-sonnet-4-5", max_tokens: 1024, ...req.toAnthropic() };
}

export function anthropicMessages(req: DecoratedRequest): Anthropic.MessageParam[] {
  return req.toAnthropic().messages;
}

export function reportReplies(memory: Threadless, completion: ChatCompletion, message: ChatCompletionMessage, reply: Anthropic.Message): void {
  void memory.reportOpenAI("mem_1", completion);
  void memory.reportOpenAI({ externalId: "user-1" }, message, { idempotencyKey: "k" });
  void memory.reportAnthropic({ externalId: "user-1" }, reply);
}
