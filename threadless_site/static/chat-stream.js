/* Read a text/event-stream response body with fetch (POST streams can't use EventSource).
   ThreadlessStream.read(response, onEvent) calls onEvent(name, data, id) per event and resolves
   when the stream ends. Used by the Manager chat and the end-user chat. */
(function () {
  "use strict";
  function parseFrame(frame, onEvent) {
    var name = "message", data = [], id = null;
    frame.split("\n").forEach(function (line) {
      if (!line || line.charAt(0) === ":") return;
      var i = line.indexOf(":");
      var field = i < 0 ? line : line.slice(0, i);
      var value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
      else if (field === "id") id = value;
    });
    if (!data.length) return;
    var parsed;
    try { parsed = JSON.parse(data.join("\n")); } catch (e) { parsed = data.join("\n"); }
    onEvent(name, parsed, id);
  }
  async function read(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n");
      var cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        parseFrame(buffer.slice(0, cut), onEvent);
        buffer = buffer.slice(cut + 2);
      }
    }
    if (buffer.trim()) parseFrame(buffer, onEvent);
  }
  function outputText(items) {
    return (items || []).filter(function (i) { return i && i.type === "text"; })
      .map(function (i) { return i.text || ""; }).join("\n");
  }
  /* Append one chat message to `log` (text only, never HTML) and return its element. */
  function bubble(log, kind, label, text, labelClass) {
    var empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    var div = document.createElement("div");
    div.className = "msg msg-" + kind;
    var l = document.createElement("span");
    l.className = labelClass || "msg-label";
    l.textContent = label;
    var body = document.createElement("span");
    body.className = "msg-text";
    body.textContent = text || "";
    div.appendChild(l); div.appendChild(body);
    log.appendChild(div);
    div.scrollIntoView({ block: "nearest" });
    return div;
  }

  window.ThreadlessStream = { read: read, outputText: outputText, bubble: bubble };
})();
