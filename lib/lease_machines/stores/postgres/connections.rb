# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # PostgreSQL's part in the connection sources (also Fences::Postgres's).
      module Connections
        extend Stores::Connections::Engine

        # The store's own connection is never replaced: a {Session} reconnects it in place.
        declare driver: PG::Connection, expected: "a PG::Connection, a connection URL String",
                session: Session, adapter_session: AdapterSession,
                closed: :finished?, close: :finish, reopen_closed: false

        def self.connector(url) = -> { PG.connect(url) }

        def self.raw_transaction?(adapter)
          raw = adapter.raw_connection
          raw.is_a?(PG::Connection) && !raw.finished? && raw.transaction_status != Session::IDLE
        end

        # Points the child's copy of the socket at /dev/null, so the Terminate sent at exit goes nowhere.
        def self.silence(session)
          conn = session.connection
          return if conn.finished?

          conn.socket_io.reopen(File::NULL)
        rescue PG::Error, SystemCallError, IOError
          nil # no socket left to silence
        end
      end
    end
  end
end
