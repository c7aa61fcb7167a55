# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
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
