/** Threadless: memory for LLM agents that never stops your agent. */

export { Threadless, FactsApi, EntriesApi, FilesApi, ThreadsApi, VERSION, REPORT_WAIT_MS, DEFAULT_THREAD, fromAnthropic, fromOpenAI } from "./client.js";
export type {
  AnthropicReplyLike,
  MemoryRef,
  OpenAICompletionLike,
  OpenAIReplyLike,
  ReportReplyOptions,
  CreateParams,
  DecorateParams,
  EntryListParams,
  ErrorContext,
  ImportParams,
  ListParams,
  OnError,
  ReportParams,
  SearchParams,
  ThreadListParams,
  ThreadlessOptions,
  UpdateParams,
} from "./client.js";
export { ThreadlessError, isRetryableStatus } from "./errors.js";
export type { ThreadlessErrorInit } from "./errors.js";
export { DecoratedRequest } from "./request.js";
export type {
  AnthropicBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicRequest,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  OpenAIAssistantMessage,
  OpenAIImagePart,
  OpenAIMessage,
  OpenAISystemMessage,
  OpenAITextPart,
  OpenAIToolCall,
  OpenAIToolMessage,
  OpenAIUserMessage,
} from "./request.js";
export { MESSAGE_OVERHEAD, NON_TEXT_PART_TOKENS, WindowFitter, compactJson, fitWindow, messageTokens, textQuarters } from "./window.js";
export type * from "./types.js";
