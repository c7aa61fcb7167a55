# shellcheck shell=bash disable=SC2154 # env and project: script/matrix's globals
# script/matrix: an environment's one-line result, from the suite's output
# (summarize) or a lib or smoke job's (report_job). Sourced by script/matrix.

# Prints the summary line from the suite's output; fails when the suite did.
summarize() {
  local status="$1" out="$2" versions counts runs failures errors skips
  versions="$(cat "$out/versions" 2>/dev/null || echo "versions unknown")"
  counts="$(grep -E '^[0-9]+ runs, [0-9]+ assertions, [0-9]+ failures, [0-9]+ errors, [0-9]+ skips' "$out/test.log" 2>/dev/null | tail -n 1)" || true
  if [ -z "$counts" ]; then
    if [ -s "$out/test.log" ]; then tail -n 25 "$out/test.log" >&2; else tail -n 15 "$out/setup.log" >&2 2>/dev/null || true; fi
    local why="exit status $status"
    if [ -f "$out/timed-out" ]; then
      # Verbose minitest names each test as it starts: the last one named is the one that hung.
      why="$(cat "$out/timed-out"), the last test started: $(grep -oE '^[A-Za-z0-9_:]+#[A-Za-z0-9_?!]+ = ' "$out/test.log" | tail -n 1 | cut -d' ' -f1)"
    fi
    echo "matrix $env: $versions: no test summary ($why; see $out) [$(elapsed)]"
    return 1
  fi
  read -r runs failures errors skips < <(echo "$counts" | sed -E 's/^([0-9]+) runs, [0-9]+ assertions, ([0-9]+) failures, ([0-9]+) errors, ([0-9]+) skips.*/\1 \2 \3 \4/')
  if [ "$status" != 0 ] || [ "$failures" != 0 ] || [ "$errors" != 0 ]; then
    # The failures and errors in brief: the test, and the first line of the message.
    awk -v file="$out/test.log" '
      /^ *[0-9]+\) (Failure|Error):$/ { shown++; if (shown <= 12) { left = 2; printf "%s", $0 }; next }
      left > 0 { printf " %s", $0; if (--left == 0) print ""; next }
      END { if (shown > 12) printf "  ... and %d more\n", shown - 12; printf "  (in full: %s)\n", file }
    ' "$out/test.log" >&2
  fi
  local line="matrix $env: $versions: $runs runs, $failures failures, $errors errors"
  [ "$skips" != 0 ] && line+=", $skips skips"
  # Interrupted, or rake failed after the summary: say so.
  [ "$status" != 0 ] && [ "$failures" = 0 ] && [ "$errors" = 0 ] && line+=", exit status $status"
  echo "$line [$(elapsed)]"
  [ "$status" = 0 ] && [ "$failures" = 0 ] && [ "$errors" = 0 ]
}

# The summary line of a lib or smoke job. lib: the staged libs/<minor>/ folder
# goes into the host's tmp/pkg/PLATFORM/libs/, beside what the host built.
report_job() {
  local status="$1" out="$2" versions log
  versions="$(cat "$out/versions" 2>/dev/null || echo "versions unknown")"
  log="$out/$MATRIX_JOB.log"
  if [ "$status" != 0 ]; then
    tail -n 25 "$log" >&2 2>/dev/null || true
    echo "matrix $env: $versions: $MATRIX_JOB failed (exit status $status; see $log) [$(elapsed)]"
    return 1
  fi
  if [ "$MATRIX_JOB" = lib ]; then
    local staged="$project/tmp/pkg/$MATRIX_PLATFORM/libs" minor
    mkdir -p "$staged"
    for minor in "$out"/libs/*/; do
      minor="$(basename "$minor")"
      rm -rf "${staged:?}/$minor"
      cp -r "$out/libs/$minor" "$staged/$minor"
      echo "matrix $env: $versions: library for ruby $minor staged in tmp/pkg/$MATRIX_PLATFORM/libs/$minor [$(elapsed)]"
    done
  else
    echo "matrix $env: $versions: $(grep -E '^smoke ok' "$log" | tail -n 1) [$(elapsed)]"
  fi
}
