# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # @api private: one Mysql2::Client as a call uses it, closed after a failure (never `reconnect: true`:
      # it would resend COMMIT on a new session, so a lost transaction would read as committed).
      class Session
        attr_reader :connection

        def initialize(connection)
          @connection = connection
        end

        def ready
          conn = @connection
          unless conn.is_a?(Mysql2::Client)
            raise TypeError, "the connection source yielded #{conn.inspect}, expected a Mysql2::Client"
          end
          raise Failures.closed("MySQL") if conn.closed?

          # Read now: mysql2 disconnects a client whose query was interrupted, and then no longer tells it.
          @connection_id = conn.thread_id
          self
        end

        def query(sql)
          result = @connection.query(sql, as: :array, cast: false, cache_rows: false)
          result&.to_a
        end

        # Rows matched (mysql2 sets FOUND_ROWS by default).
        def affected_rows = @connection.affected_rows

        # The server answered `error` and the connection is open: refused, nothing committed.
        def refused?(error) = Errors.answered?(error) && !@connection.closed?

        # ROLLBACK, or closing the connection when that fails (a query in flight, a lost connection).
        def roll_back
          return if @connection.closed?

          @connection.query("ROLLBACK")
        rescue StandardError
          recover
        end

        # Stops a statement it may have left running ({KillQuery}), then closes quietly (the server rolls back).
        def recover
          KillQuery.new(@connection_id, @connection.query_options).send_async if @connection_id
          @connection_id = nil
          @connection.close unless @connection.closed?
        rescue StandardError
          nil
        end

        def commit
          @connection.query("COMMIT")
          nil
        end
      end

      # A {Session} that, once closed after a failure, reconnects through the ActiveRecord adapter.
      class AdapterSession < Session
        include Stores::Connections::AdapterSession

        def recover
          super
          reconnect_adapter
        rescue StoreError
          nil # the next call reconnects again
        end
      end
      private_constant :AdapterSession
    end
  end
end
