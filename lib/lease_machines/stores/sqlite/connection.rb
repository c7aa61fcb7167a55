# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      # The connection one process has to the database file (see
      # {ProcessLocal}): in WAL mode with `synchronous = FULL`, waiting up to
      # busy_timeout for the write lock, with its statements prepared on first
      # use. The connection object {Failures#transaction} sorts failures on.
      class Connection
        # @return [SQLite3::Database]
        attr_reader :database

        class << self
          # Opens and configures the file.
          # @raise [StoreError] when it cannot (the engine is unavailable)
          def open(path, busy_timeout_ms, failures)
            database = ::SQLite3::Database.new(path)
            configure(database, busy_timeout_ms, failures)
            new(database)
          rescue ::SQLite3::Exception, StoreError => e
            database&.close
            raise if e.is_a?(StoreError)

            raise failures.unavailable(e)
          end

          private

          def configure(database, busy_timeout_ms, failures)
            database.busy_timeout = busy_timeout_ms
            mode = database.get_first_value("PRAGMA journal_mode = WAL")
            wal = mode.to_s.casecmp?("wal")
            raise failures.problem("cannot switch to WAL mode (journal_mode is #{mode.inspect})") unless wal

            database.execute("PRAGMA synchronous = FULL")
          end
        end

        def initialize(database)
          @database = database
          @statements = {}
        end

        # Runs a prepared statement to its first row and resets it. The sqlite3
        # gem would compile the SQL again on every `execute`; a decision reuses
        # all four of its statements.
        # @return [Array, nil] the first row
        def run(sql, *binds)
          statement = (@statements[sql] ||= @database.prepare(sql))
          statement.bind_params(*binds) unless binds.empty?
          statement.step
        ensure
          begin
            statement&.reset!
          rescue ::SQLite3::Exception
            nil # a failed step raised its own error already; that one is the one that counts
          end
        end

        # @return [nil] (SQLite answers COMMIT with an error or not at all)
        def commit
          run("COMMIT")
          nil
        end

        # Whether a failed COMMIT left the transaction open: SQLite refused
        # it, and nothing was committed.
        def refused?(error)
          error.is_a?(::SQLite3::Exception) && @database.transaction_active?
        end

        def roll_back
          @database.execute("ROLLBACK") if @database.transaction_active?
        rescue StandardError
          nil # the transaction is gone with the error; SQLite rolled it back itself
        end
        alias recover roll_back

        def close
          return if @database.closed?

          @statements.each_value(&:close)
          @database.close
        end
      end
    end
  end
end
