# frozen_string_literal: true

require "test_helper"
# Loaded with the file, not inside a test under GC.stress, where loading takes minutes.
require "lease_machines/stores/memory"
require "logger"
require "stringio"

module LeaseMachines
  class ConfigurationTest < Minitest::Test
    include TestHelper

    def setup
      super
      @config = Configuration.new
    end

    def test_defaults
      assert_equal 30, @config.default_ttl
      refute_predicate @config, :store?
      error = assert_raises(NotConfiguredError) { @config.store }
      assert_match(/no lease store configured/, error.message)
    end

    # (Stores::Memory: any store will do, and a SQLite one takes minutes to
    # open under GC.stress.)
    def test_a_store_is_kept_as_given
      store = Stores::Memory.new
      @config.store = store

      assert_same store, @config.store
      assert_predicate @config, :store?
    end

    def test_a_store_builder_runs_once_on_first_use
      calls = 0
      @config.store = lambda {
        calls += 1
        Stores::Memory.new
      }

      assert_equal 0, calls
      first = @config.store

      assert_same first, @config.store
      assert_equal 1, calls
    end

    def test_a_store_that_is_not_one_is_refused
      error = assert_raises(TypeError) { @config.store = "db/leases.sqlite3" }
      assert_match(%r{store must be a store .* got "db/leases.sqlite3" \(String\)}, error.message)
      refute_predicate @config, :store?

      @config.store = -> { :nope }
      error = assert_raises(TypeError) { @config.store }
      assert_match(/store builder must return a store .* got :nope \(Symbol\)/, error.message)
    end

    def test_owner_takes_what_acquire_takes
      @config.owner = U64_MAX

      assert_equal U64_MAX, @config.owner
      [[-1, RangeError], [2**64, RangeError], ["7", TypeError], [7.0, TypeError]].each do |value, kind|
        error = assert_raises(kind) { @config.owner = value }
        assert_match(/\Aowner must be an Integer in #{Regexp.escape(OWNER_RANGE)}, got #{Regexp.escape(value.inspect)}/,
                     error.message)
        assert_equal U64_MAX, @config.owner, "a refused owner leaves the setting as it was"
      end
    end

    def test_default_ttl_takes_a_lease_ttl
      @config.default_ttl = 0.5

      assert_in_delta 0.5, @config.default_ttl
      [[0, ArgumentError], [-1, ArgumentError], ["30", TypeError], [nil, TypeError]].each do |value, kind|
        error = assert_raises(kind) { @config.default_ttl = value }
        assert_match(/\Adefault_ttl must be a lease ttl \(seconds, > 0\), got #{Regexp.escape(value.inspect)}/,
                     error.message)
        assert_in_delta 0.5, @config.default_ttl
      end
    end

    def test_configure_yields_the_process_configuration
      LeaseMachines.reset_configuration!
      returned = LeaseMachines.configure { |config| config.default_ttl = 12 }

      assert_same LeaseMachines.configuration, returned
      assert_equal 12, LeaseMachines.configuration.default_ttl
    ensure
      LeaseMachines.reset_configuration!
    end

    def test_logger_takes_a_logger_and_nil_restores_the_default
      default = @config.logger
      log = StringIO.new
      @config.logger = Logger.new(log)
      @config.logger.warn("lease_machines: a line")

      assert_match(/WARN -- : lease_machines: a line/, log.string)
      @config.logger = nil

      assert_same default, @config.logger
    end

    def test_a_logger_that_is_not_one_is_refused
      error = assert_raises(TypeError) { @config.logger = $stderr }
      assert_match(/logger must respond to #debug, #info, #warn, #error \(a Logger\), got/, error.message)
    end

    def test_inspect_never_builds_the_store
      @config.store = -> { raise "built" }

      assert_match(/store=\(built on first use\)/, @config.inspect)
    end
  end
end
