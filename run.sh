#!/bin/bash
# Installs what is missing (Debian 12, as root), builds, and opens the
# workbench on the default scene. Arguments are passed to contactlab, so
# `./run.sh gradients task3-two-balls` runs a headless command instead.
# Every step that fails prints its own output and what to do next; a build
# directory left half-configured by an earlier failure is set up again.
set -uo pipefail
cd "$(dirname "$0")" || exit 1

# What configure, build and a first start need (.ci/run adds only test tools).
PKGS="gcc meson ninja-build pkg-config libgtk-4-dev libadwaita-1-dev libjson-glib-dev libcairo2-dev
      fonts-dejavu-core libgl1-mesa-dri librsvg2-common dconf-gsettings-backend dbus at-spi2-core"

log=$(mktemp "${TMPDIR:-/tmp}/contactlab-run.XXXXXX")
trap 'rm -f "$log"' EXIT

# fail STEP ADVICE: the step's own output, then one line saying what to do
fail() {
	cat "$log" >&2
	echo "run.sh: $1 failed (its output is above). $2" >&2
	exit 1
}

# shellcheck disable=SC2086
missing=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $PKGS 2>&1 | grep -v '^installed ' | awk '{print $NF}')
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "run.sh: these Debian packages are missing:" $missing >&2
		echo "run.sh: run ./run.sh as root once (it installs them), or: sudo apt-get install" $missing >&2
		exit 1
	fi
	command -v apt-get >/dev/null || { echo "run.sh: no apt-get here; install:" $missing >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	echo "run.sh: installing" $missing >&2
	# an install interrupted earlier leaves dpkg half-configured; finish it first
	dpkg --configure -a >"$log" 2>&1 || fail "dpkg --configure -a" "Repair the package database, then run ./run.sh again."
	updated=false
	for _ in 1 2 3 4 5; do
		apt-get update -qq >"$log" 2>&1 && { updated=true; break; }
		sleep 20
	done
	$updated || fail "apt-get update" "Check the network and /etc/apt/sources.list, then run ./run.sh again."
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 $PKGS >"$log" 2>&1 ||
		fail "apt-get install" "Fix the package problem shown, then run ./run.sh again."
fi

# configure: a build/ without build.ninja is what an interrupted or failed
# setup leaves; it is set up from scratch
configure() {
	rm -rf build
	echo "run.sh: configuring build/" >&2
	meson setup build >"$log" 2>&1 || { rm -rf build; fail "meson setup" "Fix what it reports, then run ./run.sh again."; }
}
[ -f build/build.ninja ] || configure
if ! ninja -C build >"$log" 2>&1; then
	# a build directory from another meson or a broken earlier configure: once more from scratch
	if grep -q -e 'meson setup' -e 'regenerat' -e 'Meson encountered an error' "$log"; then
		configure
		ninja -C build >"$log" 2>&1 || fail "the build (ninja -C build)" "Fix the error shown, then run ./run.sh again."
	else
		fail "the build (ninja -C build)" "Fix the error shown, then run ./run.sh again."
	fi
fi

# The window outside a desktop session (a root shell, ssh -X, xvfb-run) gets a
# private session bus, so its D-Bus actions and settings work there too.
if [ $# -eq 0 ] && [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] && [ ! -S "${XDG_RUNTIME_DIR:-/nonexistent}/bus" ] &&
	command -v dbus-run-session >/dev/null; then
	exec dbus-run-session -- ./build/contactlab
fi
exec ./build/contactlab "$@"
