#!/bin/bash
# Runs param-columns.py (the gradient table's Add parameter columns against
# `contactlab gradients --param`) inside a private session bus with a
# private state dir. Without an X display (run under xvfb-run) it reports a
# TAP skip.
set -u
. "$(dirname "$0")/session.sh"
e2e_python "$(dirname "$0")/param-columns.py" 280 xdotool import
