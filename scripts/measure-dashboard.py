#!/usr/bin/env python3
"""Measures the dashboard in headless Chromium while a simulated fleet publishes (run by
`geofence-bench dashboard`, which owns the broker and the fleet). Prints one JSON line.

It opens PAGES pages on URL, waits until the first knows VEHICLES vehicles and GEOFENCES geofences, then for
SECONDS drags and wheel-zooms the first page as a person would, and measures:
- frame times: the gaps between requestAnimationFrame callbacks on the first page while it is moved;
- the JS heap of each page (Chrome DevTools Protocol, Runtime.getHeapUsage);
- messages handled per second on each page, and how old each fix is when handled (its lag), over the first
  and the second half of the run: a backlog that grows shows as a lag that grows;
- the time from a move's message to the frame that draws it;
and leaves a screenshot of the first page.

Usage: measure-dashboard.py URL VEHICLES GEOFENCES PAGES SECONDS SCREENSHOT
"""
import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

BROWSER = os.environ.get("DASHBOARD_BROWSER", "/usr/lib/chromium/chromium-headless-shell")
FRAMES = """(() => { window.__frames = []; let last = performance.now();
  const tick = (t) => {
    window.__frames.push(t - last); last = t;
    if (window.__recording) requestAnimationFrame(tick);
  };
  window.__recording = true; requestAnimationFrame(tick); return true; })()"""


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def renderer_cpu_seconds():
    """CPU seconds (user and system) of every Chromium renderer process: the pages' own work."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--type=renderer" not in f.read():
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return total / os.sysconf("SC_CLK_TCK")


def heap(page):
    session = page.context.new_cdp_session(page)
    used = session.send("Runtime.getHeapUsage")["usedSize"]
    session.detach()
    return used / 1e6


def move_about(page, seconds):
    """Drags the map in a circle of directions and wheel-zooms in and out, for `seconds`."""
    directions = [(300, 0), (0, 200), (-300, 0), (0, -200), (200, 150), (-200, -150)]
    box = page.locator("#map").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    end = time.monotonic() + seconds
    k = 0
    while time.monotonic() < end:
        dx, dy = directions[k % len(directions)]
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + dx, cy + dy, steps=24)
        page.mouse.up()
        page.wait_for_timeout(250)
        if k % 3 == 2:
            page.mouse.move(cx, cy)
            page.mouse.wheel(0, -240 if (k // 3) % 2 == 0 else 240)
            page.wait_for_timeout(350)
        k += 1
    return k


def main(url, vehicles, geofences, pages, seconds, screenshot):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox", "--disable-gpu"])
        opened = []
        errors = []
        for _ in range(pages):
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url, wait_until="load")
            opened.append(page)
        started = time.monotonic()
        for page in opened:
            page.wait_for_function(
                f"window.dashboard && dashboard.connected && dashboard.model.vehicles.size >= {vehicles}"
                f" && dashboard.drawnGeofences().length >= {geofences}", timeout=180_000, polling=250)
        loaded = time.monotonic() - started
        first = opened[0]
        # The whole fleet in view, as an operator opens it; then settle for two seconds.
        first.evaluate("dashboard.map.setView([52.2, 5.5], 9), true")
        first.wait_for_timeout(2000)
        for page in opened:
            page.evaluate("dashboard.resetMetrics()")
        first.evaluate(FRAMES)
        cpu_before = renderer_cpu_seconds()
        moves = move_about(first, seconds / 2)
        halves = [[page.evaluate("dashboard.metrics()") for page in opened]]
        for page in opened:
            page.evaluate("dashboard.resetMetrics()")
        moves += move_about(first, seconds / 2)
        halves.append([page.evaluate("dashboard.metrics()") for page in opened])
        cpu = renderer_cpu_seconds() - cpu_before
        handled = sum(h["handled"] for half in halves for h in half)
        frames = first.evaluate("window.__recording = false, window.__frames")[1:]
        heaps = [heap(page) for page in opened]
        first.evaluate("dashboard.map.setView([52.2, 5.5], 9), true")
        first.wait_for_timeout(1500)
        first.screenshot(path=screenshot)
        shown = first.evaluate("dashboard.metrics()")
        browser.close()
    late = halves[1]
    result = {
        "vehicles": vehicles, "geofences": geofences, "pages": pages, "load_s": round(loaded, 1), "drags": moves,
        "frames": len(frames),
        "frame_ms_p50": round(percentile(frames, 0.5), 1), "frame_ms_p95": round(percentile(frames, 0.95), 1),
        "frame_ms_max": round(max(frames), 1),
        "heap_mb_max": round(max(heaps), 1),
        "handled_per_s": [round(m["perSecond"]) for m in late],
        # The renderers' CPU over the run (panning the first page included), per message a page handled.
        "renderer_cpu_ms_per_message": round(1000 * cpu / max(1, handled), 3),
        "lag_ms_p50_first_half": [h["lagMs"]["p50"] for h in halves[0]],
        "lag_ms_p50_second_half": [m["lagMs"]["p50"] for m in late],
        "move_ms_p50": round(percentile([m["moveMs"]["p50"] for m in late], 0.5), 1),
        "move_ms_p95": round(max(m["moveMs"]["p95"] for m in late), 1),
        "drawn_vehicles": shown["drawnVehicles"], "clusters": shown["clusters"], "drawn_fences": shown["drawnFences"],
        "page_errors": errors[:5],
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
