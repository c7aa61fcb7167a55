# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      # One process's connection to the file: WAL, synchronous = FULL, statements prepared on first use. SQLite's busy
      # handler holds the GVL, so busy_timeout is 0 and {.patiently} retries after a constant (never growing) sleep.
      class Connection
        PAUSE = 0.0002
        JITTER = 0.0004
        private_constant :PAUSE, :JITTER

        attr_reader :database

        class << self
          # `readonly`: opened as it is, never created nor its journal mode changed; StoreError when it cannot.
          def open(path, busy_timeout_ms, failures, readonly: false)
            # The path's bytes labelled UTF-8 (the driver would transcode a binary name and fail).
            database = ::SQLite3::Database.new(path.dup.force_encoding(Encoding::UTF_8), readonly: readonly)
            configure(database, busy_timeout_ms, failures) unless readonly
            database.busy_timeout = 0 if readonly
            new(database, busy_timeout_ms)
          rescue ::SQLite3::Exception, StoreError => e
            database&.close
            raise if e.is_a?(StoreError)

            raise failures.unavailable(e)
          end

          # Runs the block again while SQLITE_BUSY (which changed nothing), until `timeout_ms` have passed.
          def patiently(timeout_ms)
            deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (timeout_ms / 1000.0)
            begin
              yield
            rescue ::SQLite3::BusyException
              left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
              raise unless left.positive?

              sleep([PAUSE + (rand * JITTER), left].min)
              retry
            end
          end

          private

          def configure(database, busy_timeout_ms, failures)
            database.busy_timeout = 0
            # The first statement reads the file (and switches it to WAL, an exclusive lock): both may find it locked.
            mode = patiently(busy_timeout_ms) { database.get_first_value("PRAGMA journal_mode = WAL") }
            wal = mode.to_s.casecmp?("wal")
            raise failures.problem("cannot switch to WAL mode (journal_mode is #{mode.inspect})") unless wal

            patiently(busy_timeout_ms) { database.execute("PRAGMA synchronous = FULL") }
          end
        end

        def initialize(database, busy_timeout_ms)
          @database = database
          @busy_timeout_ms = busy_timeout_ms
          @statements = {}
        end

        def patiently(&)
          self.class.patiently(@busy_timeout_ms, &)
        end

        # A prepared statement's first row, then reset (`execute` compiles every time). Bound one by one:
        # `bind_params` flattens its arguments and looks for named ones on every call.
        def run(sql, *binds)
          statement = (@statements[sql] ||= @database.prepare(sql))
          index = 0
          binds.each { |value| statement.bind_param(index += 1, value) }
          statement.step
        ensure
          begin
            statement&.reset!
          rescue ::SQLite3::Exception
            nil # a failed step raised its own error already; that one is the one that counts
          end
        end

        # SQLite answers COMMIT with an error or not at all (nil: COMMIT returns no row).
        def commit = run("COMMIT")

        # A failed COMMIT that left the transaction open: refused, nothing committed.
        def refused?(error) = error.is_a?(::SQLite3::Exception) && @database.transaction_active?

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
