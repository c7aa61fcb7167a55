# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # What an engine's session on an ActiveRecord adapter's raw connection
      # shares (each engine's `Connections::AdapterSession`, a subclass of its
      # Session, includes it): a failed connection is reconnected through the
      # adapter (`reconnect!`), so ActiveRecord knows of it. When the engine's
      # session does so is the engine's own (PostgreSQL: in place of its
      # `reconnect`; MySQL: after its `recover` closed the client).
      module AdapterSession
        # @raise [StoreError] when the adapter cannot reconnect
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

        def reconnect_adapter
          AdapterSession.reconnect(@adapter)
        end
      end
    end
  end
end
