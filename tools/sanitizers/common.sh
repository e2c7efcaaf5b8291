# shellcheck shell=bash disable=SC2154
# Shared by tools/sanitize and tools/tsan (sourced; `tag` is the calling script's name in its
# messages): the shipped scenes they run through `dem run`, and the reports they leave.

# The scenes, one a line.
sanitizer_scenes() {
  local scene
  for scene in scenes/*/*.yaml; do
    echo "$scene"
  done
}

# The simulated time of K steps of SCENE's time step: `scene_time SCENE K`.
scene_time() {
  local dt
  dt=$(grep -oE '\bdt: *[-+0-9.eE]+' "$1" | head -n 1 | sed 's/dt: *//')
  awk -v dt="$dt" -v k="$2" 'BEGIN { printf "%.9g", k * dt }'
}

# Runs a command with its output in LOG and says whether it passed: `logged_run LABEL LOG CMD...`
# (on failure the log's tail too, and a nonzero status).
logged_run() {
  local label=$1 log=$2
  shift 2
  if "$@" >"$log" 2>&1; then
    echo "$tag: $label: passed" >&2
  else
    echo "$tag: $label: FAILED, $log" >&2
    tail -n 5 "$log" >&2
    return 1
  fi
}

# Prints the first LINES lines of every report in DIR; fails when there is any:
# `show_reports DIR LINES`.
show_reports() {
  [ -z "$(ls -A "$1")" ] && return 0
  local f
  for f in "$1"/*; do
    echo "=== $f" >&2
    head -n "$2" "$f" >&2
  done
  echo "$tag: $(find "$1" -type f | wc -l) report(s) in $1" >&2
  return 1
}
