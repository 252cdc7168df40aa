#!/usr/bin/python3
"""End-to-end test of the one document: every way of changing the scene
reaches every view and the sidebar, and a lesson step shows the numbers of
the views beside it whatever the user had set before.

Entry points: the inspector, a canvas drag, a heatmap click, undo, redo,
opening a file, a preset and a lesson step. Before each, the heatmap,
learning and convergence views hold fresh results; after it the test saves
the scene (win.save-as: the document's truth) and checks that
  - the sidebar's fields show the saved values,
  - the gradient table equals `contactlab gradients SAVED`,
  - each study is marked stale on screen unless the edit left it valid
    (a heatmap stays valid when only its two swept parameters moved),
  - Export All's manifest says the same.

Run inside one dbus-run-session under an X server (see edits.sh).
TAP on $TAP_FD; screenshots to $E2E_SCREENSHOTS when set.
"""
import csv
import decimal
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import pyatspi
from gi.repository import Gio, GLib

from e2e_tap import Tap, await_app, find, named, screenshot, wait_for

APP_ID = "io.github.contactlab.ContactLab"
APP_PATH = "/io/github/contactlab/ContactLab"
WINDOW = APP_PATH + "/window/1"
EXE = os.environ["CONTACTLAB"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")

tap = Tap()
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
work = tempfile.mkdtemp(prefix="contactlab-edits-")


def call(path, method, args):
    return bus.call_sync(APP_ID, path, "org.gtk.Actions", method, args, None, Gio.DBusCallFlags.NONE, 30000,
                         None).unpack()


def activate(action, parameter=None, path=WINDOW):
    call(path, "Activate", GLib.Variant("(sava{sv})", (action, [parameter] if parameter is not None else [], {})))


def options(**values):
    """An a{sv} of view options; Python ints become int32, floats doubles, strings strings."""
    kinds = {int: "i", float: "d", str: "s", bool: "b"}
    return GLib.Variant("a{sv}", {k.replace("_", "-"): GLib.Variant(kinds[type(v)], v) for k, v in values.items()})


def lesson_state():
    return json.loads(call(WINDOW, "Describe", GLib.Variant("(s)", ("lesson-state",)))[0][2][0])


def visible(node):
    return node is not None and node.getState().contains(pyatspi.STATE_VISIBLE)


# ------------------------------------------------------------ what is shown

CELL = re.compile(r"^(\S+) (\S+) = (\S+)$")


def table_state(app):
    grid = named(app, "Gradient table")
    m = re.match(r"runs completed: (\d+); computing: (yes|no)", (grid.description or "") if grid else "")
    return (int(m.group(1)), m.group(2) == "yes") if m else None


def gui_numbers(app):
    numbers = {}
    for node in pyatspi.findAllDescendants(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and
                                           CELL.match(n.name or "")):
        backend, parameter, value = CELL.match(node.name).groups()
        numbers[(backend, parameter)] = float(value.replace("−", "-"))
    return numbers


def cli_numbers(scene, backends):
    chosen = [a for b in sorted(backends) for a in ("--backend", b)]
    out = subprocess.run([EXE, "gradients", scene, "--format", "csv", *chosen], check=True, capture_output=True,
                         text=True).stdout
    return {(r["backend"], r["parameter"]): float(r["value"]) for r in csv.DictReader(io.StringIO(out))
            if r["parameter"] != "status" and not r["parameter"].startswith("fd:")}


def same(a, b, rel=1e-10):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def differences(gui, cli):
    problems = ["%s %s: window %r, CLI %r" % (k + (gui.get(k), v)) for k, v in cli.items()
                if k not in gui or not same(gui[k], v)]
    return problems + ["not in the CLI: %s %s" % k for k in gui if k not in cli]


def field_text(app, name):
    node = named(app, name, pyatspi.ROLE_TEXT)
    if node is None:
        return None
    text = node.queryText()
    return text.getText(0, text.characterCount).replace("−", "-").strip()


def shows(text, value):
    """Whether a field's text is value rounded to the digits it shows."""
    try:
        shown = decimal.Decimal(text)
    except (TypeError, decimal.InvalidOperation):
        return False
    half_digit = decimal.Decimal(5).scaleb(shown.as_tuple().exponent - 1)
    return abs(shown - decimal.Decimal(repr(float(value)))) <= half_digit * (1 + decimal.Decimal("1e-9"))


class Probe:
    """The scene as the document holds it, by saving it."""

    def __init__(self):
        self.count = 0

    def __call__(self):
        self.count += 1
        path = os.path.join(work, "probe-%02d.json" % self.count)
        activate("save-as", GLib.Variant("s", path))
        if not wait_for(lambda: os.path.exists(path), 30):
            return None, None
        with open(path) as f:
            return path, json.load(f)


probe = Probe()


def sidebar_problems(app, scene):
    """Fields of the scene page against the saved scene (to the digits they show),
    read as the edit left them: the ball stays selected unless the edit replaced
    the scene (only then is it selected again)."""
    ball = scene["balls"][0]
    expected = {"Elasticity": scene.get("elasticity", 1.0), "Friction": scene.get("friction", 0.0),
                "Ball %s position x" % ball["id"]: ball["position"][0],
                "Ball %s position y" % ball["id"]: ball["position"][1],
                "Ball %s velocity x" % ball["id"]: ball["velocity"][0]}
    if named(app, "Ball %s position x" % ball["id"], pyatspi.ROLE_TEXT) is None:
        activate("select-object", GLib.Variant("s", ball["id"]))
    problems = []
    for name, value in expected.items():
        if not wait_for(lambda: shows(field_text(app, name), value), 5):
            problems.append("%s: sidebar %r, document %r" % (name, field_text(app, name), value))
    return problems


# ------------------------------------------------------------ the studies

def export_all(folder):
    """Export All into folder (it waits for every computation), then its manifest's files."""
    activate("export-all", GLib.Variant("s", folder))
    path = os.path.join(folder, "manifest.json")
    if not wait_for(lambda: os.path.exists(path), 300):
        return None
    with open(path) as f:
        return json.load(f)["files"]


def compute_studies(folder):
    """Fresh heatmap (elasticity × friction), learning and convergence results."""
    activate("heatmap-compute", options(x="elasticity", x_min=0.5, x_max=1.0, y="friction", y_min=0.0, y_max=0.5,
                                        resolution=8, quantity="loss"))
    activate("learning-run", options(iterations=20, optimizer="gd", learning_rate=0.01, gradient="adjoint"))
    activate("convergence-compute", GLib.Variant("a{sv}", {"parameter": GLib.Variant("s", "ball.velocity.x"),
                                                           "steps": GLib.Variant("ai", [36, 72, 144])}))
    files = export_all(folder)
    kinds = study_stale(files)
    return files is not None and sorted(kinds) == ["convergence", "heatmap", "learning", "run"] and \
        not any(kinds.values())


def study_stale(files):
    """Each exported result's stale flag, by kind."""
    kinds = {"heatmap.csv": "heatmap", "learning-curves.csv": "learning", "convergence.csv": "convergence",
             "gradients.csv": "run"}
    return {kinds[f["file"]]: f.get("stale", False) for f in files or [] if f["file"] in kinds}


def label_text(app, pattern):
    node = find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and re.search(pattern, n.name or ""))
    return node.name if node else ""


def stale_marks(app):
    """Which studies the window shows as stale (hidden labels are not in the tree)."""
    return {"heatmap": "changed since" in label_text(app, r"cells × \d+ backends in"),
            "learning": bool(label_text(app, r"^The scene changed since this run: its curves are stale")),
            "convergence": bool(label_text(app, r"^The scene changed since this run: the curves are stale"))}


def without_swept(scene):
    rest = dict(scene)
    rest.pop("elasticity", None)
    rest.pop("friction", None)
    rest.pop("name", None)
    return rest


# ------------------------------------------------------------ entry points

def canvas_ball(app, ball):
    """The screen point of a ball: the centroid of what changes when it is selected.
    Each picture is taken once the canvas has drawn the selection (polled, so a
    busy machine only makes it slower)."""
    canvas = named(app, "Scene canvas")
    if canvas is None:
        return None
    box = extents(canvas)
    subprocess.run(["xdotool", "mousemove", "0", "0"], check=False)

    def capture(name):
        path = os.path.join(work, "canvas-%s.ppm" % name)
        subprocess.run(["import", "-window", "root", "-crop", "%dx%d+%d+%d" % (box.width, box.height, box.x, box.y),
                        "+repage", "-depth", "8", path], check=True)
        return read_ppm(path)

    def changed(a, b):
        w, h, pa = a
        pb = b[2]
        return [(x, y) for y in range(h) for x in range(w)
                if sum(abs(pa[3 * (y * w + x) + c] - pb[3 * (y * w + x) + c]) for c in range(3)) > 60]

    def settled(name, differs_from=None):
        """Two equal pictures in a row (and, if asked, unlike differs_from), within 60 s."""
        deadline = time.monotonic() + 60
        last = capture(name)
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = capture(name)
            if now == last and (differs_from is None or changed(differs_from, now)):
                return now
            last = now
        return last

    activate("select-object", GLib.Variant("s", ""))
    unselected = settled("none")
    activate("select-object", GLib.Variant("s", ball))
    selected = settled(ball, differs_from=unselected)
    activate("select-object", GLib.Variant("s", ""))
    points = changed(unselected, selected)
    if not points:
        return None
    return (box.x + sum(x for x, _ in points) / len(points), box.y + sum(y for _, y in points) / len(points))


class Box:
    def __init__(self, x, y, width, height):
        self.x, self.y, self.width, self.height = x, y, width, height


def extents(node):
    """Screen extents: GTK reports window coordinates; the window is at the screen's origin."""
    e = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
    return Box(e.x, e.y, e.width, e.height)


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(maxsplit=4)
    return int(parts[1]), int(parts[2]), parts[4]


def drag(start, end):
    x0, y0 = start
    x1, y1 = end
    subprocess.run(["xdotool", "mousemove", "%d" % x0, "%d" % y0, "mousedown", "1"], check=True)
    for k in range(1, 11):
        subprocess.run(["xdotool", "mousemove", "%d" % (x0 + (x1 - x0) * k / 10), "%d" % (y0 + (y1 - y0) * k / 10)],
                       check=True)
        time.sleep(0.03)
    subprocess.run(["xdotool", "mouseup", "1"], check=True)


def select_tab(app, name):
    tab = find(app, lambda n: n.getRole() == pyatspi.ROLE_PAGE_TAB and n.name == name)
    if tab is not None:
        tab.parent.querySelection().selectChild(tab.getIndexInParent())
        time.sleep(0.5)


def heatmap_click(app):
    """Clicks a cell of the shown heatmap: a point where the hover readout names one."""
    select_tab(app, "Heatmaps")
    plot = named(app, "Heatmap figure")
    if plot is None:
        return "the heatmap figure is not found"
    box = extents(plot)

    def readout():
        return find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and
                    re.match(r"elasticity = \S+, friction = \S+ · ", n.name or ""))
    for fx, fy in ((0.3, 0.3), (0.12, 0.3), (0.5, 0.3), (0.3, 0.75), (0.12, 0.75)):
        subprocess.run(["xdotool", "mousemove", "%d" % (box.x + fx * box.width), "%d" % (box.y + fy * box.height)],
                       check=True)
        if wait_for(readout, 2):
            subprocess.run(["xdotool", "click", "1"], check=True)
            subprocess.run(["xdotool", "mousemove", "0", "0"], check=False)
            return None
    return "no point of the heatmap figure shows a cell in the readout"


READOUT_HINT = "Hover a panel to read the cell in every panel; click to move the scene there (Ctrl+Z undoes it)."


def heatmap_key_and_readout(app):
    """The key under the map explains its encodings; a new map clears the last hover's readout."""
    select_tab(app, "Heatmaps")
    sweep = dict(x="elasticity", x_min=0.5, x_max=1.0, y="friction", y_min=0.0, y_max=0.5, resolution=6)
    activate("heatmap-compute", options(quantity="sign-agreement", **sweep))
    key = wait_for(lambda: label_text(app, r"^Colour: 1 when both"), 60) or ""
    tap.check("0.5 when one of the two has the wrong sign" in key and "☆" in key,
              "the sign-agreement key says what 0.5 means and what the star marks", key)
    activate("heatmap-compute", options(quantity="loss", **sweep))
    key = wait_for(lambda: label_text(app, r"^Colour: the loss"), 60) or ""
    tap.check("Arrows: −∇L" in key and "☆" in key, "the loss key explains the arrows and the star", key)
    wait_for(lambda: label_text(app, r"^6 × 6 cells × \d+ backends in"), 120)
    plot = named(app, "Heatmap figure")
    box = extents(plot) if plot is not None else None

    def readout():
        return label_text(app, r"^elasticity = \S+, friction = \S+ · ")
    shown = None
    for fx, fy in ((0.3, 0.3), (0.12, 0.3), (0.5, 0.3), (0.3, 0.75)):
        if box is None:
            break
        subprocess.run(["xdotool", "mousemove", "%d" % (box.x + fx * box.width), "%d" % (box.y + fy * box.height)],
                       check=True)
        shown = wait_for(readout, 2)
        if shown:
            break
    activate("heatmap-compute", options(quantity="loss", **dict(sweep, resolution=5)))
    cleared = wait_for(lambda: label_text(app, r"^5 × 5 cells × \d+ backends in") and
                       named(app, READOUT_HINT, pyatspi.ROLE_LABEL), 120)
    subprocess.run(["xdotool", "mousemove", "0", "0"], check=False)
    tap.check(shown and cleared, "a new map clears the hover readout (it showed: %s)" % shown,
              "readout now: %s" % readout())


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
        activate("load-preset", GLib.Variant("s", "task2-ground-wall"), APP_PATH)
        wait_for(lambda: table_state(app) and not table_state(app)[1], 120)
        _, previous = probe()
        opened = os.path.join(work, "opened.json")
        with open(os.path.join(DATA, "presets", "task2-ground-wall.json")) as f:
            scene = json.load(f)
        scene.update(name="Opened scene", elasticity=0.7)
        scene["balls"][0]["velocity"] = [4.5, -5.5]
        with open(opened, "w") as f:
            json.dump(scene, f)

        def inspector():
            entry = wait_for(lambda: named(app, "Ball ball velocity x", pyatspi.ROLE_TEXT), 10)
            entry.queryEditableText().setTextContents("5.5")

        def canvas():
            at = canvas_ball(app, "ball")
            if at is None:
                return "the ball is not found on the canvas"
            activate("select-object", GLib.Variant("s", "ball"))
            drag(at, (at[0] + 40, at[1] - 25))

        edits = [
            ("the inspector (ball velocity x = 5.5)", inspector, lambda before, after:
                after["balls"][0]["velocity"][0] == 5.5),
            ("a canvas drag of the ball", canvas, lambda before, after:
                after["balls"][0]["position"] != before["balls"][0]["position"]),
            ("a heatmap click", lambda: heatmap_click(app), lambda before, after:
                (after.get("elasticity"), after.get("friction")) != (before.get("elasticity"), before.get("friction"))
                and without_swept(after) == without_swept(before)),
            ("undo", lambda: activate("undo"), None),
            ("redo", lambda: activate("redo"), None),
            ("opening a file", lambda: activate("open-file", GLib.Variant("s", opened), APP_PATH),
                lambda before, after: after["elasticity"] == 0.7 and after["balls"][0]["velocity"] == [4.5, -5.5]),
            ("a preset", lambda: activate("load-preset", GLib.Variant("s", "task2-ground-wall-friction"), APP_PATH),
                lambda before, after: after.get("friction", 0) > 0),
            ("a lesson step", lambda: activate("lesson-open", GLib.Variant("s", "two-answers")),
                lambda before, after: after["name"] != before["name"] or after != before),
        ]
        history = [previous]
        for name, edit, expected in edits:
            fresh = compute_studies(os.path.join(work, "fresh-%02d" % probe.count))
            runs = table_state(app)[0]
            activate("select-object", GLib.Variant("s", "ball"))
            problem = edit()
            if name == "a lesson step":
                wait_for(lambda: lesson_state()["step"] == 1 and not lesson_state()["computing"], 120)
            state = wait_for(lambda: (lambda s: s if s and s[0] > runs and not s[1] else None)(table_state(app)), 120)
            path, after = probe()
            before = history[-1]
            if name in ("undo", "redo"):
                # undo returns to the scene before the last edit, redo to the one after it
                ok_edit = after is not None and without_name(after) == without_name(history[-2])
            else:
                ok_edit = after is not None and not problem and expected(before, after)
            tap.check(fresh and ok_edit, "%s changes the document's scene" % name,
                      problem or ("the studies were not all computed before it" if not fresh else
                                  "before: %s\nafter: %s" % (json.dumps(before), json.dumps(after))))
            if after is None:
                continue
            problems = sidebar_problems(app, after)
            tap.check(not problems, "%s: the sidebar shows the new scene" % name, "\n".join(problems))
            gui = gui_numbers(app)
            cli = cli_numbers(path, {b for b, _ in gui})
            if name == "a lesson step":
                # the step's gradients view shows the columns it lists, no others
                with open(os.path.join(DATA, "lessons", "two-answers.json")) as f:
                    columns = set(json.load(f)["steps"][0]["view"]["parameters"]) | {"loss"}
                cli = {k: v for k, v in cli.items() if k[1] in columns}
            problems = differences(gui, cli) if state else ["no rerun"]
            tap.check(not problems, "%s: the gradient table is `contactlab gradients` of it" % name,
                      "\n".join(problems))
            still_valid = {"heatmap": without_swept(after) == without_swept(before), "learning": after == before,
                           "convergence": after == before}
            marks = stale_marks(app)
            wrong = ["%s shown %s" % (k, "stale" if marks[k] else "current") for k in marks
                     if marks[k] == still_valid[k]]
            tap.check(not wrong, "%s: every study is marked stale unless it still holds (%s)" %
                      (name, ", ".join("%s %s" % (k, "stale" if marks[k] else "current") for k in marks)),
                      "\n".join(wrong))
            listed = study_stale(export_all(os.path.join(work, "export-%02d" % probe.count)))
            wrong = ["%s: manifest %s" % (k, v) for k, v in (listed or {}).items()
                     if v != (not still_valid[k] if k != "run" else False)]
            tap.check(listed and not wrong, "%s: Export All's manifest marks the same results stale" % name,
                      "listed: %s\n%s" % (listed, "\n".join(wrong)))
            screenshot("edit-%02d" % probe.count)
            history.append(after)
        activate("lesson-leave")
        lesson_beside_views(app)
        heatmap_key_and_readout(app)
    except Exception:
        tap.check(False, "the test runs to its end", traceback.format_exc())
    finally:
        try:
            activate("quit", path=APP_PATH)
        except GLib.Error:
            pass
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = None
        log.close()
        with open(os.path.join(work, "app.log")) as f:
            app_log = f.readlines()
        tap.check(rc == 0, "the app quit cleanly", "exit %s; its log ends:\n%s" % (rc, "".join(app_log[-30:])))
        criticals = [line for line in app_log if "CRITICAL" in line or "WARNING" in line]
        tap.check(not criticals, "no critical messages or warnings in the app's log", "".join(criticals[:5]))
        shutil.rmtree(work, ignore_errors=True)
    return tap.plan()


def cli_cites(lesson, step):
    out = subprocess.run([EXE, "lesson", "show", lesson, "--step", str(step), "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def lesson_beside_views(app):
    """Lesson "two-answers" after the user set every view otherwise: each
    step's cited numbers are the numbers of the view beside it."""
    lesson = "two-answers"
    with open(os.path.join(DATA, "lessons", lesson + ".json")) as f:
        steps = json.load(f)["steps"]
    # settings a step must override: Adam on a smoothed gradient, another heatmap
    activate("learning-run", options(iterations=7, optimizer="adam", learning_rate=0.5, gradient="zobg", sigma=0.2,
                                     samples=4))
    activate("heatmap-compute", options(x="ball.velocity.y", x_min=-1.0, x_max=1.0, y="ball.velocity.x", y_min=0.0,
                                        y_max=1.0, resolution=5, quantity="grad-x"))
    export_all(os.path.join(work, "before-lesson"))
    activate("lesson-open", GLib.Variant("s", lesson))
    for k, step in enumerate(steps, 1):
        if k > 1:
            activate("lesson-next")
        s = wait_for(lambda: (lambda s: s if s["step"] == k and not s["computing"] and s["text"] else None)(
            lesson_state()), 300)
        files = export_all(os.path.join(work, "lesson-step-%d" % k))
        folder = os.path.join(work, "lesson-step-%d" % k)
        cites = cli_cites(lesson, k)
        kind = step["view"]["type"]
        wrong, compared = [], 0
        if kind == "gradients":
            gui = gui_numbers(app)
            for c in cites:
                _, backend, parameter, _ = (c["placeholder"].split() + [""])[:4]
                compared += 1
                if (backend, parameter) not in gui or not same(gui[(backend, parameter)], float(c["value"])):
                    wrong.append("%s: view %r, lesson %s" % (c["placeholder"], gui.get((backend, parameter)),
                                                             c["value"]))
        elif kind == "heatmap":
            v = step["view"]
            chosen = [a for b in step["backends"] for a in ("--backend", b)]
            cli = os.path.join(work, "lesson-heatmap-cli.csv")
            subprocess.run([EXE, "heatmap", step["scene"], "--x", "%s:%s:%s:%s" % (v["x"]["parameter"], v["x"]["min"],
                            v["x"]["max"], v["x"]["count"]), "--y", "%s:%s:%s:%s" % (v["y"]["parameter"], v["y"]["min"],
                            v["y"]["max"], v["y"]["count"]), "--quantity", v["quantity"], *chosen, "--csv", cli],
                           check=True, capture_output=True)
            compared = len(read_csv(cli))
            shown = os.path.join(folder, "heatmap.csv")
            # the same rows; backends in registry order in the view, in --backend order in the CLI
            rows = lambda path: sorted(tuple(r.values()) for r in read_csv(path))  # noqa: E731
            if not os.path.exists(shown) or rows(shown) != rows(cli):
                missing = sorted(set(rows(cli)) - set(rows(shown) if os.path.exists(shown) else []))
                wrong.append("the view's heatmap.csv is not `contactlab heatmap` with the step's grid; "
                             "%d rows differ, e.g. %s" % (len(missing), missing[:3]))
        elif kind == "learning":
            summary = {r["backend"]: r for r in read_csv(os.path.join(folder, "learning-summary.csv"))}
            for c in cites:
                words = c["placeholder"].split()
                backend, what = words[1], words[2]
                row = summary.get(backend)
                compared += 1
                if row is None:
                    wrong.append("%s: the view has no %s" % (c["placeholder"], backend))
                elif what == "final" and not same(float(row["final_loss"]), float(c["value"]), 1e-12):
                    wrong.append("%s: view %s, lesson %s" % (c["placeholder"], row["final_loss"], c["value"]))
                elif what == "contacts" and row["contacts"] != c["text"]:
                    wrong.append("%s: view %r, lesson %r" % (c["placeholder"], row["contacts"], c["text"]))
        tap.check(s is not None and files is not None and compared and not wrong,
                  "lesson step %d (%s view): its numbers are the view's beside it (%d compared), whatever was set "
                  "before" % (k, kind, compared), "\n".join(wrong))
        screenshot("lesson-step-%d" % k)


def without_name(scene):
    rest = dict(scene)
    rest.pop("name", None)
    return rest


if __name__ == "__main__":
    sys.exit(main())
