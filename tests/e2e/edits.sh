#!/bin/bash
# Runs edits.py (every edit reaches every view and the sidebar) inside a
# private session bus with a private state dir.
# Without an X display (run under xvfb-run) it reports a TAP skip.
set -u
. "$(dirname "$0")/session.sh"
e2e_python "$(dirname "$0")/edits.py" 580 xdotool import
