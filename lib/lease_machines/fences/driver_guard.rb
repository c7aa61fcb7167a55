# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # One guard on a driver connection (a PG::Connection, an
    # SQLite3::Database, a Mysql2::Client): the transaction around the mark
    # and the block: its own transaction, or a savepoint in the caller's.
    # It commits only when the block returns. The rollback is in `ensure`:
    # `throw`, `break`, Thread#kill and Timeout (a throw on Ruby 3.1 and
    # 3.2) skip every rescue, and a transaction left open would be committed
    # by the next COMMIT anyone sends on the connection, half-run block too.
    class DriverGuard
      # @return the block's value
      def self.run(session, resource, token, owner, &)
        new(session).run(resource, token, owner, &)
      end

      def initialize(session)
        @session = session
        @failures = session.failures
        @joined = session.in_transaction?
        # From before BEGIN is sent until it is committed or rolled back.
        @open = false
      end

      def run(resource, token, owner)
        @open = true
        mark(resource, token, owner)
        value = yield @session.argument
        finish
        value
      ensure
        undo if @open
      end

      private

      def mark(resource, token, owner)
        begin
          changed = if @joined
                      @session.savepoint_and_mark(resource, token, owner)
                    else
                      @session.begin_and_mark(resource, token, owner)
                    end
          return if changed == 1

          refusal = @session.refusal(resource, token, owner)
        rescue @failures.driver_error => e
          undo(e)
          raise @failures.statement(e)
        end
        undo
        raise refusal
      end

      # Rolls back what the guard did, once. When the mark's statement failed
      # and the savepoint is gone, the server rolled back the caller's whole
      # transaction (MariaDB 11.6+ for a row changed since a REPEATABLE READ
      # snapshot; InnoDB for a deadlock): the error says so.
      def undo(failed = nil)
        @open = false
        return @session.roll_back unless @joined

        @session.roll_back_savepoint
      rescue @failures.driver_error => e
        unless failed
          raise @failures.statement(e, "the guard could not roll back to its savepoint: roll back the " \
                                       "transaction")
        end

        raise @failures.statement(failed, "the server rolled back the whole transaction with it: nothing " \
                                          "of the transaction is committed; run it again")
      end

      # COMMIT (sorted by {Failures#committing}), or RELEASE of the savepoint.
      def finish
        unless @joined
          begin
            @failures.committing(@session) { @session.commit }
          rescue StandardError
            @open = false
            raise
          end
          return @open = false
        end

        begin
          @session.release_savepoint
          @open = false
        rescue @failures.driver_error => e
          undo
          raise @failures.statement(e, "the guarded writes were rolled back to the savepoint")
        end
      end
    end
  end
end
