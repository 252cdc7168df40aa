"""TAP output, polling and the app's D-Bus actions, AT-SPI lookups and
screenshots for the end-to-end scripts (run by /usr/bin/python3).

TAP goes to the descriptor $TAP_FD (default stdout): the session bus's
activated daemons share stdout."""
import os
import subprocess
import time


class Tap:
    def __init__(self):
        self.out = os.fdopen(int(os.environ.get("TAP_FD", "1")), "w", buffering=1)
        self.count = 0
        self.failures = 0

    def check(self, ok, name, detail=""):
        """One test point; detail (up to 30 lines) is printed when it failed."""
        self.count += 1
        self.failures += not ok
        print(("ok" if ok else "not ok") + " %d - %s" % (self.count, name), file=self.out)
        for line in str(detail).splitlines()[:30] if detail and not ok else []:
            self.note(line)

    def note(self, text):
        print("# " + text, file=self.out)

    def plan(self):
        """Prints the plan last; the exit status of the run."""
        print("1..%d" % self.count, file=self.out)
        return 1 if self.failures else 0


def wait_for(predicate, timeout=60.0, step=0.1):
    """predicate's first true value within timeout seconds, else None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return None


APP_ID = "io.github.contactlab.ContactLab"
WINDOW_PATH = "/io/github/contactlab/ContactLab/window/1"
# A start is waited for as long as a loaded machine may need (CI runs beside
# other jobs); E2E_START_SECONDS changes it.
START_SECONDS = float(os.environ.get("E2E_START_SECONDS", "120"))
ATSPI_CALL_SECONDS = 30
SHOTS = os.environ.get("E2E_SCREENSHOTS")


def activate(action, parameter=None, path=WINDOW_PATH):
    """Activates a GAction of the app (the window's by default) over D-Bus."""
    from gi.repository import Gio, GLib
    Gio.bus_get_sync(Gio.BusType.SESSION, None).call_sync(
        APP_ID, path, "org.gtk.Actions", "Activate",
        GLib.Variant("(sava{sv})", (action, [parameter] if parameter is not None else [], {})), None,
        Gio.DBusCallFlags.NONE, 1000 * ATSPI_CALL_SECONDS, None)


def find(root, predicate):
    import pyatspi
    return pyatspi.findDescendant(root, predicate)


def named(root, name, role=None):
    """The first accessible under root with this name (and role, or one of a tuple of roles)."""
    roles = role if isinstance(role, tuple) else (role,)
    return find(root, lambda n: n.name == name and (role is None or n.getRole() in roles))


def screenshot(name):
    """The screen as $E2E_SCREENSHOTS/NAME.png, when that is set."""
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        subprocess.run(["import", "-window", "root", os.path.join(SHOTS, name + ".png")], check=False)


def _process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def await_app(pid, atspi=False):
    """Waits, up to START_SECONDS in all, until process pid owns the app's
    D-Bus name, its first window exports its actions and, with atspi, the
    app shows over AT-SPI. Returns (accessible app or True, None) or
    (None, why), why naming what was not reached, after how long, and
    whether the process had ended."""
    from gi.repository import Gio, GLib
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    start = time.monotonic()
    end = start + START_SECONDS

    def call(dest, path, iface, method, args):
        try:
            return bus.call_sync(dest, path, iface, method, args, None, Gio.DBusCallFlags.NONE, 10000, None).unpack()
        except GLib.Error:
            return None

    def owner_pid():
        reply = call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                     "GetConnectionUnixProcessID", GLib.Variant("(s)", (APP_ID,)))
        return reply and reply[0] == pid

    def window():
        reply = call(APP_ID, WINDOW_PATH, "org.gtk.Actions", "List", None)
        return reply and len(reply[0]) > 0

    def accessible():
        import pyatspi
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            child = desktop.getChildAtIndex(i)
            try:
                if child is not None and child.get_process_id() == pid:
                    return child
            except GLib.Error:
                pass  # an app that just ended
        return None

    stages = [("its D-Bus name", owner_pid), ("its window's actions", window)]
    if atspi:
        # AT-SPI gives up on a call after 0.8 s and then reports "the
        # application no longer exists": a sanitizer build on a busy machine
        # can be that long away from its main loop and still be fine
        import gi
        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi
        Atspi.set_timeout(int(ATSPI_CALL_SECONDS * 1000), -1)
        stages.append(("its AT-SPI tree", accessible))
    result = True
    for what, reached in stages:
        while True:
            result = reached()
            if result:
                break
            if not _process_alive(pid):
                return None, "the app ended before %s appeared (after %.1f s)" % (what, time.monotonic() - start)
            if time.monotonic() >= end:
                return None, "the app did not show %s within %g s (E2E_START_SECONDS)" % (what, START_SECONDS)
            time.sleep(0.1)
    return result, None


if __name__ == "__main__":
    # e2e_tap.py await-app PID: for the shell harnesses; exit 0 when started,
    # else 1 with the reason on stdout
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "await-app":
        started, why = await_app(int(sys.argv[2]))
        if not started:
            print(why)
        sys.exit(0 if started else 1)
    sys.exit("usage: e2e_tap.py await-app PID")
