# shellcheck shell=bash disable=SC2154 # env and dir: script/matrix's globals
# script/matrix: the host's chromedriver, for the browser tests run in a
# chroot (test/web/sidekiq_tab_browser_test.rb: the Sidekiq tab on trixie's
# and sid's Sidekiq). A chroot shares the host's network namespace: the
# test serves Sidekiq Web inside the root on loopback and drives this
# chromedriver over loopback HTTP (LEASE_MACHINES_WEBDRIVER_URL), and the
# host's Chromium loads the root's pages. The roots hold no Chromium.
# Sourced by script/matrix.

# Starts chromedriver on a free loopback port, in a session of its own (so
# stop_webdriver ends it with the Chromium it started); sets webdriver_url.
# The test waits for it to answer (test/support/webdriver.rb).
start_webdriver() {
  local missing=() pkg port
  for pkg in chromium chromium-driver; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] ||
    fail "missing on the host: ${missing[*]} (bin/setup installs them; the roots' browser tests drive the host's Chromium)"
  port="$(ruby -rsocket -e 'server = TCPServer.new("127.0.0.1", 0); print server.addr[1]; server.close')"
  setsid chromedriver --port="$port" --log-path="$dir/chromedriver.log" >/dev/null 2>&1 &
  webdriver_pid=$!
  webdriver_url="http://127.0.0.1:$port"
}

# Ends chromedriver and whatever it started (part of leave_root).
stop_webdriver() {
  [ -n "${webdriver_pid:-}" ] || return 0
  kill -TERM -- "-$webdriver_pid" 2>/dev/null || true
  wait "$webdriver_pid" 2>/dev/null || true
  webdriver_pid=""
}
