# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # One Mysql2::Client as the store uses it for a call: checked before use,
      # and left usable (or closed, to be replaced) after a failure. The
      # connection object {Failures#transaction} and {Failures#committing} sort
      # failures on. A connection source (Connections) yields one for every
      # call.
      #
      # A Mysql2::Client cannot reconnect itself (its `reconnect: true` option
      # would resend a statement on a new session, COMMIT included, so a lost
      # transaction would read as committed: never set it). A session whose
      # connection failed closes it; the store's own connection (from a URL)
      # and ActiveRecord's are opened again before the next call, a client the
      # caller gave stays closed.
      #
      # @api private; a fence's session (Fences::MySQL::Session) is one too.
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

        # Closes the connection (quietly); the server rolls back whatever it
        # had open. What the source does next is its own (reopen or refuse).
        def recover
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
