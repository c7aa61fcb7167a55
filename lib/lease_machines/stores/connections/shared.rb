# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A driver connection the caller owns (and closes); a lock serializes this source's use of it.
      class Shared
        include Borrowed

        def initialize(connection, engine, session: engine.method(:session), lock: Mutex)
          @session = session.call(connection)
          @lock = lock.new
        end

        def with = @lock.synchronize { yield @session.ready }
        def to_s = "a #{@session.connection.class} the caller gave"
      end
    end
  end
end
