# frozen_string_literal: true

module LeaseMachines
  module Fences
    # A model's token column, checked against its SQL type at the first fenced write, and
    # the condition every fenced statement adds: `column IS NULL OR column <= token`.
    # With a `lease_owner` column, a write that shows its owner also refuses an equal
    # token recorded for another owner (reissued) and records its own; a bare token
    # compares none, keeps the recorded owner at an equal token and clears it at a greater.
    # The column must hold every token exactly and compare as tokens do: numeric(20,0)
    # or text on PostgreSQL, TEXT affinity on SQLite, DECIMAL(20,0) on MySQL.
    class FenceColumn
      POSTGRES_TYPES = /\A(numeric(\((2\d|[3-9]\d|\d{3,}),0\))?|text|character varying(\((2\d|[3-9]\d|\d{3,})\))?)\z/
      # DECIMAL of at least 20 digits and no scale, or BIGINT UNSIGNED (exact, compared as numbers).
      MYSQL_TYPES = /\A(decimal\((2\d|[3-6]\d),0\)( unsigned)?|bigint(\(20\))? unsigned)\z/i
      private_constant :POSTGRES_TYPES, :MYSQL_TYPES

      attr_reader :name
      # @return [RowAdmission] what the model's writes admit beyond the row's comparison
      attr_reader :admission

      def initialize(model, name, admission)
        @model = model
        @name = name
        @admission = admission
        @checked = false
      end

      # Checks the column once (it needs the schema).
      # @raise [ArgumentError] naming the column, its type and the fix
      def checked
        return self if @checked

        column = @model.columns_hash[@name]
        raise ArgumentError, "#{@model.name} has no column #{@name} (fenced_by :#{@name}): #{migration_hint}" unless column

        sql_type = column.sql_type.to_s
        unless exact?(sql_type)
          raise ArgumentError, "#{@model.name}##{@name} is #{sql_type}, which cannot hold every token exactly or compare " \
                               "tokens in SQL: #{migration_hint}"
        end
        @checked = true
        self
      end

      # The rows of `scope` that `token` (shown by `owner`, nil: not known) may write.
      def admitting(scope, token, owner = nil)
        admitted = scope.where(@name => nil).or(scope.where(@name => ..token))
        return admitted unless owner && records_owners?

        mine = quoted(@name)
        recorded = quoted(OWNER_COLUMN)
        admitted.where("(#{mine} IS NULL OR #{mine} <> #{token_literal(token)} OR #{recorded} IS NULL OR " \
                       "#{recorded} = #{owner_literal(owner)})")
      end

      # The owner column's value a write sets (none without the column).
      def owner_values(token, owner)
        return {} unless records_owners?
        return { OWNER_COLUMN => owner } if owner

        { OWNER_COLUMN => Arel.sql("CASE WHEN #{quoted(@name)} = #{token_literal(token)} THEN #{quoted(OWNER_COLUMN)} END") }
      end

      # The error of a write refused on a row (the first of `row`), reported.
      # @param error [Hash] the FencedError's keywords
      def refusal(row, owner, resource, **error)
        return Refusals.report(FencedError.new(**error)) if error.fetch(:token).zero?

        reissued = reissued(row, owner, **error)
        return Refusals.report(reissued) if reissued

        @admission.refusal(@model, resource, **error)
      end

      # The `fence_refused` event of a `fenced_update_all` that left rows it matched: one
      # per call, naming how many, with what a `fenced_update!` of such a row would say.
      def report_refused(matched, token, owner, resource, updated)
        refused = matched.count - updated
        return unless refused.positive?

        highest = StoredToken.read(matched.maximum(@name), "#{@model.table_name}.#{@name}")
        refusal(matched.where(@name => token), owner, resource,
                resource: "#{@model.name} (#{refused} of #{refused + updated} rows)", token: token, highest: highest)
      end

      def records_owners?
        return @owner_column unless @owner_column.nil?

        @owner_column = @model.columns_hash.key?(OWNER_COLUMN)
      end

      private

      # A row (the first of `row`) that holds `token` under another recorded owner.
      def reissued(row, owner, **error)
        return nil unless owner && records_owners? && error.fetch(:highest) == error.fetch(:token)

        recorded = StoredToken.read(row.pick(OWNER_COLUMN), "#{@model.table_name}.#{OWNER_COLUMN}")
        return nil if recorded.nil? || recorded == owner

        ReissuedTokenError.new(**error, owner: owner, recorded_owner: recorded)
      end

      def quoted(column)
        "#{@model.connection.quote_table_name(@model.table_name)}.#{@model.connection.quote_column_name(column)}"
      end

      def token_literal(token)
        @model.connection.quote(@model.type_for_attribute(@name).serialize(token))
      end

      # Decimal text on SQLite, a number elsewhere.
      def owner_literal(owner)
        sqlite? ? @model.connection.quote(owner.to_s) : Integer(owner).to_s
      end

      def sqlite?
        @model.connection.adapter_name.match?(/sqlite/i)
      end

      def mysql?
        @model.connection.adapter_name.match?(/mysql/i)
      end

      def exact?(sql_type)
        return sql_type.match?(/CHAR|CLOB|TEXT/i) && !sql_type.match?(/INT/i) if sqlite?
        return sql_type.match?(MYSQL_TYPES) if mysql?

        sql_type.match?(POSTGRES_TYPES)
      end

      def migration_hint
        if sqlite?
          "declare it as text (add_column :#{@model.table_name}, :#{@name}, :string, limit: 20)"
        elsif mysql?
          "declare it as decimal(20,0) (add_column :#{@model.table_name}, :#{@name}, :decimal, precision: 20, scale: 0)"
        else
          "declare it as numeric(20,0) (add_column :#{@model.table_name}, :#{@name}, :decimal, precision: 20, scale: 0)"
        end
      end
    end
  end
end
