# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # One guard on a driver connection (a PG::Connection, an
    # SQLite3::Database): the transaction around the mark and the block.
    #
    # Outside a transaction the guard is one of its own: BEGIN (SQLite:
    # BEGIN IMMEDIATE) with the statement that raises the mark, the block,
    # COMMIT. Inside a transaction the caller opened, it joins it under a
    # savepoint instead: SAVEPOINT with the mark, the block, RELEASE. Either
    # way the mark and the block's writes are kept together or not at all:
    #
    # - the mark refuses the token: the transaction (or the savepoint) is
    #   rolled back before the block runs, and FencedError is raised;
    # - the block raises: everything since BEGIN (or the savepoint) is rolled
    #   back, the mark too, and the exception is re-raised as it is.
    #
    # A caller's transaction stays open in both cases and is the caller's to
    # commit or roll back: a refused guard leaves nothing in it.
    #
    # The session (one engine's, see sqlite/session.rb, postgres/session.rb)
    # answers: in_transaction?, begin_and_mark(resource, token) and
    # savepoint_and_mark(resource, token) (the number of rows the mark
    # statement changed: 0 is fenced), highest(resource), refusal(resource,
    # token) (the FencedError for a refused mark, see {Admission}), commit,
    # roll_back, roll_back_savepoint, release_savepoint, refused?(error),
    # recover, argument (what the block is given) and failures.
    module DriverGuard
      # @return the block's value
      def self.run(session, resource, token)
        joined = session.in_transaction?
        mark(session, resource, token, joined)
        value = begin
          yield session.argument
        rescue Exception # rubocop:disable Lint/RescueException -- roll back on anything, then re-raise
          undo(session, joined)
          raise
        end
        finish(session, joined)
        value
      end

      class << self
        private

        def mark(session, resource, token, joined)
          failures = session.failures
          begin
            changed = joined ? session.savepoint_and_mark(resource, token) : session.begin_and_mark(resource, token)
            return if changed == 1

            refusal = session.refusal(resource, token)
          rescue failures.driver_error => e
            undo(session, joined, e)
            raise failures.statement(e)
          end
          undo(session, joined)
          raise refusal
        end

        # Rolls back what the guard did. Its own transaction: ROLLBACK, and a
        # connection that broke is reconnected (the server rolled back).
        # Joined: back to the savepoint, which must work, since the caller's
        # transaction goes on. When the mark's statement itself failed
        # (`failed`) and the savepoint is gone, the server rolled back the
        # caller's whole transaction with it (MariaDB 11.6 and later do for a
        # row changed since a REPEATABLE READ snapshot; InnoDB does for a
        # deadlock): the error says so, with the statement's own error.
        def undo(session, joined, failed = nil)
          return session.roll_back unless joined

          session.roll_back_savepoint
        rescue session.failures.driver_error => e
          unless failed
            raise session.failures.statement(e, "the guard could not roll back to its savepoint: roll back the " \
                                                "transaction")
          end

          raise session.failures.statement(failed, "the server rolled back the whole transaction with it: nothing " \
                                                   "of the transaction is committed; run it again")
        end

        def finish(session, joined)
          return session.failures.committing(session) { session.commit } unless joined

          begin
            session.release_savepoint
          rescue session.failures.driver_error => e
            undo(session, joined)
            raise session.failures.statement(e, "the guarded writes were rolled back to the savepoint")
          end
        end
      end
    end
  end
end
