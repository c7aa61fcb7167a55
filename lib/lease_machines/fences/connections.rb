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
    # alike. ActiveRecord is the fence's own (active_record/source.rb).
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
        # @yieldparam connection a driver connection
        # @yieldreturn the fence's session on it
        def initialize(engine, &session)
          @engine = engine
          @session = session
        end

        # @yieldreturn a newly opened driver connection
        def owned(url, &connect)
          Stores::Connections::Owned.new(url, @engine, connect: connect, session: @session, lock: Monitor)
        end

        def shared(connection)
          Stores::Connections::Shared.new(connection, @engine, session: @session, lock: Monitor)
        end

        def pool(pool)
          Stores::Connections::Pool.new(pool, @engine, session: @session)
        end
      end
    end
  end
end
