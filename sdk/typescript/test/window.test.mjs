// The shared vectors (sdk/testdata/) checked against this SDK's token estimate and window fitting,
// so the server, the Python SDK and this SDK can never cut a window differently.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compactJson, fitWindow, messageTokens, textQuarters, WindowFitter } from "threadless";

const testdata = new URL("../../testdata/", import.meta.url);
const tokenCases = JSON.parse(readFileSync(new URL("token_cases.json", testdata), "utf8"));
const windowCases = JSON.parse(readFileSync(new URL("window_cases.json", testdata), "utf8"));

test("every shared token vector gives the same estimate", () => {
  assert.ok(tokenCases.length >= 15);
  for (const { message, tokens } of tokenCases) {
    assert.equal(messageTokens(message), tokens, JSON.stringify(message).slice(0, 80));
  }
});

test("every shared window vector starts at the same message", () => {
  assert.ok(windowCases.length >= 40);
  for (const { name, history, new_messages: newMessages, budget, expected_start: expected } of windowCases) {
    assert.equal(fitWindow(history, newMessages, budget), expected, name);
    const tokens = history.map((m) => messageTokens(m));
    assert.equal(fitWindow(history, newMessages, budget, tokens), expected, name + " (precomputed tokens)");
  }
});

test("code points are counted, not UTF-16 units", () => {
  assert.equal(textQuarters("😀"), 4); // one astral code point, two UTF-16 units
  assert.equal(textQuarters("\u2fff"), 1);
  assert.equal(textQuarters("\u3000"), 4);
  assert.equal(textQuarters("\ud800"), 4); // a lone surrogate is one code point from U+3000 up
  assert.equal(textQuarters("\ud83d\ude00\ud83d"), 8);
  assert.equal(textQuarters("abc"), 3);
});

test("a message costs ceil(quarters) + 4, plus 256 per non-text part", () => {
  assert.equal(messageTokens({ role: "user", content: "" }), 4);
  assert.equal(messageTokens({ role: "user", content: null }), 4);
  assert.equal(messageTokens({ role: "user", content: "abcde" }), 6);
  assert.equal(messageTokens({ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }), 260);
  assert.equal(messageTokens({ role: "user", content: ["abcd", { type: "text", text: "abcd" }] }), 6);
  assert.equal(messageTokens({ role: "assistant", content: "", tool_calls: [] }), 4);
});

test("tool calls are counted as the server's compact JSON, floats and escapes included", () => {
  const value = {a:0.5,b:1e-7,c:1e21,d:1.5e16,e:123456789012345.6,f:0.0001,g:0.00001,h:-2.5,i:10,j:-0,k:1e16,m:2.5e-300,n:-1.7976931348623157e308,o:5e-324,p:0.1+0.2,q:1234.5678e10,l:[true,false,null],s:"quote\" back\\ nl\n cr\r tab\t bs\b ff\f nul\x00 us\x1f del\x7f ls\u2028 日本 😀 lone\ud800x", "2":"int key"};
  // What Python's json.dumps(json.loads(JSON.stringify(value)), separators=(",", ":"), ensure_ascii=False) writes.
  const python = "{\"2\":\"int key\",\"a\":0.5,\"b\":1e-07,\"c\":1e+21,\"d\":15000000000000000,\"e\":123456789012345.6,\"f\":0.0001,\"g\":1e-05,\"h\":-2.5,\"i\":10,\"j\":0,\"k\":10000000000000000,\"m\":2.5e-300,\"n\":-1.7976931348623157e+308,\"o\":5e-324,\"p\":0.30000000000000004,\"q\":12345678000000,\"l\":[true,false,null],\"s\":\"quote\\\" back\\\\ nl\\n cr\\r tab\\t bs\\b ff\\f nul\\u0000 us\\u001f del\u007f ls\u2028 \u65e5\u672c \ud83d\ude00 lone\ud800x\"}";
  assert.equal(compactJson(value), python);
  assert.equal(compactJson([{ id: "c", skip: undefined, when: new Date(0) }]), '[{"id":"c","when":"1970-01-01T00:00:00.000Z"}]');
  const calls = [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Zürich"}' } }];
  assert.equal(compactJson(calls), '[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Zürich\\"}"}}]');
});

test("the fitter stops reading once only the oversized-turn rule could matter", () => {
  const fitter = new WindowFitter(10, 0, true);
  assert.equal(fitter.push(5, "user"), true);
  assert.equal(fitter.push(50, "assistant"), false);
  assert.equal(fitter.result(), 1);
  const oversized = new WindowFitter(10, 2, false);
  assert.equal(oversized.push(50, "tool"), true);
  assert.equal(oversized.push(50, "assistant"), true);
  assert.equal(oversized.push(50, "user"), false);
  assert.equal(oversized.result(), 3);
});
