/**
 * The Threadless client. Memory must never be the reason an agent stops answering: decorate falls
 * back to a local tail when the server cannot answer, and report runs in the background and never
 * rejects. Only a bug the caller must see (a 4xx other than 408/429) throws.
 */

import { ThreadlessError, errorFromResponse, isRetryableStatus } from "./errors.js";
import { DecoratedRequest } from "./request.js";
import { TailStore, joinInstructions, tailKey } from "./tail.js";
import type {
  DecorateAnswer,
  DeleteReceipt,
  Entry,
  Fact,
  FileCommand,
  FileCommandAnswer,
  ImportAnswer,
  ImportedMessage,
  Memory,
  MemoryFile,
  MemoryPolicy,
  Message,
  Page,
  ReportAnswer,
  ReportedFailure,
  SearchHit,
  Thread,
} from "./types.js";

export { VERSION } from "./version.js";
/** How long a decorate waits for a report still in flight in the same thread. */
export const REPORT_WAIT_MS = 2000;
/** The thread of a call that names none: where every memory's history is unless you choose one. */
export const DEFAULT_THREAD = "default";

export interface ErrorContext {
  operation: "decorate" | "report" | `memory.${string}`;
  /** The memory's id; null for a call by `externalId` whose memory id is not known yet. */
  memoryId: string | null;
  /** Set when the call named the memory by your own id. */
  externalId?: string;
  /** Set when the call named a thread. */
  thread?: string;
}

/**
 * Which memory: its id (`"mem_…"`), or `{ externalId }`, your own id for it (a user id, say). By
 * external id the memory is created on first use, and the local tail is keyed by it, so a new
 * user's first turn needs no create call and still gets an answer during an outage.
 */
export type MemoryRef = string | { externalId: string };

/** OpenAI's assistant message (`ChatCompletionMessage`) as far as reportOpenAI reads it. */
export interface OpenAIReplyLike {
  role?: string;
  content?: string | null | unknown[];
  refusal?: string | null;
  name?: string;
  tool_calls?: Array<{ id: string; type?: string; function?: { name: string; arguments: string } }> | null;
}

/** A `ChatCompletion` (its first choice is reported) or its message. */
export type OpenAICompletionLike = { choices: Array<{ message: OpenAIReplyLike }> } | OpenAIReplyLike;

/** Anthropic's `Message` as far as reportAnthropic reads it. */
export interface AnthropicReplyLike {
  content: string | Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>;
}

export interface ReportReplyOptions {
  failures?: ReportedFailure[];
  idempotencyKey?: string;
  /** The conversation the reply belongs to (default `"default"`). */
  thread?: string;
}

interface Target {
  key: string;
  path: string;
  memoryId: string | null;
  externalId: string | null;
}

/** A memory's conversation: where a call's window, tail and report order live. */
interface ThreadTarget extends Target {
  /** The thread as the call named it (null: the default thread, not sent). */
  thread: string | null;
  /** The local tail's key (memory and thread). */
  tail: string;
}

export type OnError = (error: ThreadlessError, context: ErrorContext) => unknown;

export interface ThreadlessOptions {
  /** A project key (`tl_proj_…`). Default: `THREADLESS_API_KEY`. */
  apiKey?: string;
  /** The server's origin, e.g. `http://127.0.0.1:8000`; the SDK adds `/v1`. Default: `THREADLESS_BASE_URL`, else `http://127.0.0.1:8000`. */
  baseUrl?: string;
  /** Total deadline of one call (connect + send + wait + read), in milliseconds. Default 15 000. */
  timeoutMs?: number;
  /** Estimated tokens of history the local tail keeps per memory and thread. Default 60 000. */
  tailTokens?: number;
  /** How many threads (of any memories) keep a tail (least recently used dropped first). Default 200. */
  maxTails?: number;
  /**
   * Told about every decorate fallback and every failed report. Whatever it throws is swallowed.
   * Default: a one-line `console.warn`.
   */
  onError?: OnError | null;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface CreateParams {
  metadata?: Record<string, unknown>;
  /** Your own id for the memory: creating with a used one returns the existing memory. */
  externalId?: string;
  instructions?: string;
  policy?: MemoryPolicy;
}

export interface UpdateParams {
  metadata?: Record<string, unknown>;
  instructions?: string;
  policy?: MemoryPolicy;
}

export interface ListParams {
  limit?: number;
  cursor?: string;
  externalId?: string;
  /** Only memories whose metadata has these values. */
  metadata?: Record<string, string>;
}

export interface DecorateParams {
  /** The new messages (a `system` message sets the instructions, like `instructions`). */
  messages: Message[];
  /** Your instructions; absent: the memory's latest. */
  instructions?: string | null;
  /** History window budget in estimated tokens (server default 60 000). */
  budgetTokens?: number | null;
  recall?: boolean | null;
  /** false: a dry run, nothing stored (the tail mirrors the answer, but a degraded state stays). */
  store?: boolean | null;
  /** Sent as `Idempotency-Key`: a retried decorate stores its messages once. */
  idempotencyKey?: string;
  /**
   * The conversation (your own id for it, created on first use; default `"default"`). The window
   * and the local tail are the thread's own; facts and recall span the whole memory.
   */
  thread?: string;
}

export interface ReportParams {
  messages: Message[];
  failures?: ReportedFailure[];
  idempotencyKey?: string;
  /** The conversation the messages belong to (default `"default"`): its newest turn is joined. */
  thread?: string;
}

export interface SearchParams {
  limit?: number;
  /** Only this thread's messages (default: every thread of the memory). */
  thread?: string;
  /** Only this speaker's messages. */
  role?: "user" | "assistant";
  /** Only what was said at or after this time (a `Date` or ISO 8601 with its offset). */
  after?: Date | string;
  /** Only what was said strictly before this time (a `Date` or ISO 8601 with its offset). */
  before?: Date | string;
  /** Only hits scoring at least this much. */
  minScore?: number;
  min_score?: number;
  /** What to search: `["messages"]` (the default), `["facts"]`, or both, ranked in one list. */
  include?: Array<"messages" | "facts">;
}

export interface ImportParams {
  /** Existing history, oldest first (at most 2,000 a call), each with its `createdAt` (default now). */
  messages: ImportedMessage[];
  /** The thread to append to (default `"default"`). */
  thread?: string;
  /** Sent as `Idempotency-Key`: a retried import stores its messages once. */
  idempotencyKey?: string;
}

export interface ThreadListParams {
  limit?: number;
  cursor?: string;
}

interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  idempotencyKey?: string;
}

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name];
  return value ? value : undefined;
}

function defaultOnError(error: ThreadlessError, context: ErrorContext): void {
  const what = context.operation === "decorate" ? "fell back to the local tail" : "report was not stored";
  const which = context.externalId !== undefined ? `external id ${context.externalId}` : context.memoryId;
  console.warn(`threadless: ${context.operation} on ${which} ${what}: ${error.toString()}`);
}

function targetOf(ref: unknown): Target {
  if (ref !== null && typeof ref === "object") {
    const externalId = (ref as { externalId?: unknown }).externalId;
    if (typeof externalId !== "string" || !externalId) throw invalid("externalId: must be a non-empty string (your own id for the memory).");
    return { key: `ext:${externalId}`, path: `/memories/external/${encodeURIComponent(externalId)}`, memoryId: null, externalId };
  }
  const memoryId = checkId("memoryId", ref);
  return { key: ref as string, path: `/memories/${memoryId}`, memoryId: ref as string, externalId: null };
}

function threadTargetOf(ref: unknown, thread: unknown): ThreadTarget {
  const target = targetOf(ref);
  const named = checkThread(thread);
  return { ...target, thread: named, tail: tailKey(target.key, named ?? DEFAULT_THREAD) };
}

/** A thread as a call names it: absent (null) is the default thread; else a non-empty string. */
function checkThread(thread: unknown): string | null {
  if (thread === undefined || thread === null) return null;
  if (typeof thread !== "string" || !thread) throw invalid("thread: must be a non-empty string (your own id for the conversation).");
  return thread;
}

function contextOf(operation: ErrorContext["operation"], target: Target | null, ref: unknown, memoryId?: string | null, thread?: unknown): ErrorContext {
  const externalId = target?.externalId ?? (ref !== null && typeof ref === "object" ? (ref as { externalId?: unknown }).externalId : undefined);
  const context: ErrorContext = { operation, memoryId: memoryId ?? target?.memoryId ?? (typeof ref === "string" ? ref : null) };
  if (typeof externalId === "string") context.externalId = externalId;
  if (typeof thread === "string") context.thread = thread;
  return context;
}

interface MemoryPath {
  path: string;
  memoryId: string;
}

/**
 * The API path of a memory named by id or by `{ externalId }`, for the routes that have no
 * external form (get, update, delete, search, entries, facts): an external id is looked up; null
 * when no memory has it yet (nothing is created).
 */
async function findMemoryPath(client: Threadless, ref: MemoryRef): Promise<MemoryPath | null> {
  const target = targetOf(ref);
  if (target.externalId === null) return { path: target.path, memoryId: target.memoryId as string };
  const page = await client.request<Page<Memory>>("GET", "/memories", { query: { external_id: target.externalId, limit: 1 } });
  const memory = page?.data?.[0];
  return memory ? { path: `/memories/${encodeURIComponent(memory.id)}`, memoryId: memory.id } : null;
}

/** findMemoryPath, where an external id no memory has yet is a 404 `not_found`. */
async function memoryPathOf(client: Threadless, ref: MemoryRef): Promise<MemoryPath> {
  const found = await findMemoryPath(client, ref);
  if (found) return found;
  throw new ThreadlessError({
    status: 404,
    code: "not_found",
    message: `No memory has external id ${JSON.stringify((ref as { externalId: string }).externalId)} yet.`,
    hint: "decorate, report, importMessages or create({ externalId }) create it on first use.",
    retryable: false,
  });
}

function withoutTime(message: ImportedMessage): Message {
  const { createdAt: _createdAt, created_at: _created_at, ...rest } = message;
  return rest;
}

/** An imported message for the API: `createdAt` / `created_at` (a Date or a string) as `created_at`. */
function importedMessage(message: ImportedMessage, index: number): Record<string, unknown> {
  if (message === null || typeof message !== "object") throw invalid(`messages[${index}]: must be a message object.`);
  const at = message.createdAt ?? message.created_at;
  const rest = withoutTime(message);
  if (at === undefined || at === null) return { ...rest };
  if (at instanceof Date) {
    if (Number.isNaN(at.getTime())) throw invalid(`messages[${index}].createdAt: an invalid Date.`);
    return { ...rest, created_at: at.toISOString() };
  }
  if (typeof at !== "string") throw invalid(`messages[${index}].createdAt: a Date or an ISO 8601 string with its offset.`);
  return { ...rest, created_at: at };
}

/** The assistant message of a ChatCompletion (first choice) or of a ChatCompletionMessage. */
export function fromOpenAI(completion: OpenAICompletionLike): Message[] {
  let reply: unknown = completion;
  if (reply && typeof reply === "object" && Array.isArray((reply as { choices?: unknown }).choices)) {
    const first = (reply as { choices: Array<{ message?: unknown }> }).choices[0];
    if (!first) throw invalid("completion: has no choices.");
    reply = first.message;
  }
  if (!reply || typeof reply !== "object") throw invalid("completion: not a ChatCompletion or its message.");
  const data = reply as OpenAIReplyLike;
  let content = data.content;
  if (content === null || content === undefined || content === "") content = data.refusal ?? "";
  const message: Message = { role: "assistant", content: content as Message["content"] };
  const calls = (data.tool_calls ?? []).filter((call) => call && call.function);
  if (calls.length) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: call.type ?? "function",
      function: { name: call.function!.name, arguments: call.function!.arguments ?? "" },
    }));
  }
  if (typeof data.name === "string") message.name = data.name;
  return [message];
}

/** An Anthropic Message: text blocks joined as the content, tool_use blocks as tool calls. */
export function fromAnthropic(reply: AnthropicReplyLike): Message[] {
  if (!reply || typeof reply !== "object" || !("content" in reply)) throw invalid("message: not an Anthropic Message.");
  const blocks = typeof reply.content === "string" ? [{ type: "text", text: reply.content }] : Array.isArray(reply.content) ? reply.content : [];
  const texts: string[] = [];
  const calls: NonNullable<Message["tool_calls"]> = [];
  for (const block of blocks) {
    if (block?.type === "text") texts.push(String(block.text ?? ""));
    else if (block?.type === "tool_use") {
      calls.push({ id: String(block.id ?? ""), type: "function", function: { name: String(block.name ?? ""), arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const message: Message = { role: "assistant", content: texts.join("") };
  if (calls.length) message.tool_calls = calls;
  return [message];
}

function invalid(message: string, hint?: string): ThreadlessError {
  return new ThreadlessError({ status: null, code: "invalid_request", message, hint: hint ?? null, retryable: false });
}

function checkId(name: string, value: unknown): string {
  if (typeof value !== "string" || !value) throw invalid(`${name}: must be a non-empty string.`, "Use an id that the API returned.");
  return encodeURIComponent(value);
}

function checkMessages(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw invalid("messages: must be an array of messages.");
  return messages as Message[];
}

/** JSON for a request body; a value JSON cannot hold is the caller's bug: ThreadlessError invalid_request. */
function encodeBody(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    throw new ThreadlessError({
      status: null,
      code: "invalid_request",
      message: `body: not JSON-serialisable (${error instanceof Error ? error.message : String(error)}).`,
      hint: "Messages must be plain objects of strings, arrays and numbers.",
      retryable: false,
      cause: error,
    });
  }
}

function asThreadlessError(error: unknown): ThreadlessError {
  if (error instanceof ThreadlessError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ThreadlessError({ status: null, code: "client_error", message, retryable: false, cause: error });
}

function unexpected(error: unknown, what: string): ThreadlessError {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new ThreadlessError({
    status: null,
    code: "client_error",
    message: `${what}: unexpected ${detail}`,
    hint: "A problem inside the client or its fetch; decorate fell back to the local tail.",
    retryable: true,
    cause: error,
  });
}

/** Network errors, timeouts, 5xx, 429, 408, broken answers and unplanned errors: fall back. Other 4xx: throw. */
function shouldFallBack(error: ThreadlessError): boolean {
  if (error.status === null) return error.code === "timeout" || error.code === "connection_error" || (error.code === "client_error" && error.retryable);
  return isRetryableStatus(error.status) || error.code === "invalid_response";
}

function isDecorateAnswer(value: unknown): value is DecorateAnswer {
  if (value === null || typeof value !== "object") return false;
  const answer = value as Partial<DecorateAnswer>;
  return typeof answer.instructions === "string" && Array.isArray(answer.messages);
}

export class Threadless {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly tailTokens: number;
  readonly maxTails: number;
  readonly facts: FactsApi;
  readonly entries: EntriesApi;
  readonly threads: ThreadsApi;
  readonly files: FilesApi;
  private readonly apiKey: string;
  private readonly onError: OnError | null;
  private readonly fetchImpl: typeof fetch;
  private readonly tails: TailStore;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();
  private readonly lastReport = new Map<string, Promise<unknown>>();

  constructor(options: ThreadlessOptions = {}) {
    const apiKey = options.apiKey ?? env("THREADLESS_API_KEY");
    if (!apiKey) {
      throw new ThreadlessError({
        status: null,
        code: "missing_api_key",
        message: "No API key: pass apiKey or set THREADLESS_API_KEY.",
        hint: "Create a project key in the console or with `manage.py create_key`.",
        retryable: false,
      });
    }
    this.apiKey = apiKey;
    let base = (options.baseUrl ?? env("THREADLESS_BASE_URL") ?? "http://127.0.0.1:8000").trim();
    base = base.replace(/\/+$/, "").replace(/\/v1$/, ""); // the origin is asked for; ".../v1" is an easy slip
    if (!/^https?:\/\//.test(base)) throw invalid(`baseUrl: ${JSON.stringify(base)} is not an http(s) URL.`, "Pass the server's origin, e.g. http://127.0.0.1:8000.");
    this.baseUrl = base;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.tailTokens = options.tailTokens ?? 60_000;
    this.maxTails = options.maxTails ?? 200;
    if (!(Number.isFinite(this.timeoutMs) && this.timeoutMs > 0)) throw invalid("timeoutMs: must be a positive number of milliseconds.");
    if (!(Number.isInteger(this.tailTokens) && this.tailTokens > 0)) throw invalid("tailTokens: must be a positive integer.");
    if (!(Number.isInteger(this.maxTails) && this.maxTails >= 0)) throw invalid("maxTails: must be an integer ≥ 0.");
    this.onError = options.onError === undefined ? defaultOnError : options.onError;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") {
      throw new ThreadlessError({ status: null, code: "client_error", message: "No global fetch: use Node 20+ or pass options.fetch.", retryable: false });
    }
    this.fetchImpl = fetchImpl;
    this.tails = new TailStore(this.maxTails, this.tailTokens);
    this.facts = new FactsApi(this);
    this.entries = new EntriesApi(this);
    this.files = new FilesApi(this);
    this.threads = new ThreadsApi(this, (ref, thread) => {
      this.tails.forget(tailKey(targetOf(ref).key, thread));
    });
  }

  // --- memories --------------------------------------------------------------------------------

  /** Create a memory (or, with an `externalId` already used in the project, get that one). */
  create(params: CreateParams = {}): Promise<Memory> {
    const body: Record<string, unknown> = {};
    if (params.metadata !== undefined) body.metadata = params.metadata;
    if (params.externalId !== undefined) body.external_id = params.externalId;
    if (params.instructions != null) body.instructions = params.instructions;
    if (params.policy !== undefined) body.policy = params.policy;
    return this.request<Memory>("POST", "/memories", { body });
  }

  /** A memory by id or by `{ externalId }` (one no memory has yet is a 404). */
  async get(ref: MemoryRef): Promise<Memory> {
    const { path } = await memoryPathOf(this, ref);
    return this.request<Memory>("GET", path);
  }

  async update(ref: MemoryRef, params: UpdateParams): Promise<Memory> {
    const { path } = await memoryPathOf(this, ref);
    return this.request<Memory>("PATCH", path, { body: params });
  }

  list(params: ListParams = {}): Promise<Page<Memory>> {
    const query: Record<string, string | number | undefined> = {
      limit: params.limit,
      cursor: params.cursor,
      external_id: params.externalId,
    };
    for (const [key, value] of Object.entries(params.metadata ?? {})) query[`metadata.${key}`] = value;
    return this.request<Page<Memory>>("GET", "/memories", { query });
  }

  /** Delete a memory and everything derived from it; its local tails (every thread's) go too. */
  async delete(ref: MemoryRef): Promise<void> {
    const { path, memoryId } = await memoryPathOf(this, ref);
    await this.request<void>("DELETE", path);
    this.tails.forgetMemory(targetOf(ref).key, memoryId);
  }

  /** Delete every memory matching the filter (at least one of metadata / externalId). */
  deleteMatching(params: { metadata?: Record<string, string>; externalId?: string }): Promise<DeleteReceipt> {
    const query: Record<string, string | undefined> = { external_id: params.externalId };
    for (const [key, value] of Object.entries(params.metadata ?? {})) query[`metadata.${key}`] = value;
    return this.request<DeleteReceipt>("DELETE", "/memories", { query });
  }

  /**
   * Search the memory's committed user and assistant messages, best first: every thread, or one
   * with `{ thread }`; narrowed by `role`, `after` / `before` (message times) and `minScore`;
   * with `include: ["messages", "facts"]` its facts rank in the same list. Each hit has a `type`:
   * a `"message"` names its `thread`, `seq` and `created_at`, a `"fact"` carries the fact's fields.
   * A number as the third argument is the limit. By an external id no memory has yet: no hits
   * (nothing is created).
   */
  async search(ref: MemoryRef, query: string, params: SearchParams | number = {}): Promise<{ data: SearchHit[] }> {
    const given: SearchParams = typeof params === "number" ? { limit: params } : params;
    const body: Record<string, unknown> = { query };
    if (given.limit !== undefined) body.limit = given.limit;
    const named = checkThread(given.thread);
    if (named !== null) body.thread = named;
    if (given.role !== undefined) body.role = given.role;
    for (const name of ["after", "before"] as const) {
      const at = given[name];
      if (at instanceof Date) {
        if (Number.isNaN(at.getTime())) throw invalid(`${name}: an invalid Date.`);
        body[name] = at.toISOString();
      } else if (at !== undefined) {
        body[name] = at;
      }
    }
    const minScore = given.minScore ?? given.min_score;
    if (minScore !== undefined) body.min_score = minScore;
    if (given.include !== undefined) body.include = given.include;
    const found = await findMemoryPath(this, ref);
    if (!found) return { data: [] };
    return this.request("POST", `${found.path}/search`, { body });
  }

  /**
   * Append existing history to a thread, each message keeping its `createdAt` (a `Date` or ISO
   * 8601 with its offset; default now), oldest first; by `{ externalId }` the memory is created
   * on first use. Resolves to the server's 202 answer once the messages are stored (facts and
   * recall follow in the background). Throws `ThreadlessError` on any failure: an import has no
   * fallback. The thread's local tail gets the messages, so a fallback right after has them.
   */
  async importMessages(ref: MemoryRef, params: ImportParams): Promise<ImportAnswer> {
    const target = threadTargetOf(ref, params?.thread);
    const messages = checkMessages(params?.messages);
    const body: Record<string, unknown> = { messages: messages.map(importedMessage) };
    if (target.thread !== null) body.thread = target.thread;
    const answer = await this.request<ImportAnswer>("POST", `${target.path}/messages`, { body, idempotencyKey: params.idempotencyKey });
    this.tails.append(target.tail, messages.filter((m) => m.role !== "system").map(withoutTime));
    return answer;
  }

  // --- decorate and report ---------------------------------------------------------------------

  /**
   * Store the new messages and get the full model request. Falls back to the local tail (and tells
   * `onError`) on a network error, a timeout, 5xx, 429 or 408; throws `ThreadlessError` on any
   * other 4xx.
   */
  async decorate(ref: MemoryRef, params: DecorateParams): Promise<DecoratedRequest> {
    const target = threadTargetOf(ref, params?.thread);
    const messages = checkMessages(params?.messages);
    const body: Record<string, unknown> = { messages };
    if (params.instructions != null) body.instructions = params.instructions;
    if (params.budgetTokens != null) body.budget_tokens = params.budgetTokens;
    if (params.recall != null) body.recall = params.recall;
    if (params.store != null) body.store = params.store;
    if (target.thread !== null) body.thread = target.thread;
    const encoded = encodeBody(body);
    await this.waitForReports(target.tail);
    const seq = this.tails.nextSeq();
    let answer: DecorateAnswer;
    try {
      const raw = await this.request<unknown>("POST", `${target.path}/decorate`, { body: encoded, idempotencyKey: params.idempotencyKey });
      if (!isDecorateAnswer(raw)) {
        throw new ThreadlessError({
          status: 200,
          code: "invalid_response",
          message: "HTTP 200: the answer is not a decorated request.",
          hint: "Check that baseUrl is the Threadless server's origin.",
          retryable: true,
        });
      }
      answer = raw;
    } catch (caught) {
      // Anything unplanned inside the call (a custom fetch's bug, say) falls back like a network error.
      const error = caught instanceof ThreadlessError ? caught : unexpected(caught, `POST ${target.path}/decorate`);
      if (!shouldFallBack(error)) throw error;
      const request = this.fallback(target, messages, params.instructions ?? undefined, error, seq);
      this.notify(error, contextOf("decorate", target, ref, request.memoryId, target.thread));
      return request;
    }
    const contextText = typeof answer.context_text === "string" ? answer.context_text : "";
    const memoryId = answer.memory_id ?? target.memoryId;
    this.tails.refresh(target.tail, answer.instructions, contextText, answer.messages, params.store !== false, seq, memoryId);
    return new DecoratedRequest({
      memoryId,
      externalId: target.externalId,
      thread: target.thread ?? DEFAULT_THREAD,
      turn: answer.turn ?? null,
      instructions: answer.instructions,
      contextText,
      messages: answer.messages,
      context: answer.context ?? null,
      usage: answer.usage ?? null,
      degraded: false,
      error: null,
    });
  }

  /** Tail + the new messages; new instructions (or system messages) replace the tail's own part. */
  private fallback(target: ThreadTarget, messages: Message[], instructions: string | undefined, error: ThreadlessError, seq: number): DecoratedRequest {
    const systems: string[] = [];
    const rest: Message[] = [];
    for (const message of messages) {
      if (message?.role === "system") systems.push(textOf(message.content));
      else rest.push(message);
    }
    const newOwn = instructions ?? (systems.length ? systems.join("\n\n") : undefined);
    const tail = this.tails.fallback(target.tail, seq);
    const own = newOwn ?? tail?.own ?? "";
    const contextText = tail?.contextText ?? "";
    return new DecoratedRequest({
      memoryId: target.memoryId ?? tail?.memoryId ?? null,
      externalId: target.externalId,
      thread: target.thread ?? DEFAULT_THREAD,
      turn: null,
      instructions: joinInstructions(own, contextText),
      contextText,
      messages: [...(tail?.messages ?? []), ...rest],
      context: null,
      usage: null,
      degraded: true,
      error,
    });
  }

  /**
   * Store what came after the decorate (the reply, tool calls and results, failures), in the
   * background. Never rejects; failures go to `onError` and are not retried. Resolves to the
   * server's answer, or null when it failed or was skipped (after a degraded decorate in this
   * thread, until the next successful one: that turn's user message was never stored).
   */
  report(ref: MemoryRef, params: ReportParams): Promise<ReportAnswer | null> {
    let target: ThreadTarget;
    let messages: Message[];
    let encoded: string;
    try {
      target = threadTargetOf(ref, params?.thread);
      messages = checkMessages(params?.messages);
      if (this.tails.isDegraded(target.tail)) return Promise.resolve(null); // that turn's user message was never stored
      const body: Record<string, unknown> = { messages };
      if (params.failures?.length) body.failures = params.failures;
      if (target.thread !== null) body.thread = target.thread;
      encoded = encodeBody(body);
    } catch (error) {
      this.notify(asThreadlessError(error), contextOf("report", null, ref, undefined, params?.thread));
      return Promise.resolve(null);
    }
    // Reports in one thread go out one at a time, in order; other threads and memories run in parallel.
    const key = target.tail;
    const previous = this.lastReport.get(key);
    const run = (async (): Promise<ReportAnswer | null> => {
      if (previous) await previous;
      try {
        const answer = await this.request<ReportAnswer>("POST", `${target.path}/report`, { body: encoded, idempotencyKey: params.idempotencyKey });
        this.tails.append(key, messages);
        return answer ?? null;
      } catch (error) {
        this.notify(asThreadlessError(error), contextOf("report", target, ref, target.memoryId ?? this.tails.peek(key)?.memoryId, target.thread));
        return null;
      }
    })();
    this.track(key, run);
    return run;
  }

  /** report() for OpenAI's answer as it is: a `ChatCompletion` (its first choice) or its message. Never rejects. */
  reportOpenAI(ref: MemoryRef, completion: OpenAICompletionLike, options: ReportReplyOptions = {}): Promise<ReportAnswer | null> {
    let messages: Message[];
    try {
      messages = fromOpenAI(completion);
    } catch (error) {
      this.notify(asThreadlessError(error), contextOf("report", null, ref, undefined, options.thread));
      return Promise.resolve(null);
    }
    return this.report(ref, { messages, ...options });
  }

  /** report() for Anthropic's `Message` as it is (text and tool_use blocks; thinking left out). Never rejects. */
  reportAnthropic(ref: MemoryRef, message: AnthropicReplyLike, options: ReportReplyOptions = {}): Promise<ReportAnswer | null> {
    let messages: Message[];
    try {
      messages = fromAnthropic(message);
    } catch (error) {
      this.notify(asThreadlessError(error), contextOf("report", null, ref, undefined, options.thread));
      return Promise.resolve(null);
    }
    return this.report(ref, { messages, ...options });
  }

  /** Wait for the reports still in flight (e.g. at exit). Resolves true when all finished in time. */
  async flush(timeoutMs = 5000): Promise<boolean> {
    if (!this.pending.size) return true;
    return waitAll([...this.pending], timeoutMs);
  }

  /** How many reports are in flight. */
  get pendingReports(): number {
    return this.pending.size;
  }

  /** `key`: the thread's tail key (reports are ordered, and waited for, per thread). */
  private track(key: string, run: Promise<unknown>): void {
    this.pending.add(run);
    let forThread = this.inFlight.get(key);
    if (!forThread) this.inFlight.set(key, (forThread = new Set()));
    forThread.add(run);
    this.lastReport.set(key, run);
    void run.finally(() => {
      this.pending.delete(run);
      const set = this.inFlight.get(key);
      set?.delete(run);
      if (set && !set.size) this.inFlight.delete(key);
      if (this.lastReport.get(key) === run) this.lastReport.delete(key);
    });
  }

  private async waitForReports(key: string): Promise<void> {
    const running = this.inFlight.get(key);
    if (running?.size) await waitAll([...running], REPORT_WAIT_MS);
  }

  /** Internal (the integrations use it): tell `onError`, whose own failure never reaches the agent. */
  notify(error: ThreadlessError, context: ErrorContext): void {
    if (!this.onError) return;
    try {
      const result = this.onError(error, context);
      if (result && typeof (result as Promise<unknown>).then === "function") {
        (result as Promise<unknown>).then(undefined, () => undefined);
      }
    } catch {
      // onError is the caller's logging; its failure must never reach the agent.
    }
  }

  // --- HTTP ------------------------------------------------------------------------------------

  /** One call with a total deadline of `timeoutMs`. Internal, but usable for routes without a helper. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    let url = `${this.baseUrl}/v1${path}`;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) params.append(key, String(value));
    }
    if ([...params.keys()].length) url += `?${params.toString()}`;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.apiKey}`, Accept: "application/json" };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : encodeBody(options.body);
      headers["Content-Type"] = "application/json";
    }

    if (options.idempotencyKey !== undefined && options.idempotencyKey !== null) headers["Idempotency-Key"] = String(options.idempotencyKey);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const noAnswer = (error: unknown): ThreadlessError =>
      timedOut
        ? new ThreadlessError({ status: null, code: "timeout", message: `No answer within ${this.timeoutMs} ms (${method} ${path}).`, cause: error })
        : new ThreadlessError({ status: null, code: "connection_error", message: `${method} ${path}: ${describe(error)}`, cause: error });
    try {
      let response: Response;
      try {
        response = await this.fetchImpl(url, { method, headers, body, signal: controller.signal });
      } catch (error) {
        throw noAnswer(error);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw noAnswer(error);
      }
      if (!response.ok) throw errorFromResponse(response.status, response.statusText, response.headers, text);
      if (response.status === 204 || text === "") return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw new ThreadlessError({
          status: response.status,
          code: "invalid_response",
          message: `${method} ${path}: the answer is not valid JSON.`,
          requestId: response.headers.get("x-request-id"),
          retryable: true,
          cause: error,
        });
      }
    } finally {
      clearTimeout(timer);
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const code = cause && typeof cause === "object" ? (cause as { code?: unknown }).code : undefined;
    const detail = cause instanceof Error ? cause.message : "";
    return [error.message, typeof code === "string" ? code : "", detail && detail !== code ? detail : ""]
      .filter(Boolean)
      .join(": ");
  }
  return String(error);
}

function textOf(content: Message["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((part) => part && part.type === "text")
      .map((part) => String((part as { text?: unknown }).text ?? ""))
      .join("\n");
  }
  return "";
}

async function waitAll(promises: Promise<unknown>[], timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
  });
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A memory's facts (learnt from every thread), by memory id or `{ externalId }`. Listing by an
 * external id no memory has yet answers an empty page; changing its facts is a 404.
 */
export class FactsApi {
  constructor(private readonly client: Threadless) {}

  async list(ref: MemoryRef, params: { limit?: number; cursor?: string; includeHistory?: boolean } = {}): Promise<Page<Fact>> {
    const found = await findMemoryPath(this.client, ref);
    if (!found) return { data: [], next_cursor: null };
    return this.client.request("GET", `${found.path}/facts`, {
      query: { limit: params.limit, cursor: params.cursor, include_history: params.includeHistory },
    });
  }

  async create(ref: MemoryRef, text: string): Promise<Fact> {
    const { path } = await memoryPathOf(this.client, ref);
    return this.client.request("POST", `${path}/facts`, { body: { text } });
  }

  async update(ref: MemoryRef, factId: string, text: string): Promise<Fact> {
    const fact = checkId("factId", factId);
    const { path } = await memoryPathOf(this.client, ref);
    return this.client.request("PATCH", `${path}/facts/${fact}`, { body: { text } });
  }

  async delete(ref: MemoryRef, factId: string): Promise<void> {
    const fact = checkId("factId", factId);
    const { path } = await memoryPathOf(this.client, ref);
    return this.client.request("DELETE", `${path}/facts/${fact}`);
  }
}

/**
 * A memory's files (the backend of Anthropic's memory tool), by memory id or `{ externalId }`:
 * `command` runs one tool command as the model sent it (by an external id the memory is created
 * on first use, as decorate does); `list` answers the files under /memories (by an external id no
 * memory has yet: none, and nothing is created).
 */
export class FilesApi {
  constructor(private readonly client: Threadless) {}

  command(ref: MemoryRef, command: FileCommand): Promise<FileCommandAnswer> {
    return this.client.request("POST", `${targetOf(ref).path}/files/command`, { body: command });
  }

  async list(ref: MemoryRef): Promise<MemoryFile[]> {
    const answer = await this.client.request<{ data?: MemoryFile[] }>("GET", `${targetOf(ref).path}/files`);
    return answer?.data ?? [];
  }
}

export interface EntryListParams {
  limit?: number;
  cursor?: string;
  includeUncommitted?: boolean;
  /** Only this thread's entries (default: every thread's, in `seq` order). */
  thread?: string;
}

/**
 * A memory's stored history, by memory id or `{ externalId }` (one no memory has yet has none;
 * nothing is created).
 */
export class EntriesApi {
  constructor(private readonly client: Threadless) {}

  async list(ref: MemoryRef, params: EntryListParams = {}): Promise<Page<Entry>> {
    const found = await findMemoryPath(this.client, ref);
    return found ? this.page(found.path, params) : { data: [], next_cursor: null };
  }

  /** Every entry (of one thread, with `{ thread }`), oldest first, following the cursor. */
  async *all(ref: MemoryRef, params: Omit<EntryListParams, "limit" | "cursor"> = {}): AsyncGenerator<Entry> {
    const found = await findMemoryPath(this.client, ref);
    if (!found) return;
    let cursor: string | undefined;
    do {
      const page = await this.page(found.path, { ...params, cursor, limit: 1000 });
      yield* page.data;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  private page(path: string, params: EntryListParams): Promise<Page<Entry>> {
    const thread = checkThread(params.thread) ?? undefined;
    return this.client.request("GET", `${path}/entries`, {
      query: { limit: params.limit, cursor: params.cursor, include_uncommitted: params.includeUncommitted, thread },
    });
  }
}

/**
 * A memory's threads (its subject's conversations), by memory id or `{ externalId }` (reading by
 * an external id creates no memory).
 */
export class ThreadsApi {
  constructor(
    private readonly client: Threadless,
    private readonly forgetTail: (ref: MemoryRef, thread: string) => void,
  ) {}

  /** Newest activity first; pass `next_cursor` back as `cursor`. */
  list(ref: MemoryRef, params: ThreadListParams = {}): Promise<Page<Thread>> {
    return this.client.request("GET", `${targetOf(ref).path}/threads`, { query: { limit: params.limit, cursor: params.cursor } });
  }

  get(ref: MemoryRef, thread: string): Promise<Thread> {
    return this.client.request("GET", threadPath(ref, thread));
  }

  /**
   * Remove the thread (its entries, turns, digests, index rows and summary, and the facts learnt
   * only from it) and its local tail; resolves to the deletion receipt.
   */
  async delete(ref: MemoryRef, thread: string): Promise<DeleteReceipt> {
    const receipt = await this.client.request<DeleteReceipt>("DELETE", threadPath(ref, thread));
    this.forgetTail(ref, thread);
    return receipt;
  }
}

function threadPath(ref: MemoryRef, thread: unknown): string {
  const path = targetOf(ref).path;
  const named = checkThread(thread);
  if (named === null) throw invalid("thread: required (the id of the thread).");
  return `${path}/threads/${encodeURIComponent(named)}`;
}
