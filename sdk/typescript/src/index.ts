/** Threadless: memory for LLM agents that never stops your agent. */

export { Threadless, FactsApi, EntriesApi, VERSION, REPORT_WAIT_MS } from "./client.js";
export type {
  CreateParams,
  DecorateParams,
  ErrorContext,
  ListParams,
  OnError,
  ReportParams,
  ThreadlessOptions,
  UpdateParams,
} from "./client.js";
export { ThreadlessError, isRetryableStatus } from "./errors.js";
export type { ThreadlessErrorInit } from "./errors.js";
export { DecoratedRequest } from "./request.js";
export type { AnthropicBlock, AnthropicMessage, AnthropicRequest } from "./request.js";
export { MESSAGE_OVERHEAD, NON_TEXT_PART_TOKENS, WindowFitter, compactJson, fitWindow, messageTokens, textQuarters } from "./window.js";
export type * from "./types.js";
