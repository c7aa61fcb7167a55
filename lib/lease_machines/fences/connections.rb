# frozen_string_literal: true

require "monitor"
# Stores::ProcessLocal, through the stores' index (which loads it, and no driver).
require "lease_machines/stores"

module LeaseMachines
  module Fences
    # Where a fence's connections come from. Each source's `with` yields a
    # session (an engine's Session, or an {ActiveRecordSession}) ready for
    # one call, and `close` closes what the source opened itself.
    #
    # Unlike a store, which commits on its own and refuses a connection inside
    # a transaction, a fence uses the connection as the caller left it: a guard
    # inside the caller's transaction joins it.
    module Connections
      # A driver connection the caller owns (and closes). A Monitor serializes
      # this fence's use of it; it is reentrant, so a guard inside a guard's
      # block (on the same fence) joins the outer one.
      class Shared
        def initialize(session)
          @session = session
          @monitor = Monitor.new
        end

        def with
          @monitor.synchronize { yield @session.ready }
        end

        def close; end
      end

      # A connection the fence opens from a URL or a path, and opens again in
      # a forked child ({Stores::ProcessLocal}: a child never touches its
      # parent's). Serialized like {Shared}.
      class Owned
        # @yieldreturn a session on a newly opened connection
        def initialize(&)
          @monitor = Monitor.new
          @local = Stores::ProcessLocal.new(&)
        end

        # A connection the driver gave up on (pg finishes one whose reset
        # failed, while the server was down) is opened again.
        def with
          @monitor.synchronize do
            session = @local.current
            if session.respond_to?(:finished?) && session.finished?
              @local.close { nil } # already closed by the driver
              session = @local.current
            end
            yield session.ready
          end
        end

        # @yieldparam session the session to close (only one this process opened)
        def close(&)
          @monitor.synchronize { @local.close(&) }
        end
      end

      # Anything with `with { |connection| }` (connection_pool): every call
      # checks a connection out (a nested call in the same thread gets the
      # same one, and joins), so nothing is serialized here.
      class Pool
        # @yieldparam connection the driver connection checked out
        # @yieldreturn a session on it
        def initialize(pool, &session)
          @pool = pool
          @session = session
        end

        def with
          @pool.with { |connection| yield @session.call(connection).ready }
        end

        def close; end
      end
    end
  end
end
