#!/bin/bash
# Soak test: the app driven by seeded random user actions for SOAK_SECONDS
# (default 60), TAP output; see soak.py for what it does and checks. Needs an
# X display (run `xvfb-run -a meson test`); skips cleanly without one.
#   CONTACTLAB: the executable.  SOAK_SEED: repeat a run (its seed is printed).
#   SOAK_OUT=DIR: keep the app's log and the RSS curve there.
set -u
[ -n "${DISPLAY:-}" ] || { echo "1..0 # SKIP no display"; exit 0; }
for tool in dbus-run-session timeout; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
/usr/bin/python3 -c 'from gi.repository import Gio' 2>/dev/null ||
	{ echo "1..0 # SKIP /usr/bin/python3 has no GObject introspection"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# a private state: no recovery file or setting from another run
export XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache
export GSETTINGS_BACKEND=memory GDK_BACKEND=x11 GSK_RENDERER=cairo LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1
export CONTACTLAB_SOURCE_ROOT=${CONTACTLAB_SOURCE_ROOT:-$here/../..}
unset GTK_A11Y
seconds=${SOAK_SECONDS:-60}
# TAP on fd 3: the session's activated daemons print on stdout; a private session bus
exec 3>&1
TAP_FD=3 timeout -k 10 $((${seconds%.*} * 2 + 600)) dbus-run-session -- /usr/bin/python3 "$here/soak.py" >&2
