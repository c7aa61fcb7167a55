# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      module Connections
        # Anything with `with { |pg_connection| }` (connection_pool): every
        # call checks a connection out, so nothing is serialized here.
        class Pool
          include Borrowed

          def initialize(pool)
            @pool = pool
          end

          def with
            @pool.with { |conn| yield Session.new(conn).ready }
          end
        end
      end
    end
  end
end
