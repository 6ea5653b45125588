/* The end-user chat. Talks to /v1 with the agent's publishable key (from the URL fragment, which
   is never sent to a server) and the conversation's client token: fetch, no cookies.
   It shows only the agent's reply text and its own fixed messages — never an error text from
   the server — so no provider message can reach this page. */
(function () {
  "use strict";
  var root = document.getElementById("widget");
  if (!root) return;
  var api = root.dataset.api, agentId = root.dataset.agentId, agentName = root.dataset.agentName;
  var log = document.getElementById("chat-log");
  var form = document.getElementById("chat-form");
  var input = document.getElementById("chat-input");
  var send = document.getElementById("chat-send");
  var banner = document.getElementById("banner");
  var bannerText = document.getElementById("banner-text");
  var tryAgain = document.getElementById("try-again");
  var params = new URLSearchParams(location.hash.slice(1));
  var key = params.get("key") || "";
  var storeKey = "threadless:" + agentId;
  var pending = null; // what Try again repeats: {kind: "say", text} before a turn started, else {kind: "rerun"}
  var attempts = 0; // failed tries of the same message, so a retry that fails again says so

  if (!/^tl_pub_/.test(key)) {
    document.getElementById("setup").hidden = false;
    send.disabled = true; input.disabled = true;
    return;
  }

  function saved() {
    try { return JSON.parse(sessionStorage.getItem(storeKey) || "null"); } catch (e) { return null; }
  }
  function save(conv) { try { sessionStorage.setItem(storeKey, JSON.stringify(conv)); } catch (e) { /* private mode */ } }
  function headers(conv) {
    var h = { "Authorization": "Bearer " + key, "Content-Type": "application/json" };
    if (conv) h["X-Client-Token"] = conv.clientToken;
    return h;
  }
  async function conversation(fresh) {
    var conv = fresh ? null : saved();
    if (conv) return conv;
    var response = await fetch(api + "/agents/" + encodeURIComponent(agentId) + "/conversations", {
      method: "POST", headers: headers(null), body: "{}", credentials: "omit"
    });
    if (!response.ok) throw new Error("create " + response.status);
    var data = await response.json();
    conv = { id: data.id, clientToken: data.clientToken };
    save(conv);
    return conv;
  }

  function bubble(kind, label, text) {
    return ThreadlessStream.bubble(log, kind, label, text, "msg-label visually-hidden");
  }
  function showBanner(text, canRetry) {
    bannerText.textContent = text;
    tryAgain.hidden = !canRetry;
    banner.hidden = false;
    if (canRetry) tryAgain.focus();
  }
  function hideBanner() { banner.hidden = true; }
  function busy(on) { send.disabled = on; input.disabled = on; tryAgain.disabled = on; }

  async function stream(path, body, conv) {
    return fetch(api + "/conversations/" + encodeURIComponent(conv.id) + path, {
      method: "POST", headers: Object.assign(headers(conv), { "Accept": "text/event-stream" }),
      body: body, credentials: "omit"
    });
  }

  async function run(action, retrying) {
    busy(true);
    if (retrying) { bannerText.textContent = "Trying again…"; } else { hideBanner(); attempts = 0; }
    var reply = bubble("assistant", agentName + " says", "");
    reply.setAttribute("aria-busy", "true");
    var text = "", started = false, ok = false;
    try {
      var conv = await conversation(false);
      var body = action.kind === "say" ? JSON.stringify({ input: action.text }) : "{}";
      var response = await stream(action.kind === "say" ? "/say" : "/rerun", body, conv);
      if (response.status === 404 && action.kind === "say") { // the conversation is gone: start a new one
        conv = await conversation(true);
        response = await stream("/say", body, conv);
      }
      if (response.status === 409 && action.kind === "rerun") {
        reply.remove();
        pending = null;
        showBanner("There is nothing to retry: the last message already has its answer.", false);
        return;
      }
      if (!response.ok) throw new Error("status " + response.status);
      await ThreadlessStream.read(response, function (name, data) {
        if (name === "turn_start") started = true;
        if (name === "token") { text += data.text || ""; reply.querySelector(".msg-text").textContent = text; }
        // The server took that text back (the task failed or the turn's reply was dropped): so does the page.
        if (name === "rollback") { text = ""; reply.querySelector(".msg-text").textContent = ""; }
        if (name === "done") {
          started = true;
          var snap = data.snapshot || {};
          var out = ThreadlessStream.outputText(snap.output);
          if (out) { text = out; reply.querySelector(".msg-text").textContent = out; }
          ok = !!out || snap.conversationState === "READY" || snap.conversationState === "ENDED";
        }
      });
    } catch (err) {
      ok = false;
    } finally {
      reply.removeAttribute("aria-busy");
      busy(false);
    }
    if (ok && text) { pending = null; attempts = 0; hideBanner(); input.focus(); return; }
    // A failed turn leaves no partial reply on screen: the banner takes its place.
    reply.remove();
    pending = started || action.kind === "rerun" ? { kind: "rerun" } : action;
    attempts += 1;
    showBanner(attempts > 1 ? "Something went wrong again (tried " + attempts + " times, last at " +
                              new Date().toLocaleTimeString() + ")" : "Something went wrong", true);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = input.value.trim();
    if (!text || send.disabled) return;
    bubble("user", "You said", text);
    input.value = "";
    run({ kind: "say", text: text });
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  tryAgain.addEventListener("click", function () { run(pending || { kind: "rerun" }, true); });
})();
