/**
 * The local tail: per memory and thread, in process memory only, an LRU of the most recently used
 * conversations (a fallback in one thread never shows another thread's messages).
 *
 * A tail is what decorate falls back to when the server cannot answer: the caller's own
 * instructions, the context blocks the server last sent (`contextText`) and the newest messages
 * of the last decorated request that fit `tailTokens`, cut at a user message.
 */

import type { Message } from "./types.js";
import { fitWindow } from "./window.js";

export interface Tail {
  /** The caller's own instructions as last decorated. */
  own: string;
  /** The facts / recall / failures blocks the server last added. */
  contextText: string;
  messages: Message[];
  /** Whether `messages` is already cut to `tailTokens` (a refresh defers the cut to when it is needed). */
  cut: boolean;
  /** The decorate that wrote it, in the order decorates started: an older answer never replaces it. */
  seq: number;
  /** The server's memory id (a tail keyed by external id learns it from its decorate). */
  memoryId: string | null;
}

/** The caller's part of decorated instructions (`own + "\n\n" + context_text`, or either alone). */
export function ownInstructions(instructions: string, contextText: string): string {
  if (!contextText) return instructions;
  if (instructions === contextText) return "";
  const suffix = "\n\n" + contextText;
  return instructions.endsWith(suffix) ? instructions.slice(0, -suffix.length) : instructions;
}

export function joinInstructions(own: string, contextText: string): string {
  if (own && contextText) return own + "\n\n" + contextText;
  return own || contextText;
}

/** The newest messages fitting `budget` tokens, cut at a user message (window rules). */
export function cutTail(messages: Message[], budget: number): Message[] {
  return messages.slice(fitWindow(messages, [], budget));
}

/** The key of a memory's thread in a TailStore (NUL cannot occur in an id or a thread name). */
export function tailKey(memoryKey: string, thread: string): string {
  return `${memoryKey}\u0000${thread}`;
}

/** How many threads remember that their last decorate fell back, per tail kept. */
const DEGRADED_FACTOR = 4;

export class TailStore {
  private readonly tails = new Map<string, Tail>();
  /** Threads whose last decorate fell back: their reports are skipped until a successful one. */
  private readonly degraded = new Map<string, number>();
  private seq = 0;

  constructor(
    readonly maxTails: number,
    readonly tailTokens: number,
  ) {}

  get size(): number {
    return this.tails.size;
  }

  /** The tail without marking it used. */
  peek(key: string): Tail | undefined {
    return this.tails.get(key);
  }

  /** A number for a decorate as it starts: later decorates get larger ones. */
  nextSeq(): number {
    return ++this.seq;
  }

  isDegraded(key: string): boolean {
    return this.degraded.has(key);
  }

  /**
   * Mirror a successful decorate; a stored one (not a dry run) also ends the thread's degraded
   * state. O(1): the cut to `tailTokens` happens when a fallback or a report needs the tail.
   */
  refresh(
    key: string,
    instructions: string,
    contextText: string,
    messages: Message[],
    clearDegraded: boolean,
    seq: number = this.nextSeq(),
    serverId: string | null = null,
  ): boolean {
    const current = this.tails.get(key);
    if (current && current.seq > seq) return false; // a slow older answer: the newer tail stays
    this.put(key, { own: ownInstructions(instructions, contextText), contextText, messages: messages.slice(), cut: false, seq, memoryId: serverId });
    if (clearDegraded && (this.degraded.get(key) ?? seq) < seq) this.degraded.delete(key);
    return true;
  }

  /** A successful report: its messages join the tail, so a fallback right after has the reply. */
  append(key: string, messages: Message[]): void {
    if (!messages.length) return;
    const tail = this.tails.get(key) ?? { own: "", contextText: "", messages: [], cut: true, seq: 0, memoryId: null };
    tail.messages = cutTail([...tail.messages, ...messages], this.tailTokens);
    tail.cut = true;
    this.put(key, tail);
  }

  /** The tail for a fallback (marked used), or null; marks the thread degraded. */
  fallback(key: string, seq: number = this.nextSeq()): Tail | null {
    const since = Math.max(seq, this.degraded.get(key) ?? 0);
    this.degraded.delete(key);
    this.degraded.set(key, since);
    while (this.degraded.size > Math.max(1, this.maxTails * DEGRADED_FACTOR)) {
      this.degraded.delete(this.degraded.keys().next().value as string);
    }
    const tail = this.tails.get(key);
    if (!tail) return null;
    if (!tail.cut) {
      tail.messages = cutTail(tail.messages, this.tailTokens);
      tail.cut = true;
    }
    this.put(key, tail);
    return tail;
  }

  forget(key: string): void {
    this.tails.delete(key);
    this.degraded.delete(key);
  }

  /** Every thread's tail of a memory: keyed by `memoryKey`, or learnt to be `serverId` by a decorate. */
  forgetMemory(memoryKey: string, serverId: string | null = null): void {
    const prefix = tailKey(memoryKey, "");
    for (const [key, tail] of [...this.tails]) {
      if (key.startsWith(prefix) || (serverId !== null && tail.memoryId === serverId)) this.forget(key);
    }
    for (const key of [...this.degraded.keys()]) if (key.startsWith(prefix)) this.degraded.delete(key);
  }

  private put(key: string, tail: Tail): void {
    this.tails.delete(key);
    this.tails.set(key, tail);
    while (this.tails.size > Math.max(0, this.maxTails)) {
      this.tails.delete(this.tails.keys().next().value as string);
    }
  }
}
