#!/bin/bash
# Runs smoothing.py (the Smoothing view on Task 1 against contactlab smooth)
# inside a private session bus with private state and settings. Without an
# X display (run under xvfb-run) it reports a TAP skip.
#   CONTACTLAB: the executable.  E2E_SCREENSHOTS=DIR: also save screenshots there.
set -u
. "$(dirname "$0")/session.sh"
export GSK_RENDERER=cairo LC_ALL=C.UTF-8
unset GTK_A11Y
e2e_python "$(dirname "$0")/smoothing.py" 560 xdotool import
