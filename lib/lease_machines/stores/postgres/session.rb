# frozen_string_literal: true

require "socket"

module LeaseMachines
  module Stores
    class Postgres < Store
      # @api private: one PG::Connection as a call uses it: checked before use, usable after a failure.
      class Session
        IDLE = PG::PQTRANS_IDLE

        attr_reader :connection

        def initialize(connection)
          @connection = connection
        end

        def ready
          usable
          return self if @connection.transaction_status == IDLE

          raise Failures.in_transaction("PostgreSQL", ", so give the store a connection that is not in one")
        end

        def usable
          conn = @connection
          unless conn.is_a?(PG::Connection)
            raise TypeError, "the connection source yielded #{conn.inspect}, expected a PG::Connection"
          end
          raise Failures.closed("PostgreSQL") if conn.finished?

          reconnect if broken?
          self
        end

        # The connection broke, or a query of an interrupted call is still in flight on it.
        def broken? = @connection.status != PG::CONNECTION_OK || @connection.transaction_status == PG::PQTRANS_ACTIVE

        # Reconnects the same object. Not pg's `reset`: pg 1.4 finishes the connection when the reconnect
        # fails, ending the store for good during an outage; here it stays bad but open for the next call.
        def reconnect
          conn = @connection
          CancelRequest.send_async(conn) if conn.transaction_status == PG::PQTRANS_ACTIVE
          conn.reset_start # raises when it cannot start

          poll(conn)
          raise PG::ConnectionBad, conn.error_message unless conn.status == PG::CONNECTION_OK

          # What pg's own connect and reset do once connected.
          conn.sync_setnonblocking(true)
          conn.send(:flush_data=, true)
          conn.set_default_encoding
        end

        def idle? = !@connection.finished? && @connection.status == PG::CONNECTION_OK && @connection.transaction_status == IDLE

        # The server answered `error` and the connection is idle: refused, nothing committed.
        def refused?(error) = error.is_a?(PG::Error) && !error.result.nil? && idle?

        # Leaves the connection idle: ROLLBACK, or a reconnect when a query is in flight or it broke.
        def roll_back
          conn = @connection
          return if conn.finished?

          if broken?
            recover
          elsif conn.transaction_status != IDLE
            conn.exec("ROLLBACK")
          end
        rescue StandardError
          recover
        end

        def recover
          reconnect
        rescue StandardError
          nil # the next call checks the connection again before using it
        end

        # Polls a reconnect to its end, waiting at most connect_timeout seconds at a time when set.
        def poll(conn)
          limit = conn.conninfo_hash[:connect_timeout].to_i
          limit = limit.positive? ? [limit, 2].max : nil
          state = PG::PGRES_POLLING_WRITING
          until [PG::PGRES_POLLING_OK, PG::PGRES_POLLING_FAILED].include?(state)
            io = conn.socket_io
            ready = state == PG::PGRES_POLLING_READING ? io.wait_readable(limit) : io.wait_writable(limit)
            raise PG::ConnectionBad, "reconnecting timed out after #{limit} s" unless ready

            state = conn.reset_poll
          end
        end
        private :poll

        # Runs the block keeping every WARNING the server sends, then restores the previous notice receiver.
        def warnings_while
          warnings = []
          previous = @connection.set_notice_receiver do |notice|
            warnings << warning(notice) if warning?(notice)
            previous&.call(notice)
          end
          begin
            [yield, warnings]
          ensure
            previous ? @connection.set_notice_receiver(&previous) : @connection.set_notice_receiver
          end
        end

        def warning?(notice)
          severity = notice.error_field(PG::PG_DIAG_SEVERITY_NONLOCALIZED) || notice.error_field(PG::PG_DIAG_SEVERITY)
          severity == "WARNING"
        end

        def warning(notice)
          detail = notice.error_field(PG::PG_DIAG_MESSAGE_DETAIL)
          "#{notice.error_field(PG::PG_DIAG_MESSAGE_PRIMARY)}#{" (#{detail})" if detail}"
        end
        private :warning?, :warning

        # nil when COMMIT committed, else what the server answered (ROLLBACK after a failed statement).
        def commit
          answer = @connection.exec("COMMIT").cmd_status
          answer == "COMMIT" ? nil : answer
        end
      end

      # A {Session} whose `reconnect` goes through the ActiveRecord adapter, so ActiveRecord knows of it.
      class AdapterSession < Session
        include Stores::Connections::AdapterSession

        def reconnect = reconnect_adapter
      end
      private_constant :AdapterSession

      # @api private: cancels the statement a connection left in flight: before it is reopened (a dropped
      # connection does not stop a backend waiting on a lock or a sync standby), sent from its own thread; or
      # before a fence's guard reads it out, keeping the session (`send_now`). pg's own `cancel` connects with no
      # time limit (two minutes of SYN retries when the server is cut off); this waits at most WAIT to connect
      # and WAIT for the answer.
      module CancelRequest
        WAIT = 2

        # Best effort: the connection is reopened either way. Nothing when the connection has no backend.
        def self.send_async(connection)
          cancel = canceller(connection)
          Thread.new do
            Thread.current.report_on_exception = false
            cancel.call
          rescue StandardError
            nil
          end
        rescue StandardError
          nil
        end

        # In the calling thread, until the server has signalled the backend (or WAIT); nothing when no
        # statement is in flight.
        # @return [Boolean] whether the request was sent
        def self.send_now(connection)
          return false if connection.finished? || connection.transaction_status != PG::PQTRANS_ACTIVE

          canceller(connection).call
          true
        rescue StandardError
          false
        end

        # PG::CancelConnection from libpq 17 (longer keys); before it, the cancel request packet on a connection
        # of its own.
        def self.canceller(connection)
          return PG::CancelConnection.new(connection).method(:async_cancel) if defined?(PG::CancelConnection)

          address = connection.socket_io.remote_address
          packet = [16, 1234, 5678, connection.backend_pid, connection.backend_key].pack("NnnNN")
          lambda do
            socket = address.ip? ? Socket.tcp(address.ip_address, address.ip_port, connect_timeout: WAIT) : address.connect
            socket.write(packet)
            socket.wait_readable(WAIT)
          ensure
            socket&.close
          end
        end
        private_class_method :canceller
      end
    end
  end
end
