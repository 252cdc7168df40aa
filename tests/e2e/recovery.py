#!/usr/bin/python3
"""Crash recovery restores the file name and the backend selection.

Run by recovery.sh with settings that outlive the process (the keyfile
backend in a private folder), as a desktop's do: a file is opened, a backend
switched off and the scene edited; the app is killed once the recovery copy
is written; on the next start Restore brings back the edit under the file's
name (unsaved) with the same backends. Prints TAP on $TAP_FD."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pyatspi
from gi.repository import Gio, GLib

from e2e_tap import APP_ID, WINDOW_PATH, Tap, await_app, wait_for

EXE = os.environ["CONTACTLAB"]
SOURCE = os.environ["CONTACTLAB_SOURCE_ROOT"]
OFF = "impulse"  # the backend switched off before the crash

tap = Tap()
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def activate(path, action, parameter=None):
    bus.call_sync(APP_ID, path, "org.gtk.Actions", "Activate",
                  GLib.Variant("(sava{sv})", (action, [parameter] if parameter is not None else [], {})), None,
                  Gio.DBusCallFlags.NONE, 10000, None)


def find(root, predicate):
    return pyatspi.findDescendant(root, predicate)


def named(app, name, role=None):
    return find(app, lambda n: n.name == name and (role is None or n.getRole() == role))


def tab(app, name):
    return find(app, lambda n: n.name == name and n.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON,
                                                                  pyatspi.ROLE_PAGE_TAB, pyatspi.ROLE_RADIO_BUTTON))


def click(node):
    """A click in the middle of node (GTK 4.8's check boxes have no AT-SPI action)."""
    xdo = lambda *args: subprocess.run(["xdotool", *map(str, args)], capture_output=True, text=True).stdout
    wid = xdo("search", "--onlyvisible", "--name", "^ContactLab$").split()[0]
    g = dict(line.split("=", 1) for line in xdo("getwindowgeometry", "--shell", wid).split() if "=" in line)
    e = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
    xdo("mousemove", int(g["X"]) + e.x + e.width // 2, int(g["Y"]) + e.y + e.height // 2, "click", 1)


def table_backends(app):
    """The backends of the gradient table's rows ("BACKEND PARAMETER = VALUE" cells)."""
    cells = pyatspi.findAllDescendants(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and " = " in (n.name or ""))
    return {c.name.split(" ", 1)[0] for c in cells}


def start(log):
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    app, why = await_app(proc.pid, atspi=True)
    return proc, app, why


def main():
    folder = tempfile.mkdtemp(prefix="contactlab-recovery-")
    scene = os.path.join(folder, "lecture scene.json")
    shutil.copy(os.path.join(SOURCE, "data", "presets", "task3-two-balls.json"), scene)
    recovery = os.path.join(os.environ["XDG_STATE_HOME"], "contactlab", "recovery.json")
    log = open(os.path.join(os.environ.get("E2E_OUT", folder), "recovery-app.log"), "w")
    proc, app, why = start(log)
    try:
        tap.check(app is not None, "the app starts", why)
        if app is None:
            return tap.plan()
        activate("/io/github/contactlab/ContactLab", "open-file", GLib.Variant("s", scene))
        tap.check(wait_for(lambda: named(app, "lecture scene.json", pyatspi.ROLE_LABEL), 20),
                  "the opened file's name is the window's subtitle")
        backends_tab = wait_for(lambda: tab(app, "Backends"), 10)
        if backends_tab is not None:
            backends_tab.queryAction().doAction(0)
        check = wait_for(lambda: named(app, "Enable " + OFF), 10)
        if check is not None:
            click(check)
        tap.check(check is not None and wait_for(lambda: OFF not in table_backends(app), 30),
                  "switching %s off takes it out of the gradient table" % OFF)
        activate(WINDOW_PATH, "select-object", GLib.Variant("s", "ball1"))
        scene_tab = tab(app, "Scene")
        if scene_tab is not None:
            scene_tab.queryAction().doAction(0)
        entry = wait_for(lambda: named(app, "Ball ball1 position x"), 10)
        if entry is not None:
            entry.queryEditableText().setTextContents("-1.5")
        tap.check(wait_for(lambda: os.path.exists(recovery), 15), "the unsaved edit is autosaved")
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        proc, app, why = start(log)
        restore = app and wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and
                                                "Restore" in (n.name or "")), 20)
        tap.check(restore, "after the crash the app offers the recovered scene", why or "")
        if restore:
            restore.queryAction().doAction(0)
        tap.check(wait_for(lambda: named(app, "lecture scene.json", pyatspi.ROLE_LABEL), 20),
                  "the restored scene has its file's name back")
        tap.check(wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and
                                        (n.name or "").startswith("• ")), 10),
                  "the restored scene is marked unsaved")
        rows = wait_for(lambda: table_backends(app) or None, 60) or set()
        tap.check(rows and OFF not in rows, "the restored session keeps %s switched off" % OFF, sorted(rows))
        # what the window holds, written out: the edit, not the file it came from
        written = os.path.join(folder, "written.json")
        activate(WINDOW_PATH, "save-as", GLib.Variant("s", written))
        x = None
        if wait_for(lambda: os.path.exists(written), 10):
            with open(written) as f:
                x = [b for b in json.load(f)["balls"] if b["id"] == "ball1"][0]["position"][0]
        tap.check(x == -1.5, "the restored scene is the edit (ball1 x = -1.5)", "ball1 x = %r" % x)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
