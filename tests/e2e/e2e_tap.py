"""TAP output and polling for the end-to-end scripts (run by /usr/bin/python3).

TAP goes to the descriptor $TAP_FD (default stdout): the session bus's
activated daemons share stdout."""
import os
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
