# frozen_string_literal: true

module LeaseMachines
  module Fences
    # A model's token column, checked against its declared SQL type the first
    # time the model fences a write, and the condition every fenced statement
    # adds: `column IS NULL OR column <= token`.
    #
    # A model with a `lease_owner` column (as the guards' table has, the
    # owner's type as the token's) records the owner of the write that set
    # the row's token, and refuses an equal token shown by another owner (a
    # reissued token; docs/FENCES.md, "Reissued tokens"): a write that shows
    # its owner (a {Pass}) adds `column IS NULL OR column <> token OR
    # lease_owner IS NULL OR lease_owner = owner` and sets the owner; a bare
    # token compares no owner, keeps the recorded one at an equal token and
    # clears it at a greater one. Without the column, owners are neither
    # compared nor recorded.
    #
    # The column must hold every token exactly and compare in SQL as tokens
    # do (see {StoredToken}):
    #
    # - PostgreSQL: numeric(20,0) (`t.decimal :lease_token, precision: 20, scale: 0`),
    #   or a text column (`t.string :lease_token, limit: 20`);
    # - SQLite: a column of TEXT affinity (`t.string :lease_token, limit: 20`).
    #
    # An integer column cannot hold 2**63 and above, and SQLite would turn the
    # 20-digit text into a number (a REAL past 2**63) in a column of numeric
    # affinity: both are refused with the migration line to use instead.
    class FenceColumn
      POSTGRES_TYPES = /\A(numeric(\((2\d|[3-9]\d|\d{3,}),0\))?|text|character varying(\((2\d|[3-9]\d|\d{3,})\))?)\z/
      # MySQL: DECIMAL with at least 20 digits and no scale, or BIGINT UNSIGNED
      # (both exact over 0..2**64-1 and compared as numbers).
      MYSQL_TYPES = /\A(decimal\((2\d|[3-6]\d),0\)( unsigned)?|bigint(\(20\))? unsigned)\z/i
      private_constant :POSTGRES_TYPES, :MYSQL_TYPES

      # @return [String] the column's name
      attr_reader :name
      # @return [RowAdmission] what the model's writes admit beyond the row's comparison
      attr_reader :admission

      def initialize(model, name, admission)
        @model = model
        @name = name
        @admission = admission
        @checked = false
      end

      # Checks the column once (it needs the schema, so not before the first
      # fenced write).
      # @return [self]
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

      # The rows of `scope` that `token` (shown by `owner`, nil: not known)
      # may write: those whose token is NULL (never fenced) or at most
      # `token`, and not equal to it under another recorded owner.
      def admitting(scope, token, owner = nil)
        admitted = scope.where(@name => nil).or(scope.where(@name => ..token))
        return admitted unless owner && records_owners?

        mine = quoted(@name)
        recorded = quoted(OWNER_COLUMN)
        admitted.where("(#{mine} IS NULL OR #{mine} <> #{token_literal(token)} OR #{recorded} IS NULL OR " \
                       "#{recorded} = #{owner_literal(owner)})")
      end

      # What a write sets besides the token: the owner column's value (the
      # shown owner; for a bare token, the recorded one at an equal token and
      # NULL at a greater), nothing for a model without the column.
      # @return [Hash{String => Object}]
      def owner_values(token, owner)
        return {} unless records_owners?
        return { OWNER_COLUMN => owner } if owner

        { OWNER_COLUMN => Arel.sql("CASE WHEN #{quoted(@name)} = #{token_literal(token)} THEN #{quoted(OWNER_COLUMN)} END") }
      end

      # The error for a write of `token` by `owner` refused on a row (the
      # first of `row`) that holds `token` under another recorded owner;
      # nil for any other refusal.
      # @param error [Hash] the FencedError's keywords (resource:, token:, highest:, record:)
      # @return [ReissuedTokenError, nil]
      def reissued(row, owner, **error)
        return nil unless owner && records_owners? && error.fetch(:highest) == error.fetch(:token)

        recorded = StoredToken.read(row.pick(OWNER_COLUMN), "#{@model.table_name}.#{OWNER_COLUMN}")
        return nil if recorded.nil? || recorded == owner

        ReissuedTokenError.new(**error, owner: owner, recorded_owner: recorded)
      end

      # Whether the model has the owner column (read once, with the schema).
      def records_owners?
        return @owner_column unless @owner_column.nil?

        @owner_column = @model.columns_hash.key?(OWNER_COLUMN)
      end

      private

      def quoted(column)
        "#{@model.connection.quote_table_name(@model.table_name)}.#{@model.connection.quote_column_name(column)}"
      end

      # The token as the column stores it (20-digit text; an integer on MySQL).
      def token_literal(token)
        @model.connection.quote(@model.type_for_attribute(@name).serialize(token))
      end

      # An owner as its column stores it (decimal text on SQLite, a number elsewhere).
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
