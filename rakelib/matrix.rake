# frozen_string_literal: true

# The Debian version matrix (script/matrix): the Ruby suite against the Ruby,
# ActiveRecord, sqlite3, pg and PostgreSQL of bookworm (this host), trixie and
# sid, the last two in chroots under tmp/matrix/ built on first use, and the
# MySQL suites against sid's MySQL 9 (mysql9). Needs root.
#
#   rake matrix            all four; fails if any fails
#   rake matrix:trixie     one
#   rake matrix:mysql9     the MySQL suites against sid's MySQL 9 (mysql-server) in a
#                          root of its own, from the sid root's Ruby and mysql2
#   rake matrix:arm64      the aarch64-linux gem in an arm64 root under qemu: its
#                          smoke test, then every test file that needs no server
#
# MATRIX_REV, MATRIX_REFRESH, MATRIX_TESTS, TEST and TESTOPTS pass through (see script/matrix).

MATRIX_SCRIPT = File.expand_path("../script/matrix", __dir__)

namespace :matrix do
  {
    "bookworm" => "this host's Debian 12 packages (Ruby 3.1, ActiveRecord 6.1, PostgreSQL 15)",
    "trixie" => "a Debian 13 chroot (Ruby 3.3, ActiveRecord 7.2, sqlite3 1.7, pg 1.5, PostgreSQL 17)",
    "sid" => "a Debian sid chroot (the newest: sqlite3 2.x, pg 1.7, PostgreSQL 18)"
  }.each do |env, what|
    desc "Run the Ruby suite with #{what}"
    task(env) { sh MATRIX_SCRIPT, env }
  end
end

namespace :matrix do
  desc "Smoke-test the cross-compiled aarch64-linux gem under qemu, then run every test needing no server there"
  task(:arm64) { sh MATRIX_SCRIPT, "arm64" }

  desc "Run the MySQL suites (rake test:mysql) against sid's MySQL 9, from the sid chroot's Ruby and mysql2"
  task(:mysql9) { sh MATRIX_SCRIPT, "mysql9" }
end

desc "Run the Ruby suite on bookworm, trixie and sid, and the MySQL suites on MySQL 9 (script/matrix all)"
task(:matrix) { sh MATRIX_SCRIPT, "all" }
