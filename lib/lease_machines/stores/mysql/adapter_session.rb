# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # A {Session} that, once closed after a failure, reconnects through the ActiveRecord adapter.
      class AdapterSession < Session
        include Stores::Connections::AdapterSession

        def recover
          super
          reconnect_adapter
        rescue StoreError
          nil # the next call reconnects again
        end
      end
      private_constant :AdapterSession
    end
  end
end
