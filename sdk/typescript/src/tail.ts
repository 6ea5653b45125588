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
}

export interface MemoryState {
  tail: Tail | null;
  /** The last decorate on this memory fell back: its messages were never stored. */
  degraded: boolean;
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

export class TailStore {
  private readonly states = new Map<string, MemoryState>();

  constructor(readonly maxTails: number) {}

  get size(): number {
    return this.states.size;
  }

  /** The memory's state without marking it used. */
  peek(memoryId: string): MemoryState | undefined {
    return this.states.get(memoryId);
  }

  /** The memory's state, created when missing, marked most recently used. */
  use(memoryId: string): MemoryState {
    let state = this.states.get(memoryId);
    if (state) {
      this.states.delete(memoryId);
    } else {
      state = { tail: null, degraded: false };
    }
    this.states.set(memoryId, state);
    while (this.states.size > Math.max(0, this.maxTails)) {
      const oldest = this.states.keys().next().value as string;
      this.states.delete(oldest);
    }
    return state;
  }

  forget(memoryId: string): void {
    this.states.delete(memoryId);
  }
}
