# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # Anything with `with {
      # driver_connection
      # }` (connection_pool): every call checks one out.
      class Pool
        include Borrowed

        def initialize(pool, engine, session: engine.method(:session))
          @pool = pool
          @session = session
        end

        def with = @pool.with { |connection| yield @session.call(connection).ready }
        def to_s = "a pool (#{@pool.class})"
      end
    end
  end
end
