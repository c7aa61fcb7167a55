# shellcheck shell=bash
# script/matrix: what is mounted in a root, and its undoing: the binds and
# system mounts of a chroot, unmounting them (with what the suite mounted
# below them), ending the processes left inside, deleting a tree never
# through a mount. Sourced by script/matrix; root is the environment's.

# Mount points at or below $1, deepest first (from this process's mount table).
mounts_under() {
  awk -v dir="$1" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# rm -rf, but never through a mount (a bind-mounted /root/.cargo, /dev, ...).
remove_tree() {
  local dir="$1" left
  [ -e "$dir" ] || return 0
  left="$(mounts_under "$(realpath "$dir")")"
  if [ -n "$left" ]; then
    printf 'matrix: refusing to delete %s, still mounted inside it:\n%s\n' "$dir" "$left" >&2
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# Ends the processes still running inside the chroot $1 (ones this run
# started: a server or a test child that outlived its parent), by pid.
stop_processes_in() {
  local root="$1" pid pids attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    pids=()
    for pid in /proc/[0-9]*; do
      [ "$(readlink "$pid/root" 2>/dev/null)" = "$root" ] && pids+=("${pid#/proc/}")
    done
    [ "${#pids[@]}" -eq 0 ] && return 0
    if [ "$attempt" -lt 10 ]; then kill -TERM "${pids[@]}" 2>/dev/null || true; else kill -KILL "${pids[@]}" 2>/dev/null || true; fi
    sleep 1
  done
}

mounted=()
mount_in() { # mount_in TARGET mount-arguments...
  local target="$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}

unmount_all() {
  local i left
  if [ "${#mounted[@]}" -gt 0 ]; then
    # Mounts the suite made under the roots themselves (deepest first), not tracked here.
    for left in $(for i in "${mounted[@]}"; do mounts_under "$(realpath "$i")"; done | sort -ru); do
      case " ${mounted[*]} " in *" $left "*) ;; *) umount "$left" 2>/dev/null || umount -l "$left" || true ;; esac
    done
  fi
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || say "could not unmount ${mounted[i]}"
  done
  mounted=()
}

# Binds are made private: on a host whose / is a shared mount, a mount under
# the root's /dev (its /dev/shm) would otherwise appear under the host's /dev too.
#
# The root is first bound onto itself (privately), so that / inside the chroot
# is a mount point: `ip netns exec` (the chaos test's partitioned workers)
# makes / a slave mount and fails on a chroot whose / is not one. What the
# suite mounts below it (ip netns's /run/netns) is unmounted at the end.
mount_root() {
  mount_in "$root" --bind "$root"
  mount --make-private "$root"
  mount_system
  mount_in "$root/root/.cargo" --bind /root/.cargo
  mount --make-private "$root/root/.cargo"
  mount_in "$root/root/.rustup" --bind /root/.rustup
  mount -o remount,bind,ro "$root/root/.rustup"
  mount --make-private "$root/root/.rustup"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

# /proc, /sys, /dev and a /dev/shm of its own in $root: all apt and a server need.
mount_system() {
  mount_in "$root/proc" -t proc proc
  mount_in "$root/sys" -t sysfs sysfs
  mount_in "$root/dev" --bind /dev
  mount --make-private "$root/dev"
  mount_in "$root/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
}
