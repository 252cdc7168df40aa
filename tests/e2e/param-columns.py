#!/usr/bin/python3
"""End-to-end test of the gradient table's extra columns: load
task1-bounce-once, add the elasticity and ground.angle columns from the
"Add parameter" menu (over AT-SPI, as a user would), and check that
  - the exact and impulse cells (adjoint, or "no adjoint") are the values of
    `contactlab gradients task1-bounce-once --param elasticity --param
    ground.angle --format csv`,
  - the exported gradients.csv (the one CSV writer) has those rows exactly
    as the CLI prints them, FD rows included,
  - a rerun keeps the columns, and unchecking one removes it.

Run inside one dbus-run-session under an X server (see param-columns.sh).
TAP on $TAP_FD; screenshots to $E2E_SCREENSHOTS when set.
"""
import csv
import io
import math
import os
import re
import subprocess
import tempfile
import traceback

import pyatspi
from gi.repository import GLib

from e2e_tap import Tap, activate, await_app, named, screenshot, wait_for

APP_PATH = "/io/github/contactlab/ContactLab"
EXE = os.environ["CONTACTLAB"]
SCENE = "task1-bounce-once"
EXTRA = ["elasticity", "ground.angle"]
CHECKED = ["exact", "impulse"]

tap = Tap()
work = tempfile.mkdtemp(prefix="contactlab-param-columns-")


def table_state(app):
    grid = named(app, "Gradient table")
    m = re.match(r"runs completed: (\d+); computing: (yes|no)", (grid.description or "") if grid else "")
    return (int(m.group(1)), m.group(2) == "yes") if m else None


def idle_after(app, runs):
    """Until the table has seen more than runs completed runs and none is under way."""
    state = wait_for(lambda: (lambda s: s if s and s[0] > runs and not s[1] else None)(table_state(app)), 180)
    return state[0] if state else None


CELL = re.compile(r"^(\S+) (\S+) = (.+)$")


def gui_cells(app):
    """The table's cells by (backend, parameter): their accessible names carry
    the full value; {} while the table is being rebuilt under the walk."""
    cells = {}
    try:
        for node in pyatspi.findAllDescendants(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and
                                               CELL.match(n.name or "")):
            backend, parameter, value = CELL.match(node.name).groups()
            cells[(backend, parameter)] = value
    except GLib.Error:
        return {}
    return cells


def cli_csv():
    args = [EXE, "gradients", SCENE, "--format", "csv"] + [a for p in EXTRA for a in ("--param", p)]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def csv_rows(text):
    return {(r["backend"], r["parameter"]): r["value"] for r in csv.DictReader(io.StringIO(text))}


def cell_matches(shown, printed):
    """A window cell against the CLI's CSV value: the same number (the cell
    carries 12 significant digits), or "no adjoint" where the CLI prints nan."""
    if shown == "no adjoint":
        return printed == "nan"
    try:
        a, b = float(shown.replace("−", "-")), float(printed)
    except ValueError:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-11 * max(1.0, abs(b))


def actions(node):
    try:
        return node.queryAction().nActions
    except NotImplementedError:
        return 0


def clickable(app, name):
    """The node named name, or a child of it, that has an action (a menu
    button's toggle button inside it)."""
    for node in pyatspi.findAllDescendants(app, lambda n: n.name == name):
        for candidate in [node] + [node.getChildAtIndex(i) for i in range(node.childCount)]:
            if candidate is not None and actions(candidate) > 0:
                return candidate
    return None


def menu_open(button):
    state = button.getState()
    return state.contains(pyatspi.STATE_CHECKED) or state.contains(pyatspi.STATE_PRESSED)


def toggle(app, parameter):
    """Opens the Add parameter menu (unless open) and clicks parameter's
    toggle; False when either is not found."""
    button = clickable(app, "Add parameter")
    if button is None:
        return False
    if not menu_open(button):
        button.queryAction().doAction(0)
    check = wait_for(lambda: named(app, parameter, (pyatspi.ROLE_TOGGLE_BUTTON, pyatspi.ROLE_PUSH_BUTTON)), 30)
    if check is None:
        return False
    check.queryAction().doAction(0)
    return True


def export_csv(folder):
    """Export All (it waits for every computation), then its gradients.csv."""
    activate("export-all", GLib.Variant("s", folder))
    if not wait_for(lambda: os.path.exists(os.path.join(folder, "manifest.json")), 300):
        return None
    with open(os.path.join(folder, "gradients.csv")) as f:
        return f.read()


def main():
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)
    log = open(os.path.join(work, "app.log"), "w")
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        app, why = await_app(proc.pid, atspi=True)
        tap.check(app is not None, "the app starts", why)
        if app is None:
            return tap.plan()
        windows = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^ContactLab$"],
                                 capture_output=True, text=True).stdout.split()
        if windows:
            subprocess.run(["xdotool", "windowmove", windows[0], "0", "0", "windowsize", windows[0], "1280", "800"])
        runs = (table_state(app) or (0, False))[0]
        activate("load-preset", GLib.Variant("s", SCENE), APP_PATH)
        runs = idle_after(app, runs) or runs
        tap.check(("exact", "ball.velocity.y") in gui_cells(app), "the table shows %s's default columns" % SCENE)
        tap.check(not any(p in EXTRA for _, p in gui_cells(app)), "no extra column before one is added")

        expected = csv_rows(cli_csv())
        for parameter in EXTRA:
            ok = toggle(app, parameter)
            tap.check(ok, "the Add parameter menu offers %s" % parameter)
            if not ok:
                return tap.plan()
            # the rerun with the new column lands: its cells appear
            shown = wait_for(lambda: all((b, parameter) in gui_cells(app) for b in CHECKED) and
                             not (table_state(app) or (0, True))[1], 180)
            tap.check(bool(shown), "%s's column appears after its rerun" % parameter)
        screenshot("param-columns")
        cells = gui_cells(app)
        for b in CHECKED:
            for p in EXTRA:
                shown, printed = cells.get((b, p)), expected.get((b, p))
                tap.check(shown is not None and printed is not None and cell_matches(shown, printed),
                          "%s %s: the window shows the CLI's value" % (b, p),
                          "window %r, CLI %r" % (shown, printed))
        for p in EXTRA:
            header = pyatspi.findDescendant(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and n.name == p and
                                            n.parent is not None and n.parent.name == "Gradient table")
            tap.check(header is not None, "the table has a %s column header" % p)
        # the default columns still agree with the CLI beside the new ones
        defaults = [(b, p) for (b, p) in cells if b in CHECKED and p not in EXTRA]
        bad = ["%s %s: window %r, CLI %r" % (b, p, cells[(b, p)], expected.get((b, p))) for b, p in defaults
               if not cell_matches(cells[(b, p)], expected.get((b, p), ""))]
        tap.check(defaults and not bad, "the default columns beside them are the CLI's", "\n".join(bad))

        exported = export_csv(os.path.join(work, "export-1"))
        tap.check(exported is not None, "Export All writes gradients.csv")
        rows = csv_rows(exported or "backend,parameter,value\n")
        wanted = [k for k in expected if k[0] in CHECKED]
        bad = ["%s %s: export %r, CLI %r" % (k + (rows.get(k), expected[k])) for k in wanted if rows.get(k) != expected[k]]
        tap.check(not bad and any(k[1] == "fd:elasticity" for k in wanted),
                  "the exported gradients.csv has the CLI's exact and impulse rows, FD included, as printed",
                  "\n".join(bad))
        shared = [k for k in expected if k in rows]
        bad = ["%s %s: export %r, CLI %r" % (k + (rows[k], expected[k])) for k in shared if rows[k] != expected[k]]
        tap.check(len(shared) == len(rows) and not bad, "every exported row is the CLI's row", "\n".join(bad))

        before = (table_state(app) or (0, False))[0]
        activate("run")
        tap.check(idle_after(app, before) is not None and all((b, p) in gui_cells(app) for b in CHECKED for p in EXTRA),
                  "a rerun keeps the added columns")
        before = (table_state(app) or (0, False))[0]
        toggle(app, "elasticity")
        gone = wait_for(lambda: not any(p == "elasticity" for _, p in gui_cells(app)) and
                        ("exact", "ground.angle") in gui_cells(app) and not (table_state(app) or (0, True))[1], 180)
        tap.check(bool(gone), "unchecking elasticity removes its column and keeps ground.angle")
    except Exception:
        tap.check(False, "the test ran to its end", traceback.format_exc())
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    return tap.plan()


if __name__ == "__main__":
    raise SystemExit(main())
