# frozen_string_literal: true

require_relative "store_helper"
require "active_record"

module LeaseMachines
  # A server store (PostgreSQL, MySQL) given ActiveRecord: the model class,
  # one of its connections, its pool; the same on each engine. An including
  # class provides `store_class`, `@url` (the test database's URL) and
  # `connect_active_record` (ActiveRecord::Base on that database).
  module ServerActiveRecordCases
    include StoreTestHelper

    def test_active_record_base_uses_the_pool_and_shares_the_history
      connect_active_record
      name = unique_name("ar")
      store = store_class.new(ActiveRecord::Base)
      assert_equal 1, store.authority(name).acquire(owner: 7, now: 10, ttl: 5).lease.token
      plain = store_class.new(@url)
      assert_equal Decision.rejected(:occupied), plain.authority(name).acquire(owner: 8, now: 11, ttl: 5)
      assert_equal 2, store.authority(name).reacquire(owner: 7, now: 12, ttl: 5).lease.token
      assert_equal plain.authority(name).checkpoint, store.authority(name).checkpoint
      refute ActiveRecord::Base.connection.transaction_open?
    ensure
      plain&.close
    end

    def test_a_single_active_record_connection_and_a_pool
      connect_active_record
      name = unique_name("ar-conn")
      connection_store = store_class.new(ActiveRecord::Base.connection)
      assert_equal 1, connection_store.authority(name).acquire(owner: 1, now: 1, ttl: 1).lease.token
      pool_store = store_class.new(ActiveRecord::Base.connection_pool)
      assert_equal 2, pool_store.authority(name).reacquire(owner: 1, now: 1.5, ttl: 1).lease.token
      hooked = store_class.new(ActiveRecord::Base, before_commit: ->(_commit) {})
      assert_equal 3, hooked.authority(name).reacquire(owner: 1, now: 1.7, ttl: 1).lease.token

      ActiveRecord::Base.transaction do
        error = assert_raises(StoreError) { connection_store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
        assert_match(/inside a transaction/, error.message)
      end
      assert_equal 3, pool_store.authority(name).checkpoint.last_issued
    end
  end
end
