# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      module Connections
        # A Mysql2::Client the caller owns (and closes); a Mutex serializes
        # this store's use of it. It must be in autocommit mode and outside a
        # transaction between calls (a decision commits its own). A client
        # whose connection failed is closed and stays closed: give the store a
        # URL, a pool or ActiveRecord to have it reconnect.
        class Shared
          include Borrowed

          def initialize(client)
            @session = Session.new(client)
            @mutex = Mutex.new
          end

          def with
            @mutex.synchronize { yield @session.ready }
          end
        end
      end
    end
  end
end
