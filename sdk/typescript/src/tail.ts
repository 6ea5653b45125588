/**
 * The local tail: per memory, in process memory only, an LRU of the most recently used memories.
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

/** How many memories remember that their last decorate fell back, per tail kept. */
const DEGRADED_FACTOR = 4;

export class TailStore {
  private readonly tails = new Map<string, Tail>();
  /** Memories whose last decorate fell back: their reports are skipped until a successful one. */
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
  peek(memoryId: string): Tail | undefined {
    return this.tails.get(memoryId);
  }

  /** A number for a decorate as it starts: later decorates get larger ones. */
  nextSeq(): number {
    return ++this.seq;
  }

  isDegraded(memoryId: string): boolean {
    return this.degraded.has(memoryId);
  }

  /**
   * Mirror a successful decorate; a stored one (not a dry run) also ends the memory's degraded
   * state. O(1): the cut to `tailTokens` happens when a fallback or a report needs the tail.
   */
  refresh(
    memoryId: string,
    instructions: string,
    contextText: string,
    messages: Message[],
    clearDegraded: boolean,
    seq: number = this.nextSeq(),
    serverId: string | null = null,
  ): boolean {
    const current = this.tails.get(memoryId);
    if (current && current.seq > seq) return false; // a slow older answer: the newer tail stays
    this.put(memoryId, { own: ownInstructions(instructions, contextText), contextText, messages: messages.slice(), cut: false, seq, memoryId: serverId });
    if (clearDegraded && (this.degraded.get(memoryId) ?? seq) < seq) this.degraded.delete(memoryId);
    return true;
  }

  /** A successful report: its messages join the tail, so a fallback right after has the reply. */
  append(memoryId: string, messages: Message[]): void {
    if (!messages.length) return;
    const tail = this.tails.get(memoryId) ?? { own: "", contextText: "", messages: [], cut: true, seq: 0, memoryId: null };
    tail.messages = cutTail([...tail.messages, ...messages], this.tailTokens);
    tail.cut = true;
    this.put(memoryId, tail);
  }

  /** The tail for a fallback (marked used), or null; marks the memory degraded. */
  fallback(memoryId: string, seq: number = this.nextSeq()): Tail | null {
    const since = Math.max(seq, this.degraded.get(memoryId) ?? 0);
    this.degraded.delete(memoryId);
    this.degraded.set(memoryId, since);
    while (this.degraded.size > Math.max(1, this.maxTails * DEGRADED_FACTOR)) {
      this.degraded.delete(this.degraded.keys().next().value as string);
    }
    const tail = this.tails.get(memoryId);
    if (!tail) return null;
    if (!tail.cut) {
      tail.messages = cutTail(tail.messages, this.tailTokens);
      tail.cut = true;
    }
    this.put(memoryId, tail);
    return tail;
  }

  forget(memoryId: string): void {
    this.tails.delete(memoryId);
    this.degraded.delete(memoryId);
  }

  private put(memoryId: string, tail: Tail): void {
    this.tails.delete(memoryId);
    this.tails.set(memoryId, tail);
    while (this.tails.size > Math.max(0, this.maxTails)) {
      this.tails.delete(this.tails.keys().next().value as string);
    }
  }
}
