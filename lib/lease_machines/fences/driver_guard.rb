# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # One guard on a driver connection: the mark and the block in its own transaction,
    # or a savepoint in the caller's, committed only when the block returns. The
    # rollback is in `ensure`: `throw`, `break`, Thread#kill and Timeout skip every
    # rescue, and a transaction left open would be committed by the next COMMIT.
    class DriverGuard
      def self.run(session, resource, token, owner, &) = new(session).run(resource, token, owner, &)

      def initialize(session)
        @session = session
        @failures = session.failures
        @joined = session.in_transaction?
        @open = false # from before BEGIN is sent until it is committed or rolled back
      end

      def run(resource, token, owner)
        @open = true
        mark(resource, token, owner)
        value = yield @session.connection
        finish
        value
      ensure
        undo if @open
      end

      private

      def mark(resource, token, owner)
        begin
          return if @session.public_send(@joined ? :savepoint_and_mark : :begin_and_mark, resource, token, owner) == 1

          refusal = @session.refusal(resource, token, owner)
        rescue @failures.driver_error => e
          undo(e)
          raise @failures.statement(e)
        end
        undo
        raise refusal
      end

      # When the mark failed and the savepoint is gone, the server rolled back the caller's
      # whole transaction (MariaDB 11.6+ on a REPEATABLE READ conflict; a deadlock).
      def undo(failed = nil)
        @open = false
        return @session.roll_back unless @joined

        @session.roll_back_savepoint
      rescue @failures.driver_error => e
        raise @failures.statement(e, "the guard could not roll back to its savepoint: roll back the transaction") unless failed

        raise @failures.statement(failed, "the server rolled back the whole transaction with it: nothing " \
                                          "of the transaction is committed; run it again")
      end

      def finish
        return release if @joined

        begin
          @failures.committing(@session) { @session.commit }
        rescue StandardError
          @open = false
          raise
        end
        @open = false
      end

      def release
        @session.release_savepoint
        @open = false
      rescue @failures.driver_error => e
        undo
        raise @failures.statement(e, "the guarded writes were rolled back to the savepoint")
      end
    end

    # What {DriverGuard} and `setup!` ask of an engine's session, shared: each engine's
    # session gives `execute(sql)`, its BEGIN (`BEGIN_SQL`) and `create(sql)` (the table).
    module DriverSession
      SAVEPOINT = "lease_machines_fence"

      def savepoint_and_mark(resource, token, owner = nil)
        execute("SAVEPOINT #{SAVEPOINT}")
        mark(resource, token, owner)
      end

      def roll_back_savepoint
        execute("ROLLBACK TO SAVEPOINT #{SAVEPOINT}")
        release_savepoint
      end

      def release_savepoint = execute("RELEASE SAVEPOINT #{SAVEPOINT}")

      # In a transaction of its own (or a savepoint in the caller's).
      def setup(sql)
        joined = in_transaction?
        begin
          execute(joined ? "SAVEPOINT #{SAVEPOINT}" : self.class::BEGIN_SQL)
        rescue @failures.driver_error => e
          roll_back unless joined # reconnects a connection that broke
          raise @failures.statement(e, "nothing was created")
        end
        begin
          create(sql)
        rescue @failures.driver_error => e
          joined ? roll_back_savepoint : roll_back
          raise @failures.statement(e, "rolled back: nothing was created")
        end
        joined ? release_savepoint : @failures.committing(self) { commit }
      end
    end
  end
end
