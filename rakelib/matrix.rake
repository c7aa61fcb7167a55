# frozen_string_literal: true

# The Debian version matrix (script/matrix): the Ruby suite against the Ruby,
# ActiveRecord, sqlite3, pg and PostgreSQL of bookworm (this host), trixie and
# sid, the last two in chroots under tmp/matrix/ built on first use, what Ruby
# 3.4 can run in the sid root (ruby34), and the MySQL suites against sid's
# MySQL 9 (mysql9). Needs root.
#
#   rake matrix            all five; fails if any fails
#   rake matrix:trixie     one
#   rake matrix:mysql9     the MySQL suites against sid's MySQL 9 (mysql-server) in a
#                          root of its own, from the sid root's Ruby and mysql2
#   rake matrix:arm64      the aarch64-linux gem in an arm64 root under qemu: its
#                          smoke test, then every test file that needs no server
#
# MATRIX_REV, MATRIX_REFRESH, MATRIX_TESTS, TEST and TESTOPTS pass through (see script/matrix).

MATRIX_SCRIPT = File.expand_path("../script/matrix", __dir__)

# What each matrix environment runs (script/matrix.d/run-suite): `rake
# test:matrix`, the suite of `rake test` (the MySQL process included) minus
# the files that cannot differ between the versions the matrix varies (Ruby,
# ActiveRecord and Rails, sidekiq, the sqlite3, pg and mysql2 gems, the
# database servers). The matrix is there to catch a difference between
# versions; a test left out here runs on the host's versions in `rake test`:
# - test/packaging/packaging_test.rb reads the gemspec and the tree, the same
#   files in every root (the built gems are installed and used in trixie by
#   gem:fat's smoke test and in the arm64 root; native_loader_test.rb, which
#   loads the running Ruby's library, stays);
# - test/docs/demo_test.rb runs bin/demo's story, made of the public calls
#   the store and fence suites make on every version (14 s a run);
# - test/chaos/checker_test.rb and report_test.rb check chaos/'s checker, report and plot (not
#   shipped; the plot needs the host's gnuplot) on hand-written histories: no gem code.
# The chaos runs (`rake test:chaos`) are not in `rake test` at all. Kept,
# although they cost time: the README's and docs' examples (values' inspect
# output changes between Ruby versions), the Rails app and the sidekiq
# processes (the versions they exist to vary), the CLI (a Ruby process per
# call).
MATRIX_SAME_IN_EVERY_VERSION = %w[test/packaging/packaging_test.rb test/docs/demo_test.rb
                                  test/chaos/checker_test.rb test/chaos/report_test.rb].freeze
# What runs on the host only: the standalone web UI in headless Chromium
# (the same pages on every version), and BENCHMARKS.md's figures (bin/setup's
# gnuplot-nox; no gem code). The pages through Rack, the Sidekiq tab on each
# root's Sidekiq through Rack (test/web/sidekiq_tab_test.rb) and in the
# host's Chromium (test/web/sidekiq_tab_browser_test.rb: the roots hold no
# Chromium; script/matrix starts the host's chromedriver and the test in the
# root drives it over loopback) are in the matrix.
MATRIX_HOST_ONLY = %w[test/web/browser_test.rb test/docs/benchmark_plots_test.rb].freeze

Rake::TestTask.new("test:matrix") do |t|
  t.description = "Run the suite minus the tests that cannot differ between versions (what script/matrix runs)"
  t.libs << "test" << "lib"
  t.ruby_opts << TEST_WATCHDOG
  t.test_files = FileList["test/**/*_test.rb"] - MYSQL_TEST_FILES - CHAOS_TEST_FILES - MATRIX_SAME_IN_EVERY_VERSION -
                 MATRIX_HOST_ONLY
  t.warning = true
end
# The MySQL suites (test:mysql) first, unless MATRIX_MYSQL_SUITES=0: script/matrix
# sets it in sid, whose MariaDB is trixie's (11.8.9) and whose mysql2 (0.5.7)
# runs them against MySQL 9 in mysql9 (37 s of a run saved, nothing lost). The
# other files that use MySQL run as everywhere.
task "test:matrix" => [:compile, *("test:mysql" unless ENV["MATRIX_MYSQL_SUITES"] == "0")]

# What `script/matrix ruby34` runs under experimental's Ruby 3.4 in the sid
# root (script/matrix.d/run-ruby34): test:matrix's files minus the ones that
# need a gem with a C extension Debian builds for Ruby 3.3 alone and that
# cannot be rebuilt there (no source package on the mirror): pg (the files
# that test PostgreSQL, alone or beside SQLite), mysql2, sidekiq (it needs
# json >= 2.16, Debian's json 3.1; docs/JOBS.md's examples) and the Rails app
# (nokogiri). sqlite3 is rebuilt for Ruby 3.4 from its source package: the
# SQLite and memory store contracts and the SQLite fence suite run.
RUBY34_NEEDS_A_GEM_BUILT_FOR_RUBY_33_ONLY = FileList[
  "test/fences/*_test.rb", "test/stores/*_test.rb", "test/jobs/*_test.rb", "test/rails/*_test.rb",
  "test/runtime/{interrupted_acquire,limit_processes,real_processes}_test.rb", "test/testing/modes_test.rb",
  "test/docs/guides_test.rb", "test/web/sidekiq_tab_test.rb", "test/web/sidekiq_tab_browser_test.rb"
].exclude("test/fences/{refusal_events,sqlite_guard}_test.rb",
          "test/stores/{resource_name,row_codec,sqlite_waiters,sqlite_store,memory_store}_test.rb",
          "test/jobs/active_job_test_helper_test.rb", "test/rails/log_subscriber_test.rb")

Rake::TestTask.new("test:ruby34") do |t|
  t.description = "Run what Ruby 3.4 can run in the sid root (script/matrix ruby34)"
  t.libs << "test" << "lib"
  t.ruby_opts << TEST_WATCHDOG
  t.test_files = FileList["test/**/*_test.rb"] - MYSQL_TEST_FILES - CHAOS_TEST_FILES - MATRIX_SAME_IN_EVERY_VERSION -
                 MATRIX_HOST_ONLY - RUBY34_NEEDS_A_GEM_BUILT_FOR_RUBY_33_ONLY
  t.warning = true
end
task "test:ruby34" => :compile

namespace :matrix do
  {
    "bookworm" => "this host's Debian 12 packages (Ruby 3.1, ActiveRecord 6.1, PostgreSQL 15)",
    "trixie" => "a Debian 13 chroot (Ruby 3.3, ActiveRecord 7.2, sqlite3 1.7, pg 1.5, PostgreSQL 17)",
    "sid" => "a Debian sid chroot (the newest: sqlite3 2.x, pg 1.7, PostgreSQL 18)",
    "ruby34" => "experimental's Ruby 3.4 in the sid chroot (the files needing no pg, mysql2, sidekiq or Rails app)"
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

desc "Run the Ruby suite on bookworm, trixie, sid and Ruby 3.4, and the MySQL suites on MySQL 9 (script/matrix all)"
task(:matrix) { sh MATRIX_SCRIPT, "all" }
