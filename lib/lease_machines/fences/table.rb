# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # What every engine's fence table shares: one row per protected resource
    # holding its mark (the highest token a guarded write showed), and the
    # three calls. An engine ({SQLite}, {Postgres}) says where connections
    # come from (#source) and what SQL it speaks.
    class Table
      # @param source [#with, #close] the engine's connection source
      def initialize(source)
        @source = source
      end

      # Creates the fence table when it is missing (idempotent; safe to race).
      # Inside a transaction the caller opened, under a savepoint of it.
      # @return [self]
      def setup!
        sql = self.class::SCHEMA_SQL
        @source.with { |session| session.setup(sql) }
        self
      end

      # Runs the block as a write to `resource` by the holder of `token`:
      # raises the resource's mark to `token` (equal passes) and runs the
      # block on the same connection in the same transaction, then commits.
      # Inside a transaction the caller opened, it joins it under a savepoint
      # and leaves the commit to the caller.
      #
      # @param resource [String] the protected resource (a lease's name, say)
      # @param token [Integer] the token of the lease the writer holds
      # @yieldparam connection the connection to write on (a PG::Connection,
      #   an SQLite3::Database, or the ActiveRecord connection)
      # @return the block's value
      # @raise [FencedError] when `token` is below the mark, or 0: the block
      #   did not run, nothing was written
      # @raise the block's exception, after rolling back everything the guard
      #   did (the mark included)
      # @raise [StoreError] when the fence's own statements fail (nothing was
      #   written), or COMMIT is refused; [OutcomeUnknownError] when the
      #   connection fails during COMMIT
      def guard(resource, token, &block)
        resource = ResourceName.check(resource)
        token = Token.check(token)
        raise ArgumentError, "guard needs a block: the writes the fence protects" unless block

        @source.with do |session|
          # 0 is never issued: stale wherever a token is checked, as for
          # LeaseMachines::Fence#accept(0). Refused before anything is sent
          # but the read of the mark the error reports.
          raise FencedError.new(resource: resource, token: 0, highest: read_mark(session, resource)) if token.zero?

          guard_on(session, resource, token, &block)
        end
      end

      # @return [Integer, nil] the resource's committed mark (as the
      #   connection's transaction sees it), nil when no write was guarded yet
      def highest(resource)
        resource = ResourceName.check(resource)
        @source.with { |session| read_mark(session, resource) }
      end

      # Closes a connection the fence opened itself (from a URL or a path);
      # connections the caller gave are left open.
      def close
        @source.close(&:close)
        nil
      end

      private

      def read_mark(session, resource)
        session.highest(resource)
      rescue session.failures.driver_error => e
        raise session.failures.statement(e, "nothing was read")
      end

      # One guard on a session: an ActiveRecord session runs its own; a driver
      # session is driven by {DriverGuard}.
      def guard_on(session, resource, token, &)
        return session.guard(resource, token, &) if session.respond_to?(:guard)

        DriverGuard.run(session, resource, token, &)
      end
    end
  end
end
