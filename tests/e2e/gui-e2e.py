#!/usr/bin/python3
"""End-to-end test of the workbench window, driven the way a user's tools
would: D-Bus actions (org.gtk.Actions) to load, run and save, AT-SPI to read
the Gradients view and to type into the inspector. Compares every number the
window shows with `contactlab gradients PRESET --format csv`.

Run inside one dbus-run-session under an X server (see gui-e2e.sh).
Prints TAP; the screenshot of Task 3 goes to $E2E_OUT/screenshot-task3.png.
"""
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import pyatspi
from gi.repository import Gio, GLib

from e2e_tap import await_app, wait_for

APP_ID = "io.github.contactlab.ContactLab"
APP_PATH = "/io/github/contactlab/ContactLab"
EXE = os.environ["CONTACTLAB"]
OUT = os.environ.get("E2E_OUT", ".")
PLANNED = 22
PRESETS = ["task1-bounce-once", "task2-ground-wall", "task2-ground-wall-friction", "task3-two-balls"]

tests = []
# TAP goes to its own descriptor: the session bus's activated daemons share stdout
tap = os.fdopen(int(os.environ.get("TAP_FD", "1")), "w", buffering=1)


def check(ok, name, detail=""):
    tests.append((bool(ok), name, detail))
    print(("ok" if ok else "not ok") + " %d %s" % (len(tests), name), file=tap)
    if detail:
        for line in str(detail).splitlines()[:20]:
            print("# " + line, file=tap)


bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def activate(path, action, parameter=None):
    params = [parameter] if parameter is not None else []
    bus.call_sync(APP_ID, path, "org.gtk.Actions", "Activate",
                  GLib.Variant("(sava{sv})", (action, params, {})), None, Gio.DBusCallFlags.NONE, 10000, None)


def app_action(action, parameter=None):
    activate(APP_PATH, action, parameter)


def win_action(action, parameter=None):
    activate(APP_PATH + "/window/1", action, parameter)


def descendants(root, predicate):
    return pyatspi.findAllDescendants(root, predicate)


def find(root, predicate):
    return pyatspi.findDescendant(root, predicate)


CELL = re.compile(r"^(\S+) (\S+) = (\S+)$")


def table_state(app):
    grid = find(app, lambda n: n.name == "Gradient table")
    if grid is None:
        return None
    m = re.match(r"runs completed: (\d+); computing: (yes|no)", grid.description or "")
    return (int(m.group(1)), m.group(2) == "yes") if m else None


def wait_for_run(app, before):
    def done():
        state = table_state(app)
        return state if state and state[0] > before and not state[1] else None
    return wait_for(done, timeout=120)


def gui_numbers(app):
    numbers = {}
    for node in descendants(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and CELL.match(n.name or "")):
        backend, parameter, value = CELL.match(node.name).groups()
        numbers[(backend, parameter)] = float(value.replace("−", "-"))
    return numbers


def cli_numbers(scene, *extra):
    out = subprocess.run([EXE, "gradients", scene, "--format", "csv", *extra], check=True, capture_output=True,
                         text=True).stdout
    numbers = {}
    for row in csv.DictReader(io.StringIO(out)):
        if row["parameter"] == "status" or row["parameter"].startswith("fd:"):
            continue
        numbers[(row["backend"], row["parameter"])] = float(row["value"])
    return numbers


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-10 * max(1.0, abs(a), abs(b))


def compare(gui, cli):
    problems = []
    for key, value in cli.items():
        if key not in gui:
            problems.append("missing in the window: %s %s" % key)
        elif not same(gui[key], value):
            problems.append("%s %s: window %r, CLI %r" % (key + (gui[key], value)))
    for key in gui:
        if key not in cli:
            problems.append("not in the CLI: %s %s" % key)
    return problems


def title(app):
    label = find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and (n.name or "").startswith(("Task", "• Task")))
    return label.name if label else None


def ended_detail(proc, log):
    """Why an app run did not end cleanly: its status and the last lines it printed."""
    log.flush()
    with open(log.name, errors="replace") as f:
        tail = f.read().splitlines()[-25:]
    return "\n".join(["exit status %s" % proc.returncode] + tail)


def main():
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)  # the app must talk AT-SPI
    log = open(os.path.join(OUT, "gui-e2e-app.log"), "w")
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    print("1..%d" % PLANNED, file=tap)
    try:
        app, why = await_app(proc.pid, atspi=True)
        check(app is not None, "the app owns %s on the session bus and is visible over AT-SPI" % APP_ID, why)
        wait_for(lambda: table_state(app), 30)

        for preset in PRESETS:
            before = table_state(app)[0]
            app_action("load-preset", GLib.Variant("s", preset))
            win_action("run")
            state = wait_for_run(app, before)
            gui = gui_numbers(app) if state else {}
            problems = compare(gui, cli_numbers(preset)) if state else ["the run did not finish"]
            check(not problems, "%s: the Gradients view shows the CLI's %d numbers" % (preset, len(gui)),
                  "\n".join(problems))
            if preset == "task3-two-balls":
                subprocess.run(["import", "-window", "root", os.path.join(OUT, "screenshot-task3.png")], check=False)

        # edit ball1's initial x through the inspector: the numbers follow
        before_numbers = gui_numbers(app)
        before = table_state(app)[0]
        win_action("select-object", GLib.Variant("s", "ball1"))
        entry = wait_for(lambda: find(app, lambda n: n.name == "Ball ball1 position x"), 10)
        check(entry is not None, "the inspector shows ball1's position x")
        entry.queryEditableText().setTextContents("-1.8")
        state = wait_for_run(app, before)
        after = gui_numbers(app) if state else {}
        changed = [k for k in after if k in before_numbers and not same(after[k], before_numbers[k])]
        problems = compare(after, cli_numbers("task3-two-balls", "--set", "ball1.position.x=-1.8"))
        check(state and changed and not problems,
              "typing ball1.position.x = -1.8 recomputes: %d numbers changed, all equal to the CLI's" % len(changed),
              "\n".join(problems))

        # undo and redo of that edit, over D-Bus
        before = table_state(app)[0]
        win_action("undo")
        state = wait_for_run(app, before)
        problems = compare(gui_numbers(app), cli_numbers("task3-two-balls")) if state else ["no rerun"]
        check(not problems, "win.undo restores the preset's numbers", "\n".join(problems))
        before = table_state(app)[0]
        win_action("redo")
        state = wait_for_run(app, before)
        problems = compare(gui_numbers(app), after) if state else ["no rerun"]
        check(not problems, "win.redo reapplies the edit", "\n".join(problems))

        # save, then read the file back with the CLI's loader
        folder = tempfile.mkdtemp(prefix="contactlab-e2e-")
        saved = os.path.join(folder, "edited scene.json")
        win_action("save-as", GLib.Variant("s", saved))
        check(wait_for(lambda: os.path.exists(saved), 10), "win.save-as writes the file")
        with open(saved) as f:
            data = json.load(f)
        ball1 = [b for b in data["balls"] if b["id"] == "ball1"][0]
        check(ball1["position"][0] == -1.8, "the saved file has ball1 at x = -1.8", json.dumps(ball1))
        problems = compare(after, cli_numbers(saved))
        check(not problems, "the CLI's loader computes the window's numbers from the saved file", "\n".join(problems))

        # the canvas exports through its one draw function
        magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF-"}
        heads = {}
        for ext in magic:
            figure = os.path.join(folder, "canvas." + ext)
            win_action("export-canvas", GLib.Variant("s", figure))
            heads[ext] = open(figure, "rb").read(5) if os.path.exists(figure) else b""
        check(all(heads[e].startswith(m) for e, m in magic.items()), "win.export-canvas writes PNG, SVG and PDF",
              repr(heads))

        # a corrupt file: the loader's message in a dialog (every error, as the CLI lists them), and the scene stays
        corrupt = os.path.join(folder, "corrupt.json")
        with open(corrupt, "w") as f:
            f.write('{"contactlab": 1, "duration": 1, "steps": 4, "colour": 1, '
                    '"balls": [{"id": "a", "position": [0, 0], "radius": "big"}]}')
        expected = subprocess.run([EXE, "gradients", corrupt], capture_output=True, text=True).stderr.strip()
        expected = expected.split("contactlab: ", 1)[-1]
        check(len(expected.splitlines()) == 2, "the CLI lists both errors of the corrupt file", expected)
        title_before = title(app)
        app_action("open-file", GLib.Variant("s", corrupt))
        message = wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and expected in (n.name or "")),
                           10)
        check(message is not None, "opening a corrupt file shows the loader's message", expected)
        check(title(app) == title_before and gui_numbers(app) == after, "the current scene stays",
              "%r → %r" % (title_before, title(app)))
        close = find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and (n.name or "").startswith("_Close"))
        if close is not None:
            close.queryAction().doAction(0)
        time.sleep(0.3)
        try:
            app_action("quit")
        except GLib.Error:
            pass  # the app may leave the bus before it replies
        check(proc.wait(timeout=20) == 0, "app.quit ends the app cleanly (the scene was saved)",
              ended_detail(proc, log))

        # a crash: the autosaved recovery file is offered back on the next start
        recovery = os.path.join(os.environ["XDG_STATE_HOME"], "contactlab", "recovery.json")
        proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
        app, _ = await_app(proc.pid, atspi=True)
        wait_for(lambda: table_state(app), 30)
        win_action("select-object", GLib.Variant("s", "ball1"))
        entry = wait_for(lambda: find(app, lambda n: n.name == "Ball ball1 position x"), 10)
        entry.queryEditableText().setTextContents("-1.5")
        check(wait_for(lambda: os.path.exists(recovery), 10), "an unsaved edit is autosaved to " + recovery)
        proc.kill()
        proc.wait()
        proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
        app, _ = await_app(proc.pid, atspi=True)
        restore = wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and
                                        "Restore" in (n.name or "")), 20)
        check(restore is not None, "after a crash the app offers the recovered scene",
              "" if restore else "buttons: %s" % [b.name for b in descendants(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON)])
        before = (table_state(app) or (0, False))[0]
        if restore is not None:
            restore.queryAction().doAction(0)
        state = wait_for_run(app, before)
        problems = compare(gui_numbers(app), cli_numbers("task3-two-balls", "--set", "ball1.position.x=-1.5")) \
            if state else ["no run after restoring"]
        check(not problems, "the restored scene is the unsaved edit (ball1.position.x = -1.5)", "\n".join(problems))

        # closing with unsaved changes asks; Discard ends the app and drops the recovery file
        try:
            app_action("quit")
        except GLib.Error:
            pass
        discard = wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and
                                        "Discard" in (n.name or "")), 10)
        check(discard is not None and proc.poll() is None, "quitting with unsaved changes asks first")
        if discard is not None:
            discard.queryAction().doAction(0)
        check(proc.wait(timeout=20) == 0 and not os.path.exists(recovery),
              "Discard quits and removes the recovery file", ended_detail(proc, log))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    return 0 if all(ok for ok, _, _ in tests) and len(tests) == PLANNED else 1


if __name__ == "__main__":
    sys.exit(main())
