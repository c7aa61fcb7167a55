# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # What every engine's fence table shares: one row per protected resource
    # holding its mark (the highest token a guarded write showed).
    class Table
      # @param source [#with, #close] the engine's connection source
      # @param signing_keys [Array<String>, nil] see {Signing::Keys.from}:
      #   admit only tokens whose proof one of them made
      def initialize(source, signing_keys)
        @signing_keys = Signing::Keys.from(signing_keys)
        @source = source
      end

      # A short description: the engine, its connections' source (a URL
      # without its password), what it admits.
      def inspect
        "#<#{self.class.name} #{@source}#{" admits=#{@admission.mode}" if @admission}#{' signed' if signed?}>"
      end
      alias to_s inspect

      # Whether this fence admits signed tokens only (`signing_keys:` given).
      def signed?
        !@signing_keys.nil?
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
      # raises the mark to `token` (equal passes), runs the block in the same
      # transaction (a savepoint inside the caller's), then commits.
      # @param resource [String] the protected resource (a lease's name, say)
      # @param token [Integer, Lease] the token of the lease the writer holds,
      #   or the lease itself (its token and its proof)
      # @param proof [String, nil] the token's proof (Lease#proof), for a
      #   fence with `signing_keys:`; read from the lease when `token` is one
      # @param owner [Integer, nil] the owner the token was granted to,
      #   recorded with the mark: an equal token from another owner is
      #   refused (ReissuedTokenError); read from the lease when `token` is
      #   one; nil: not recorded, not compared
      # @yieldparam connection the connection to write on (a PG::Connection,
      #   an SQLite3::Database, or the ActiveRecord connection)
      # @return the block's value
      # @raise [FencedError] when `token` is below the mark, or 0: the block
      #   did not run, nothing was written
      # @raise [ReissuedTokenError] when `token` equals the mark and the mark
      #   records another owner: the token was issued twice
      # @raise [ForgedTokenError] with `signing_keys:`, when the proof is
      #   missing or none of the keys made it: nothing was sent
      # @raise the block's exception, after rolling back everything the guard
      #   did (the mark included)
      # @raise [StoreError] when the fence's own statements fail (nothing was
      #   written), or COMMIT is refused; [OutcomeUnknownError] when the
      #   connection fails during COMMIT
      def guard(resource, token, proof: nil, owner: nil, &block)
        resource = Stores.resource_name(resource, argument: "resource")
        owner = Token.owner(token, owner)
        token, proof = Token.presented(token, proof)
        raise ArgumentError, "guard needs a block: the writes the fence protects" unless block

        TestMode.current&.guard(resource, token)
        Token.authenticate(@signing_keys, resource, token, owner, proof) if @signing_keys && !token.zero?
        @source.with do |session|
          # 0 is never issued: stale everywhere, as for Fence#accept(0).
          if token.zero?
            raise Refusals.report(FencedError.new(resource: resource, token: 0, highest: read_mark(session, resource)))
          end

          guard_on(session, resource, token, owner, &block)
        end
      end

      # @return [Integer, nil] the resource's committed mark (as the
      #   connection's transaction sees it), nil when no write was guarded yet
      def highest(resource)
        resource = Stores.resource_name(resource, argument: "resource")
        @source.with { |session| read_mark(session, resource) }
      end

      # Every resource's mark, ordered by resource: what `store.reconcile`
      # raises the store's counters to.
      # @return [Array<Mark>]
      def marks
        @source.with do |session|
          session.mark_rows.map { |row| Mark.read(row) }
        rescue session.failures.driver_error => e
          raise session.failures.statement(e, "nothing was read")
        end
      end

      # Closes a connection the fence opened itself (from a URL or a path);
      # connections the caller gave are left open.
      def close
        @source.close
        nil
      end

      private

      def read_mark(session, resource)
        session.highest(resource)
      rescue session.failures.driver_error => e
        raise session.failures.statement(e, "nothing was read")
      end

      # An ActiveRecord session runs its own guard; a driver session, {DriverGuard}.
      def guard_on(session, resource, token, owner, &)
        return session.guard(resource, token, owner, &) if session.respond_to?(:guard)

        DriverGuard.run(session, resource, token, owner, &)
      end
    end
  end
end
