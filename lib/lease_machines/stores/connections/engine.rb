# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # What the shared sources ask of an engine (`extend Engine`, then `declare`); the engine adds
      # `connector(url)`, `raw_transaction?(adapter)` and `silence(session)`.
      module Engine
        attr_reader :driver, :expected

        # `closed`, `close`: the driver connection's methods; `reopen_closed`: the store's own connection
        # (from a URL) is opened again once closed.
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

        def for(connection) = Connections.for(connection, self)
        def session(connection) = @session.new(connection)
        def adapter_session(adapter) = @adapter_session.new(adapter)
        def closed?(connection) = connection.public_send(@closed)

        def close(session)
          connection = session.connection
          connection.public_send(@close) unless closed?(connection)
        end

        def reopen?(connection) = @reopen_closed && closed?(connection)
      end
    end
  end
end
