"""Page checks for the browser tests and the screenshot script: wide data (long ids, long digests,
many rows), the list of every console page, and measures of what sticks out, what a narrow column
breaks, text too small to read, contrast and the focus ring.

An element "sticks out" when the part of it a person can see reaches past the viewport: its box
is clipped by every ancestor that scrolls or hides overflow (a table inside `.table-wrap` may be
wide; the page may not), so the check matches what makes a phone page scroll sideways.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import quote

WIDTHS = (320, 375, 768, 1280)

# Returns {"scroll": documentElement.scrollWidth, "viewport": innerWidth, "offenders": [...]}.
MEASURE_JS = """
() => {
  const vw = document.documentElement.clientWidth;
  const clips = (el) => {
    const s = getComputedStyle(el);
    return s.overflowX !== 'visible' || s.clipPath !== 'none' || (s.clip && s.clip !== 'auto');
  };
  const name = (el) => {
    let n = el.tagName.toLowerCase();
    if (el.id) n += '#' + el.id;
    if (typeof el.className === 'string' && el.className.trim())
      n += '.' + el.className.trim().split(/\\s+/).join('.');
    return n;
  };
  const offenders = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let left = r.left, right = r.right;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (clips(a)) {
        const ar = a.getBoundingClientRect();
        left = Math.max(left, ar.left); right = Math.min(right, ar.right);
      }
    }
    if (right - left <= 0) continue;
    if (right > vw + 1 || left < -1) {
      offenders.push({el: name(el), left: Math.round(left), right: Math.round(right),
                      text: (el.innerText || el.value || '').slice(0, 40)});
    }
  }
  return {scroll: document.documentElement.scrollWidth, viewport: vw, offenders: offenders.slice(0, 8)};
}
"""

# Form fields narrower than this share of the viewport at 320 px are too small to type into.
NARROW_JS = """
(share) => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  const fields = 'main input:not([type=hidden]):not([type=checkbox]):not([type=radio]), main textarea, '
    + 'main select, .composer textarea, .composer input';
  for (const el of document.querySelectorAll(fields)) {
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    if (r.width < vw * share) out.push({el: (el.id || el.name), width: Math.round(r.width)});
  }
  return out;
}
"""


# Words (up to `maxlen` characters, split at spaces and after hyphens) that a too-narrow column or
# button breaks across lines: a table squeezed to one letter per line fits the page and is still
# unreadable. Longer tokens (ids, keys, raw errors) may break anywhere.
BROKEN_WORDS_JS = """
(maxlen) => {
  const out = [];
  const skip = (el) => el.closest('script, style, textarea, select, option, pre, .visually-hidden, [hidden]');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node && out.length < 8; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || skip(parent) || !parent.getClientRects().length) continue;
    for (const m of node.textContent.matchAll(/[^\\s-]+-?/g)) {
      if (m[0].length < 2 || m[0].length > maxlen) continue;
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      const tops = new Set(rects.map((r) => Math.round(r.bottom)));
      if (tops.size > 1) {
        const cls = parent.className ? '.' + parent.className : '';
        out.push({word: m[0], el: parent.tagName.toLowerCase() + cls});
        break;
      }
    }
  }
  return out;
}
"""


# The focused element's own focus ring against what lies under it (just outside the element, or the
# element itself for an inset ring): a ring below 3:1 (WCAG 1.4.11) is as good as none. A browser's
# own ring (outline-style auto) is two-coloured and passes.
FOCUS_RING_JS = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body || !el.matches(':focus-visible')) return null;
  const parse = (c) => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const s = getComputedStyle(el);
  const label = (el.innerText || el.value || '').slice(0, 30);
  const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + label;
  if (s.outlineStyle === 'auto') return {el: name, ratio: 21};
  if (s.outlineStyle === 'none' || parseFloat(s.outlineWidth) < 2) return {el: name, ratio: 0};
  // What lies under the ring: the element itself for an inset ring, else what is just outside it.
  const width = parseFloat(s.outlineWidth), offset = parseFloat(s.outlineOffset) || 0;
  let under = el;
  if (offset + width > 0) {
    const r = el.getBoundingClientRect(), d = offset + width / 2;
    const points = [[r.right + d, r.top + r.height / 2], [r.left - d, r.top + r.height / 2],
                    [r.left + r.width / 2, r.bottom + d], [r.left + r.width / 2, r.top - d]];
    under = el.parentElement;
    for (const [x, y] of points) {
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      const hit = document.elementsFromPoint(x, y).find((h) => h !== el && !el.contains(h));
      if (hit) { under = hit; break; }
    }
  }
  let bg = [255, 255, 255];
  for (let a = under; a; a = a.parentElement) {
    const c = parse(getComputedStyle(a).backgroundColor);
    if (c.length < 4 || c[3] > 0.9) { bg = c.slice(0, 3); break; }
  }
  const [l1, l2] = [lum(parse(s.outlineColor)), lum(bg)].sort((a, b) => b - a);
  return {el: name, ratio: Math.round((l1 + 0.05) / (l2 + 0.05) * 100) / 100};
}
"""

# Text rendered smaller than `min` px: HTML by its font size, SVG text by its size after the SVG is
# scaled to its box (a wide chart squeezed onto a phone shrinks its labels with it).
TINY_TEXT_JS = """
(min) => {
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length || el.closest('.visually-hidden, title, desc')) continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.closest('svg');
    if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
      size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    }
    if (size < min) out.push({el: el.tagName.toLowerCase(), size: Math.round(size * 10) / 10,
                              text: el.textContent.trim().slice(0, 20)});
  }
  return out.slice(0, 8);
}
"""


@dataclass
class WideData:
    """What `seed_wide` created: the pages to visit, by name, and what a test needs to sign in."""

    pages: dict[str, str] = field(default_factory=dict)
    widget_key: str = ""


def long_token(prefix: str, length: int) -> str:
    """An id-like string without spaces, so nothing can wrap it at a word break."""
    return (prefix + "-" + "x" * length + secrets.token_hex(4))[:length]


def seed_wide(server, *, provider_url: str) -> WideData:
    """Many rows with long unbreakable values on every console page."""
    from .chat_seed import agent_config, create_agent, publishable_key

    out = WideData()
    project_id = server.demo["project_id"]
    raw = (
        "upstream-error:" + "Z" * 600 + " at com.example.VeryLongPackageName.AndAnotherOne."
        "DeeplyNestedClassName.methodWithALongName(SourceFile.java:1234)"
    )
    long_task = "eddi://" + "a-very-long-task-name-" * 8
    with server.client() as api:
        agent = create_agent(
            server,
            name="Agent " + "W" * 60,
            slug=long_token("agent-with-a-long-slug", 72),
            config=agent_config(provider_url, origins=["https://" + "o" * 60 + ".example"]),
        )
        for i in range(12):
            create_agent(
                server,
                name=f"Helper {i}",
                slug=f"helper-{i}-{secrets.token_hex(3)}",
                config=agent_config(provider_url),
            )
        memory_id = ""
        for i in range(30):
            memory = api.post(
                "/memories",
                json={
                    "external_id": long_token(f"customer-{i:02d}-with-a-long-external-id", 190),
                    "metadata": {"blob": "M" * 400},
                    "instructions": "I" * 500,
                    "policy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
                },
            ).json()
            if i == 0:
                memory_id = memory["id"]
        for turn in range(5):
            api.post(
                f"/memories/{memory_id}/decorate",
                json={"messages": [{"role": "user", "content": "U" * 300 + f" turn {turn}"}]},
            ).raise_for_status()
            api.post(
                f"/memories/{memory_id}/report",
                json={
                    "messages": [{"role": "assistant", "content": "A" * 300}] if turn % 2 == 0 else [],
                    "failures": [] if turn % 2 == 0 else [{"task_id": long_task, "error": raw}],
                },
            ).raise_for_status()
        for i in range(8):
            api.post(f"/memories/{memory_id}/facts", json={"text": f"Fact {i} " + "F" * 200})
        long_path = "/memories/" + "/".join(long_token(f"folder-{i}", 40) for i in range(3)) + "/notes.md"
        for command in [
            {"command": "create", "path": long_path, "file_text": "N" * 500 + "\nsecond line\n"},
            {"command": "str_replace", "path": long_path, "old_str": "second", "new_str": "2nd"},
            {"command": "create", "path": "/memories/short.md", "file_text": "Prefers tea.\n"},
        ]:
            assert api.post(f"/memories/{memory_id}/files/command", json=command).json()["is_error"] is False
        conversation = api.post(f"/agents/{agent['id']}/conversations", json={}).json()
        api.post(
            f"/conversations/{conversation['id']}/say",
            json={"input": "Q" * 400},
            headers={"Accept": "text/event-stream"},
            timeout=60,
        )
        # Run again, failing again: the first run's digest stays, hidden from the model (faded).
        api.post(
            f"/conversations/{conversation['id']}/rerun",
            json={},
            headers={"Accept": "text/event-stream"},
            timeout=60,
        )
    labels = [long_token(f"backend-{i}-label", 100) for i in range(15)]
    server.manage(
        "shell",
        "-c",
        "from projects.models import Project\nfrom projects.services import key_create\n"
        f"p = Project.objects.get(pk={project_id!r})\n"
        f"for label in {labels!r}: key_create(project=p, kind='project', name=label)",
    )
    out.widget_key = publishable_key(server, slug=agent["slug"])
    mem = f"/manage/memories/{memory_id}/"
    out.pages = {
        "overview": "/manage/",
        "projects": "/manage/projects/",
        "project-keys": f"/manage/projects/{project_id}/",
        "memories": "/manage/memories/",
        "memory-timeline": mem,
        "memory-threads": mem + "?tab=threads",
        "memory-facts": mem + "?tab=facts",
        "memory-files": mem + "?tab=files",
        "memory-file": mem + "?tab=files&path=" + quote(long_path.removeprefix("/memories/")),
        "memory-model": mem + "?tab=model",
        "memory-search": mem + "?tab=search&q=turn",
        "memory-delete": mem + "delete/",
        "memory-retried": f"/manage/memories/{conversation['memoryId']}/",
        "digests": "/manage/digests/",
        "agents": "/manage/agents/",
        "agent-new": "/manage/agents/new/",
        "agent-edit": f"/manage/agents/{agent['id']}/",
        "manager-chat-start": f"/manage/agents/{agent['id']}/chat/",
        "manager-chat": f"/manage/agents/{agent['id']}/chat/?c={conversation['id']}",
        "secrets": "/manage/agents/secrets/",
        "proxy": "/manage/proxy/",
        "widget": f"/chat/{agent['slug']}/#key={out.widget_key}",
    }
    return out


# Text whose colour against its background is below WCAG AA (4.5:1; 3:1 for large text). The
# background is the first opaque one up the tree; opacity is multiplied in, as it fades the text.
CONTRAST_JS = """
() => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const mix = (fg, bg, a) => [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a));
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden') continue;
    let bg = null, opacity = 1;
    for (let a = el; a; a = a.parentElement) {
      const st = getComputedStyle(a);
      opacity *= parseFloat(st.opacity);
      if (!bg && st.backgroundImage !== 'none') { bg = 'skip'; }
      const c = parse(st.backgroundColor);
      if (!bg && (c.length < 4 || c[3] > 0.9)) bg = c.slice(0, 3);
    }
    if (bg === 'skip') continue;
    bg = bg || [255, 255, 255];
    const fgc = parse(s.color);
    const alpha = (fgc.length > 3 ? fgc[3] : 1) * opacity;
    const fg = mix(fgc.slice(0, 3), bg, alpha);
    const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const classes = el.className && typeof el.className === 'string'
      ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
    if (ratio < need) out.push({el: el.tagName.toLowerCase() + classes, ratio: Math.round(ratio * 100) / 100,
                                text: el.textContent.trim().slice(0, 30)});
  }
  return out.slice(0, 10);
}
"""
