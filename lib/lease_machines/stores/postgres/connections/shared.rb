# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      module Connections
        # A PG::Connection the caller owns (and closes); a Mutex serializes
        # this store's use of it.
        class Shared
          include Borrowed

          def initialize(conn)
            @session = Session.new(conn)
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
