# frozen_string_literal: true

require "minitest/autorun"
require "tmpdir"
require "fileutils"
require "lease_machines/testing"
require "lease_machines/jobs"

module LeaseMachines
  # Testing::Assertions, on a real Memory store and a real SQLite fence. A
  # failing assertion is run inside a throwaway test (Reporter), so that its
  # Minitest::Assertion is what this test checks.
  class AssertionsTest < Minitest::Test
    include Testing::Assertions

    # A test object whose assertions fail into the caller, not into the run.
    class Reporter
      include Minitest::Assertions
      include Testing::Assertions

      attr_accessor :assertions

      def initialize
        @assertions = 0
      end
    end

    def setup
      super
      @store = Stores::Memory.new
      @dir = Dir.mktmpdir("lm_assertions")
    end

    def teardown
      Testing.disable!
      FileUtils.rm_rf(@dir)
      super
    end

    def test_assert_leased_passes_when_the_block_took_and_let_go_of_the_lease
      value = assert_leased("reports/monday") do
        @store.authority("reports/monday").hold(ttl: 30) { :written }.value
      end

      assert_equal :written, value
    end

    def test_assert_leased_sees_the_leases_of_bypass
      LeaseMachines.reset_configuration!
      option = Jobs::LeaseOption.new({ resource: "reports/monday" }, aliases: {}, owner: "a job")

      Testing.bypass { assert_leased("reports/monday") { Jobs::LeasedRun.call(option, "reports/monday", tags: {}) { :ran } } }
    end

    def test_assert_leased_sees_a_slot_of_the_resource_under_a_limit
      option = Jobs::LeaseOption.new({ resource: "reports/monday", limit: 3 }, aliases: {}, owner: "Job")
      Testing.bypass { assert_leased("reports/monday") { Jobs::LeasedRun.call(option, "reports/monday", tags: {}) { :ran } } }
      assert_raises(Minitest::Assertion) do
        Testing.bypass { assert_leased("reports") { Jobs::LeasedRun.call(option, "reports/monday", tags: {}) { :ran } } }
      end
    end

    def test_assert_leased_fails_when_no_lease_was_taken
      failure = assert_raises(Minitest::Assertion) { Reporter.new.assert_leased("reports/monday") { :nothing } }

      assert_equal "expected a lease on \"reports/monday\", saw []", failure.message
    end

    def test_assert_leased_fails_when_another_resource_was_leased_or_the_lease_was_refused
      @store.authority("reports/monday").acquire(owner: 1, ttl: 60)
      failure = assert_raises(Minitest::Assertion) do
        Reporter.new.assert_leased("reports/monday") do
          @store.authority("reports/tuesday").hold(ttl: 30) { :other }
          @store.authority("reports/monday").hold(owner: 2, ttl: 30) { :refused }
        end
      end

      assert_equal "expected a lease on \"reports/monday\", saw [[:acquire, :rejected]]", failure.message
    end

    # The block returned while another thread still held the lease it took.
    def test_assert_leased_fails_when_the_lease_is_still_held
      held = Queue.new
      done = Queue.new
      holder = nil
      failure = assert_raises(Minitest::Assertion) do
        Reporter.new.assert_leased("reports/monday") do
          holder = Thread.new do
            @store.authority("reports/monday").hold(ttl: 30) do
              held << true
              done.pop
            end
          end
          held.pop
        end
      end

      assert_equal "the lease on \"reports/monday\" was not released", failure.message
    ensure
      done << true
      holder&.join
    end

    def test_assert_fenced_returns_the_refusal_of_a_stale_write
      fences = Fences::SQLite.new(File.join(@dir, "reports.sqlite3")).tap(&:setup!)
      fences.guard("reports/monday", 5) { :written }
      error = assert_fenced { fences.guard("reports/monday", 4) { :stale } }

      assert_equal [4, 5], [error.token, error.highest]
    ensure
      fences&.close
    end

    def test_assert_fenced_fails_when_the_write_went_through
      failure = assert_raises(Minitest::Assertion) { Reporter.new.assert_fenced { :written } }

      assert_match(/LeaseMachines::FencedError expected but nothing was raised/, failure.message)
    end
  end
end
