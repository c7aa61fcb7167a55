# frozen_string_literal: true

require_relative "store_contract"
require "lease_machines/testing"

module LeaseMachines
  # Stores::Memory against the one-process part of the store contract, and
  # what is its own: the injectable clock, one history per Database, handovers.
  class MemoryStoreTest < Minitest::Test
    include StoreContractInProcess

    def setup
      @database = Stores::Memory::Database.new
    end

    # --- what the contract needs ----------------------------------------------

    def new_store(**options)
      Stores::Memory.new(database: @database, **options)
    end

    def engine_connection_class
      Stores::Memory::Database
    end

    def raw_row(name)
      U64_COLUMNS.zip(raw_columns(name)).to_h
    end

    def insert_row(name, last_issued: nil, owner: nil, token: nil, expires_at_ns: nil, observed_ns: 0)
      @database.put(name, [last_issued, owner, token, expires_at_ns, observed_ns].map { |v| v&.to_s })
    end

    def raw_columns(name)
      @database.read(name).first&.columns
    end

    def raw_label(name)
      @database.read(name).first&.label
    end

    def write_raw_label(name, label)
      @database.put(name, raw_columns(name), label)
    end

    def insert_unchecked(name, columns)
      @database.put(name, columns)
    end

    def delete_row(name)
      @database.put(name, nil)
    end

    def engine_bad_rows
      { "a leading zero" => ["01", nil, nil, nil, "0"], "not a number" => ["x", nil, nil, nil, "0"] }
    end

    # --- Memory's own -----------------------------------------------------------

    def test_the_store_clock_is_injectable_and_read_in_whole_milliseconds
      clock = Testing::Clock.new(start: 100)
      authority = Stores::Memory.new(clock: clock).authority("nightly")
      lease = authority.acquire(owner: 1, ttl: 30).lease
      assert_equal 130.0, lease.expires_at
      clock.advance(0.0009)
      renewed = authority.renew(owner: 1, token: lease.token, ttl: 30).lease
      assert_equal 130.0, renewed.expires_at, "the clock is read in whole milliseconds (100.0009 s reads 100.000)"
      clock.advance(29.9990)
      assert_equal Decision.rejected(:occupied), authority.acquire(owner: 2, ttl: 30)
      clock.advance(0.0001)
      assert_equal 2, authority.acquire(owner: 2, ttl: 30).lease.token
    end

    def test_each_database_is_its_own_history
      one = Stores::Memory.new.authority("nightly")
      two = Stores::Memory.new.authority("nightly")
      assert_equal 1, one.acquire(owner: 1, ttl: 30).lease.token
      assert_equal 1, two.acquire(owner: 2, ttl: 30).lease.token
    end

    def test_await_handover_checks_its_arguments_as_every_store_does
      store = Stores::Memory.new
      assert_raises(TypeError) { store.await_handover(:nightly, 1) }
      error = assert_raises(ArgumentError) { store.await_handover("nightly", -1) }
      assert_match(/seconds must be non-negative and finite, got -1/, error.message)
      assert_raises(TypeError) { store.await_handover("nightly", "1") }
    end

    def test_a_store_with_signing_keys_gives_leases_their_proof
      key = "a signing key of thirty-two bytes!"
      lease = Stores::Memory.new(signing_keys: [key]).authority("nightly").acquire(owner: 1, ttl: 30).lease
      assert_equal Signing::Keys.from([key]).sign("nightly", lease.token, lease.owner), lease.proof
    end

    def test_await_handover_returns_true_on_a_release_and_false_on_timeout
      clock = Testing::Clock.new
      store = Stores::Memory.new(clock: clock)
      lease = store.authority("nightly").acquire(owner: 1, ttl: 30).lease
      waiter = Thread.new { store.await_handover("nightly", 10) }
      Thread.pass until waiter.status == "sleep"
      store.authority("nightly").release(owner: 1, token: lease.token)
      assert_equal true, waiter.value

      lease = store.authority("nightly").acquire(owner: 1, ttl: 30).lease
      waiter = Thread.new { store.await_handover("nightly", 10) }
      Thread.pass until waiter.status == "sleep"
      store.authority("nightly").renew(owner: 1, token: lease.token, ttl: 30)
      clock.advance(10)
      assert_equal false, waiter.value, "a renewal is no handover; the wait ends on the store clock"
    end

    def test_a_forced_release_is_a_handover
      store = Stores::Memory.new
      store.authority("nightly").acquire(owner: 1, ttl: 30)
      waiter = Thread.new { store.await_handover("nightly", 30) }
      Thread.pass until waiter.status == "sleep"
      store.force_release("nightly")
      assert_equal true, waiter.join(5)&.value
    end

    def test_the_options_are_validated
      assert_raise_message(TypeError, /database must be a LeaseMachines::Stores::Memory::Database, got 1/) do
        Stores::Memory.new(database: 1)
      end
      assert_raise_message(TypeError, /clock must respond to #now_ns and #wait, got :clock/) do
        Stores::Memory.new(clock: :clock)
      end
    end
  end
end
