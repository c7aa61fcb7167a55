# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      module Connections
        # One ActiveRecord mysql2 connection (adapter), used under its own lock
        # through its `raw_connection`.
        class ActiveRecordConnection
          include Borrowed

          # A session on the adapter's raw connection; a failed one is
          # reconnected through the adapter (`reconnect!`), so ActiveRecord
          # knows of it.
          class AdapterSession < Session
            def self.reconnect(adapter)
              adapter.reconnect!
            rescue StandardError => e
              raise Failures.reconnect_failed("ActiveRecord", e)
            end

            def initialize(adapter)
              super(adapter.raw_connection)
              @adapter = adapter
            end

            def recover
              super
              AdapterSession.reconnect(@adapter)
            rescue StoreError
              nil # the next call reconnects again
            end
          end

          # Runs the block on `adapter` under the adapter's lock (also used by
          # ActiveRecordPool). @yieldparam session [Session]
          def self.use(adapter)
            adapter.lock.synchronize do
              raw = adapter.raw_connection
              AdapterSession.reconnect(adapter) if !raw.is_a?(Mysql2::Client) || raw.closed?
              yield AdapterSession.new(adapter).ready
            end
          end

          def initialize(adapter)
            @adapter = adapter
          end

          def with(&)
            if @adapter.transaction_open?
              raise Failures.in_transaction("ActiveRecord", "; pass ActiveRecord::Base so the store can take a " \
                                                            "connection of its own from the pool")
            end

            ActiveRecordConnection.use(@adapter, &)
          end
        end
      end
    end
  end
end
