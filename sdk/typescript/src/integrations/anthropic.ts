/**
 * Anthropic's memory tool (`memory_20250818`), stored in Threadless:
 * `threadlessMemoryTool({ client, memoryId | externalId })` is the `@anthropic-ai/sdk` package's own
 * `betaMemoryTool` with handlers that send each command, as the model wrote it, to
 * `POST /v1/memories/{id}/files/command` (`client.files.command`), so it goes wherever `betaMemoryTool(...)` goes:
 * `client.beta.messages.toolRunner({ tools: [tool], ... })`.
 *
 * The server answers with the reference backend's semantics and texts. A refused command throws
 * the package's `ToolError` with the server's text (the runner turns it into an error result).
 * With Threadless down a command throws a `ToolError` with a short text too, so the agent keeps
 * running, and the client's `onError` hears why.
 *
 * `@anthropic-ai/sdk` (>= 1.14, which has `betaMemoryTool`) is an optional peer dependency.
 */
import { betaMemoryTool, type MemoryToolHandlers } from "@anthropic-ai/sdk/helpers/beta/memory";
import { ToolError } from "@anthropic-ai/sdk/lib/tools/ToolError";
import type { MemoryRef, Threadless } from "../client.js";
import { ThreadlessError } from "../errors.js";
import type { FileCommand, FileCommandAnswer } from "../types.js";

export interface ThreadlessMemoryToolOptions {
  /** The Threadless client (its `onError` hears about every command Threadless could not answer). */
  client: Threadless;
  /** The memory whose files the model works on… */
  memoryId?: string;
  /** …or your own id for it (created on first use). */
  externalId?: string;
  /** Extra tool-definition properties, e.g. `cache_control`. */
  extraProps?: Parameters<typeof betaMemoryTool>[1];
}

function memoryRef(options: ThreadlessMemoryToolOptions): MemoryRef {
  if ((options.memoryId === undefined) === (options.externalId === undefined)) {
    throw new ThreadlessError({ status: null, code: "invalid_request", message: "Pass exactly one of memoryId or externalId.", retryable: false });
  }
  return options.memoryId ?? { externalId: options.externalId as string };
}

/** The memory tool's six commands, executed in a Threadless memory. */
export function threadlessMemoryTool(options: ThreadlessMemoryToolOptions) {
  const ref = memoryRef(options);
  const run = async (command: { command: string }): Promise<string> => {
    let answer: FileCommandAnswer;
    try {
      answer = await options.client.files.command(ref, command as FileCommand);
    } catch (error) {
      if (!(error instanceof ThreadlessError)) throw error;
      options.client.notify(error, {
        operation: `memory.${command.command}`,
        memoryId: options.memoryId ?? null,
        ...(options.externalId !== undefined ? { externalId: options.externalId } : {}),
      });
      throw new ToolError(
        error.retryable
          ? `Memory is unavailable right now (Threadless: ${error.code}). Try again later.`
          : `Memory refused the command (Threadless: ${error.code}): ${error.message}`,
      );
    }
    if (typeof answer?.result !== "string") throw new ToolError("Memory is unavailable right now (Threadless sent an unexpected answer). Try again later.");
    if (answer.is_error) throw new ToolError(answer.result);
    return answer.result;
  };
  const handlers: MemoryToolHandlers = {
    view: run,
    create: run,
    str_replace: run,
    insert: run,
    delete: run,
    rename: run,
  };
  return betaMemoryTool(handlers, options.extraProps);
}
