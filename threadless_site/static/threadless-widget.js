/* Threadless chat widget: embed an agent's end-user chat on any site as an iframe.

   <script src="https://YOUR-THREADLESS-HOST/static/threadless-widget.js"
           data-agent="agent-slug" data-key="tl_pub_…" async></script>

   Optional: data-target="#element-id" (render inline instead of the floating button),
   data-title="Chat with us". The site must be listed in the agent's "allowedOrigins".
   The publishable key travels in the iframe URL's fragment, which browsers never send to a
   server. No cookies are used. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var slug = script.getAttribute("data-agent");
  var key = script.getAttribute("data-key");
  if (!slug || !key) { console.error("threadless-widget: data-agent and data-key are required"); return; }
  var host = script.getAttribute("data-host") || new URL(script.src).origin;
  var title = script.getAttribute("data-title") || "Chat";
  var src = host + "/chat/" + encodeURIComponent(slug) + "/#key=" + encodeURIComponent(key);

  function frame(style) {
    var f = document.createElement("iframe");
    f.src = src;
    f.title = title;
    f.setAttribute("allow", "clipboard-write");
    f.style.cssText = "border:0;width:100%;height:100%;" + (style || "");
    return f;
  }

  var targetSel = script.getAttribute("data-target");
  if (targetSel) {
    var target = document.querySelector(targetSel);
    if (target) { target.appendChild(frame("min-height:480px")); }
    return;
  }

  var panel = document.createElement("div");
  panel.style.cssText = "position:fixed;right:16px;bottom:84px;width:min(380px,calc(100vw - 32px));" +
    "height:min(600px,calc(100vh - 120px));box-shadow:0 12px 40px rgba(0,0,0,.25);border-radius:14px;" +
    "overflow:hidden;background:#fff;z-index:2147483000;display:none";
  panel.id = "threadless-chat-panel";
  var button = document.createElement("button");
  button.type = "button";
  button.textContent = title;
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-controls", panel.id);
  button.style.cssText = "position:fixed;right:16px;bottom:16px;z-index:2147483000;border:0;border-radius:999px;" +
    "padding:14px 20px;background:#3a4fd8;color:#fff;font:600 15px system-ui,sans-serif;cursor:pointer;" +
    "box-shadow:0 6px 20px rgba(0,0,0,.25)";
  var loaded = false;
  button.addEventListener("click", function () {
    var open = panel.style.display === "none";
    if (open && !loaded) { panel.appendChild(frame()); loaded = true; }
    panel.style.display = open ? "block" : "none";
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });
  document.body.appendChild(panel);
  document.body.appendChild(button);
})();
