# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A connection opened from a URL (or a path) and owned by the source, opened anew in a forked child and,
      # where the engine says so, once it was closed after a failure.
      class Owned
        # `lock`: Mutex (a store), or Monitor (a fence: a guard inside a guard's block joins it)
        def initialize(url, engine, connect: engine.connector(url), session: engine.method(:session), lock: Mutex)
          @engine = engine
          @shown = Connections.shown(url)
          @lock = lock.new
          @session = ProcessLocal.new(inherited: engine.method(:silence)) { session.call(connect.call) }
        end

        def with
          @lock.synchronize do
            session = @session.current
            if @engine.reopen?(session.connection)
              @session.close { nil } # it failed and was closed: open a new one
              session = @session.current
            end
            yield session.ready
          end
        end

        def to_s = @shown
        def close = @lock.synchronize { @session.close { |session| @engine.close(session) } }
      end
    end
  end
end
