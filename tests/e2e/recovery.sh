#!/bin/bash
# Runs recovery.py inside a private session bus with private state and
# settings that outlive the process (keyfile backend). Without an X display
# (run under xvfb-run) it reports a TAP skip.
set -u
if [ -z "${DISPLAY:-}" ] || ! command -v dbus-run-session >/dev/null || ! /usr/bin/python3 -c 'import pyatspi' 2>/dev/null; then
	echo "1..0 # SKIP no display, dbus-run-session or pyatspi"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME=$state/state XDG_CONFIG_HOME=$state/config XDG_DATA_HOME=$state/data
export GSETTINGS_BACKEND=keyfile GDK_BACKEND=x11
exec 3>&1
TAP_FD=3 timeout -k 10 200 dbus-run-session -- /usr/bin/python3 "$here/recovery.py" >&2
