#!/usr/bin/python3
"""End-to-end test of the Smoothing view on Task 1 (task1-bounce-once):
every backend but impulse and exact switched off in the Backends tab, the
Smoothing tab opened by its page tab, smoothed gradients of
ball.position.y computed (σ = 0.05, N = 100, seed 3). What the view shows
— point gradient, ZoBG, FoBG and AoBG ± SE, α, exact's ZoBG — must read
exactly as `contactlab smooth` prints the same numbers (its CSV formatted
as the view formats them: mean to 4, SE to 2 significant digits); the γ
slider's rule, recomputed from the stored samples, must give the α and
AoBG that `contactlab smooth --gamma G` computes by running again; the
exported CSV must be the CLI's byte for byte; a scene edit must mark the
estimates stale. Every wait is for the thing itself over AT-SPI, never a
fixed sleep.

Run by smoothing.sh inside one dbus-run-session under an X server. Prints
TAP on $TAP_FD; a screenshot goes to $E2E_SCREENSHOTS when set."""
import csv
import io
import os
import re
import subprocess
import tempfile
import traceback

import pyatspi
from gi.repository import GLib

from e2e_tap import Tap, activate, await_app, find, named, screenshot, wait_for

EXE = os.environ["CONTACTLAB"]
KEEP = ("exact", "impulse")
SCENE, PARAM, SIGMA, SAMPLES, SEED = "task1-bounce-once", "ball.position.y", 0.05, 100, 3
# a job on a machine busy with other work (and a sanitizer build) may take long
WAIT = float(os.environ.get("E2E_WAIT_SECONDS", "180"))
CELL = re.compile(r"^(\S+) (\S+) (point|zobg|fobg|aobg|alpha|exact-zobg): (.*)$")

tap = Tap()


def described(app, description):
    return find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and n.description == description)


def tab(app, name):
    return find(app, lambda n: n.name == name and n.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON,
                                                                  pyatspi.ROLE_PAGE_TAB, pyatspi.ROLE_RADIO_BUTTON))


def xdo(*args):
    return subprocess.run(["xdotool", *map(str, args)], capture_output=True, text=True).stdout


def toggle(node):
    """A click in the middle of node (GTK 4.8's check boxes have no AT-SPI action, nor can they take the
    focus over AT-SPI), once the mouse wheel has scrolled its list so that it is in sight."""
    wid = xdo("search", "--onlyvisible", "--name", "^ContactLab$").split()[0]
    g = dict(line.split("=", 1) for line in xdo("getwindowgeometry", "--shell", wid).split() if "=" in line)
    height = int(g["HEIGHT"])

    def extents():
        return node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)

    for _ in range(60):
        e = extents()
        if 80 <= e.y and e.y + e.height <= height - 10:
            break
        xdo("mousemove", int(g["X"]) + e.x + e.width // 2, int(g["Y"]) + height // 2, "click",
            5 if e.y + e.height > height - 10 else 4)
        wait_for(lambda: extents().y != e.y, 5)
    e = extents()
    xdo("mousemove", int(g["X"]) + e.x + e.width // 2, int(g["Y"]) + e.y + e.height // 2, "click", 1)


def checked(node):
    return node.getState().contains(pyatspi.STATE_CHECKED)


def status(app):
    node = described(app, "Smoothing status")
    return node.name if node is not None else ""


def rule(app):
    node = described(app, "Alpha rule")
    return node.name if node is not None else ""


def cells(app):
    """{(backend, parameter, estimator): text} of the Smoothing table."""
    found = pyatspi.findAllDescendants(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and CELL.match(n.name or ""))
    return {m.group(1, 2, 3): m.group(4) for m in (CELL.match(n.name) for n in found)}


def cli_rows(*extra):
    args = [EXE, "smooth", SCENE, "--param", PARAM, "--sigma", str(SIGMA), "--samples", str(SAMPLES), "--seed",
            str(SEED), "--format", "csv", *extra]
    for b in KEEP:
        args += ["--backend", b]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return out, {(r["backend"], r["estimator"], r["parameter"]): r for r in csv.DictReader(io.StringIO(out))}


def shown(row, with_se=True):
    """A CSV row as the view prints it (cl_smooth_format_estimate)."""
    if not row["mean"]:
        return "n/a"
    text = "%.4g" % float(row["mean"])
    return text + (" ± %.2g" % float(row["stderr"]) if with_se and row["stderr"] else "")


def main():
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)  # the app must talk AT-SPI
    work = tempfile.mkdtemp(prefix="contactlab-smoothing-")
    log = open(os.path.join(os.environ.get("E2E_OUT", work), "smoothing-app.log"), "w")
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        app, why = await_app(proc.pid, atspi=True)
        tap.check(app is not None, "the app starts and shows over AT-SPI", why)
        if app is None:
            return
        activate("load-preset", GLib.Variant("s", SCENE), path="/io/github/contactlab/ContactLab")
        tap.check(wait_for(lambda: named(app, "Task 1: bounce once", pyatspi.ROLE_LABEL), WAIT),
                  "Task 1 is loaded")

        # ---- only impulse and exact: the others switched off in the Backends tab
        backends_tab = wait_for(lambda: tab(app, "Backends"), 30)
        if backends_tab is not None:
            backends_tab.queryAction().doAction(0)
        ids = subprocess.run([EXE, "backends"], check=True, capture_output=True, text=True).stdout.split("\n")
        ids = [line.split()[0] for line in ids if re.match(r"^[a-z]", line)]
        missed = []
        for b in ids:
            check = wait_for(lambda: named(app, "Enable " + b), 30)
            if check is None:
                missed.append(b)
            elif checked(check) != (b in KEEP):
                toggle(check)
                if not wait_for(lambda: checked(check) == (b in KEEP), 30):
                    missed.append(b)
        tap.check(not missed and len(ids) > 2, "every backend but impulse and exact is switched off", missed)

        # ---- the Smoothing tab, computed over D-Bus with the view's own options
        smoothing_tab = wait_for(lambda: tab(app, "Smoothing"), 30)
        tap.check(smoothing_tab is not None, "the results area has a Smoothing tab")
        if smoothing_tab is None:
            return
        smoothing_tab.queryAction().doAction(0)
        tap.check(wait_for(lambda: described(app, "Smoothing status"), 30) is not None, "the Smoothing tab opens")
        activate("smoothing-compute", GLib.Variant("a{sv}", {
            "parameters": GLib.Variant("as", [PARAM]), "sigma": GLib.Variant("d", SIGMA),
            "samples": GLib.Variant("i", SAMPLES), "seed": GLib.Variant("i", SEED)}))
        done = wait_for(lambda: re.match(r"^%d samples × 2 backends in .* seed %d" % (SAMPLES, SEED), status(app)),
                        WAIT)
        tap.check(done, "the view finishes: %d samples × 2 backends" % SAMPLES, "status: %r" % status(app))
        screenshot("smoothing")

        # ---- the shown numbers are contactlab smooth's
        out, rows = cli_rows()
        gui = wait_for(lambda: cells(app) if len(cells(app)) == 12 else None, 30) or cells(app)
        wrong = []
        for b in KEEP:
            want = {
                "point": shown(rows[(b, "point", PARAM)], False),
                "zobg": shown(rows[(b, "zobg", PARAM)]),
                "fobg": shown(rows[(b, "fobg", PARAM)]),
                "aobg": shown(rows[(b, "aobg", PARAM)]),
                "exact-zobg": shown(rows[("exact", "zobg", PARAM)]),
            }
            for estimator, text in want.items():
                if gui.get((b, PARAM, estimator)) != text:
                    wrong.append("%s %s: view %r, CLI %r" % (b, estimator, gui.get((b, PARAM, estimator)), text))
            alpha = gui.get((b, PARAM, "alpha"), "")
            if alpha.split(" ")[0] != "%.3g" % float(rows[(b, "alpha", "")]["mean"]):
                wrong.append("%s alpha: view %r, CLI %s" % (b, alpha, rows[(b, "alpha", "")]["mean"]))
        tap.check(len(gui) == 12 and not wrong,
                  "the view's 12 numbers equal contactlab smooth --seed %d (e.g. impulse ZoBG %s, FoBG %s)"
                  % (SEED, gui.get(("impulse", PARAM, "zobg")), gui.get(("impulse", PARAM, "fobg"))),
                  "\n".join(wrong) or sorted(gui.items()))
        tap.check(gui.get(("impulse", PARAM, "fobg"), "").startswith("1 ± 0"),
                  "impulse's FoBG is +1 at every sample (its adjoint), against a negative ZoBG",
                  gui.get(("impulse", PARAM, "fobg")))

        # ---- the exported table is the CLI's, the histogram a PNG
        csv_path, png_path = os.path.join(work, "gui.csv"), os.path.join(work, "gui.png")
        activate("smoothing-export", GLib.Variant("s", csv_path))
        activate("smoothing-export", GLib.Variant("s", png_path))
        wait_for(lambda: os.path.exists(png_path), WAIT)
        gui_csv = open(csv_path).read() if os.path.exists(csv_path) else ""
        tap.check(gui_csv == out, "the exported CSV equals contactlab smooth --format csv byte for byte",
                  gui_csv[:800])
        with open(png_path, "rb") if os.path.exists(png_path) else io.BytesIO() as f:
            tap.check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the histogram exports as PNG")

        # ---- the second page holds the histogram and the α rule, with the whole results height
        page = find(app, lambda n: n.getRole() == pyatspi.ROLE_PAGE_TAB and n.name == "Sample terms and the α rule")
        if page is not None:
            page.parent.querySelection().selectChild(page.getIndexInParent())
        def plot_height():
            plot = find(app, lambda n: n.name == "Histogram of the smoothing terms")
            return plot.queryComponent().getExtents(pyatspi.WINDOW_COORDS).height if plot else None

        height = wait_for(lambda: plot_height() if (plot_height() or 0) >= 100 else None, 30) or plot_height()
        tap.check(page is not None and (height or 0) >= 100,
                  "the page 'Sample terms and the α rule' shows the histogram at least 100 px high",
                  "page %r, plot height %r" % (page, height))
        # ---- the γ slider: the rule from the stored samples is what a new CLI run computes
        slider = named(app, "Tolerated bias gamma")
        tap.check(slider is not None, "the α rule has a γ slider")
        shown_rule = rule(app)
        tap.check(shown_rule.startswith("impulse,"), "the rule is shown for impulse (the backend that is not exact)",
                  shown_rule)
        m = re.search(r"\) = (\S+), with δ.*‖ĝ1 − ĝ0‖ = (\S+)\n", shown_rule, re.S)
        epsilon, gap = (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))
        tap.check(m is not None and gap > 1, "the rule shows ε and the gap between FoBG and ZoBG (impulse: about 2)",
                  shown_rule)
        top = slider.queryValue().maximumValue if slider is not None else float("nan")
        # impulse's FoBG terms are all +1: σ̂1² = 0, so the optimum is α* = 1, which needs γ ≥ ε + gap
        for gamma, case in ((0.01, "eps>gamma"), (epsilon + 0.5 * gap, "constraint"), (top, "optimum")):
            slider.queryValue().currentValue = gamma
            text = wait_for(lambda: rule(app) if "(%s)" % case in rule(app) and "γ = %.4g," % gamma in rule(app)
                            else None, 30) or rule(app)
            _, again = cli_rows("--gamma", repr(gamma))
            alpha = "%.4g" % float(again[("impulse", "alpha", "")]["mean"])
            aobg = shown(again[("impulse", "aobg", PARAM)])
            tap.check("α = %s (%s)" % (alpha, case) in text and "AoBG ∂/∂%s = %s" % (PARAM, aobg) in text,
                      "γ = %g: the rule says %s, α = %s and AoBG = %s, as contactlab smooth --gamma %g"
                      % (gamma, case, alpha, aobg, gamma), text)
        screenshot("smoothing-gamma")

        # ---- Export All writes the table too
        folder = os.path.join(work, "session")
        activate("export-all", GLib.Variant("s", folder))
        manifest = os.path.join(folder, "manifest.json")
        wait_for(lambda: os.path.exists(manifest), WAIT)
        listed = open(manifest).read() if os.path.exists(manifest) else ""
        table = os.path.join(folder, "smoothing.csv")
        tap.check('"smoothing.csv"' in listed and '"smoothing-terms-impulse.png"' in listed and
                  os.path.exists(table) and open(table).read() == out,
                  "Export All lists smoothing.csv (the CLI's CSV) and each backend's histogram", listed[-800:])

        # ---- a scene edit makes the shown estimates stale
        activate("select-object", GLib.Variant("s", "ball"))
        scene_tab = tab(app, "Scene")
        if scene_tab is not None:
            scene_tab.queryAction().doAction(0)
        entry = wait_for(lambda: named(app, "Ball ball velocity x", pyatspi.ROLE_TEXT), 30)
        if entry is not None:
            entry.queryEditableText().setTextContents("2.5")
        tap.check(wait_for(lambda: "the scene has changed since" in status(app), WAIT),
                  "after a scene edit the estimates are marked stale", status(app))

        # saved, so that quitting asks nothing
        activate("save-as", GLib.Variant("s", os.path.join(work, "edited.json")))
        wait_for(lambda: os.path.exists(os.path.join(work, "edited.json")), WAIT)
        activate("quit", path="/io/github/contactlab/ContactLab")
        code = proc.wait(timeout=WAIT)
        tap.check(code == 0, "the app quits cleanly", "exit status %s" % code)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        text = open(log.name).read()
        tap.check("CRITICAL" not in text, "no critical warnings", text[-1500:])


if __name__ == "__main__":
    try:
        main()
    except Exception:  # a driver that breaks off is a failure, never a short pass
        tap.check(False, "the driver runs to its end", traceback.format_exc())
    raise SystemExit(tap.plan())
