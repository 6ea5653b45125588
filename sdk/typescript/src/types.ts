/** Shapes of the Threadless HTTP API v1 (field names as the API writes them). */

export type Role = "user" | "assistant" | "tool" | "system";

export interface TextPart {
  type: "text";
  text: string;
}

/** Any other part (an image, say) is stored and passed through; it counts 256 tokens. */
export interface OtherPart {
  type: string;
  [key: string]: unknown;
}

export type ContentPart = TextPart | OtherPart;

export interface ToolCall {
  id: string;
  type: "function" | string;
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

/** An OpenAI-chat-shaped message. */
export interface Message {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface MemoryPolicy {
  strictWriteDiscipline?: {
    enabled?: boolean;
    onFailure?: string;
    continueOnFailure?: boolean;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface Memory {
  id: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  instructions: string;
  policy: MemoryPolicy;
  counts: { messages: number; facts: number; digests: number; tokens: number };
  processing: "pending" | "processed";
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Entry {
  id: number | string;
  seq: number;
  /** The conversation it belongs to (`"default"` unless a call named one). */
  thread: string;
  /** Its turn in its thread. */
  turn: number;
  kind: "message" | "data" | "error" | "digest" | "action";
  role: Role | null;
  content: unknown;
  task_id: string | null;
  committed: boolean;
  tokens: number;
  created_at: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface Fact {
  id: string;
  text: string;
  slot: string | null;
  source_entry_ids: Array<number | string>;
  /** When the statement it was learnt from was said (null for a fact a person wrote). */
  valid_from?: string | null;
  /** When a later statement superseded it; null while it holds. */
  valid_to?: string | null;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** A file or directory under /memories (`files.list`); `files.command` "view" reads its content. */
export interface MemoryFile {
  path: string;
  type: "file" | "directory";
  size: number;
  version: number;
  /** The key (masked) or the console user that last wrote it. */
  changed_by: string;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** A memory-tool command as the model sends it: `{ command: "create", path, file_text }`, … */
export interface FileCommand {
  command: "view" | "create" | "str_replace" | "insert" | "delete" | "rename";
  [key: string]: unknown;
}

/** What a command answers: the text the model is shown; `is_error` for a refused command. */
export interface FileCommandAnswer {
  result: string;
  is_error: boolean;
}

export interface DecorateContext {
  facts: unknown[];
  recalled: unknown[];
  digests: unknown[];
  summary: string;
}

export interface DecorateUsage {
  instructions_tokens: number;
  history_tokens: number;
  new_tokens: number;
  dropped_messages: number;
  recalled: number;
}

/** The body of a successful `POST /v1/memories/{id}/decorate`. */
export interface DecorateAnswer {
  memory_id: string;
  turn: number;
  instructions: string;
  context_text: string;
  messages: Message[];
  context: DecorateContext;
  usage: DecorateUsage;
}

export interface ReportedFailure {
  task_id: string;
  error: string;
  output?: unknown;
}

/** The body of a `202` from `POST /v1/memories/{id}/report`. */
export interface ReportAnswer {
  accepted: number;
  turn: number;
  [key: string]: unknown;
}

export interface DeleteReceipt {
  deleted: Record<string, number>;
}

/** One conversation of a memory's subject (`GET /v1/memories/{id}/threads/{thread}`). */
export interface Thread {
  id: string;
  created_at: string;
  updated_at: string;
  turns: number;
  messages: number;
  tokens: number;
}

/** A message hit of `POST /v1/memories/{id}/search`. */
export interface SearchMessageHit {
  type: "message";
  entry_id: number | string;
  seq: number;
  thread: string;
  turn: number;
  created_at: string | null;
  /** `created_at` as `YYYY-MM-DD`. */
  date: string | null;
  role: Role;
  snippet: string;
  score: number;
  [key: string]: unknown;
}

/** A fact hit of `POST /v1/memories/{id}/search` (with `include: ["facts"]`): the fact's fields. */
export interface SearchFactHit extends Fact {
  type: "fact";
  score: number;
}

/** One hit of `POST /v1/memories/{id}/search`, best first: a message or (when asked) a fact. */
export type SearchHit = SearchMessageHit | SearchFactHit;

/** A message of existing history, with when it was said (a `Date` or ISO 8601 with its offset; default now). */
export type ImportedMessage = Message & { createdAt?: Date | string; created_at?: Date | string };

/** The body of a `202` from `POST /v1/memories/{id}/messages`. */
export interface ImportAnswer {
  accepted: number;
  thread: string;
  /** The first and last turn the messages landed in. */
  turns: [number, number];
}
