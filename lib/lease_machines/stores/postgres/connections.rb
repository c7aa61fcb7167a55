# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # PostgreSQL's part in the store's connection sources (the sources
      # themselves, shared with MySQL, are {Stores::Connections}): each
      # source's `with` yields a {Session} on a PG::Connection that is open
      # and idle (not inside a transaction).
      # @api private (also the fences' engine: Fences::Postgres)
      module Connections
        extend Stores::Connections::Engine

        # The store's own connection is never replaced: a {Session}
        # reconnects a broken connection in place and leaves it open.
        declare driver: PG::Connection, expected: "a PG::Connection, a connection URL String",
                session: Session, adapter_session: AdapterSession,
                closed: :finished?, close: :finish, reopen_closed: false

        # @return [#call] opens a new connection to `url`
        def self.connector(url)
          -> { PG.connect(url) }
        end

        # Whether the adapter's raw connection is inside a transaction
        # ActiveRecord does not know of (a finished one, or none, is not: it
        # is reconnected before use).
        def self.raw_transaction?(adapter)
          raw = adapter.raw_connection
          raw.is_a?(PG::Connection) && !raw.finished? && raw.transaction_status != Session::IDLE
        end

        # Points an inherited connection's socket descriptor (in this process
        # only) at /dev/null (dup2), so the Terminate that finalizing the
        # PG::Connection sends when the child exits goes nowhere. The parent's
        # socket itself is untouched (the child only replaces its own
        # descriptor).
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
