# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # @api private: stops the statement a client may have left running (an
      # interrupted call, a store's deadline) before the client is closed.
      # Closing alone does not stop it: a statement waiting for a row lock
      # runs on once the lock is granted, and an autocommit write then
      # commits. `KILL QUERY` of the client's connection id, sent from a new
      # connection with the client's own options, on a thread of its own whose
      # connect and read are bounded, so a partitioned server cannot hold
      # the caller.
      class KillQuery
        # Seconds the sending thread waits to connect, then for the answer.
        WAIT = 2

        def initialize(connection_id, options)
          @connection_id = Integer(connection_id)
          @options = options.merge(connect_timeout: WAIT, read_timeout: WAIT, write_timeout: WAIT)
        end

        # Sends it from a new thread. @return [Thread]
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
