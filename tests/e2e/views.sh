#!/bin/bash
# End-to-end test of the Heatmaps and Learning views, driven over D-Bus
# (GApplication and window actions), TAP output. Needs an X display (run
# `xvfb-run -a meson test`); skips cleanly without one.
#   CONTACTLAB: the executable.  E2E_SCREENSHOTS=DIR: also save screenshots there.
set -u
APP=io.github.contactlab.ContactLab
WIN=/io/github/contactlab/ContactLab/window/1
. "$(dirname "$0")/session.sh"
e2e_session gdbus gapplication compare identify

export GSETTINGS_BACKEND=memory GSK_RENDERER=cairo LC_ALL=C.UTF-8
unset GTK_A11Y
work=$(mktemp -d)
trap 'kill $app 2>/dev/null; rm -rf "$work"' EXIT
n=0 failed=0
tap=${TAP_FD:-1}
ok() { n=$((n + 1)); echo "ok $n - $1" >&"$tap"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1" >&"$tap"; shift; for line in "$@"; do echo "# $line" >&"$tap"; done; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
act() { gdbus call --session --dest $APP --object-path $WIN --method org.gtk.Actions.Activate "$1" "$2" '{}' >/dev/null; }
wait_for() { for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
shot() {
	[ -n "${E2E_SCREENSHOTS:-}" ] || return 0
	command -v xdotool >/dev/null && command -v import >/dev/null || return 0
	mkdir -p "$E2E_SCREENSHOTS"
	local wid; wid=$(xdotool search --onlyvisible --name '^ContactLab$' | head -1)
	[ -n "$wid" ] && [ -n "${2:-}" ] && { xdotool mousemove $2; sleep 0.3; xdotool mousemove_relative 3 3; sleep 0.6; }
	[ -n "$wid" ] && import -window "$wid" "$E2E_SCREENSHOTS/$1.png"
}

# start_app: the GUI, once its window answers over D-Bus
start_app() {
	"$CONTACTLAB" >>"$work/app.log" 2>&1 &
	app=$!
	e2e_await_app $app || { not_ok "the app starts"; echo "1..$n" >&"$tap"; exit 1; }
}

start_app

# ---- heatmap: Task 2, 16 × 16, exported by action in every format
gapplication action $APP load-preset "'task2-ground-wall'"
act heatmap-compute "[<{'x': <'ball.velocity.x'>, 'y': <'ball.velocity.y'>, 'x-min': <3.0>, 'x-max': <7.0>,
	'y-min': <-7.0>, 'y-max': <-3.0>, 'resolution': <16>, 'quantity': <'loss'>}>]"
for ext in png svg pdf csv; do act heatmap-export "[<'$work/gui.$ext'>]"; done
wait_for "$work/gui.csv"
check "heatmap PNG written" test "$(head -c 8 "$work/gui.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a
check "heatmap SVG written" grep -q '<svg' "$work/gui.svg"
check "heatmap PDF written" test "$(head -c 5 "$work/gui.pdf")" = "%PDF-"
backends=$("$CONTACTLAB" backends | grep -c '^[a-z]')
rows=$(($(wc -l < "$work/gui.csv") - 1))
in_csv=$(tail -n +2 "$work/gui.csv" | cut -d, -f3 | sort -u | wc -l)
if [ "$in_csv" = "$backends" ] && [ "$rows" = $((16 * 16 * backends)) ] &&
	[ "$(head -1 "$work/gui.csv")" = "x,y,backend,quantity,value" ]; then
	ok "heatmap CSV has 16·16·$backends rows"
else
	not_ok "heatmap CSV has 16·16·$backends rows" "$rows rows, $in_csv backends"
fi
# the CLI and the GUI make the same figure and the same numbers from the same inputs
"$CONTACTLAB" heatmap task2-ground-wall --x ball.velocity.x:3:7:16 --y ball.velocity.y:-7:-3:16 \
	--png "$work/cli.png" --csv "$work/cli.csv" 2>/dev/null
check "heatmap CSV equals the CLI's" cmp -s "$work/gui.csv" "$work/cli.csv"
size_gui=$(identify -format '%wx%h' "$work/gui.png") size_cli=$(identify -format '%wx%h' "$work/cli.png")
differing=$(compare -metric AE -fuzz 2% "$work/gui.png" "$work/cli.png" null: 2>&1)
read -r width height < <(identify -format '%w %h' "$work/cli.png")
total=$((width * height))
if [ "$size_gui" = "$size_cli" ] && [ "${differing%%.*}" -le $((total / 1000)) ] 2>/dev/null; then
	ok "heatmap PNG equals the CLI's ($differing of $total pixels differ)"
else
	not_ok "heatmap PNG equals the CLI's" "GUI $size_gui, CLI $size_cli, differing pixels: $differing"
fi
shot heatmaps
shot heatmaps-hover "520 700"

# ---- a smoothed quantity: the window sweeps with the same samples as the CLI
gapplication action $APP load-preset "'wedge-corner'"
act heatmap-compute "[<{'x': <'ball.velocity.x'>, 'y': <'ball.velocity.y'>, 'x-min': <1.0>, 'x-max': <3.0>,
	'y-min': <-3.0>, 'y-max': <-1.0>, 'resolution': <8>, 'quantity': <'zobg-x'>, 'sigma': <0.05>, 'samples': <16>}>]"
act heatmap-export "[<'$work/zobg.csv'>]"
wait_for "$work/zobg.csv"
"$CONTACTLAB" heatmap wedge-corner --x ball.velocity.x:1:3:8 --y ball.velocity.y:-3:-1:8 --quantity zobg-x \
	--sigma 0.05 --samples 16 --csv "$work/zobg-cli.csv" 2>/dev/null
check "smoothed heatmap (ZoBG) CSV equals the CLI's" cmp -s "$work/zobg.csv" "$work/zobg-cli.csv"
check "smoothed heatmap CSV has values" test "$(tail -n +2 "$work/zobg.csv" | cut -d, -f4 | sort -u)" = zobg-x
shot heatmaps-smoothed

# ---- learning: Task 3, 50 iterations, then Export All
gapplication action $APP load-preset "'task3-two-balls'"
act learning-run "[<{'iterations': <50>}>]"
act export-all "[<'$work/session'>]"
wait_for "$work/session/manifest.json"
check "export-all wrote a manifest" test -s "$work/session/manifest.json"
missing=""
for f in $(grep -o '"file": "[^"]*"' "$work/session/manifest.json" | cut -d'"' -f4); do
	[ -s "$work/session/$f" ] || missing="$missing $f"
done
listed=$(grep -c '"file"' "$work/session/manifest.json")
for f in learning-curves.png learning-curves.svg learning-curves.pdf learning-curves.csv learned-parameters.csv \
	learning-summary.csv scene.json; do
	grep -q "\"$f\"" "$work/session/manifest.json" || missing="$missing $f(unlisted)"
done
check "every file the manifest lists exists ($listed files)" test -z "$missing"
curves="$work/session/learning-curves.csv"
for b in $(tail -n +2 "$curves" | cut -d, -f1 | uniq); do
	"$CONTACTLAB" optimize task3-two-balls --backend "$b" --iters 50 --csv "$work/cli-$b.csv" >/dev/null 2>&1
	mismatch=""
	for it in 0 49 50; do
		gui=$(grep "^$b,$it," "$curves" | cut -d, -f3)
		cli=$(grep "^$it," "$work/cli-$b.csv" | cut -d, -f2)
		[ -n "$gui" ] && [ "$gui" = "$cli" ] || mismatch="$mismatch iteration $it: GUI '$gui' CLI '$cli';"
	done
	check "learning curve of $b equals contactlab optimize (iterations 0, 49, 50)" test -z "$mismatch"
	[ -z "$mismatch" ] || echo "# $mismatch" >&"$tap"
done
shot learning

# ---- descending along a smoothed estimate: the window's curve is the CLI's
act learning-run "[<{'iterations': <20>, 'gradient': <'zobg'>, 'sigma': <0.1>, 'samples': <8>}>]"
act learning-export "[<'$work/zobg-learning.csv'>]"
wait_for "$work/zobg-learning.csv"
"$CONTACTLAB" optimize task3-two-balls --backend exact --iters 20 --gradient zobg --sigma 0.1 --samples 8 \
	--csv "$work/zobg-cli-exact.csv" >/dev/null 2>&1
gui=$(grep "^exact,20," "$work/zobg-learning.csv" | cut -d, -f3) cli=$(grep "^20," "$work/zobg-cli-exact.csv" | cut -d, -f2)
check "ZoBG learning curve equals contactlab optimize --gradient zobg (exact, iteration 20: $gui)" test -n "$gui" -a "$gui" = "$cli"

gapplication action $APP quit
wait $app
check "the app quit cleanly" test $? -eq 0

# ---- quit while a sweep and a learning run compute: both stop, the app
# ends once they have called back (it holds itself until then), cleanly
start_app
gapplication action $APP load-preset "'task3-two-balls'"
act learning-run "[<{'iterations': <100000>}>]"
act heatmap-compute "[<{'x': <'ball1.velocity.x'>, 'y': <'ball1.velocity.y'>, 'x-min': <0.5>, 'x-max': <1.5>,
	'y-min': <0.5>, 'y-max': <1.5>, 'resolution': <400>, 'quantity': <'loss'>}>]"
sleep 1
gapplication action $APP quit
quit_start=$(date +%s.%N)
for _ in $(seq 600); do kill -0 $app 2>/dev/null || break; sleep 0.1; done
if kill -0 $app 2>/dev/null; then
	not_ok "quit while computing: the app ends within 60 s"
	kill -9 $app
else
	ok "quit while computing: the app ends within 60 s ($(awk -v a="$quit_start" -v b="$(date +%s.%N)" \
		'BEGIN { printf "%.1f", b - a }') s)"
fi
wait $app
check "quit while computing: cleanly" test $? -eq 0
if grep -q CRITICAL "$work/app.log"; then not_ok "no critical warnings" "$(grep CRITICAL "$work/app.log" | head -3)"; else ok "no critical warnings"; fi
echo "1..$n" >&"$tap"
exit $((failed > 0))
