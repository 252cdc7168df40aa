#!/bin/bash
# kill -9 in the middle of a save. The GUI saves a scene (save-as of a 2 MB
# scene), exports the canvas of the 100-ball break (PNG, PDF) and a heatmap
# CSV over D-Bus actions onto a file that already exists, and is killed with
# SIGKILL at a range of delays after the request, spread over the time the
# request takes (measured first). Afterwards the target must be the old file
# byte for byte or the complete new one (the scene and CSV byte for byte as
# an uninterrupted save writes them, the PNG read by ImageMagick to its IEND,
# the PDF by pdfinfo to its %%EOF), and nothing may be left beside it that a
# user could take for the output: a leftover is tolerated only with a hidden
# name ending in .tmp, and reported. The autosave (recovery) file is killed
# the same way, and the next start must keep it and clear what the killed
# autosave left. Kills that found the app with a file open in the target's
# folder are counted as "mid-write". TAP output; needs an X display (run
# `xvfb-run -a meson test`) and skips cleanly without one.
#   CONTACTLAB: the executable.  KILL_SAVE_ROUNDS=N: rounds over the delays (default 1).
set -u
APP=io.github.contactlab.ContactLab
WIN=/io/github/contactlab/ContactLab/window/1
. "$(dirname "$0")/session.sh"
e2e_session gdbus gapplication identify pdfinfo awk

export GSETTINGS_BACKEND=memory GSK_RENDERER=cairo LC_ALL=C.UTF-8
unset GTK_A11Y
work=$(mktemp -d)
app=
trap '[ -n "$app" ] && kill -9 $app 2>/dev/null; rm -rf "$work"' EXIT
n=0 failed=0
tap=${TAP_FD:-1}
rounds=${KILL_SAVE_ROUNDS:-1}
ok() { n=$((n + 1)); echo "ok $n - $1" >&"$tap"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1" >&"$tap"; shift; for line in "$@"; do echo "# $line" >&"$tap"; done; }
note() { echo "# $*" >&"$tap"; }
open_file() { gapplication action $APP open-file "'$1'"; }
act() { gdbus call --session --timeout 30 --dest $APP --object-path $WIN --method org.gtk.Actions.Activate "$1" "$2" '{}' >/dev/null; }
owned() {
	gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
		--method org.freedesktop.DBus.NameHasOwner $APP 2>/dev/null | grep -q true
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# note_slow START WHAT: a trial that took over 15 s is noted (a timeout's diagnosis)
note_slow() {
	local took
	took=$(since "$1")
	awk -v t="$took" 'BEGIN { exit !(t > 15) }' && note "$2 took $took s"
}

# start_app STATE: the GUI with its own state folder (where the recovery
# file lives), not recomputing after each load (the machine stays as idle as it is)
start_app() {
	export XDG_STATE_HOME=$1
	# the killed app's name must be gone, or the new one would hand its start to it
	for _ in $(seq 600); do owned || break; sleep 0.05; done
	"$CONTACTLAB" >>"$work/app.log" 2>&1 &
	app=$!
	e2e_await_app $app || return 1
	gdbus call --session --dest $APP --object-path $WIN --method org.gtk.Actions.SetState live '<false>' '{}' >/dev/null
}
writing_in() { ls -l /proc/$app/fd 2>/dev/null | grep -qF -- " $1/"; }
# wait_write DIR [PID]: until the app has a file open in DIR (a write under
# way), or the request PID has ended, or 5 s have passed
# (in integer milliseconds: awk prints t + 5 as %.6g, which rounds an epoch
# time by up to 5 000 s, and the wait then lasted until CI's limit)
wait_write() {
	local end=$(($(date +%s%3N) + 5000))
	while ! writing_in "$1"; do
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
		[ "$(date +%s%3N)" -lt $end ] || return 1
	done
}
# kill -9, noting first whether the app had a file open in $1 (a write under way)
kill_app() {
	midwrite=0
	[ -n "${1:-}" ] && writing_in "$1" && midwrite=1
	kill -9 $app 2>/dev/null
	wait $app 2>/dev/null
	app=
}

# big_scene NAME VARIANT: 10 balls with 5000-step control sequences, 2 MB of JSON
big_scene() {
	awk -v name="$1" -v variant="$2" 'BEGIN {
		steps = 5000
		printf "{\n  \"contactlab\": 1,\n  \"name\": \"%s\",\n  \"duration\": 2,\n  \"steps\": %d,\n  \"balls\": [", name, steps
		for (b = 0; b < 10; b++) {
			printf "%s\n    { \"id\": \"b%d\", \"position\": [%d, 0], \"velocity\": [0, 0], \"radius\": 0.1, \"mass\": 1,\n", b ? "," : "", b, 2 * b
			printf "      \"control\": { \"sequence\": ["
			for (k = 0; k < steps; k++)
				printf "%s[%.17g, %.17g]", k ? ", " : "", variant + 0.001 * (b + 1) + 1e-7 * k, sin(k * 0.01 + b)
			printf "] } }"
		}
		printf " ],\n  \"walls\": [],\n"
		printf "  \"loss\": [ { \"type\": \"final_position\", \"ball\": \"b0\", \"target\": [0, 1], \"weight\": 1 } ]\n}\n"
	}'
}

# valid KIND FILE: the complete new file of that kind
valid() {
	case $1 in
	json | csv | recovery) cmp -s "$2" "$work/new/target.$1" ;;
	png) [ "$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$(tail -c 8 "$2" | head -c 4)" = IEND ] && identify -regard-warnings "$2" >/dev/null 2>&1 ;;
	pdf) [ "$(head -c 5 "$2")" = "%PDF-" ] && tail -c 32 "$2" | grep -q '%%EOF' && pdfinfo "$2" >/dev/null 2>&1 ;;
	esac
}

# judge KIND DIR TARGET OLD: the target is the old file or a complete new
# one; anything else in DIR is a leftover, tolerated only as a hidden *.tmp
declare -A outcome
judge() {
	local kind=$1 dir=$2 target=$3 old=$4 what f name
	if [ ! -e "$target" ]; then
		what=missing
	elif cmp -s "$target" "$old"; then
		what=old
	elif valid "$kind" "$target"; then
		what=new
	else
		what=broken
	fi
	outcome[$kind-$what]=$((${outcome[$kind-$what]:-0} + 1))
	outcome[$kind-mid-write]=$((${outcome[$kind-mid-write]:-0} + midwrite))
	[ "$what" = old ] || [ "$what" = new ] || problems="$problems $(basename "$dir"): the target is $what;"
	for f in "$dir"/* "$dir"/.[!.]*; do
		[ -e "$f" ] && [ "$f" != "$target" ] || continue
		name=$(basename "$f")
		outcome[$kind-leftover]=$((${outcome[$kind-leftover]:-0} + 1))
		case $name in
		.*.tmp) note "$kind, $(basename "$dir"): a hidden temporary file was left: $name" ;;
		*) problems="$problems $(basename "$dir"): left $name;" ;;
		esac
	done
}
summary() {
	local k text=""
	for k in old new mid-write broken missing leftover; do text="$text, $k ${outcome[$1-$k]:-0}"; done
	echo "${text#, }"
}
report() {
	local kind=$1 title=$2 trials=$3
	if [ -z "$problems" ] && [ "$trials" -gt 0 ]; then
		ok "$title, killed at $trials delays: the old file or the complete new one, nothing beside it ($(summary $kind))"
	else
		not_ok "$title, killed at $trials delays: the old file or the complete new one, nothing beside it" \
			"$(summary $kind)" "$problems"
	fi
}
# delays FROM TOTAL: fractions of the time a request takes, from before it
# reaches the app to after the file is in place, then "watch" twice:
# as soon as the app has a file open in the target's folder
delays() {
	awk -v a="$1" -v t="$2" 'BEGIN {
		n = split("0.1 0.3 0.5 0.7 0.85 1 1.3", f)
		for (i = 1; i <= n; i++) print a + f[i] * t
		print "watch"; print "watch"
	}'
}
# pause DELAY DIR [PID]: sleeps, or watches DIR for the write
pause() { if [ "$1" = watch ]; then wait_write "$2" "${3:-}"; else sleep "$1"; fi; }

# ---- the old files and the scenes
mkdir -p "$work/old" "$work/new"
big_scene "the previous file" 0 >"$work/old/target.json"
big_scene "scene A" 1 >"$work/a.json"
big_scene "scene B" 2 >"$work/b.json"
"$CONTACTLAB" simulate task1-bounce-once --backend exact --png "$work/old/target.png" >/dev/null 2>&1
"$CONTACTLAB" simulate task1-bounce-once --backend exact --pdf "$work/old/target.pdf" >/dev/null 2>&1
"$CONTACTLAB" heatmap task1-bounce-once --x ball.velocity.x:1:3:4 --y ball.velocity.y:-3:-1:4 \
	--csv "$work/old/target.csv" >/dev/null 2>&1
for kind in png pdf; do valid $kind "$work/old/target.$kind" || not_ok "the previous $kind is valid"; done
"$CONTACTLAB" simulate "$work/old/target.json" --backend exact >/dev/null 2>&1 || not_ok "the previous scene loads"

# set_up KIND: the scene the request writes; request KIND TARGET: the request
set_up() {
	case $1 in
	json) open_file "$work/a.json" ;;
	png | pdf) gapplication action $APP load-preset "'billiards-break'" ;;
	csv)
		gapplication action $APP load-preset "'task1-bounce-once'"
		act heatmap-compute "[<{'x': <'ball.velocity.x'>, 'y': <'ball.velocity.y'>, 'x-min': <1.0>, 'x-max': <3.0>,
			'y-min': <-3.0>, 'y-max': <-1.0>, 'resolution': <48>, 'quantity': <'loss'>}>]"
		# an export waits for the heatmap to be complete: a first one marks that
		local ready="$work/ready-$RANDOM.csv"
		act heatmap-export "[<'$ready'>]"
		for _ in $(seq 1200); do [ -e "$ready" ] && return 0; sleep 0.05; done
		problems="$problems the heatmap was not ready in 60 s;"
		;;
	esac
}
request() {
	case $1 in
	json) act save-as "[<'$2'>]" ;;
	png | pdf) act export-canvas "[<'$2'>]" ;;
	csv) act heatmap-export "[<'$2'>]" ;;
	esac
}

for kind in json png pdf csv; do
	case $kind in
	json) title="save-as of a 2 MB scene" ;;
	png | pdf) title="canvas $kind of the 100-ball break" ;;
	csv) title="heatmap CSV, 48 × 48 cells per backend" ;;
	esac
	# the uninterrupted request: how long it takes, and the complete new file
	mkdir -p "$work/calibrate-$kind"
	start_app "$work/state-calibrate-$kind" || { not_ok "$kind: the app started" "see $work/app.log"; continue; }
	set_up $kind
	start=$(now)
	request $kind "$work/new/target.$kind"
	total=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')
	kill_app
	if ! [ -s "$work/new/target.$kind" ] || { [ $kind != json ] && [ $kind != csv ] && ! valid $kind "$work/new/target.$kind"; }; then
		not_ok "$title: an uninterrupted request writes the file"
		continue
	fi
	[ $kind = json ] && ! "$CONTACTLAB" simulate "$work/new/target.json" --backend exact >/dev/null 2>&1 &&
		not_ok "$title: the saved scene loads"
	problems=""
	i=0
	kind_start=$(now)
	for round in $(seq "$rounds"); do
		for delay in $(delays 0 "$total"); do
			i=$((i + 1))
			trial_start=$(now)
			dir="$work/$kind-$i"
			target="$dir/target.$kind"
			mkdir -p "$dir"
			cp "$work/old/target.$kind" "$target"
			start_app "$work/state-$kind-$i" || { problems="$problems $i: the app did not start;"; continue; }
			set_up $kind
			# the reply comes after the write: not waited for
			request $kind "$target" 2>/dev/null &
			caller=$!
			pause "$delay" "$dir" $caller
			kill_app "$dir"
			wait $caller 2>/dev/null
			judge $kind "$dir" "$target" "$work/old/target.$kind"
			note_slow "$trial_start" "$kind, trial $i (delay $delay)"
		done
	done
	note "$title: $total s uninterrupted; $i trials in $(since "$kind_start") s"
	report $kind "$title" $i
	[ $kind = json ] && save_time=$total
done

# ---- the recovery file: an autosave (1 s after an edit) replaced by the next one
# the second autosave's complete contents: scene B as save-as writes it
start_app "$work/state-calibrate-recovery"
open_file "$work/b.json"
act save-as "[<'$work/new/target.recovery'>]"
kill_app
problems=""
restart_problems=""
i=0
kind_start=$(now)
for round in $(seq "$rounds"); do
	for delay in $(delays 0.9 "$(awk -v t="${save_time:-0.3}" 'BEGIN { print t + 0.1 }')"); do
		i=$((i + 1))
		trial_start=$(now)
		state="$work/state-recovery-$i"
		dir="$state/contactlab"
		target="$dir/recovery.json"
		start_app "$state" || { problems="$problems $i: the app did not start;"; continue; }
		open_file "$work/a.json"
		open_file "$work/b.json"
		act undo '[]' # scene A, unsaved: autosaved a second later
		for _ in $(seq 200); do [ -e "$target" ] && break; sleep 0.05; done
		cp "$target" "$work/recovery-old-$i" 2>/dev/null
		act redo '[]' # scene B: the next autosave replaces the file
		pause "$delay" "$dir"
		kill_app "$dir"
		judge recovery "$dir" "$target" "$work/recovery-old-$i"
		# the next session offers the file back and clears what the killed one left
		start_app "$state" || { restart_problems="$restart_problems $i: no restart;"; continue; }
		sleep 0.3
		kill_app
		left=$(cd "$dir" && ls -A | grep -vx recovery.json)
		[ -z "$left" ] || restart_problems="$restart_problems $i: $left;"
		cmp -s "$target" "$work/recovery-old-$i" || valid recovery "$target" ||
			restart_problems="$restart_problems $i: the recovery file changed;"
		note_slow "$trial_start" "recovery, trial $i (delay $delay)"
	done
done
note "recovery: $i trials in $(since "$kind_start") s"
report recovery "recovery file (a 2 MB scene) replaced by the next autosave" $i
if [ -z "$restart_problems" ] && [ "$i" -gt 0 ]; then
	ok "the next start keeps that recovery file and clears what the killed autosave left"
else
	not_ok "the next start keeps that recovery file and clears what the killed autosave left" "$restart_problems"
fi

if grep -q CRITICAL "$work/app.log"; then not_ok "no critical warnings" "$(grep CRITICAL "$work/app.log" | head -3)"; else ok "no critical warnings"; fi
echo "1..$n" >&"$tap"
exit $((failed > 0))
