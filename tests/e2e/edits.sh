#!/bin/bash
# Runs edits.py (every edit reaches every view and the sidebar) inside a
# private session bus with a private state dir.
# Without an X display (run under xvfb-run) it reports a TAP skip.
set -u
for tool in xdotool import; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
if [ -z "${DISPLAY:-}" ] || ! command -v dbus-run-session >/dev/null || ! /usr/bin/python3 -c 'import pyatspi' 2>/dev/null; then
	echo "1..0 # SKIP no display, dbus-run-session or pyatspi"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME=$state/state XDG_CONFIG_HOME=$state/config XDG_DATA_HOME=$state/data
export GSETTINGS_BACKEND=memory GDK_BACKEND=x11
# TAP on fd 3; everything else the session prints goes to stderr
exec 3>&1
TAP_FD=3 timeout -k 10 580 dbus-run-session -- /usr/bin/python3 "$here/edits.py" >&2
