#!/usr/bin/python3
"""The window at projector sizes, and the wall tool's drag.

Run once per screen size inside its own X server and session bus (see
layout.sh): LAYOUT_SIZE=WxH, LAYOUT_THEME=light|dark. The window is made the
size of the screen; on every results tab the scene canvas ("Scene canvas"
over AT-SPI) must keep at least 35 % of the window's area, the window must
not ask for more than the screen, and tab changes must not move the divider.
A screenshot of every tab goes to $E2E_SCREENSHOTS. With LAYOUT_WALLS=1 the
wall tool is dragged right, left, up and down on an empty scene and each
new wall's solid side is read back from the saved scene file, and a wall
drawn through a ball must be refused with the reason beside the pointer.
Prints TAP on $TAP_FD."""
import json
import os
import subprocess
import sys
import tempfile
import time

import pyatspi
from gi.repository import Gio, GLib

from e2e_tap import APP_ID, WINDOW_PATH, Tap, await_app, wait_for

EXE = os.environ["CONTACTLAB"]
OUT = os.environ.get("E2E_SCREENSHOTS", "")
W, H = (int(v) for v in os.environ.get("LAYOUT_SIZE", "1280x800").split("x"))
THEME = os.environ.get("LAYOUT_THEME", "light")
TABS = ["gradients", "perturbation", "heatmaps", "learning", "convergence", "smoothing"]
MIN_SHARE = 0.35

tap = Tap()
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def win(action, parameter=None, state=False):
    method = "SetState" if state else "Activate"
    args = (action, parameter, {}) if state else (action, [parameter] if parameter is not None else [], {})
    signature = "(sva{sv})" if state else "(sava{sv})"
    bus.call_sync(APP_ID, WINDOW_PATH, "org.gtk.Actions", method, GLib.Variant(signature, args), None,
                  Gio.DBusCallFlags.NONE, 10000, None)


def app_action(action, parameter):
    bus.call_sync(APP_ID, "/io/github/contactlab/ContactLab", "org.gtk.Actions", "Activate",
                  GLib.Variant("(sava{sv})", (action, [parameter], {})), None, Gio.DBusCallFlags.NONE, 10000, None)


def xdo(*args):
    return subprocess.run(["xdotool", *map(str, args)], capture_output=True, text=True, timeout=30).stdout


def window_id():
    out = xdo("search", "--onlyvisible", "--name", "^ContactLab$").split()
    return out[0] if out else None


def geometry(wid):
    g = dict(line.split("=", 1) for line in xdo("getwindowgeometry", "--shell", wid).split() if "=" in line)
    return int(g["X"]), int(g["Y"]), int(g["WIDTH"]), int(g["HEIGHT"])


def canvas_extents(app):
    node = pyatspi.findDescendant(app, lambda n: n.name == "Scene canvas")
    if node is None:
        return None
    e = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
    return e.x, e.y, e.width, e.height


def shot(name):
    if OUT:
        os.makedirs(OUT, exist_ok=True)
        subprocess.run(["import", "-window", "root", "-crop", "%dx%d+0+0" % (W, H),
                        os.path.join(OUT, "%s-%dx%d-%s.png" % (name, W, H, THEME))], check=False)


def settle(seconds=0.8):
    time.sleep(seconds)


def layout(app, wid):
    xdo("windowmove", wid, 0, 0)
    xdo("windowsize", wid, W, H)
    ok = wait_for(lambda: geometry(wid)[2:] == (W, H), 10)
    x, y, w, h = geometry(wid)
    tap.check(ok and w <= W and h <= H, "the window fits the %dx%d screen (it is %dx%d)" % (W, H, w, h))
    settle(1.5)
    top = None
    for tab in TABS:
        win("view", GLib.Variant("s", tab), state=True)
        settle()
        e = canvas_extents(app)
        if e is None:
            tap.check(False, "%s: the Scene canvas is visible over AT-SPI" % tab)
            continue
        share = e[2] * e[3] / float(w * h)
        tap.check(share >= MIN_SHARE, "%s tab: the canvas keeps %.0f %% of the window (%dx%d at %d,%d)" %
                  (tab, 100 * share, e[2], e[3], e[0], e[1]), "at least %.0f %% needed" % (100 * MIN_SHARE))
        inside = e[0] >= 0 and e[1] >= 0 and e[0] + e[2] <= w and e[1] + e[3] <= h
        tap.check(inside, "%s tab: the canvas lies inside the window" % tab, str(e))
        if top is None:
            top = e[3]
        else:
            tap.check(abs(e[3] - top) <= 1, "%s tab: the divider stays where it was (canvas %d px high, was %d)" %
                      (tab, e[3], top))
        shot(tab)


def saved_walls(path):
    with open(path) as f:
        return json.load(f).get("walls", [])


def walls(app, wid, work):
    app_action("load-preset", GLib.Variant("s", "empty"))
    settle(1)
    e = canvas_extents(app)
    wx, wy, _, _ = geometry(wid)
    cx, cy = wx + e[0] + e[2] // 2, wy + e[1] + e[3] // 2
    win("tool", GLib.Variant("s", "wall"), state=True)
    # screen directions; the solid side is to the right of the drag, so the
    # free side (the normal) points to its left: world y points up
    drags = {"right": ((-120, 0), (120, 0), (0, 1)), "left": ((120, 0), (-120, 0), (0, -1)),
             "up": ((0, 100), (0, -100), (-1, 0)), "down": ((0, -100), (0, 100), (1, 0))}
    for n, (name, (a, b, normal)) in enumerate(drags.items()):
        xdo("mousemove", cx + a[0], cy + a[1], "mousedown", 1)
        for k in range(1, 9):  # the drag is followed step by step, not only at its end
            xdo("mousemove", cx + a[0] + (b[0] - a[0]) * k // 8, cy + a[1] + (b[1] - a[1]) * k // 8)
            time.sleep(0.03)
        xdo("mouseup", 1)
        settle(0.5)
        path = os.path.join(work, "walls-%d.json" % n)
        win("save-as", GLib.Variant("s", path))
        ok = wait_for(lambda: os.path.exists(path), 10)
        found = saved_walls(path) if ok else []
        last = found[-1] if found else None
        good = last is not None and len(found) == n + 1 and all(
            abs(last["normal"][i] - normal[i]) < 1e-9 for i in range(2))
        tap.check(good, "a wall dragged %s has its solid side to the right of the drag (normal %s)" % (name, normal),
                  "walls in the file: %s" % found)
    if os.environ.get("E2E_SCREENSHOTS"):
        shot("walls")
    # a wall through a ball: refused on release, with the reason beside the pointer
    app_action("load-preset", GLib.Variant("s", "task1-bounce-once"))
    settle(1.5)
    win("zoom-fit")
    settle(0.5)
    before = os.path.join(work, "before.json")
    win("save-as", GLib.Variant("s", before))
    wait_for(lambda: os.path.exists(before), 10)
    count = len(saved_walls(before))
    win("select-object", GLib.Variant("s", "ball"))
    ball = json.load(open(before))["balls"][0]
    # the ball sits at the canvas's fitted view: find it by its handle over AT-SPI is not possible,
    # so drag across the whole canvas through its middle row and column, which the fitted ball crosses
    e = canvas_extents(app)
    wx, wy, _, _ = geometry(wid)
    win("tool", GLib.Variant("s", "wall"), state=True)
    ys = [wy + e[1] + e[3] * k // 10 for k in range(2, 9)]
    refused = None
    for y in ys:
        xdo("mousemove", wx + e[0] + 20, y, "mousedown", 1, "mousemove", wx + e[0] + e[2] // 2, y,
            "mousemove", wx + e[0] + e[2] - 20, y, "mouseup", 1)
        settle(0.6)
        refused = pyatspi.findDescendant(app, lambda n: (n.name or "").startswith("Wall not added."))
        if refused is not None:
            break
        xdo("key", "ctrl+z")
        settle(0.3)
    after = os.path.join(work, "after.json")
    win("save-as", GLib.Variant("s", after))
    wait_for(lambda: os.path.exists(after), 10)
    tap.check(refused is not None and "ball" in refused.name,
              "a wall drawn through the ball is explained beside the pointer",
              refused.name if refused is not None else "no explanation found (ball at %s)" % ball["position"])
    tap.check(len(saved_walls(after)) == count, "the refused wall is not added, nor any other")
    if refused is not None:
        shot("wall-refused")
    win("tool", GLib.Variant("s", "select"), state=True)


def main():
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)
    work = tempfile.mkdtemp()
    log = open(os.path.join(work, "app.log"), "w")
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        app, why = await_app(proc.pid, atspi=True)
        tap.check(app is not None, "the app starts and shows over AT-SPI", why)
        wid = wait_for(window_id, 20) if app else None
        tap.check(wid is not None, "xdotool finds the window")
        if app and wid:
            layout(app, wid)
            if os.environ.get("LAYOUT_WALLS"):
                walls(app, wid, work)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    log.close()
    criticals = [l for l in open(os.path.join(work, "app.log")) if "CRITICAL" in l]
    tap.check(not criticals, "no critical messages in the app's log", "".join(criticals[:5]))
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
