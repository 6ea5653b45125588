/**
 * Token estimates and history-window fitting, mirrored exactly from `sdk/python/threadless/window.py`.
 *
 * The server, the Python SDK and this SDK must cut a conversation at the same place, so all three
 * are checked against the shared vectors in `sdk/testdata/`. Pure functions, no I/O.
 *
 * * A text costs a quarter token per code point below U+3000 and one token per code point from
 *   U+3000 up. Code points, not UTF-16 units: an astral character (a surrogate pair) is one.
 * * A message costs `ceil(sum over its texts) + 4`, plus 256 per non-text content part. Its texts
 *   are the text parts and, with tool calls, the compact JSON of the whole `tool_calls` list as
 *   Python's `json.dumps(separators=(",", ":"), ensure_ascii=False)` writes it.
 * * A window walks back from the newest history message while history + new messages stay within
 *   the budget and always starts at a user message; if not even one turn fits, it keeps from the
 *   newest user message onward.
 */

import type { Message } from "./types.js";

export const MESSAGE_OVERHEAD = 4;
export const NON_TEXT_PART_TOKENS = 256;

/** Quarter tokens of one text: 1 per code point below U+3000, 4 per code point from it up. */
const WIDE = /[\u3000-\uffff]/;

export function textQuarters(text: string): number {
  if (!WIDE.test(text)) return text.length; // the common case, checked natively
  let quarters = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x3000) {
      quarters += 1;
      continue;
    }
    // Every surrogate is above U+3000: a pair is one astral code point, a lone one counts alone.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    quarters += 4;
  }
  return quarters;
}

/** Python's truthiness, for the `if tool_calls:` test. */
function pyTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value);
}

function pyString(text: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x20 && unit !== 0x22 && unit !== 0x5c) continue;
    out += text.slice(start, i);
    start = i + 1;
    switch (unit) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += "\\\\"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      default: out += "\\u" + unit.toString(16).padStart(4, "0");
    }
  }
  return out + text.slice(start) + '"';
}

/**
 * A number as Python writes it after reading what `JSON.stringify` sent: integers as written,
 * anything with a fraction or exponent as Python's float repr (`1e-07`, `1e+16`, `2.0`).
 */
function pyNumber(value: number): string {
  const sent = JSON.stringify(value);
  if (sent === "null" || /^-?\d+$/.test(sent)) return sent;
  const [mantissa, expText] = Math.abs(value).toExponential().split("e");
  const digits = mantissa!.replace(".", "");
  const exp = Number(expText);
  const sign = value < 0 ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
    const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    return sign + whole + "." + (digits.slice(exp + 1) || "0");
  }
  const frac = digits.length > 1 ? "." + digits.slice(1) : "";
  return sign + digits[0] + frac + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
}

/** Compact JSON exactly as the server's `json.dumps(value, separators=(",", ":"), ensure_ascii=False)`. */
export function compactJson(value: unknown): string {
  const encoded = encode(value);
  return encoded === undefined ? "null" : encoded;
}

function encode(value: unknown): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case "string":
      return pyString(value);
    case "number":
      return pyNumber(value);
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) {
    return "[" + value.map((item) => encode(item) ?? "null").join(",") + "]";
  }
  const fields: string[] = [];
  for (const key of Object.keys(value as object)) {
    const item = encode((value as Record<string, unknown>)[key]);
    if (item !== undefined) fields.push(pyString(key) + ":" + item);
  }
  return "{" + fields.join(",") + "}";
}

/** Estimated tokens of one OpenAI-chat-shaped message. */
export function messageTokens(message: Partial<Message> | Record<string, unknown>): number {
  let quarters = 0;
  let extra = 0;
  const content = (message as Record<string, unknown>).content;
  if (typeof content === "string") {
    quarters += textQuarters(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part !== null && typeof part === "object" && !Array.isArray(part) && (part as { type?: unknown }).type === "text") {
        const text = (part as { text?: unknown }).text;
        quarters += textQuarters(typeof text === "string" ? text : pyTruthy(text) ? String(text) : "");
      } else if (typeof part === "string") {
        quarters += textQuarters(part);
      } else {
        extra += NON_TEXT_PART_TOKENS;
      }
    }
  }
  const toolCalls = (message as Record<string, unknown>).tool_calls;
  if (pyTruthy(toolCalls)) quarters += textQuarters(compactJson(toolCalls));
  return Math.floor((quarters + 3) / 4) + extra + MESSAGE_OVERHEAD;
}

/**
 * Decides how many of the newest history messages fit, fed newest first.
 *
 * `reserved` is what the new messages cost; `newHasUser` says whether they contain a user message
 * (then the oversized-turn rule keeps no history: the newest user message is new). Call `push` with
 * each history message's tokens and role, newest first, until it returns false; then `result()`
 * is the number of newest history messages in the window.
 */
export class WindowFitter {
  readonly budget: number;
  used: number;
  seen = 0;
  keep = 0;
  newestUser: number | null = null;
  readonly newHasUser: boolean;
  private over: boolean;

  constructor(budget: number, reserved = 0, newHasUser = false) {
    this.budget = budget;
    this.used = reserved;
    this.newHasUser = newHasUser;
    this.over = reserved > budget;
  }

  /** Feed the next older message. Returns true while more messages could still matter. */
  push(tokens: number, role: string): boolean {
    this.seen += 1;
    if (!this.over) {
      this.used += tokens;
      if (this.used > this.budget) this.over = true;
      else if (role === "user") this.keep = this.seen;
    }
    if (role === "user" && this.newestUser === null) this.newestUser = this.seen;
    if (this.over) {
      // Over budget: only the oversized-turn rule can still change the answer.
      return this.keep === 0 && !this.newHasUser && this.newestUser === null;
    }
    return true;
  }

  /** Number of newest history messages to keep. */
  result(): number {
    if (this.keep) return this.keep;
    if (this.over && !this.newHasUser && this.newestUser !== null) return this.newestUser;
    return 0;
  }
}

/** Index into `history` where the window starts (`history.length` keeps none). */
export function fitWindow(
  history: readonly (Partial<Message> | Record<string, unknown>)[],
  newMessages: readonly (Partial<Message> | Record<string, unknown>)[] = [],
  budget = 60_000,
  tokens?: readonly number[],
): number {
  let reserved = 0;
  let newHasUser = false;
  for (const message of newMessages) {
    reserved += messageTokens(message);
    if ((message as { role?: unknown }).role === "user") newHasUser = true;
  }
  const fitter = new WindowFitter(budget, reserved, newHasUser);
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    const cost = tokens ? tokens[i]! : messageTokens(message);
    const role = (message as { role?: unknown }).role;
    if (!fitter.push(cost, typeof role === "string" ? role : role ? String(role) : "")) break;
  }
  return history.length - fitter.result();
}
