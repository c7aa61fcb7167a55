# frozen_string_literal: true

require "monitor"
require "lease_machines/stores"
require "lease_machines/stores/connections"

module LeaseMachines
  module Fences
    # A fence's policy over the stores' connection sources: its session joins
    # the caller's transaction, and a Monitor (not a Mutex) serializes a
    # connection, so a guard inside a guard's block joins the outer one.
    module Connections
      # One fence's sources of driver connections.
      class Sources
        # @param engine the engine's traits (Stores::Connections::Engine)
        # @param failures [Failures] the fence's, for a connection it cannot open
        # @yieldparam connection a driver connection
        # @yieldreturn the fence's session on it
        def initialize(engine, failures, &session)
          @engine = engine
          @failures = failures
          @session = session
        end

        # The source for a server fence's `connection` (ActiveRecord: the block's).
        # @yieldparam active_record the ActiveRecord argument
        # @raise [TypeError] for anything else
        def for(connection)
          kind, target = Stores::ConnectionKind.of(connection, driver: @engine.driver, expected: @engine.expected)
          case kind
          when :url then owned(target)
          when :driver then shared(target)
          when :pool then pool(target)
          else yield connection
          end
        end

        # @yieldreturn a newly opened driver connection (default: the engine's
        #   connector, its failure a StoreError)
        def owned(url, &connect)
          connect ||= connector(url)
          Stores::Connections::Owned.new(url, @engine, connect: connect, session: @session, lock: Monitor)
        end

        def shared(connection)
          Stores::Connections::Shared.new(connection, @engine, session: @session, lock: Monitor)
        end

        def pool(pool)
          Stores::Connections::Pool.new(pool, @engine, session: @session)
        end

        private

        def connector(url)
          connect = @engine.connector(url)
          -> { connecting(connect) }
        end

        def connecting(connect)
          connect.call
        rescue @failures.driver_error => e
          raise @failures.statement(e, "could not connect")
        end
      end
    end
  end
end
