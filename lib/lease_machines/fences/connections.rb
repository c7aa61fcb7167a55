# frozen_string_literal: true

require "monitor"
require "lease_machines/stores"
require "lease_machines/stores/connections"

module LeaseMachines
  module Fences
    # A fence's policy over the stores' connection sources: its session joins the
    # caller's transaction, and a Monitor (not a Mutex) lets a guard inside a guard join it.
    module Connections
      # One fence's sources of driver connections.
      class Sources
        # @param engine the engine's traits (Stores::Connections::Engine)
        # @yieldreturn the fence's session on a driver connection
        def initialize(engine, failures, &session)
          @engine = engine
          @failures = failures
          @session = session
        end

        # The source for a server fence's `connection` (ActiveRecord: the block's).
        def for(connection)
          kind, target = Stores::ConnectionKind.of(connection, driver: @engine.driver, expected: @engine.expected)
          case kind
          when :url then owned(target)
          when :driver then shared(target)
          when :pool then Stores::Connections::Pool.new(target, @engine, session: @session)
          else yield connection
          end
        end

        # @yieldreturn a newly opened driver connection (default: the engine's connector)
        def owned(url, &connect)
          connect ||= connector(url)
          Stores::Connections::Owned.new(url, @engine, connect: connect, session: @session, lock: Monitor)
        end

        def shared(connection) = Stores::Connections::Shared.new(connection, @engine, session: @session, lock: Monitor)

        private

        def connector(url)
          connect = @engine.connector(url)
          lambda do
            connect.call
          rescue @failures.driver_error => e
            raise @failures.statement(e, "could not connect")
          end
        end
      end
    end
  end
end
