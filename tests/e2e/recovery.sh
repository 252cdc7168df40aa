#!/bin/bash
# Runs recovery.py inside a private session bus with private state and
# settings that outlive the process (keyfile backend). Without an X display
# (run under xvfb-run) it reports a TAP skip.
set -u
. "$(dirname "$0")/session.sh"
GSETTINGS_BACKEND=keyfile e2e_python "$(dirname "$0")/recovery.py" 200
