# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # One Mysql2::Client as a guard uses it (see {DriverGuard}): the guard's
      # statements, its transaction or savepoint, the connection checked before
      # use, and closed after a failure whose outcome is unknown (a fence that
      # opened it from a URL opens a new one on the next call).
      #
      # Whether the caller has a transaction open on the client is asked of
      # the server: `SET TRANSACTION READ WRITE` (which only sets the next
      # transaction's access mode, read-write, the default) fails with error
      # 1568 inside a transaction, on MySQL and MariaDB alike. One round trip,
      # which the client's protocol state does not tell from Ruby.
      class Session
        IN_TRANSACTION = 1568 # ER_CANT_CHANGE_TX_CHARACTERISTICS

        # @return [Failures]
        attr_reader :failures

        # @param reopen [#call, nil] opens a new client when this one was
        #   closed (a fence's own connection); nil: a closed client is refused
        def initialize(connection, failures, admission: Admission.new(:any), reopen: nil)
          @connection = connection
          @failures = failures
          @admission = admission
          @reopen = reopen
        end

        # What the guard's block is given.
        def argument
          @connection
        end

        # @return [self]
        def ready
          unless @connection.is_a?(Mysql2::Client)
            raise TypeError, "the connection source yielded #{@connection.inspect}, expected a Mysql2::Client"
          end
          return self unless @connection.closed?
          raise @failures.problem("the connection is closed") unless @reopen

          @connection = @reopen.call
          self
        end

        def in_transaction?
          @connection.query("SET TRANSACTION READ WRITE")
          false
        rescue Mysql2::Error => e
          raise unless e.error_number == IN_TRANSACTION

          true
        end

        def begin_and_mark(resource, token)
          @connection.query("START TRANSACTION")
          mark(resource, token, restart: true) # its own transaction: begun again after a deadlock
        end

        def savepoint_and_mark(resource, token)
          @connection.query("SAVEPOINT #{Statements::SAVEPOINT}")
          mark(resource, token)
        end

        # @return [Integer, nil] the resource's mark
        def highest(resource)
          value = query(Statements.highest_sql(resource, locking: @locking)).dig(0, 0)
          StoredToken.read(value, "#{TABLE} row #{resource.inspect}")
        end

        # @return [Array(Integer, Integer, Integer, Integer), nil] see {Admission#refusal}
        def store_row(resource)
          row = query(Statements.store_row_sql(resource, locking: @locking)).first
          return nil unless row

          where = "#{STORE_TABLE} row #{resource.inspect}"
          row.map { |value| StoredToken.read(value, where) }
        end

        # @return [FencedError] the error for a refused mark, read with
        #   locking reads (see {Statements.highest_sql})
        def refusal(resource, token)
          @locking = true
          @admission.refusal(self, resource, token)
        ensure
          @locking = false
        end

        # Runs the schema (DDL: it commits an open transaction, so it refuses
        # to run inside one), then checks that the table is InnoDB.
        def setup(sql)
          if in_transaction?
            raise @failures.problem("setup! creates a table, which commits the open transaction in MySQL: run it " \
                                    "outside a transaction")
          end

          @connection.query(sql)
          engine = query(Statements::ENGINE_SQL).dig(0, 0)
          return if engine.to_s.casecmp?("InnoDB")

          raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; fences need InnoDB " \
                                  "(transactions and row locks): ALTER TABLE #{TABLE} ENGINE = InnoDB")
        rescue Mysql2::Error => e
          raise @failures.statement(e, "nothing was created")
        end

        # @return [nil] (COMMIT commits or raises)
        def commit
          @connection.query("COMMIT")
          nil
        end

        # Leaves the connection outside any transaction: ROLLBACK, or closing
        # it when that fails (the server rolls back).
        def roll_back
          @connection.query("ROLLBACK") unless @connection.closed?
        rescue StandardError
          recover
        end

        def roll_back_savepoint
          @connection.query("ROLLBACK TO SAVEPOINT #{Statements::SAVEPOINT}")
          release_savepoint
        end

        def release_savepoint
          @connection.query("RELEASE SAVEPOINT #{Statements::SAVEPOINT}")
        end

        # Whether the server answered `error` to COMMIT on a connection still
        # open: nothing was committed.
        def refused?(error)
          error.is_a?(Mysql2::Error) && !error.error_number.zero? && !(2000..2999).cover?(error.error_number) &&
            !@connection.closed?
        end

        # Closes the connection (one the fence opened).
        def close
          @connection.close unless @connection.closed?
        end

        # After an unknown outcome: closes the connection (quietly); a fence's
        # own connection is opened again by the next call.
        def recover
          close
        rescue StandardError
          nil
        end

        private

        def mark(resource, token, restart: false)
          Statements.mark(@admission.mode, resource, token, restart: restart) do |sql|
            @connection.query(sql)
            @connection.affected_rows
          end
        end

        def query(sql)
          @connection.query(sql, as: :array, cast: false).to_a
        end
      end
    end
  end
end
