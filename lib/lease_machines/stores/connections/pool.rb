# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # Anything with `with { |driver_connection| }` (connection_pool): every
      # call checks a connection out, so nothing is serialized here.
      class Pool
        include Borrowed

        def initialize(pool, engine)
          @pool = pool
          @engine = engine
        end

        def with
          @pool.with { |connection| yield @engine.session(connection).ready }
        end
      end
    end
  end
end
