# shellcheck shell=bash disable=SC2154 # project: script/matrix's globals
# script/matrix: the code under test, snapshotted once per run and copied into
# each environment. Sourced by script/matrix.

# The code under test, into $1: the snapshot the parent process took
# (MATRIX_SNAPSHOT), so that `script/matrix all` tests the same code everywhere.
copy_tree() {
  remove_tree "$1"
  mkdir -p "$1"
  tar -C "$MATRIX_SNAPSHOT" -cf - . | tar -C "$1" -xf -
}

# Takes the snapshot: the working tree as it is now (tracked and untracked
# files, no ignored ones: no target/, no built .so, no Gemfile.lock; no tracked
# files deleted in the tree), or with MATRIX_REV=<git revision> that commit.
snapshot_tree() {
  local dest="$1"
  remove_tree "$dest"
  mkdir -p "$dest"
  if [ -n "${MATRIX_REV:-}" ]; then
    git -C "$project" archive --format=tar "$MATRIX_REV" | tar -C "$dest" -xf -
    rm -rf "$dest/script/matrix.d"
    cp -r "$project/script/matrix.d" "$dest/script/matrix.d"
    return
  fi
  git -C "$project" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do
      if [ -e "$project/$file" ] || [ -L "$project/$file" ]; then printf '%s\0' "$file"; fi
    done |
    tar -C "$project" --null --no-recursion -T - -cf - | tar -C "$dest" -xf -
}
