# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # What the shared sources ask of an engine, as the engine's own
      # `Connections` module declares it (`extend Engine`, then `declare`).
      # That module adds, as methods of its own, what is behaviour only it
      # has: `connector(url)` (a callable opening a new driver connection),
      # `raw_transaction?(adapter)` (whether an ActiveRecord adapter's raw
      # connection is inside a transaction ActiveRecord does not know of) and
      # `silence(session)` (what a forked child does to the connection it
      # inherited, so that finalizing it at exit sends nothing).
      module Engine
        # @return [Class] the driver's connection class
        attr_reader :driver
        # @return [String] how the TypeError for a wrong `connection` names
        #   the engine's own kinds
        attr_reader :expected

        # @param session [Class] the engine's Session
        # @param adapter_session [Class] its Session on an ActiveRecord
        #   adapter's raw connection (one that includes {AdapterSession})
        # @param closed [Symbol] the driver connection's method telling
        #   whether it is closed
        # @param close [Symbol] the driver connection's method closing it
        # @param reopen_closed [Boolean] whether the store's own connection
        #   (from a URL) is opened again once it is closed
        # rubocop:disable Metrics/ParameterLists -- keywords, each one trait of the engine
        def declare(driver:, expected:, session:, adapter_session:, closed:, close:, reopen_closed:)
          @driver = driver
          @expected = expected
          @session = session
          @adapter_session = adapter_session
          @closed = closed
          @close = close
          @reopen_closed = reopen_closed
        end
        # rubocop:enable Metrics/ParameterLists

        # @return the source for the store's `connection` argument
        def for(connection)
          Connections.for(connection, self)
        end

        def session(connection)
          @session.new(connection)
        end

        def adapter_session(adapter)
          @adapter_session.new(adapter)
        end

        def closed?(connection)
          connection.public_send(@closed)
        end

        # Closes a session's connection (one the source opened).
        def close(session)
          connection = session.connection
          connection.public_send(@close) unless closed?(connection)
        end

        # Whether the store's own connection must be opened again before a
        # call.
        def reopen?(connection)
          @reopen_closed && closed?(connection)
        end
      end
    end
  end
end
