# Sourced by the end-to-end scripts that drive the GUI over D-Bus actions:
# e2e_session TOOL... reports a TAP skip and exits without one of the tools
# or without an X display; otherwise, the first time, it runs the script
# again inside a private session bus (the app's actions and nothing else on
# it), with TAP on fd 3 since the session's at-spi registry prints on stdout.
e2e_session() {
	local tool
	for tool in "$@" dbus-run-session; do
		command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
	done
	[ -n "${DISPLAY:-}" ] || { echo "1..0 # SKIP no display"; exit 0; }
	if [ -z "${CL_E2E_IN_SESSION:-}" ]; then
		exec 3>&1
		CL_E2E_IN_SESSION=1 TAP_FD=3 exec dbus-run-session -- "$0" >&2
	fi
}

# e2e_await_app PID: until the app started as PID owns its D-Bus name and its
# window exports its actions (the one start rule of every harness, in
# e2e_tap.py); otherwise a TAP note says what it waited for, and status 1
e2e_await_app() {
	local why
	why=$(/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/e2e_tap.py" await-app "$1") && return 0
	echo "# $why" >&"${TAP_FD:-1}"
	return 1
}

# e2e_python SCRIPT SECONDS [TOOL...]: runs SCRIPT (a /usr/bin/python3 driver
# using pyatspi) inside a private session bus with a private state, config
# and data folder, for at most SECONDS, TAP on fd 3; a TAP skip without a
# display, pyatspi or one of the tools. GSETTINGS_BACKEND defaults to memory.
e2e_python() {
	local script=$1 seconds=$2 tool state status
	shift 2
	for tool in "$@" dbus-run-session timeout; do
		command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
	done
	[ -n "${DISPLAY:-}" ] || { echo "1..0 # SKIP no display"; exit 0; }
	/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || { echo "1..0 # SKIP no pyatspi"; exit 0; }
	state=$(mktemp -d)
	export XDG_STATE_HOME=$state/state XDG_CONFIG_HOME=$state/config XDG_DATA_HOME=$state/data
	export GSETTINGS_BACKEND=${GSETTINGS_BACKEND:-memory} GDK_BACKEND=x11
	# TAP on fd 3; everything else the session prints goes to stderr
	exec 3>&1
	TAP_FD=3 timeout -k 10 "$seconds" dbus-run-session -- /usr/bin/python3 "$script" >&2
	status=$?
	rm -rf "$state"
	return $status
}
