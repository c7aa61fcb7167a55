# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A session on an ActiveRecord adapter's raw connection, reconnected through the adapter (`reconnect!`).
      module AdapterSession
        def self.reconnect(adapter)
          adapter.reconnect!
        rescue StandardError => e
          raise Failures.reconnect_failed("ActiveRecord", e)
        end

        def initialize(adapter)
          super(adapter.raw_connection)
          @adapter = adapter
        end

        private

        def reconnect_adapter = AdapterSession.reconnect(@adapter)
      end

      # One ActiveRecord connection (adapter), used under its own lock through its `raw_connection`.
      class ActiveRecordConnection
        include Borrowed

        # Runs the block on `adapter` under its lock (ActiveRecordPool too), reconnecting it first when its raw
        # connection is not the driver's or is closed.
        def self.use(adapter, engine)
          adapter.lock.synchronize do
            raw = adapter.raw_connection
            AdapterSession.reconnect(adapter) if !raw.is_a?(engine.driver) || engine.closed?(raw)
            yield engine.adapter_session(adapter).ready
          end
        end

        def initialize(adapter, engine)
          @adapter = adapter
          @engine = engine
        end

        def with(&)
          if @adapter.transaction_open?
            raise Failures.in_transaction("ActiveRecord", "; pass ActiveRecord::Base so the store can take a " \
                                                          "connection of its own from the pool")
          end

          ActiveRecordConnection.use(@adapter, @engine, &)
        end

        def to_s = "an ActiveRecord connection"
      end

      # An ActiveRecord pool: the thread's connection, or, when that one is in a transaction, one checked
      # out for the call, so the decision commits independently of the caller's transaction.
      class ActiveRecordPool
        include Borrowed

        def initialize(pool, engine)
          @pool = pool
          @engine = engine
        end

        def with(&)
          @pool.with_connection do |adapter|
            return ActiveRecordConnection.use(adapter, @engine, &) unless busy?(adapter)
          end
          separate(&)
        end

        def to_s = "ActiveRecord's pool"

        private

        def separate(&)
          adapter = @pool.checkout
          ActiveRecordConnection.use(adapter, @engine, &)
        ensure
          @pool.checkin(adapter) if adapter
        end

        def busy?(adapter) = adapter.transaction_open? || @engine.raw_transaction?(adapter)
      end
    end
  end
end
