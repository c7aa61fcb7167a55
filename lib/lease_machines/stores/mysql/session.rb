# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # @api private: one Mysql2::Client as the store uses it for a call:
      # checked before use, and closed after a failure (never `reconnect:
      # true`: it would resend COMMIT on a new session, so a lost transaction
      # would read as committed).
      class Session
        # @return [Mysql2::Client]
        attr_reader :connection

        def initialize(connection)
          @connection = connection
        end

        # Checks the connection before a call. @return [self]
        def ready
          conn = @connection
          unless conn.is_a?(Mysql2::Client)
            raise TypeError, "the connection source yielded #{conn.inspect}, expected a Mysql2::Client"
          end
          raise Failures.closed("MySQL") if conn.closed?

          # Read now (a client-side field): mysql2 disconnects a client whose
          # query was interrupted, and then no longer tells it.
          @connection_id = conn.thread_id
          self
        end

        # Runs one statement; @return [Array<Array<String, nil>>] its rows
        #   (nil when it returns none)
        def query(sql)
          result = @connection.query(sql, as: :array, cast: false, cache_rows: false)
          result&.to_a
        end

        # @return [Integer] rows the last statement wrote (matched, with the
        #   FOUND_ROWS flag mysql2 sets by default)
        def affected_rows
          @connection.affected_rows
        end

        # Whether the server answered `error` and the connection is still open:
        # the statement was refused, and nothing was committed.
        def refused?(error)
          Errors.answered?(error) && !@connection.closed?
        end

        # Leaves no transaction open: ROLLBACK, or closing the connection when
        # that fails (a query in flight, a lost connection).
        def roll_back
          return if @connection.closed?

          @connection.query("ROLLBACK")
        rescue StandardError
          recover
        end

        # Stops a statement it may have left running ({KillQuery}) and closes
        # the connection (quietly); the server rolls back whatever it had open.
        def recover
          KillQuery.new(@connection_id, @connection.query_options).send_async if @connection_id
          @connection_id = nil
          @connection.close unless @connection.closed?
        rescue StandardError
          nil
        end

        # @return [nil] (COMMIT either commits or raises)
        def commit
          @connection.query("COMMIT")
          nil
        end
      end
    end
  end
end
