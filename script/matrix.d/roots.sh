# shellcheck shell=bash disable=SC2154 # env, dir, root and packages: script/matrix's globals
# script/matrix: the chroot roots. What each holds (its Debian packages), how
# it is built (debootstrap once, apt again when the list changes) and how a
# command runs inside it (chroot, or proot and qemu for arm64). Sourced by
# script/matrix; env, dir, root and packages are the environment's (run_env).

# Debian packages installed in every chroot. rake-compiler: the Rakefile loads
# rake/extensiontask. gcc, libc6-dev, make: rb-sys compiles a C shim, mkmf
# writes a Makefile. libclang-dev: bindgen reads Ruby's headers. ruby-mysql2:
# the Gemfile's stores group names mysql2. pgbouncer: the pooler's store test
# (test/stores/pgbouncer_store_test.rb, script/pgbouncer). ruby-railties,
# ruby-activejob, ruby-sidekiq, redis-server: the job integrations' tests (a
# generated Rails app, real sidekiq processes on a real Redis).
# shellcheck disable=SC2034 # read by run_env (script/matrix) and run_mysql9 (run.sh)
common_packages=(
  ruby ruby-dev rake ruby-minitest bundler rake-compiler
  libclang-dev gcc libc6-dev make
  ruby-sqlite3 ruby-pg ruby-mysql2 ruby-activerecord
  ruby-railties ruby-activejob ruby-sidekiq
  postgresql pgbouncer redis-server
)

# The servers and gems one release adds to the common list: the MySQL-family
# server its MySQL store and fence tests run against (script/mysql starts it):
# MariaDB 11.8 in trixie and in sid. sid's MySQL 9 (mysql-server) cannot be
# installed beside Debian's ruby-mysql2: the gem is built on libmariadb, whose
# mariadb-common the MySQL server package conflicts with.
release_packages() {
  case "$1" in
    bookworm) ;; # the host: bin/setup installs its packages (MariaDB 10.11)
    trixie) echo mariadb-server ;;
    sid) echo mariadb-server "${ruby34_packages[*]}" ;;
    arm64) ;;
  esac
}

# Ruby 3.4 in the sid root (script/matrix ruby34): experimental's ruby3.4, and
# what rebuilding Debian's sqlite3 gem for it takes (its source package, read
# by apt-get source: dpkg-dev unpacks it; libsqlite3-dev). Only sqlite3's
# source package is on the mirror; sid's pg, mysql2, json (sidekiq) and
# nokogiri (the Rails app) are built for Ruby 3.3 alone (script/matrix.d/run-ruby34).
ruby34_packages=(ruby3.4/experimental ruby3.4-dev/experimental dpkg-dev libsqlite3-dev)

# The arm64 root (Debian bookworm for arm64, run under qemu through proot)
# holds Ruby and the gems the smoke test and the tests needing no server need; it has no
# Rust: its extension is cross-compiled on the host (rake gem:native:aarch64-linux
# with CROSS_ROOT=the root, whose ruby-dev gives the headers).
# shellcheck disable=SC2034 # read by run_arm64 (run.sh)
arm64_packages=(ruby ruby-dev rake rake-compiler ruby-minitest ruby-sqlite3 ruby-pg)
# What the host needs for it: mmdebstrap (ensure_arm64_root), qemu, proot, the cross gcc,
# file (run_arm64 checks the library is an aarch64 one).
arm64_host_packages=(mmdebstrap qemu-user-static proot gcc-aarch64-linux-gnu libc6-dev-arm64-cross file)

# The first plain Debian mirror in the host's apt sources (one-line or deb822).
mirror() {
  if [ -n "${MATRIX_MIRROR:-}" ]; then
    echo "$MATRIX_MIRROR"
    return
  fi
  local found
  found="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v '^\s*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ')" || true
  echo "${found:-http://deb.debian.org/debian}"
}

# The host's packages a root needs that are not installed yet, from the host's
# own apt sources (a fresh CI machine has none of them).
ensure_host_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  say "installing ${missing[*]} on the host (apt-get; log in $dir/host-apt.log)"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    >"$dir/host-apt.log" 2>&1 || { tail -n 20 "$dir/host-apt.log" >&2; fail "could not install ${missing[*]}"; }
}

# debootstrap once; bootstrap.stamp marks a finished root.
ensure_root() {
  local suite="$1" url
  url="$(mirror)"
  if [ -f "$dir/bootstrap.stamp" ] && [ -x "$root/bin/bash" ]; then return 0; fi
  ensure_host_packages debootstrap
  remove_tree "$root"
  rm -f "$dir/packages.stamp"
  say "debootstrap --variant=minbase $suite from $url (about a minute; log in $dir/debootstrap.log)"
  if ! debootstrap --variant=minbase "$suite" "$root" "$url" >"$dir/debootstrap.log" 2>&1; then
    tail -n 20 "$dir/debootstrap.log" >&2
    # debootstrap mounts /proc and /sys in the root itself; never delete through them.
    for target in $(mounts_under "$root"); do umount "$target" || umount -l "$target"; done
    fail "debootstrap failed; the partial root stays in $root until the next run"
  fi
  # Packages must not start services (the postgresql package's own cluster) in the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  echo "$suite $url $(date -u +%FT%TZ)" >"$dir/bootstrap.stamp"
}

# The arm64 root: the packages' files alone, unpacked on the host. mmdebstrap's
# extract variant resolves arm64_packages (and the few essential tools the
# scripts call) with the host's apt, downloads and unpacks them, and runs no
# maintainer script: Ruby needs none of theirs, and the alternative, running
# debootstrap's second stage and apt under qemu, took 11 to 13 minutes of a
# CI run against about 10 seconds. The root holds no dpkg database, so a
# changed package list (or MATRIX_REFRESH=1) builds it anew; bootstrap.stamp
# records the list. /etc/passwd and /etc/group, which base-passwd's
# maintainer script would write, get root's line.
arm64_essentials=(base-files base-passwd bash coreutils dash diffutils findutils grep gzip sed tar)
ensure_arm64_root() {
  local url wanted
  ensure_host_packages "${arm64_host_packages[@]}"
  # Not for `script/matrix root`: bin/test runs it beside rake gem:darwin's
  # own rustup target add, and two rustups at once race on the toolchain.
  [ "${MATRIX_JOB:-suite}" = root ] || rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu ||
    rustup target add aarch64-unknown-linux-gnu >"$dir/rustup.log" 2>&1 ||
    { cat "$dir/rustup.log" >&2; fail "rustup target add aarch64-unknown-linux-gnu failed"; }
  url="$(mirror)"
  wanted="bookworm arm64 $url ${arm64_essentials[*]} ${arm64_packages[*]}"
  if [ "${MATRIX_REFRESH:-0}" != 1 ] && [ -f "$dir/bootstrap.stamp" ] && [ -x "$root/usr/bin/ruby" ] &&
    [ "$(cat "$dir/bootstrap.stamp")" = "$wanted" ]; then
    return 0
  fi
  remove_tree "$root"
  rm -f "$dir/bootstrap.stamp"
  say "mmdebstrap --variant=extract --architectures=arm64 bookworm from $url (seconds; log in $dir/debootstrap.log)"
  local include
  include="$(IFS=,; echo "${arm64_essentials[*]},${arm64_packages[*]}")"
  mmdebstrap --variant=extract --architectures=arm64 --include="$include" bookworm "$root" "$url" \
    >"$dir/debootstrap.log" 2>&1 || {
    tail -n 20 "$dir/debootstrap.log" >&2
    fail "mmdebstrap failed; the partial root stays in $root until the next run"
  }
  echo "root:x:0:0:root:/root:/bin/bash" >"$root/etc/passwd"
  echo "root:x:0:" >"$root/etc/group"
  echo "$wanted" >"$dir/bootstrap.stamp"
}

# apt-get install the package list when it changed since the last install.
ensure_packages() {
  local wanted
  wanted="${packages[*]}"
  if [ "${MATRIX_REFRESH:-0}" != 1 ] && [ -f "$dir/packages.stamp" ] && [ "$(cat "$dir/packages.stamp")" = "$wanted" ]; then
    return 0
  fi
  # The mirror may serve a suite whose Release has passed its Valid-Until (sid
  # here was weeks old): accept it. Signatures are still checked.
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99matrix"
  case " $wanted " in *"/experimental "*) experimental_sources ;; esac
  say "apt-get install ${#packages[@]} packages and their dependencies (a few minutes; log in $dir/apt.log)"
  {
    in_root apt-get update -q &&
      { [ "${MATRIX_REFRESH:-0}" != 1 ] || in_root apt-get -y -q upgrade; } &&
      in_root apt-get install -y -q --no-install-recommends "${packages[@]}" &&
      in_root apt-get clean
  } >"$dir/apt.log" 2>&1 || {
    tail -n 30 "$dir/apt.log" >&2
    fail "apt-get failed"
  }
  echo "$wanted" >"$dir/packages.stamp"
}

# A root that takes a package from experimental (packagename/experimental)
# gets experimental at the lowest priority, so nothing else comes from it,
# and the sources of its own suite (apt-get source).
experimental_sources() {
  local suite
  suite="$(cut -d' ' -f1 "$dir/bootstrap.stamp")"
  printf 'deb %s experimental main\ndeb-src %s %s main\n' "$(mirror)" "$(mirror)" "$suite" \
    >"$root/etc/apt/sources.list.d/matrix-experimental.list"
  printf 'Package: *\nPin: release a=experimental\nPin-Priority: 1\n' >"$root/etc/apt/preferences.d/matrix-experimental"
}

# Runs a command in the chroot with a clean environment (arm64: under qemu).
in_root() {
  if [ "$env" = arm64 ]; then
    in_arm64 "$@"
    return
  fi
  chroot "$root" /usr/bin/env -i \
    HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never CARGO_TARGET_DIR=/build/target \
    "$@"
}

# proot binds /dev, /proc and /sys and fakes root (-0); qemu-aarch64-static runs
# every arm64 executable. Nothing is mounted: nothing to undo. The host's /tmp
# is bound too, at the same path: Debian's proot 5.1 does not translate the
# faccessat2 syscall of the root's glibc, so File.writable? (RubyGems asks it
# of GEM_HOME) sees the host's path, which then has to be the same folder.
in_arm64() {
  proot -q qemu-aarch64-static -0 -r "$root" -b /dev -b /proc -b /sys -b /tmp -w / /usr/bin/env -i \
    HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
