# frozen_string_literal: true

module LeaseMachines
  module Fences
    # Which tokens a fenced model's writes admit beyond the row's own
    # comparison (`fenced_by :lease_token, store: true, strict: true,
    # signing_keys: [...]`), as {Admission} and signed fences do for a fence
    # table:
    #
    # - `store: true`: the lease store's table is in the model's database;
    #   every fenced statement also requires, in its own WHERE, that the
    #   store issued the token for the write's `resource:` (`EXISTS (SELECT 1
    #   FROM lease_machines_resources ... last_issued >= token)`), and with
    #   `strict: true` that it is the token of the store's lease, live at the
    #   database clock (SQLite: the host clock, bound);
    # - `signing_keys:`: the write must show the token's proof (the Lease, or
    #   `proof:`), checked before anything is sent (ForgedTokenError).
    #
    # Either needs the lease's resource name, which the row itself does not
    # know: the write shows a {Pass} instead of a bare token.
    class RowAdmission
      STORE = "lease_machines_store"
      private_constant :STORE

      # @raise [TypeError, ArgumentError] for bad options (the fences' words)
      def self.from(store:, strict:, signing_keys:)
        new(Admission.from(store: store, strict: strict), Signing::Keys.from(signing_keys))
      end

      def initialize(admission, keys)
        @admission = admission
        @keys = keys
        freeze
      end

      # Whether the store's table is read in each statement (store: true).
      def bound?
        @admission.bound?
      end

      # Whether writes need the lease's resource name.
      def needs_resource?
        @admission.bound? || !@keys.nil?
      end

      # The write's token (and resource): `shown` is a token (an Integer)
      # or a {Pass}; a signed model refuses a missing or invalid proof here,
      # before anything is sent.
      # @return [Array(Integer, String, Integer)] the token, the resource and
      #   the owner (both nil for a bare token; the owner nil for a pass
      #   without one)
      # @raise [ArgumentError] for a bare token where the resource is needed
      # @raise [ForgedTokenError]
      def presented(model, shown)
        unless Pass === shown # rubocop:disable Style/CaseEquality -- asks the class, not the object
          token = Token.check(shown)
          check_resource(model, nil)
          return [token, nil, nil]
        end
        return [shown.token, shown.resource, shown.owner] unless needs_resource?

        Token.authenticate(@keys, shown.resource, shown.token, shown.owner, shown.proof) if @keys && !shown.token.zero?
        [shown.token, shown.resource, shown.owner]
      end

      # `scope`, restricted to what the store admits for `token` of `resource`.
      def admitting(scope, model, resource, token)
        return scope unless @admission.bound?

        scope.where(condition(model), condition_values(model, resource, token))
      end

      # The EXISTS condition, with named binds (:resource, :token, :clock), as
      # SQL an `INSERT ... SELECT ... WHERE` can also use.
      def condition(model)
        issued, live = case engine(model)
                       when :sqlite then sqlite_checks
                       when :mysql then numeric_checks("DECIMAL(20,0)", Fences::MySQL::Statements::CLOCK_NS)
                       else numeric_checks("numeric", Postgres::Statements::CLOCK_NS_SQL)
                       end
        "EXISTS (SELECT 1 FROM #{STORE_TABLE} AS #{STORE} WHERE #{STORE}.name = :resource AND #{issued}" \
          "#{" AND #{live}" if @admission.strict?})"
      end

      # The values of {condition}'s binds: the token's canonical decimal
      # text (ActiveRecord would refuse to quote an Integer past 2**63-1 for
      # PostgreSQL), and on SQLite the host clock's.
      def condition_values(model, resource, token)
        return { resource: resource, token: token.to_s } unless engine(model) == :sqlite

        { resource: resource, token: token.to_s, clock: Fences::SQLite::Statements::CLOCK_NS.call.to_s }
      end

      # The error of a refused write to a row: the store row read in the
      # write's transaction, after the refusal ({Admission#refusal}).
      # @return [FencedError]
      # `error`: the FencedError's keywords (resource: the row described,
      # token:, highest: the row's token, record:).
      def refusal(model, lease_resource, **error)
        return Refusals.report(FencedError.new(**error)) unless @admission.bound?

        reading = Reading.new(error.fetch(:highest), store_row(model, lease_resource))
        @admission.refusal(reading, error.fetch(:resource), error.fetch(:token), record: error[:record])
      end

      # What {Admission#refusal} reads, already read.
      Reading = Struct.new(:mark, :row) do
        def highest(_resource) = mark

        def store_row(_resource) = row
      end
      private_constant :Reading

      private

      def check_resource(model, resource)
        return if resource || !needs_resource?

        raise ArgumentError, "#{model.name} is fenced_by a store or signing keys, which check the token against the " \
                             "lease's resource name: show LeaseMachines::Fences::Pass.new(resource, lease) instead of " \
                             "a bare token"
      end

      # Where the token is compared (SQLite's exact text comparison), and
      # the live lease's check against the host clock, bound.
      def sqlite_checks
        [Fences::SQLite::Statements.at_most(":token", "#{STORE}.last_issued"),
         "#{STORE}.lease_token = :token AND #{Fences::SQLite::Statements.below(':clock', "#{STORE}.lease_expires_at_ns")}"]
      end

      # The same on an engine with exact decimals (the token's text cast to
      # the column's type, so never compared as a float) and its own clock.
      def numeric_checks(type, clock_sql)
        ["#{STORE}.last_issued >= CAST(:token AS #{type})",
         "#{STORE}.lease_token = CAST(:token AS #{type}) AND #{STORE}.lease_expires_at_ns > #{clock_sql}"]
      end

      def engine(model)
        case model.connection.adapter_name
        when /sqlite/i then :sqlite
        when /mysql|trilogy/i then :mysql
        else :postgres
        end
      end

      def store_row(model, resource)
        row = read_store_row(model, resource)
        return nil unless row

        values = row.map { |value| StoredToken.read(value, "#{STORE_TABLE} row #{resource.inspect}") }
        engine(model) == :sqlite ? values.insert(3, Fences::SQLite::Statements::DIALECT.clock_ns.call) : values
      end

      # last_issued, lease_token, lease_expires_at_ns (and the database clock,
      # but on SQLite) of the store's row, in the write's transaction.
      def read_store_row(model, resource)
        connection = model.connection
        case engine(model)
        when :mysql
          connection.select_rows(Fences::MySQL::Statements.store_row_sql(resource), ActiveRecordSession::NAME).first
        when :sqlite then connection.select_rows(Fences::SQLite::Statements::DIALECT.store_row_sql, ActiveRecordSession::NAME,
                                                 [resource]).first
        else connection.select_rows(Postgres::Statements::DIALECT.store_row_sql, ActiveRecordSession::NAME, [resource]).first
        end
      end
    end
  end
end
