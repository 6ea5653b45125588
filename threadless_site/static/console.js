/* Threadless console behaviour: disclosure panels, copy buttons and select-on-focus fields.
   Delegated, so content swapped in by htmx works without re-binding. No framework, and nothing
   inline in the pages (their Content-Security-Policy runs no inline script). */
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[data-disclosure]");
    if (toggle) {
      var panel = document.getElementById(toggle.getAttribute("aria-controls"));
      var open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", open ? "false" : "true");
      if (panel) panel.hidden = open;
      return;
    }
    var copy = event.target.closest("[data-copy]");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy"));
      if (!source) return;
      var text = source.value || source.textContent;
      var done = function () {
        var status = document.getElementById(copy.getAttribute("data-copy") + "-status");
        copy.textContent = "Copied";
        if (status) status.textContent = "Copied to the clipboard.";
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { source.select(); document.execCommand("copy"); done(); });
      } else {
        source.select(); document.execCommand("copy"); done();
      }
    }
  });
  /* A read-only field to copy from (a new key) selects its whole value when focused. */
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });
  /* After an htmx swap, move focus to the new region's heading when it asks for it. */
  document.addEventListener("htmx:afterSettle", function (event) {
    var region = event.detail.target;
    // An outerHTML swap replaced the target: look in its successor, which has the same id.
    if (region && !region.isConnected && region.id) region = document.getElementById(region.id);
    var target = region && region.querySelector("[data-autofocus]");
    if (target) target.focus();
  });
  /* A table wider than its box scrolls inside it: mark the box (data-overflow: which sides hide
     more) so the CSS shows that it scrolls, and give it a Tab stop so a keyboard can scroll it. */
  function markScrollBox(box) {
    var more = box.scrollWidth - box.clientWidth;
    if (more <= 1) {
      box.removeAttribute("data-overflow");
      if (box.hasAttribute("data-scroll-stop")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-stop");
      }
      return;
    }
    var at = box.scrollLeft;
    box.setAttribute("data-overflow", at <= 1 ? "start" : at >= more - 1 ? "end" : "middle");
    if (!box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-scroll-stop", "");
    }
  }
  function markScrollBoxes() {
    var boxes = document.querySelectorAll(".table-wrap");
    for (var i = 0; i < boxes.length; i++) markScrollBox(boxes[i]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", markScrollBoxes);
  else markScrollBoxes();
  window.addEventListener("resize", markScrollBoxes);
  document.addEventListener("htmx:afterSettle", markScrollBoxes);
  document.addEventListener("scroll", function (event) {
    var box = event.target;
    if (box.classList && box.classList.contains("table-wrap")) markScrollBox(box);
  }, true);
})();
