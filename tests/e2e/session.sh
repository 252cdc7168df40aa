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
