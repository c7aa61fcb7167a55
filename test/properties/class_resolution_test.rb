# frozen_string_literal: true

require "test_helper"
require "open3"
require "rbconfig"

module LeaseMachines
  # The extension resolves every Ruby class it makes or raises once, when it
  # loads: a missing one fails the load, and removing a constant afterwards
  # changes nothing (no lookup by name later, so nothing that could panic and
  # take the process down). Each case runs in its own Ruby process.
  class ClassResolutionTest < Minitest::Test
    LIB = File.expand_path("../../lib", __dir__)

    def ruby(script)
      without_gc_stress { Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", script) }
    end

    def test_the_extension_refuses_to_load_without_store_error
      _, err, status = ruby('require "lease_machines/native"')

      refute_predicate status, :success?
      assert_match(/LeaseMachines::StoreError must be an exception class defined before the extension loads/, err)
    end

    def test_requiring_the_gem_defines_the_error_classes_without_any_store
      out, err, status = ruby(<<~RUBY)
        require "lease_machines"
        puts LeaseMachines::StoreError.superclass, LeaseMachines::OutcomeUnknownError.superclass
        puts LeaseMachines.autoload?(:Stores), $LOADED_FEATURES.grep(/sqlite3|\\/pg\\b/).size
      RUBY

      assert_predicate status, :success?, err
      assert_equal "LeaseMachines::Error\nLeaseMachines::StoreError\nlease_machines/stores\n0\n", out
    end

    # (With Rails loaded first, the Railtie loads: test/rails/railtie_test.rb.)
    def test_requiring_the_gem_loads_nothing_of_rails
      out, err, status = ruby(<<~RUBY)
        require "lease_machines"
        puts $LOADED_FEATURES.grep(%r{/(rails|active_support|active_record|sidekiq)[/.]}).size, defined?(LeaseMachines::Rails).inspect
      RUBY

      assert_predicate status, :success?, err
      assert_equal "0\nnil\n", out
    end

    def test_removing_the_constants_after_load_changes_nothing
      out, err, status = ruby(<<~RUBY)
        require "lease_machines"
        m = LeaseMachines
        lease, decision, checkpoint, store_error, request = m::Lease, m::Decision, m::Checkpoint, m::StoreError, m::Native::Request
        %i[Lease Decision Checkpoint StoreError].each { |name| m.send(:remove_const, name) }
        m::Native.send(:remove_const, :Request)
        GC.start
        GC.compact if GC.respond_to?(:compact)
        authority = m::Authority.new
        granted = authority.acquire(owner: 1, now: 0, ttl: 5)
        puts granted.class.equal?(decision), granted.lease.class.equal?(lease), authority.checkpoint.class.equal?(checkpoint)
        begin
          m::Authority.restore(5)
        rescue TypeError => e
          puts e.message
        end
        begin
          m::Native.row_checkpoint("res", ["5", nil, nil, nil])
        rescue store_error => e
          puts e.class.equal?(store_error)
        end
        decided, columns = request.acquire(1, nil, 5).decide("res", nil, 0, :sequence)
        puts decided.class.equal?(decision), columns.inspect
      RUBY

      assert_predicate status, :success?, err
      assert_equal <<~OUT, out
        true
        true
        true
        checkpoint must be a LeaseMachines::Checkpoint, got 5
        true
        true
        ["1", "1", "1", "5000000000", "0"]
      OUT
    end
  end
end
