# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # A {Session} on an ActiveRecord adapter's raw connection: a failed
      # one is closed ({Session#recover}), then reconnected through the
      # adapter (`reconnect!`), so ActiveRecord knows of it.
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
