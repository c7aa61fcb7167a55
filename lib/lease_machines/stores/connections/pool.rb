# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # Anything with `with { |driver_connection| }` (connection_pool): every
      # call checks a connection out (a nested call in the same thread gets
      # the same one), so nothing is serialized here.
      class Pool
        include Borrowed

        # @param session [#call] a driver connection -> the session `with` yields
        def initialize(pool, engine, session: engine.method(:session))
          @pool = pool
          @session = session
        end

        def with
          @pool.with { |connection| yield @session.call(connection).ready }
        end

        def to_s
          "a pool (#{@pool.class})"
        end
      end
    end
  end
end
