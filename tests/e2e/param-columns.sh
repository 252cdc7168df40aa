#!/bin/bash
# Runs param-columns.py (the gradient table's Add parameter columns against
# `contactlab gradients --param`) inside a private session bus with a
# private state dir, settings kept in a keyfile so that they outlive a
# restart. Without an X display (run under xvfb-run) it reports a
# TAP skip.
set -u
. "$(dirname "$0")/session.sh"
GSETTINGS_BACKEND=keyfile e2e_python "$(dirname "$0")/param-columns.py" 420 xdotool import
