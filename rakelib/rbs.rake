# frozen_string_literal: true

# RBS signatures (sig/lease_machines.rbs):
#
#   rake rbs:validate   the signatures parse and every type they name exists
#   rake rbs:test       the test suite runs with RBS runtime type checking on
#                       every LeaseMachines class that has a signature
#
# rbs 2.x checks each call of a hooked method, arguments and return value, after
# the call; a mismatch raises RBS::Test::Tester::TypeError, an Exception that no
# `assert_raises(TypeError)` catches, so the test errors. Tests that pass wrong
# types on purpose (to check the TypeError and ArgumentError the API raises)
# would be false alarms. rbs 2.x can only skip whole classes (RBS_TEST_SKIP) or
# whole methods (%a{rbs:test:skip}), which would switch the check off for the
# well-typed calls too; so instead the ill-typed tests live in their own files,
# listed in ILL_TYPED below, and this task runs every other test file. README
# blocks marked `<!-- ill-typed -->` are left out the same way (test/docs/readme_test.rb).
#
# Before the suite, a canary makes one ill-typed call and requires the checker
# to catch it, so a checker that silently installed no hooks fails the task.

require "rake/testtask"

# Settings and helpers of the rbs:* tasks.
module LeaseMachinesRbs
  ROOT = File.expand_path("..", __dir__)

  # Ill-typed on purpose: every call in them breaks a signature.
  ILL_TYPED = %w[test/properties/argument_types_test.rb test/properties/maliciousness_test.rb
                 test/fences/arguments_test.rb test/unit/signing_arguments_test.rb
                 test/unit/configuration_test.rb test/runtime/argument_types_test.rb
                 test/testing/mode_arguments_test.rb test/runtime/limit_arguments_test.rb].freeze
  # Not about the Ruby API's types: builds and installs gems in subprocesses
  # (packaging, a generated Rails app, sidekiq processes), needs a database server (stores), or
  # counts allocations, which the checker's own wrappers change (allocation).
  # The MySQL tests run in a process of their own (`rake test:mysql`: Debian's
  # mysql2 0.5.3 crashes once the GC tests have compacted the heap). The
  # fences' tests run (they need the PostgreSQL server bin/test starts,
  # DATABASE_URL); the few of them that make ill-typed calls on purpose skip
  # under the checker (`ill_typed!`, test/fences/fence_helper.rb). The chaos
  # runs (`rake test:chaos`) use the gem in worker processes the checker is
  # not loaded in.
  ELSEWHERE = %w[test/packaging/**/*_test.rb test/stores/**/*_test.rb test/rails/**/*_test.rb test/jobs/**/*_test.rb
                 test/**/mysql*_test.rb test/properties/allocation_test.rb
                 test/runtime/real_processes_test.rb test/runtime/limit_processes_test.rb
                 test/chaos/chaos_test.rb].freeze
  # Run all the same: the row codec test needs no database and is well-typed.
  NOT_ELSEWHERE = %w[test/stores/row_codec_test.rb].freeze

  ENVIRONMENT = {
    "RBS_TEST_TARGET" => "LeaseMachines::*",
    "RBS_TEST_OPT" => "-I #{File.join(ROOT, 'sig')}",
    "RBS_TEST_LOGLEVEL" => "error",
    "RBS_TEST_SAMPLE_SIZE" => "ALL"
  }.freeze

  CANARY = <<~'RUBY'
    require "lease_machines"
    begin
      LeaseMachines::Authority.new.acquire(owner: 2.9, now: 0, ttl: 1)
    rescue RBS::Test::Tester::TypeError
      puts "rbs:test: the runtime type checker is on"
      exit 0
    rescue ::TypeError => e
      abort "rbs:test: the runtime type checker did not catch an ill-typed call (#{e.message})"
    end
    abort "rbs:test: an ill-typed call went through"
  RUBY

  module_function

  def rbs(*args)
    Rake.sh(RbConfig.ruby, Gem.bin_path("rbs", "rbs"), *args)
  end

  def test_files
    elsewhere = Rake::FileList[*ELSEWHERE].exclude(*NOT_ELSEWHERE)
    Rake::FileList["test/**/*_test.rb"].exclude(*ILL_TYPED, *elsewhere)
  end
end

namespace :rbs do
  desc "Validate sig/lease_machines.rbs"
  task :validate do
    LeaseMachinesRbs.rbs("-I", "sig", "validate", "--silent")
  end

  task :environment do
    LeaseMachinesRbs::ENVIRONMENT.each { |name, value| ENV[name] = value }
  end

  task canary: %i[compile environment] do
    Rake.ruby("-Ilib", "-rrbs/test/setup", "-e", LeaseMachinesRbs::CANARY, verbose: false)
  end

  Rake::TestTask.new(:suite) do |t|
    t.description = nil
    t.libs << "test" << "lib"
    t.ruby_opts << "-rrbs/test/setup" << TEST_WATCHDOG
    t.test_files = LeaseMachinesRbs.test_files
    t.warning = false
  end
  task suite: %i[compile environment]

  desc "Run the well-typed tests with RBS runtime type checking (see rakelib/rbs.rake)"
  task test: %i[canary suite]
end
