# frozen_string_literal: true

module LeaseMachines
  module Fences
    # A model's token column (checked against its SQL type at the first fenced write) and
    # the condition every fenced statement adds: `column IS NULL OR column <= token`. With
    # a `lease_owner` column, an equal token recorded for another owner is refused.
    class FenceColumn
      POSTGRES_TYPES = /\A(numeric(\((2\d|[3-9]\d|\d{3,}),0\))?|text|character varying(\((2\d|[3-9]\d|\d{3,})\))?)\z/
      # DECIMAL of at least 20 digits and no scale, or BIGINT UNSIGNED (exact, compared as numbers).
      MYSQL_TYPES = /\A(decimal\((2\d|[3-6]\d),0\)( unsigned)?|bigint(\(20\))? unsigned)\z/i
      private_constant :POSTGRES_TYPES, :MYSQL_TYPES

      attr_reader :name, :admission

      def initialize(model, name, admission)
        @model = model
        @name = name
        @admission = admission
        @checked = false
      end

      # Once (it needs the schema): the column must hold every token exactly and compare as tokens do.
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

      # A bare token keeps the recorded owner at an equal token and clears it at a greater.
      def owner_values(token, owner)
        return {} unless records_owners?
        return { OWNER_COLUMN => owner } if owner

        { OWNER_COLUMN => Arel.sql("CASE WHEN #{quoted(@name)} = #{token_literal(token)} THEN #{quoted(OWNER_COLUMN)} END") }
      end

      # The error of a write of `model` refused on a row (the first of `row`), reported.
      # `error`: its keywords.
      def refusal(model, row, owner, resource, **error)
        return Refusals.report(FencedError.new(**error)) if error.fetch(:token).zero?

        reissued = reissued(row, owner, **error)
        return Refusals.report(reissued) if reissued

        @admission.refusal(model, resource, **error)
      end

      # The `fence_refused` event of a `fenced_update_all` that left rows it matched: one
      # per call, naming how many, with what a `fenced_update!` of such a row would say.
      # `shown`: the token, resource and owner {RowAdmission#presented} gave.
      def report_refused(model, matched, updated, shown)
        token, resource, owner = shown
        refused = matched.count - updated
        return unless refused.positive?

        highest = StoredToken.read(matched.maximum(@name), "#{model.table_name}.#{@name}")
        refusal(model, matched.where(@name => token), owner, resource,
                resource: "#{model.name} (#{refused} of #{refused + updated} rows)", token: token, highest: highest)
      end

      def records_owners?
        @owner_column = @model.columns_hash.key?(OWNER_COLUMN) if @owner_column.nil?
        @owner_column
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

      def token_literal(token) = @model.connection.quote(@model.type_for_attribute(@name).serialize(token))

      # Decimal text on SQLite, a number elsewhere.
      def owner_literal(owner) = sqlite? ? @model.connection.quote(owner.to_s) : Integer(owner).to_s
      def sqlite? = @model.connection.adapter_name.match?(/sqlite/i)
      def mysql? = @model.connection.adapter_name.match?(/mysql/i)

      def exact?(sql_type)
        return sql_type.match?(/CHAR|CLOB|TEXT/i) && !sql_type.match?(/INT/i) if sqlite?
        return sql_type.match?(MYSQL_TYPES) if mysql?

        sql_type.match?(POSTGRES_TYPES)
      end

      def migration_hint
        return "declare it as text (add_column :#{@model.table_name}, :#{@name}, :string, limit: 20)" if sqlite?

        "declare it as #{mysql? ? 'decimal' : 'numeric'}(20,0) (add_column :#{@model.table_name}, :#{@name}, :decimal, " \
          "precision: 20, scale: 0)"
      end
    end

    # The ActiveModel type of a model's token column: an Integer in 0..2**64-1 in Ruby,
    # the 20-digit text of {StoredToken} in the database. Nothing is converted: "5" or
    # 5.0 raises, as every token argument of the gem does.
    class TokenType < ::ActiveModel::Type::Value
      # `model` and `column` name it in messages ("Report#lease_token").
      def initialize(model, column)
        super()
        @model = model
        @column = column
      end

      def type = :lease_machines_token
      def cast(value) = value.nil? ? nil : Token.check(value, label)
      def deserialize(value) = StoredToken.read(value, label)

      # On MySQL the Integer, quoted as a number: MySQL compares a DECIMAL column with a
      # string as floating-point numbers (inexact above 2**53), with an integer exactly.
      def serialize(value)
        token = cast(value)
        token.nil? || mysql? ? token : StoredToken.text(token)
      end

      def ==(other) = other.is_a?(TokenType) && other.label == label
      alias eql? ==

      def hash = [self.class, label].hash

      protected

      def mysql? = @model.connection.adapter_name.match?(/mysql/i)

      # Read when raised, so a class named after `fenced_by` ran is named too.
      def label = "#{@model.name || @model.inspect}##{@column}"
    end
  end
end
