// The README's quickstart, type-checked by `npm test` (tsc --noEmit) so the docs cannot rot.
// Run it compiled, or read it: the model call is a stub so it needs no provider key.
import { Threadless, ThreadlessError, type DecoratedRequest, type Message } from "threadless";

const memory = new Threadless({
  timeoutMs: 15_000,
  tailTokens: 60_000,
  onError: (error, { operation, memoryId }) => console.warn({ error: error.message, operation, memoryId }),
});

async function callModel(request: DecoratedRequest): Promise<string> {
  const body = { model: "gpt-4o-mini", messages: request.toOpenAI() };
  const anthropic = { model: "claude-sonnet-4-5", max_tokens: 1024, ...request.toAnthropic() };
  return `(${body.messages.length} OpenAI messages, ${anthropic.messages.length} Anthropic messages)`;
}

export async function main(): Promise<void> {
  const m = await memory.create({ metadata: { user: "42" } });
  const messages: Message[] = [{ role: "user", content: "hi" }];
  try {
    const request = await memory.decorate(m.id, { messages, instructions: "You are a helpful assistant." });
    if (request.degraded) console.warn("served from the local tail:", request.error?.code);
    const reply = await callModel(request);
    void memory.report(m.id, { messages: [{ role: "assistant", content: reply }] });
  } catch (error) {
    if (error instanceof ThreadlessError) console.error(error.status, error.code, error.message, error.hint, error.requestId);
    throw error;
  }
  const facts = await memory.facts.list(m.id);
  console.log(facts.data.map((fact) => fact.text));
  await memory.flush(5_000);
}
