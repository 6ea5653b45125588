/* Manager chat: send a message, stream the reply token by token, and when the turn fails show
   the taskErrors text (the raw reason) in place of the empty reply, with task id and error type.
   All text goes in through textContent, never innerHTML. */
(function () {
  "use strict";
  var root = document.getElementById("manager-chat");
  if (!root) return;
  var log = document.getElementById("chat-log");
  var form = document.getElementById("chat-form");
  var input = document.getElementById("chat-input");
  var send = document.getElementById("chat-send");
  var rerun = document.getElementById("chat-rerun");
  var statusEl = document.getElementById("chat-status");
  var agentName = root.dataset.agentName || "Agent";
  var stateWords = JSON.parse((document.getElementById("turn-states") || {}).textContent || "{}");
  function stateText(state) { return stateWords[state] || state; }

  function bubble(kind, label, text) {
    return ThreadlessStream.bubble(log, kind, label, text);
  }

  function failure(into, error, meta) {
    into.className = "msg msg-error";
    into.setAttribute("role", "group");
    into.querySelector(".msg-label").textContent = "Turn failed";
    into.querySelector(".msg-text").textContent = error;
    var m = document.createElement("span");
    m.className = "err-meta";
    m.textContent = meta;
    into.appendChild(m);
  }

  function busy(on) {
    send.disabled = on; rerun.disabled = on; input.disabled = on;
    statusEl.textContent = on ? "The agent is answering…" : "";
  }

  async function run(url, body) {
    busy(true);
    var reply = bubble("assistant", agentName, "");
    reply.setAttribute("aria-busy", "true");
    var failed = {}, streamed = "", turn = null;
    try {
      var response = await fetch(url, {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRFToken": root.dataset.csrf, "Accept": "text/event-stream",
                   "Content-Type": "application/x-www-form-urlencoded" },
        body: body
      });
      if (!response.ok) {
        var problem = await response.json().catch(function () { return {}; });
        var message = (problem.error && problem.error.message) || ("HTTP " + response.status);
        failure(reply, message, response.status === 409 ? "conflict · nothing to run" : "request refused");
        return;
      }
      await ThreadlessStream.read(response, function (name, data) {
        if (name === "turn_start" && data) turn = data.turn;
        if (name === "token") { streamed += data.text || ""; reply.querySelector(".msg-text").textContent = streamed; }
        if (name === "task_failed") failed[data.taskId] = data;
        if (name === "rollback") { streamed = ""; reply.querySelector(".msg-text").textContent = ""; }
        if (name === "output" && !streamed) reply.querySelector(".msg-text").textContent = ThreadlessStream.outputText(data.items);
        if (name === "error") failure(reply, data.message || "The stream failed.", "request " + (data.requestId || "?"));
        if (name === "done") {
          var snap = data.snapshot || {};
          var text = ThreadlessStream.outputText(snap.output);
          if (text) { reply.querySelector(".msg-text").textContent = text; }
          var errors = snap.taskErrors || [];
          if (!text && errors.length) {
            var first = errors[0];
            var info = failed[first.taskId] || {};
            failure(reply, first.text || first.message || "The turn failed.",
                    "task " + first.taskId + (info.errorType ? " · " + info.errorType : "") +
                    " · turn " + snap.turn + " · " + stateText(snap.conversationState));
            errors.slice(1).forEach(function (e) {
              var more = bubble("error", "Turn failed", "");
              var i2 = failed[e.taskId] || {};
              failure(more, e.text || e.message, "task " + e.taskId + (i2.errorType ? " · " + i2.errorType : ""));
            });
          } else if (!text && snap.conversationState && snap.conversationState !== "READY") {
            failure(reply, "No reply.", "turn " + snap.turn + " · " + stateText(snap.conversationState));
          }
        }
      });
    } catch (err) {
      failure(reply, "Connection lost: " + err.message, "the turn may still finish; reload to see it");
    } finally {
      reply.removeAttribute("aria-busy");
      busy(false);
      input.focus();
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = input.value.trim();
    if (!text) return;
    bubble("user", "You", text);
    input.value = "";
    run(root.dataset.say, new URLSearchParams({ input: text }).toString());
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  rerun.addEventListener("click", function () { run(root.dataset.rerun, ""); });
})();
