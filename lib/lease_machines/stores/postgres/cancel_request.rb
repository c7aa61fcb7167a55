# frozen_string_literal: true

require "socket"

module LeaseMachines
  module Stores
    class Postgres < Store
      # @api private: asks the server to cancel the statement a connection
      # left in flight (an interrupted call, a store's deadline), before the
      # connection is dropped and reopened. A dropped connection alone does
      # not stop its backend: one waiting for a lock or a synchronous standby
      # never reads the socket, and a COMMIT waiting for a standby keeps the
      # row locked until the standby answers. The request is taken from the
      # connection now, addressed to the backend it is on, and sent from a
      # thread of its own, so a partitioned server cannot hold the caller:
      # with libpq 17 or later through PG::CancelConnection (whose cancel
      # key may be longer than 32 bits), before that as the packet
      # PG::Connection#cancel sends, with a bounded connect and wait.
      class CancelRequest
        # Seconds the sending thread waits to connect, then for the server's answer.
        WAIT = 2

        # @return [CancelRequest, nil] for the connection's backend, nil when it has none
        def self.for(connection)
          return new(PG::CancelConnection.new(connection)) if defined?(PG::CancelConnection)

          new(Packet.new(connection.socket_io.remote_address, connection.backend_pid, connection.backend_key))
        rescue StandardError
          nil
        end

        # @param cancel [#async_cancel]
        def initialize(cancel)
          @cancel = cancel
        end

        # Sends it from a new thread. @return [Thread]
        def send_async
          Thread.new do
            Thread.current.report_on_exception = false
            @cancel.async_cancel
          rescue StandardError
            nil # best effort: the connection is reopened either way
          end
        end

        # libpq before 17: the cancel request packet, on a connection of its own.
        class Packet
          def initialize(address, backend_pid, backend_key)
            @address = address
            @packet = [16, 1234, 5678, backend_pid, backend_key].pack("NnnNN")
          end

          def async_cancel
            socket = connect
            socket.write(@packet)
            socket.wait_readable(WAIT)
          ensure
            socket&.close
          end

          private

          def connect
            return @address.connect unless @address.ip?

            Socket.tcp(@address.ip_address, @address.ip_port, connect_timeout: WAIT)
          end
        end
      end
    end
  end
end
