#!/bin/bash
# Runs gui-e2e.py inside a private session bus with a private state dir.
# Without an X display (run under xvfb-run) it reports a TAP skip.
set -u
. "$(dirname "$0")/session.sh"
e2e_python "$(dirname "$0")/gui-e2e.py" 280
