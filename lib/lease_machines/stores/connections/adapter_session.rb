# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # An engine's session on an ActiveRecord adapter's raw connection: a
      # failed connection is reconnected through the adapter (`reconnect!`),
      # so ActiveRecord knows of it.
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
