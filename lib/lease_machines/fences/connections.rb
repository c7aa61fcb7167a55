# frozen_string_literal: true

require "monitor"
require "lease_machines/stores"
require "lease_machines/stores/connections"

module LeaseMachines
  module Fences
    # Where a fence's connections come from. A driver connection (a URL or a
    # path the fence opens, the caller's own, a pool) comes from the stores'
    # sources (Stores::Connections): one layer opens, serializes, reopens,
    # keeps from a forked child and closes connections for stores and fences
    # alike. ActiveRecord is the fence's own (active_record_connection/).
    #
    # What a fence does differently is policy, and stays here: its session
    # (an engine's fence Session) takes a connection inside the caller's
    # transaction and joins it, where a store's refuses it; and a Monitor,
    # not a Mutex, serializes a connection the fence opened or was given, so
    # a guard inside a guard's block (on the same fence) joins the outer one.
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

        # The source for a server fence's `connection`, of the kinds a store
        # takes (Stores::ConnectionKind): a URL, the engine's driver
        # connection, a pool, or ActiveRecord (the block's source).
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
