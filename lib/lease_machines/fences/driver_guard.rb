# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # One guard on a driver connection (a PG::Connection, an
    # SQLite3::Database, a Mysql2::Client): the transaction around the mark
    # and the block.
    #
    # Outside a transaction the guard is one of its own: BEGIN (SQLite:
    # BEGIN IMMEDIATE) with the statement that raises the mark, the block,
    # COMMIT. Inside a transaction the caller opened, it joins it under a
    # savepoint instead: SAVEPOINT with the mark, the block, RELEASE. Either
    # way the mark and the block's writes are kept together or not at all.
    # The guard commits (or releases its savepoint) only when the block
    # returns; left any other way it rolls back (or back to its savepoint),
    # the mark too, before anything else runs on the connection:
    #
    # - the mark refuses the token: before the block runs, and FencedError is
    #   raised;
    # - the block raises: its exception is re-raised as it is;
    # - the block is left without an exception: `throw`, `break`, `return`,
    #   Thread#kill, or Timeout (a throw on Ruby 3.1 and 3.2, which no rescue
    #   sees). Left open, such a transaction would be committed by the next
    #   COMMIT anyone sends on the connection, half-run block and mark alike.
    #
    # A caller's transaction stays open in every case and is the caller's to
    # commit or roll back: a guard that did not finish leaves nothing in it.
    #
    # The session (one engine's, see sqlite/session.rb, postgres/session.rb,
    # mysql/session.rb) answers: in_transaction?, begin_and_mark(resource,
    # token) and savepoint_and_mark(resource, token) (the number of rows the
    # mark statement changed: 0 is fenced), highest(resource),
    # refusal(resource, token) (the FencedError for a refused mark, see
    # {Admission}), commit, roll_back, roll_back_savepoint, release_savepoint,
    # refused?(error), recover, argument (what the block is given) and
    # failures.
    class DriverGuard
      # @return the block's value
      def self.run(session, resource, token, &)
        new(session).run(resource, token, &)
      end

      def initialize(session)
        @session = session
        @failures = session.failures
        @joined = session.in_transaction?
        # Whether the guard's transaction (or savepoint) may be open with
        # nobody left to end it: from before BEGIN is sent until it is
        # committed or rolled back.
        @open = false
      end

      def run(resource, token)
        @open = true
        mark(resource, token)
        value = yield @session.argument
        finish
        value
      ensure
        undo if @open
      end

      private

      def mark(resource, token)
        begin
          changed = @joined ? @session.savepoint_and_mark(resource, token) : @session.begin_and_mark(resource, token)
          return if changed == 1

          refusal = @session.refusal(resource, token)
        rescue @failures.driver_error => e
          undo(e)
          raise @failures.statement(e)
        end
        undo
        raise refusal
      end

      # Rolls back what the guard did, once. Its own transaction: ROLLBACK,
      # and a connection that broke (or was left with a statement in flight)
      # is reconnected (the server rolled back). Joined: back to the
      # savepoint, which must work, since the caller's transaction goes on.
      # When the mark's statement itself failed (`failed`) and the savepoint
      # is gone, the server rolled back the caller's whole transaction with it
      # (MariaDB 11.6 and later do for a row changed since a REPEATABLE READ
      # snapshot; InnoDB does for a deadlock): the error says so, with the
      # statement's own error.
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

      # COMMIT, or RELEASE of the savepoint. A COMMIT that failed was sorted
      # by {Failures#committing}, which left the connection usable; one left
      # in flight by an interrupt is ended by `undo` (a reconnect: the server
      # decides, and the caller's interrupt goes on).
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
