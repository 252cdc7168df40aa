#!/bin/bash
# Installs what is missing (Debian 12, as root), builds, and opens the
# workbench on the default scene. Arguments are passed to contactlab, so
# `./run.sh gradients task3-two-balls` runs a headless command instead.
set -euo pipefail
cd "$(dirname "$0")"
PKGS="gcc meson ninja-build pkg-config libgtk-4-dev libepoxy-dev libjson-glib-dev libcairo2-dev
      fonts-dejavu-core libgl1-mesa-dri"
# shellcheck disable=SC2086
missing=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $PKGS 2>&1 | grep -v '^installed ' || true)
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	for i in 1 2 3 4 5; do apt-get update -qq && break; sleep 20; done
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 $PKGS
fi
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
exec ./build/contactlab "$@"
