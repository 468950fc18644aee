#!/usr/bin/env python3
"""Drives one page in headless Chromium for the dashboard tests (DashboardTests.swift).

It reads one JSON command a line on stdin and answers each with one JSON line on stdout, so that the test
decides what to assert and when (it owns the broker and the agent, and acts on them between steps):

  {"op": "open", "url": U, "insecure": B}       -> {"ok": true} (insecure: accept the test CA's certificate)
  {"op": "wait", "js": EXPR, "timeout": S}      -> {"ok": true, "value": V} once EXPR is truthy, or ok false
  {"op": "eval", "js": EXPR}                    -> {"ok": true, "value": V}
  {"op": "screenshot", "path": P}               -> {"ok": true}
  {"op": "errors"}                              -> {"ok": true, "value": [page errors and console errors]}
  {"op": "close"}                               -> {"ok": true}, then exits

EXPR is a JavaScript expression evaluated in the page. Waits poll the page's state (page.wait_for_function),
never a fixed sleep. The browser is Debian's chromium-headless-shell (Playwright's own download is not used).
"""
import json
import os
import sys

from playwright.sync_api import sync_playwright

BROWSER = os.environ.get("DASHBOARD_BROWSER", "/usr/lib/chromium/chromium-headless-shell")


def answer(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def main():
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox", "--disable-gpu"])
        page = None
        for line in sys.stdin:
            if not line.strip():
                continue
            command = json.loads(line)
            op = command.get("op")
            try:
                if op == "open":
                    context = browser.new_context(viewport={"width": 1400, "height": 900},
                                                  ignore_https_errors=bool(command.get("insecure")))
                    page = context.new_page()
                    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
                    page.goto(command["url"], wait_until="load")
                    answer({"ok": True})
                elif op == "wait":
                    handle = page.wait_for_function(command["js"], timeout=command.get("timeout", 60) * 1000, polling=100)
                    answer({"ok": True, "value": handle.json_value()})
                elif op == "eval":
                    answer({"ok": True, "value": page.evaluate(command["js"])})
                elif op == "screenshot":
                    page.screenshot(path=command["path"])
                    answer({"ok": True})
                elif op == "errors":
                    answer({"ok": True, "value": problems})
                elif op == "close":
                    answer({"ok": True})
                    break
                else:
                    answer({"ok": False, "error": f"unknown op {op!r}"})
            except Exception as error:  # the test reports it with the step that failed
                answer({"ok": False, "error": f"{type(error).__name__}: {str(error)[:2000]}"})
        browser.close()


if __name__ == "__main__":
    main()
