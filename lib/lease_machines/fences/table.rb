# frozen_string_literal: true

require "monitor"
require "lease_machines/stores"
require "lease_machines/stores/connections"
require_relative "../fenced_error"

module LeaseMachines
  module Fences
    # What every engine's fence table shares: one row per protected resource holding
    # its mark (the highest token a guarded write showed). Each engine's fence takes
    # `store:` (admit only tokens the store, its table in this database, issued for the
    # resource), `strict:` (with store: only its live lease's token, at the database
    # clock) and `signing_keys:` (only tokens with a proof one of them made).
    class Table
      # @param source [#with, #close] the engine's connection source
      # @param signing_keys [Array<String>, nil] admit only tokens whose proof one of them made
      def initialize(source, signing_keys)
        @signing_keys = Signing::Keys.from(signing_keys)
        @source = source
      end

      # The engine, its connections' source (a URL without its password), what it admits.
      def inspect
        "#<#{self.class.name} #{@source}#{" admits=#{@admission.mode}" if @admission}#{' signed' if signed?}>"
      end
      alias to_s inspect

      def signed? = !@signing_keys.nil?

      # Creates the fence table when it is missing (idempotent; safe to race); inside
      # the caller's transaction, under a savepoint of it.
      # @return [self]
      def setup!
        sql = self.class::SCHEMA_SQL
        @source.with { |session| session.setup(sql) }
        self
      end

      # Runs the block as a write to `resource` by the holder of `token`: raises the
      # mark to `token` (equal passes) and runs the block in one transaction (a
      # savepoint inside the caller's), then commits.
      # @param token [Integer, Lease] the token, or the lease (its token, proof and owner)
      # @param proof [String, nil] the token's proof, for a fence with `signing_keys:`
      # @param owner [Integer, nil] the owner the token was granted to, recorded with the
      #   mark: an equal token from another owner is refused (ReissuedTokenError)
      # @yieldparam connection the connection to write on
      # @return the block's value
      # @raise [FencedError] when `token` is below the mark, or 0: nothing was written
      # @raise [StoreError] when the fence's own statements fail, or COMMIT is refused;
      #   [OutcomeUnknownError] when the connection fails during COMMIT
      def guard(resource, token, proof: nil, owner: nil, &block)
        resource = Stores.resource_name(resource, argument: "resource")
        owner = Token.owner(token, owner)
        token, proof = Token.presented(token, proof)
        raise ArgumentError, "guard needs a block: the writes the fence protects" unless block

        TestMode.current&.guard(resource, token)
        Token.authenticate(@signing_keys, resource, token, owner, proof) if @signing_keys && !token.zero?
        @source.with do |session|
          if token.zero?
            raise Refusals.report(FencedError.new(resource: resource, token: 0, highest: read_mark(session, resource)))
          end

          next session.guard(resource, token, owner, &block) if session.respond_to?(:guard)

          DriverGuard.run(session, resource, token, owner, &block)
        end
      end

      # @return [Integer, nil] the resource's committed mark, nil when no write was guarded yet
      def highest(resource)
        resource = Stores.resource_name(resource, argument: "resource")
        @source.with { |session| read_mark(session, resource) }
      end

      # Every resource's mark, ordered by resource: what `store.reconcile` raises the store's counters to.
      # @return [Array<Mark>]
      def marks = @source.with { |session| reading(session) { session.mark_rows.map { |row| Mark.read(row) } } }

      # Closes a connection the fence opened itself; connections the caller gave stay open.
      def close
        @source.close
        nil
      end

      private

      # A server engine's source of sessions (`label` names it in errors): the block's, on a
      # driver connection, or ActiveRecord's with `dialect`. A Monitor (not a Mutex) lets a
      # guard inside a guard's block join it.
      def server_source(connection, engine, label, dialect, &session)
        driver_failures = failures(label)
        made = ->(driver) { session.call(driver, driver_failures) }
        kind, target = Stores::ConnectionKind.of(connection, driver: engine.driver, expected: engine.expected)
        case kind
        when :url then owned(target, engine, connector(target, engine, driver_failures), made)
        when :driver then shared(target, engine, made)
        when :pool then Stores::Connections::Pool.new(target, engine, session: made)
        else Connections::ActiveRecord.new(connection, dialect, failures("#{label} (ActiveRecord)"), @admission)
        end
      end

      # A connection the fence opens (`connect`), and one the caller gave.
      def owned(url, engine, connect, session)
        Stores::Connections::Owned.new(url, engine, connect: connect, session: session, lock: Monitor)
      end

      def shared(connection, engine, session)
        Stores::Connections::Shared.new(connection, engine, session: session, lock: Monitor)
      end

      # The engine's connector, its failure told as the fence's.
      def connector(url, engine, failures)
        connect = engine.connector(url)
        lambda do
          connect.call
        rescue failures.driver_error => e
          raise failures.statement(e, "could not connect")
        end
      end

      # How the engine's statements fail, with a hint when `missing(error)` names what the
      # database lacks: the fence's :table, the store's (:store_table), or the :owner_column.
      def failures(label, driver_error, in_migration = " in a migration")
        schema = "#{self.class}::SCHEMA_SQL"
        hints = { table: "; create the table with fences.setup! (or run #{schema}#{in_migration})",
                  store_table: "; #{STORE_TABLE_HINT}",
                  owner_column: "; the table #{TABLE} predates its #{OWNER_COLUMN} column: add it with fences.setup! (or " \
                                "run #{schema} in a migration; docs/FENCES.md, \"Reissued tokens\")" }
        Failures.new(label, driver_error, ->(error) { hints.fetch(missing(error), "") })
      end

      def read_mark(session, resource) = reading(session) { session.highest(resource) }

      def reading(session)
        yield
      rescue session.failures.driver_error => e
        raise session.failures.statement(e, "nothing was read")
      end
    end

    # One resource's mark as the fence table holds it, and the owner recorded with it
    # (nil: none): what `store.reconcile` raises the store's counters to.
    Mark = Struct.new(:resource, :highest, :owner, keyword_init: true)

    # Where a {Mark} is read from, and how.
    class Mark
      SQL = "SELECT resource, highest, #{OWNER_COLUMN} FROM #{TABLE} WHERE highest IS NOT NULL ORDER BY resource".freeze

      # A row of {SQL} (the resource's bytes taken as UTF-8, as a name is its bytes).
      def self.read(row)
        resource, highest, owner = row
        where = "#{TABLE} row #{resource.inspect}"
        new(resource: resource.dup.force_encoding(Encoding::UTF_8).freeze, highest: StoredToken.read(highest, where),
            owner: StoredToken.read(owner, "#{where} (#{OWNER_COLUMN})")).freeze
      end
    end
  end
end
