#!/usr/bin/python3
"""End-to-end test of the Lessons panel: D-Bus window actions to open the
panel, walk lesson 1 (time-of-impact) to its end and export the handout;
AT-SPI to read what the panel shows. Every step's text must contain exactly
the numbers `contactlab lesson show time-of-impact --step K --format csv`
computes; the handout must be a valid PDF with a cover and one page per step.
A broken lesson file next to the shipped ones must be listed with the
loader's message.

Run inside one dbus-run-session under an X server (see lessons.sh), with
CONTACTLAB_DATA_DIR pointing at a data folder whose lessons/ holds the
shipped lessons and broken.json. Prints TAP on $TAP_FD; screenshots go to
$E2E_SCREENSHOTS when set.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pyatspi
from gi.repository import Gio, GLib

from e2e_tap import await_app, find, screenshot, wait_for

APP_ID = "io.github.contactlab.ContactLab"
WINDOW = "/io/github/contactlab/ContactLab/window/1"
EXE = os.environ["CONTACTLAB"]
LESSON = "time-of-impact"

tap = os.fdopen(int(os.environ.get("TAP_FD", "1")), "w", buffering=1)
count = 0
failures = 0


def check(ok, name, detail=""):
    global count, failures
    count += 1
    failures += not ok
    print(("ok" if ok else "not ok") + " %d - %s" % (count, name), file=tap)
    for line in str(detail).splitlines()[:20] if detail and not ok else []:
        print("# " + line, file=tap)


bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(interface, method, args, path=WINDOW, dest=APP_ID):
    return bus.call_sync(dest, path, interface, method, args, None, Gio.DBusCallFlags.NONE, 10000, None).unpack()


def activate(action, parameter=None):
    params = [parameter] if parameter is not None else []
    call("org.gtk.Actions", "Activate", GLib.Variant("(sava{sv})", (action, params, {})))


def describe(action):
    """(enabled, parameter type, [state])"""
    return call("org.gtk.Actions", "Describe", GLib.Variant("(s)", (action,)))[0]


def state():
    return json.loads(describe("lesson-state")[2][0])


def selected_tab(app, name):
    """The page tab of a stack switcher, when it is the page shown (GTK 4.8 reports no 'showing')."""
    tab = find(app, lambda n: n.getRole() == pyatspi.ROLE_PAGE_TAB and n.name == name)
    return tab if tab is not None and tab.getState().contains(pyatspi.STATE_SELECTED) else None


def step_label(app):
    return find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and n.description == "Lesson step text")


def cli_cites(step):
    out = subprocess.run([EXE, "lesson", "show", LESSON, "--step", str(step), "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def step_done(k):
    def done():
        s = state()
        return s if s["step"] == k and not s["computing"] and s["text"] else None
    return done


def main():
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)  # the app must talk AT-SPI
    work = tempfile.mkdtemp()
    log = open(os.path.join(work, "app.log"), "w")
    proc = subprocess.Popen([EXE], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        app, why = await_app(proc.pid, atspi=True)
        check(app is not None, "the app owns %s on the session bus and is visible over AT-SPI" % APP_ID, why)

        # ---- the panel and its list
        button = find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and n.name == "Lessons")
        check(button is not None, "the header bar has a Lessons button")
        check(selected_tab(app, "Lessons") is None and describe("lessons")[2][0] is False, "the panel starts hidden")
        activate("lessons")
        shown = wait_for(lambda: selected_tab(app, "Lessons"), 10)
        row = find(app, lambda n: n.getRole() == pyatspi.ROLE_LIST_ITEM and n.name == "Time of impact")
        check(shown and row is not None and describe("lessons")[2][0] is True,
              "win.lessons shows the panel, listing the lesson 'Time of impact'")
        listed = subprocess.run([EXE, "lesson", "show", os.path.join(os.environ["CONTACTLAB_DATA_DIR"], "lessons",
                                                                     "broken.json")], capture_output=True, text=True)
        message = listed.stderr.strip().removeprefix("contactlab: ")
        bad = find(app, lambda n: n.getRole() == pyatspi.ROLE_LIST_ITEM and n.name == "broken.json does not load")
        check(bad is not None and listed.returncode != 0 and bad.description == message,
              "a broken lesson file is listed with the loader's message",
              "listed: %r\nloader: %r" % (bad.description if bad else None, message))
        screenshot("lessons-list")

        # ---- lesson 1, step by step, by actions
        activate("lesson-open", GLib.Variant("s", LESSON))
        shown_by_cli = subprocess.run([EXE, "lesson", "show", LESSON], check=True, capture_output=True, text=True).stdout
        titles = [line.split(": ", 1)[1] for line in shown_by_cli.splitlines() if " — step " in line]
        steps = len(titles)
        for k in range(1, steps + 1):
            if k > 1:
                activate("lesson-next")
            s = wait_for(step_done(k), 120)
            label = step_label(app)
            text = label.queryText() if label else None
            shown = text.getText(0, text.characterCount) if text else ""
            cites = cli_cites(k)
            missing = [c["placeholder"] + " → " + c["text"] for c in cites if c["text"] not in shown]
            numbers = "; ".join("%s = %s" % (c["placeholder"], c["text"]) for c in cites)
            check(s is not None and not s["problems"] and cites and not missing and shown == s["text"],
                  "step %d of %d shows the %d numbers the CLI computes (%s)" % (k, steps, len(cites), numbers),
                  "missing: %s\nshown: %s" % (missing, shown))
            check(label is not None and label.name == shown, "step %d: the text's accessible name is the text" % k)
            if k == 2:
                # the lesson points at impulse's ∂L/∂y0 in the gradient table
                def outlined():
                    return find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and
                                (n.name or "").startswith("impulse ball.position.y =") and
                                (n.description or "").endswith("(highlighted)"))
                check(wait_for(outlined, 60), "step 2 outlines impulse's ∂L/∂y0 cell in the gradient table")
            screenshot("lesson-step-%d" % k)
        check(describe("lesson-next")[0] is False and describe("lesson-previous")[0] is True,
              "at the last step Next is disabled and Previous enabled")

        # back one step and forward again: the same text
        last = state()["text"]
        activate("lesson-previous")
        check(wait_for(step_done(steps - 1), 60), "win.lesson-previous goes back to step %d" % (steps - 1))
        activate("lesson-next")
        again = wait_for(step_done(steps), 60)
        check(again and again["text"] == last, "the last step computes the same text again")

        # ---- the handout
        pdf = os.path.join(work, "handout.pdf")
        activate("lesson-export", GLib.Variant("s", pdf))
        s = wait_for(lambda: (lambda s: s if not s["exporting"] and (s["exported"] or s["export_error"]) else None)(
            state()), 120)
        check(s and s["exported"] == pdf and not s["export_error"], "win.lesson-export writes the handout",
              s and s["export_error"])
        info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True)
        pages = [line.split()[-1] for line in info.stdout.splitlines() if line.startswith("Pages:")]
        check(info.returncode == 0 and pages == [str(steps + 1)],
              "pdfinfo reads the handout: %s pages (a cover and %d steps)" % (pages[0] if pages else "?", steps),
              info.stderr)
        with open(pdf, "rb") as f:
            head = f.read(5)
        text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True)
        absent = [t for t in titles if t not in " ".join(text.stdout.split())]
        check(head == b"%PDF-" and text.returncode == 0 and not absent,
              "the handout is a PDF whose text has every step's title", "absent: %s" % absent)
        folder = os.path.join(work, "handout")
        files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        expected = ["step-%02d.%s" % (k, ext) for k in range(1, steps + 1) for ext in ("csv", "png", "svg", "txt")]
        check(all(f in files for f in expected + ["manifest.csv"]),
              "the folder handout/ holds every step's figure, CSV and text", "files: %s" % files)
        screenshot("lesson-exported")

        # ---- the same through the button and the file chooser
        chosen = os.path.join(work, "chosen.pdf")
        button = find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and n.name == "Export lesson")
        if button is not None:
            button.queryAction().doAction(0)
        name = wait_for(lambda: find(app, lambda n: n.getRole() == pyatspi.ROLE_TEXT and n.name == "Name:"), 20)
        if name is not None:
            name.queryEditableText().setTextContents(chosen)
            # dialog buttons are named after their mnemonic label ("_Export", or "_Export Export")
            save = find(app, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and (n.name or " ").split()[0] == "_Export")
            if save is not None:
                save.queryAction().doAction(0)
        s = wait_for(lambda: (lambda s: s if s["exported"] == chosen and not s["exporting"] else None)(state()), 60)
        info = subprocess.run(["pdfinfo", chosen], capture_output=True, text=True)
        check(button is not None and name is not None and s and "Pages:           %d" % (steps + 1) in info.stdout,
              "Export lesson… asks for a file (GtkFileChooserNative) and writes the handout there",
              "button %s, name field %s, state %s" % (button, name, s))

        # ---- the keyboard: Alt+Left / Alt+Right step through the lesson
        windows = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^ContactLab$"],
                                 capture_output=True, text=True).stdout.split()
        if windows:
            # no window manager: give the window the focus the closed dialog had
            subprocess.run(["xdotool", "windowfocus", "--sync", windows[0]], check=False)
            subprocess.run(["xdotool", "key", "--window", windows[0], "alt+Left"], check=False)
            back = wait_for(step_done(steps - 1), 30)
            time.sleep(0.3)  # GTK drops a second activation within its activate timeout
            subprocess.run(["xdotool", "key", "--window", windows[0], "alt+Right"], check=False)
            forward = wait_for(step_done(steps), 30)
            check(back and forward, "Alt+Left goes to the previous step and Alt+Right to the next")
        else:
            check(False, "xdotool finds the window to send Alt+Left / Alt+Right to")

        # ---- leaving keeps the state
        activate("lesson-leave")
        s = wait_for(lambda: (lambda s: s if not s["lesson"] else None)(state()), 10)
        title = find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and (n.name or "").startswith("Task 1"))
        check(s and title is not None and selected_tab(app, "Convergence"),
              "leaving the lesson keeps its scene (%s) and the convergence view" % (title.name if title else "none"))

        # ---- a step's gradient columns: Aim the wall's third step is about mirror.angle alone
        def cell(prefix):
            return find(app, lambda n: n.getRole() == pyatspi.ROLE_LABEL and (n.name or "").startswith(prefix))
        activate("lesson-open", GLib.Variant("s", "aim-the-wall"))
        activate("lesson-step", GLib.Variant("i", 3))
        s = wait_for(step_done(3), 120)
        angle = wait_for(lambda: (lambda c: c if c and (c.description or "").endswith("(highlighted)") else None)(
            cell("compliant-warp mirror.angle =")), 60)
        check(s and angle is not None and cell("exact ball.position.x =") is None,
              "a lesson step's gradients view shows its own columns: compliant-warp's ∂L/∂mirror.angle, "
              "outlined, and not the default ball columns", "cell: %s" % (angle.name if angle else None))
        screenshot("lesson-step-columns")
        activate("lesson-leave")
        check(wait_for(lambda: cell("exact ball.position.x ="), 60) is not None,
              "leaving the lesson shows every column again")
    finally:
        try:
            call("org.gtk.Actions", "Activate", GLib.Variant("(sava{sv})", ("quit", [], {})),
                 path="/io/github/contactlab/ContactLab")
        except GLib.Error:
            pass
        try:
            rc = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = None
        log.close()
        with open(os.path.join(work, "app.log")) as f:
            app_log = f.readlines()
        shutil.rmtree(work, ignore_errors=True)
        check(rc == 0, "the app quit cleanly", "exit status %s; the end of its log:\n%s" % (rc, "".join(app_log[-40:])))
        criticals = [line for line in app_log if "CRITICAL" in line or "Could not" in line]
        check(not criticals, "no critical messages or failures in the app's log", "".join(criticals[:5]))
    print("1..%d" % count, file=tap)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
