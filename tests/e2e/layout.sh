#!/bin/bash
# The window at 1024×768, 1280×800 and 1920×1080 in the light and the dark
# theme (layout.py), each in an X server of that size of its own, and the
# wall tool's drag in every direction; screenshots are kept in
# $E2E_SCREENSHOTS (the build tree's layout-screenshots/ under meson).
# Skips without the tools; TAP on stdout.
set -u
for tool in xvfb-run Xvfb dbus-run-session xdotool import; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || { echo "1..0 # SKIP no pyatspi"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
export GSETTINGS_BACKEND=memory GDK_BACKEND=x11 GSK_RENDERER=cairo LC_ALL=C.UTF-8
export E2E_SCREENSHOTS=${E2E_SCREENSHOTS:-$PWD/layout-screenshots}
total=0 failed=0
exec 3>&1
for size in 1024x768 1280x800 1920x1080; do
	for theme in light dark; do
		state=$(mktemp -d)
		out=$(mktemp)
		walls=""
		[ "$size" = 1280x800 ] && [ "$theme" = light ] && walls=1
		scheme=prefer-light
		[ "$theme" = dark ] && scheme=prefer-dark
		XDG_STATE_HOME=$state/state XDG_CONFIG_HOME=$state/config XDG_DATA_HOME=$state/data \
			LAYOUT_SIZE=$size LAYOUT_THEME=$theme LAYOUT_WALLS=$walls ADW_DEBUG_COLOR_SCHEME=$scheme TAP_FD=4 \
			timeout -k 10 240 xvfb-run -a -s "-screen 0 ${size}x24 -nolisten tcp" \
			dbus-run-session -- /usr/bin/python3 "$here/layout.py" 4>"$out" >/dev/null 2>&1
		# renumber each run's points into one plan
		while IFS= read -r line; do
			case $line in
			"ok "*) total=$((total + 1)); echo "ok $total - $size $theme: ${line#* - }" ;;
			"not ok "*) total=$((total + 1)); failed=$((failed + 1)); echo "not ok $total - $size $theme: ${line#* - }" ;;
			"#"*) echo "$line" ;;
			esac
		done <"$out"
		grep -q '^1\.\.' "$out" || { total=$((total + 1)); failed=$((failed + 1)); echo "not ok $total - $size $theme: the run ended early"; }
		rm -rf "$state" "$out"
	done
done
echo "1..$total"
exit $((failed > 0))
