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

      # @api private: KILL QUERY for a statement a client may have left running, before it is closed (a
      # statement waiting on a row lock runs on, and commits), from a new connection on a bounded thread.
      class KillQuery
        WAIT = 2

        def initialize(connection_id, options)
          @connection_id = Integer(connection_id)
          @options = options.merge(connect_timeout: WAIT, read_timeout: WAIT, write_timeout: WAIT)
        end

        def send_async
          Thread.new do
            Thread.current.report_on_exception = false
            client = Mysql2::Client.new(**@options)
            client.query("KILL QUERY #{@connection_id}")
          rescue StandardError
            nil # best effort: the statement has ended already, or the server is gone
          ensure
            client&.close
          end
        end
      end
    end
  end
end
