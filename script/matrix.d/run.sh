# shellcheck shell=bash disable=SC2154 # env, port, dir, packages, project and matrix_dir: script/matrix's globals
# script/matrix: running the suite in one environment (the host, a chroot,
# mysql9's two roots, the arm64 root under qemu), each with the EXIT trap
# that stops its servers and unmounts. Sourced by script/matrix; run_env sets
# env, port, dir and packages.

# bookworm: the host's own packages, in a copy of the tree under tmp/matrix/bookworm.
run_host() {
  local copy="$dir/lease_machines" out="$dir/out" status=0 pkg missing=()
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] || fail "missing on the host: ${missing[*]} (bin/setup installs them)"
  copy_tree "$copy"
  remove_tree "$out"
  env CARGO_TARGET_DIR="$dir/target" CARGO_NET_OFFLINE=true MATRIX_OUT="$out" \
    MATRIX_PG_PORT="$port" MATRIX_PG_DIR="$dir/pg" "$copy/script/matrix.d/run-suite" || status=$?
  summarize "$status" "$out"
}

# A chroot environment: trixie or sid in its own root; ruby34 in the sid root
# (dir is sid's), with experimental's ruby3.4 (MATRIX_RUBY for the lib and
# smoke jobs, script/matrix.d/run-ruby34 for the suite). Its results go to
# tmp/matrix/ENV/out either way.
run_chroot() {
  local suite="$1" out status=0 ruby=ruby runner=run-suite results="$matrix_dir/$env/out"
  root="$dir/root"
  out="$root/build/out-$env"
  if [ "$env" = ruby34 ]; then ruby=ruby3.4 runner=run-ruby34; fi
  ensure_root "$suite"
  trap leave_root EXIT
  trap 'exit 130' INT TERM
  mount_root
  ensure_packages
  mkdir -p "$root/build"
  copy_tree "$root/build/lease_machines"
  remove_tree "$out"
  case "${MATRIX_JOB:-suite}" in
    suite)
      local suite_env=()
      # sid's MariaDB is trixie's: the MySQL suites run in trixie and, on sid's mysql2, in mysql9 (rakelib/matrix.rake).
      [ "$env" != sid ] || suite_env=(MATRIX_MYSQL_SUITES=0)
      # The Sidekiq tab's browser test (ruby34 runs no Sidekiq).
      if [ "$env" != ruby34 ]; then
        start_webdriver
        suite_env+=(LEASE_MACHINES_WEBDRIVER_URL="$webdriver_url")
      fi
      in_root env MATRIX_OUT="/build/out-$env" MATRIX_PG_PORT="$port" MATRIX_PG_DIR=/build/pg "${suite_env[@]}" \
        ${TEST:+TEST="$TEST"} ${TESTOPTS:+TESTOPTS="$TESTOPTS"} ${MATRIX_TIMEOUT:+MATRIX_TIMEOUT="$MATRIX_TIMEOUT"} \
        "/build/lease_machines/script/matrix.d/$runner" || status=$?
      ;;
    lib) in_root env MATRIX_OUT="/build/out-$env" MATRIX_PLATFORM="$MATRIX_PLATFORM" MATRIX_RUBY="$ruby" \
      /build/lease_machines/script/matrix.d/build-lib || status=$? ;;
    smoke)
      rm -rf "$root/build/gems"
      mkdir -p "$root/build/gems"
      cp "$MATRIX_GEM" "$root/build/gems/"
      in_root env MATRIX_OUT="/build/out-$env" MATRIX_RUBY="$ruby" \
        /build/lease_machines/script/matrix.d/smoke-gem "/build/gems/$(basename "$MATRIX_GEM")" || status=$?
      ;;
  esac
  mkdir -p "$matrix_dir/$env"
  rm -rf "$results"
  if [ -d "$out" ]; then cp -r "$out" "$results"; fi
  case "${MATRIX_JOB:-suite}" in
    suite) summarize "$status" "$results" ;;
    *) report_job "$status" "$results" ;;
  esac
}

# root: the environment's root and its packages, nothing run in it.
build_root() {
  root="$dir/root"
  case "$env" in
    arm64) ensure_arm64_root ;; # its packages come with the root
    trixie | sid)
      ensure_root "$env"
      trap leave_root EXIT
      trap 'exit 130' INT TERM
      mount_root
      ;;
    mysql9)
      # The server's root alone; the client is the sid root (name sid too).
      ensure_root sid
      trap leave_root EXIT
      trap 'exit 130' INT TERM
      mount_system
      cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
      packages=(mysql-server)
      ;;
    *) fail "no root of its own to build (script/matrix root takes trixie, sid, mysql9 and arm64)" ;;
  esac
  [ "$env" = arm64 ] || ensure_packages
  echo "matrix $env: root ready [$(elapsed)]"
}

# Stops the chroot's server and processes, then unmounts: the EXIT trap of a
# chroot environment's process.
leave_root() {
  set +e
  stop_webdriver
  if [ -f "$root/build/pg/postmaster.pid" ] && [ -x "$root/build/lease_machines/script/postgres" ]; then
    in_root env LEASE_MACHINES_PG_PORT="$port" LEASE_MACHINES_PG_DIR=/build/pg \
      /build/lease_machines/script/postgres stop >/dev/null 2>&1 || true
  fi
  stop_processes_in "$(realpath "$root")"
  unmount_all
}

# mysql9: MySQL 9 in the root $matrix_dir/mysql9/root (sid, mysql-server
# alone), the MySQL suites run against it from the sid root. The server's data
# stays in its root between runs (initialized once), like the other roots'
# PostgreSQL clusters.
run_mysql9() {
  local server_dir="$dir" url out status=0 extra=()
  mysql_port=$((port + 6))
  trap leave_mysql9 EXIT
  trap 'exit 130' INT TERM
  # The client: the sid root, with the packages `script/matrix sid` gives it.
  dir="$matrix_dir/sid"
  root="$dir/root"
  mkdir -p "$dir"
  ensure_root sid
  mount_root
  read -r -a extra <<<"$(release_packages sid)"
  packages=("${common_packages[@]}" "${extra[@]}")
  ensure_packages
  mkdir -p "$root/build"
  copy_tree "$root/build/lease_machines"
  out="$root/build/out-mysql9"
  remove_tree "$out"

  # The server: its own root, sid with mysql-server alone.
  dir="$server_dir"
  root="$dir/root"
  ensure_root sid
  mount_system
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  packages=(mysql-server)
  ensure_packages
  mkdir -p "$root/build/script"
  cp "$MATRIX_SNAPSHOT/script/mysql" "$root/build/script/mysql"
  say "starting MySQL on 127.0.0.1:$mysql_port (its log: $root/build/mysql/server.log)"
  # The port is below the kernel's ephemeral range (pg_port in script/matrix).
  url="$(in_root env LEASE_MACHINES_MYSQL_PORT="$mysql_port" LEASE_MACHINES_MYSQL_DIR=/build/mysql \
    /build/script/mysql start 2>"$dir/server-start.log")" || url=""
  if [ -z "$url" ]; then
    tail -n 20 "$dir/server-start.log" >&2
    echo "matrix $env: MySQL did not start on 127.0.0.1:$mysql_port (see $dir/server-start.log) [$(elapsed)]"
    return 1
  fi

  # The suite, in the client's root.
  root="$matrix_dir/sid/root"
  in_root env MATRIX_OUT=/build/out-mysql9 MATRIX_PG_PORT="$port" MATRIX_PG_DIR=/build/pg-mysql9 MATRIX_MYSQL_URL="$url" \
    ${TEST:+TEST="$TEST"} ${TESTOPTS:+TESTOPTS="$TESTOPTS"} ${MATRIX_TIMEOUT:+MATRIX_TIMEOUT="$MATRIX_TIMEOUT"} \
    /build/lease_machines/script/matrix.d/run-suite || status=$?
  rm -rf "$dir/out"
  if [ -d "$out" ]; then cp -r "$out" "$dir/out"; fi
  summarize "$status" "$dir/out"
}

# The EXIT trap of mysql9: stops the server, then whatever still runs in
# either root, then unmounts both.
leave_mysql9() {
  set +e
  local server_root="$matrix_dir/mysql9/root" client_root="$matrix_dir/sid/root"
  if [ -f "$server_root/build/mysql/mysqld.pid" ]; then
    root="$server_root"
    in_root env LEASE_MACHINES_MYSQL_PORT="$mysql_port" LEASE_MACHINES_MYSQL_DIR=/build/mysql \
      /build/script/mysql stop >/dev/null 2>&1
  fi
  mkdir -p "$matrix_dir/mysql9/out"
  cp "$server_root/build/mysql/server.log" "$matrix_dir/mysql9/out/server.log" 2>/dev/null
  [ -d "$client_root" ] && stop_processes_in "$(realpath "$client_root")"
  [ -d "$server_root" ] && stop_processes_in "$(realpath "$server_root")"
  unmount_all
}

# arm64: build the aarch64-linux gem on the host for the root's Ruby (cargo
# --target aarch64-unknown-linux-gnu, Debian's cross gcc), install it in the
# root without cargo and smoke-test it there, then (unless MATRIX_SMOKE_ONLY=1)
# run every test file that needs no server (or MATRIX_TESTS) with its library,
# all under qemu. The gem is copied to pkg/.
run_arm64() {
  local copy="$dir/lease_machines" out="$dir/out" status=0 gem lib
  root="$dir/root"
  ensure_arm64_root
  copy_tree "$copy"
  remove_tree "$out"
  mkdir -p "$out"
  say "cross-compiling the aarch64-linux gem for the root's Ruby (log in $out/lib.log)"
  if ! (cd "$copy" && env CARGO_TARGET_DIR="$dir/target" CARGO_NET_OFFLINE=true CROSS_ROOT="$root" \
    rake gem:native:aarch64-linux) >"$out/lib.log" 2>&1; then
    tail -n 25 "$out/lib.log" >&2
    echo "matrix $env: cross-compiling the aarch64-linux gem failed (see $out/lib.log) [$(elapsed)]"
    return 1
  fi
  gem="$(ls "$copy"/pkg/lease_machines-*-aarch64-linux.gem)"
  lib="$(ls "$copy"/tmp/pkg/aarch64-linux/libs/*/lease_machines_native.so)"
  mkdir -p "$project/pkg"
  cp "$gem" "$project/pkg/"
  file -b "$lib" | grep -q "ARM aarch64" || { echo "matrix $env: $lib is not an aarch64 library: $(file -b "$lib")"; return 1; }
  rm -rf "$root/build"
  mkdir -p "$root/build/gems"
  copy_tree "$root/build/lease_machines"
  cp "$gem" "$root/build/gems/"
  cp "$lib" "$root/build/lease_machines_native.so"
  in_arm64 MATRIX_OUT=/build/out /build/lease_machines/script/matrix.d/run-arm64 smoke "/build/gems/$(basename "$gem")" || status=$?
  cp -r "$root/build/out/." "$out/"
  if [ "$status" != 0 ] || ! grep -q '^smoke ok' "$out/smoke.log"; then
    tail -n 25 "$out/smoke.log" >&2
    echo "matrix $env: $(cat "$out/versions" 2>/dev/null): smoke test of $(basename "$gem") failed [$(elapsed)]"
    return 1
  fi
  if [ "${MATRIX_SMOKE_ONLY:-0}" = 1 ]; then
    echo "matrix $env: $(cat "$out/versions"): $(grep '^smoke ok' "$out/smoke.log") [$(elapsed)]"
    return 0
  fi
  say "$(grep '^smoke ok' "$out/smoke.log")"
  in_arm64 MATRIX_OUT=/build/out ${MATRIX_TESTS:+MATRIX_TESTS="$MATRIX_TESTS"} ${MATRIX_TIMEOUT:+MATRIX_TIMEOUT="$MATRIX_TIMEOUT"} \
    /build/lease_machines/script/matrix.d/run-arm64 suite /build/lease_machines_native.so || status=$?
  cp -r "$root/build/out/." "$out/"
  summarize "$status" "$out"
}
