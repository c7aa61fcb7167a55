# frozen_string_literal: true

module LeaseMachines
  module Fences
    # What a fenced model's writes admit beyond the row's comparison, as {Admission} and
    # signing keys do for a fence: `store:` adds the store's check to each statement's
    # WHERE, `signing_keys:` checks the proof first. Either needs a {Pass}.
    class RowAdmission
      STORE = "lease_machines_store"
      private_constant :STORE

      def self.from(store:, strict:, signing_keys:)
        new(Admission.from(store: store, strict: strict), Signing::Keys.from(signing_keys))
      end

      def initialize(admission, keys)
        @admission = admission
        @keys = keys
        freeze
      end

      def bound? = @admission.bound?
      def needs_resource? = @admission.bound? || !@keys.nil?

      # `shown`: a token or a {Pass}; a signed model refuses a bad proof here.
      # @return [Array(Integer, String, Integer)] the token, the resource and the owner
      def presented(model, shown)
        unless Pass === shown # rubocop:disable Style/CaseEquality -- asks the class, not the object
          token = Token.check(shown)
          if needs_resource?
            raise ArgumentError, "#{model.name} is fenced_by a store or signing keys, which check the token against " \
                                 "the lease's resource name: show LeaseMachines::Fences::Pass.new(resource, lease) " \
                                 "instead of a bare token"
          end

          return [token, nil, nil]
        end
        Token.authenticate(@keys, shown.resource, shown.token, shown.owner, shown.proof) if @keys && !shown.token.zero?
        [shown.token, shown.resource, shown.owner]
      end

      # `scope`, restricted to what the store admits for `token` of `resource`.
      def admitting(scope, model, resource, token)
        return scope unless @admission.bound?

        scope.where(condition(model), condition_values(model, resource, token))
      end

      # The EXISTS condition with named binds (:resource, :token, :clock), which an
      # `INSERT ... SELECT ... WHERE` can also use.
      def condition(model)
        issued, live = case engine(model)
                       when :sqlite then sqlite_checks
                       when :mysql then numeric_checks("DECIMAL(20,0)", Fences::MySQL::Statements::CLOCK_NS)
                       else numeric_checks("numeric", Postgres::Statements::CLOCK_NS_SQL)
                       end
        "EXISTS (SELECT 1 FROM #{STORE_TABLE} AS #{STORE} WHERE #{STORE}.name = :resource AND #{issued}" \
          "#{" AND #{live}" if @admission.strict?})"
      end

      # The token as decimal text (ActiveRecord refuses to quote an Integer past 2**63-1
      # for PostgreSQL); on SQLite also the host clock.
      def condition_values(model, resource, token)
        return { resource: resource, token: token.to_s } unless engine(model) == :sqlite

        { resource: resource, token: token.to_s, clock: Fences::SQLite::Statements::CLOCK_NS.call.to_s }
      end

      # The error of a refused write to a row, the store's row read in the write's
      # transaction. `error`: the FencedError's keywords.
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

      # SQLite's exact text comparison, and the host clock, bound.
      def sqlite_checks
        [Fences::SQLite::Statements.at_most(":token", "#{STORE}.last_issued"),
         "#{STORE}.lease_token = :token AND #{Fences::SQLite::Statements.below(':clock', "#{STORE}.lease_expires_at_ns")}"]
      end

      # The token's text cast to the column's type, never compared as a float.
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

      # last_issued, lease_token, lease_expires_at_ns, the clock (SQLite: read here), lease_owner.
      def store_row(model, resource)
        sql, binds = case engine(model)
                     when :mysql then [Fences::MySQL::Statements.read_sql(:store_row, resource), []]
                     when :sqlite then [Fences::SQLite::Statements::READS.fetch(:store_row), [resource]]
                     else [Postgres::Statements::READS.fetch(:store_row), [resource]]
                     end
        row = model.connection.select_rows(sql, ActiveRecordSession::NAME, binds).first
        return nil unless row

        values = row.map { |value| StoredToken.read(value, "#{STORE_TABLE} row #{resource.inspect}") }
        engine(model) == :sqlite ? values.insert(3, Fences::SQLite::Statements::CLOCK_NS.call) : values
      end
    end
  end
end
