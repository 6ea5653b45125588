#!/usr/bin/env bash
# Browser tests drive the OS's Chromium (Playwright cannot download its own browser here).
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Chromium for the browser tests (apt-get install chromium)…"
  (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) \
    || echo "warning: could not install chromium; browser tests will fail" >&2
else
  echo "Chromium is missing: install it (e.g. 'sudo apt-get install chromium') to run the browser tests." >&2
fi
