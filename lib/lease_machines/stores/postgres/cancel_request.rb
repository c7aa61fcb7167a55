# frozen_string_literal: true

require "socket"

module LeaseMachines
  module Stores
    class Postgres < Store
      # @api private: cancels the statement a connection left in flight before it is reopened: a dropped
      # connection does not stop a backend waiting on a lock or a sync standby. Sent from its own thread.
      class CancelRequest
        WAIT = 2

        # nil when the connection has no backend; PG::CancelConnection from libpq 17 (longer keys)
        def self.for(connection)
          return new(PG::CancelConnection.new(connection)) if defined?(PG::CancelConnection)

          new(Packet.new(connection.socket_io.remote_address, connection.backend_pid, connection.backend_key))
        rescue StandardError
          nil
        end

        def initialize(cancel)
          @cancel = cancel
        end

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
