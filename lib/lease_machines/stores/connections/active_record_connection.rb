# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
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
    end
  end
end
