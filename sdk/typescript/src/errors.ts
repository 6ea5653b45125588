/** The one error class of the SDK: API errors (SPEC 4.1 shape), network errors and timeouts. */

export interface ThreadlessErrorInit {
  status: number | null;
  code: string;
  message: string;
  hint?: string | null;
  requestId?: string | null;
  retryable?: boolean;
  retryAfter?: number | null;
  cause?: unknown;
}

const CODES: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized",
  404: "not_found",
  405: "method_not_allowed",
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  429: "rate_limited",
  500: "internal",
  502: "bad_gateway",
  503: "unavailable",
  504: "gateway_timeout",
};

const HINTS: Record<string, string> = {
  timeout: "The server did not answer within timeoutMs. Check that it is up, or raise timeoutMs.",
  connection_error: "Check baseUrl and that the Threadless server is running and reachable.",
  invalid_response: "The answer was not the JSON the API sends. Check that baseUrl points at a Threadless server.",
};

/**
 * An error from Threadless. `status` is the HTTP status, or null when no answer arrived
 * (`code` is then `timeout` or `connection_error`). `retryable` is true for network errors,
 * timeouts, 408, 429 and 5xx: exactly the cases where `decorate` falls back to the local tail.
 */
export class ThreadlessError extends Error {
  readonly status: number | null;
  readonly code: string;
  readonly hint: string | null;
  readonly requestId: string | null;
  readonly retryable: boolean;
  /** Seconds from a `Retry-After` header, when there was one. */
  readonly retryAfter: number | null;

  constructor(init: ThreadlessErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "ThreadlessError";
    this.status = init.status;
    this.code = init.code;
    this.hint = init.hint ?? HINTS[init.code] ?? null;
    this.requestId = init.requestId ?? null;
    this.retryable = init.retryable ?? isRetryableStatus(init.status);
    this.retryAfter = init.retryAfter ?? null;
  }

  override toString(): string {
    const where = this.status === null ? this.code : `${this.status} ${this.code}`;
    const id = this.requestId ? ` (request ${this.requestId})` : "";
    return `ThreadlessError: ${where}: ${this.message}${id}`;
  }
}

/** True for "no answer" (null), 408, 429 and 5xx: the statuses decorate falls back on. */
export function isRetryableStatus(status: number | null): boolean {
  return status === null || status === 408 || status === 429 || status >= 500;
}

function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}

/** Build the error for a non-2xx answer: the API's `{"error": {...}}`, or a sensible stand-in. */
export function errorFromResponse(status: number, statusText: string, headers: Headers, body: string): ThreadlessError {
  const requestIdHeader = headers.get("x-request-id");
  const retryAfter = parseRetryAfter(headers.get("retry-after"));
  let shaped: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(body);
    const inner = parsed !== null && typeof parsed === "object" ? (parsed as { error?: unknown }).error : undefined;
    if (inner !== null && typeof inner === "object" && !Array.isArray(inner)) shaped = inner as Record<string, unknown>;
  } catch {
    shaped = null;
  }
  const str = (value: unknown): string | null => (typeof value === "string" && value ? value : null);
  if (shaped && str(shaped.code)) {
    return new ThreadlessError({
      status,
      code: str(shaped.code)!,
      message: str(shaped.message) ?? `HTTP ${status}`,
      hint: str(shaped.hint),
      requestId: str(shaped.request_id) ?? requestIdHeader,
      retryAfter,
    });
  }
  const snippet = body.replace(/\s+/g, " ").trim().slice(0, 200);
  const reason = statusText ? `HTTP ${status} ${statusText}` : `HTTP ${status}`;
  return new ThreadlessError({
    status,
    code: CODES[status] ?? `http_${status}`,
    message: snippet ? `${reason}: ${snippet}` : reason,
    hint: isRetryableStatus(status)
      ? "The server or a proxy in front of it had a problem; try again later."
      : "The answer did not come from the Threadless API; check baseUrl.",
    requestId: requestIdHeader,
    retryAfter,
  });
}
