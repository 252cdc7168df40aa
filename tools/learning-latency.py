#!/usr/bin/python3
"""How responsive the window stays while the Learning view runs Task 3.

Starts the GUI, loads the task3-two-balls preset (960 control parameters,
every backend enabled), starts learning over D-Bus and, until the run ends,
times round trips of org.gtk.Actions.DescribeAll on the window: a call the
main loop has to answer, so its latency is how long the UI is blocked. Not a
test: the numbers depend on the machine and its load.

    xvfb-run -a dbus-run-session -- /usr/bin/python3 tools/learning-latency.py build/contactlab
        [--iterations N] [--hog N] [--runs N]

--hog N adds N busy processes for the length of each run (a loaded machine).
Prints one line per run: round trips, median, 95th percentile and maximum
latency in ms, and how long the run took.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

APP = "io.github.contactlab.ContactLab"
APP_PATH = "/io/github/contactlab/ContactLab"
WIN_PATH = APP_PATH + "/window/1"


def activate(bus, path, name, params):
    bus.call_sync(APP, path, "org.gtk.Actions", "Activate",
                  GLib.Variant("(sava{sv})", (name, params, {})), None, Gio.DBusCallFlags.NONE, 60000, None)


def describe_all(bus):
    start = time.monotonic()
    bus.call_sync(APP, WIN_PATH, "org.gtk.Actions", "DescribeAll", None, None, Gio.DBusCallFlags.NONE, 60000, None)
    return (time.monotonic() - start) * 1000


def wait_for_name(bus, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        owned = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                              "NameHasOwner", GLib.Variant("(s)", (APP,)), None, Gio.DBusCallFlags.NONE, 1000, None)
        if owned.unpack()[0]:
            return True
        time.sleep(0.1)
    return False


def one_run(bus, work, index, iterations, hogs):
    done = os.path.join(work, f"done-{index}.csv")
    activate(bus, APP_PATH, "load-preset", [GLib.Variant("s", "task3-two-balls")])
    time.sleep(0.5)
    options = GLib.Variant("a{sv}", {"iterations": GLib.Variant("i", iterations)})
    busy = [subprocess.Popen([sys.executable, "-c", "import time\nend=time.time()+120\nwhile time.time()<end: pass"])
            for _ in range(hogs)]
    started = time.monotonic()
    activate(bus, WIN_PATH, "learning-run", [options])
    # queued until the run ends: the file's appearance marks the end
    activate(bus, WIN_PATH, "learning-export", [GLib.Variant("s", done)])
    samples = []
    while not os.path.exists(done) and time.monotonic() - started < 600:
        samples.append(describe_all(bus))
        time.sleep(0.02)
    seconds = time.monotonic() - started
    for p in busy:
        p.kill()
        p.wait()
    samples.sort()
    p95 = samples[min(len(samples) - 1, int(0.95 * len(samples)))] if samples else float("nan")
    print(f"run {index}: {len(samples)} round trips, median {statistics.median(samples):.1f} ms, "
          f"p95 {p95:.1f} ms, max {samples[-1]:.1f} ms; learning took {seconds:.1f} s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("contactlab")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--hog", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not os.environ.get("DISPLAY"):
        sys.exit("no display: run under xvfb-run -a dbus-run-session")
    env = dict(os.environ, GSETTINGS_BACKEND="memory", GSK_RENDERER="cairo")
    with tempfile.TemporaryDirectory() as work:
        log = open(os.path.join(work, "app.log"), "w")
        app = subprocess.Popen([args.contactlab], stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            if not wait_for_name(bus):
                sys.exit("the app did not start")
            time.sleep(1)
            for i in range(args.runs):
                one_run(bus, work, i + 1, args.iterations, args.hog)
        finally:
            app.terminate()
            app.wait()
            log.close()
            with open(os.path.join(work, "app.log")) as f:
                ticks = [int(line.split()[-1]) for line in f if line.startswith("tick-us")]
            if ticks:
                ticks.sort()
                print(f"tick: {len(ticks)} calls, median {statistics.median(ticks) / 1000:.2f} ms, "
                      f"max {ticks[-1] / 1000:.2f} ms")


if __name__ == "__main__":
    main()
