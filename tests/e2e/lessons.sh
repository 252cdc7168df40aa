#!/bin/bash
# Runs lessons.py (the Lessons panel end to end) inside a private session
# bus, with a data folder holding the shipped lessons and one broken lesson
# file. Without an X display (run under xvfb-run) it reports a TAP skip.
#   CONTACTLAB: the executable.  E2E_SCREENSHOTS=DIR: also save screenshots there.
set -u
for tool in dbus-run-session pdfinfo pdftotext xdotool; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
if [ -z "${DISPLAY:-}" ] || ! /usr/bin/python3 -c 'import pyatspi' 2>/dev/null; then
	echo "1..0 # SKIP no display or no pyatspi"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../../data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data/lessons" "$work/state"
for d in "$data"/*/; do
	[ "$(basename "$d")" = lessons ] || ln -s "$(cd "$d" && pwd)" "$work/data/$(basename "$d")"
done
cp "$data"/lessons/*.json "$work/data/lessons/"
# valid JSON, invalid lesson: a step count of 0
cat > "$work/data/lessons/broken.json" <<'JSON'
{"contactlab_lesson": 1, "id": "broken", "title": "Broken", "steps": [{"title": "x", "scene": "task1-bounce-once",
 "backends": ["exact"], "view": {"type": "convergence", "parameter": "ball.position.y", "steps": [0]}, "text": "t"}]}
JSON
export CONTACTLAB_DATA_DIR=$work/data
export XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/xdg-data
export GSETTINGS_BACKEND=memory GDK_BACKEND=x11 GSK_RENDERER=cairo LC_ALL=C.UTF-8
unset GTK_A11Y
# TAP on fd 3; everything else the session prints goes to stderr
exec 3>&1
TAP_FD=3 timeout -k 10 280 dbus-run-session -- /usr/bin/python3 "$here/lessons.py" >&2
