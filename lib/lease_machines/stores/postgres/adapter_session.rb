# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # A {Session} whose `reconnect` goes through the ActiveRecord adapter, so ActiveRecord knows of it.
      class AdapterSession < Session
        include Stores::Connections::AdapterSession

        def reconnect = reconnect_adapter
      end
      private_constant :AdapterSession
    end
  end
end
