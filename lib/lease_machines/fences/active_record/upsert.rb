# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One `Model.fenced_upsert!(token, attributes, unique_by:)`: creates the
    # row, or overwrites it when its token is NULL or at most `token`, in one
    # statement (PostgreSQL and SQLite share the syntax):
    #
    #   INSERT INTO reports (day, body, lease_token, created_at, updated_at) VALUES (...)
    #   ON CONFLICT (day) DO UPDATE SET body = excluded.body, lease_token = excluded.lease_token,
    #     updated_at = excluded.updated_at
    #   WHERE reports.lease_token IS NULL OR reports.lease_token <= excluded.lease_token
    #
    # A model with a `lease_owner` column ({FenceColumn}) also inserts the
    # shown owner (NULL for a bare token), refuses in the `WHERE` an equal
    # token whose row records another owner, and sets the owner to the shown
    # one (a bare token keeps the recorded owner at an equal token).
    #
    # `unique_by` names the columns of a unique index (the conflict target).
    # No row inserted or updated means fenced. Values are cast and serialized
    # by the model's attribute types, then quoted by the connection; no
    # callbacks or validations run (as for ActiveRecord's `upsert_all`), and
    # `created_at`/`updated_at` are set when the model records timestamps.
    class Upsert
      # @param owner [Integer, nil] the owner the write shows (nil: a bare token)
      def initialize(model, column, owner = nil)
        @model = model
        @column = column
        @owner = owner
      end

      # @return [true]
      def run(token, attributes, unique_by, resource)
        keys = Array(unique_by).map(&:to_s)
        values = attributes.transform_keys(&:to_s)
        missing = keys - values.keys
        raise ArgumentError, "attributes must include the unique_by columns, missing #{missing.join(', ')}" if missing.any?

        values[@column.name] = token
        values[OWNER_COLUMN] = @owner if @column.records_owners?
        timestamps(values)
        return true if token.positive? && execute(values, keys, resource) == 1

        refuse(token, values.slice(*keys), resource)
      end

      private

      def refuse(token, key_values, resource)
        row = @model.unscoped.where(key_values)
        error = { resource: "#{@model.name} #{key_values.map { |k, v| "#{k}=#{v.inspect}" }.join(' ')}", token: token,
                  highest: row.pick(@column.name) }
        raise Refusals.report(FencedError.new(**error)) if token.zero?

        reissued = @column.reissued(row, @owner, **error)
        raise Refusals.report(reissued) if reissued

        raise @column.admission.refusal(@model, resource, **error)
      end

      def timestamps(values)
        return unless @model.record_timestamps

        now = Time.now
        %w[created_at created_on updated_at updated_on].each do |name|
          values[name] = now if @model.has_attribute?(name) && !values.key?(name)
        end
      end

      def execute(values, keys, resource)
        connection = @model.connection
        columns = values.keys
        quoted = columns.map { |name| connection.quote_column_name(name) }
        table = connection.quote_table_name(@model.table_name)
        guarded = "#{table}.#{connection.quote_column_name(@column.name)}"
        updates = columns.reject { |name| keys.include?(name) || name.start_with?("created_") }
        connection.exec_update(<<~SQL, "#{@model.name} Fenced Upsert")
          INSERT INTO #{table} (#{quoted.join(', ')}) #{rows(columns, values, resource)}
          ON CONFLICT (#{keys.map { |name| connection.quote_column_name(name) }.join(', ')}) DO UPDATE SET
          #{updates.map { |name| "#{connection.quote_column_name(name)} = #{excluded(name, table)}" }.join(', ')}
          WHERE (#{guarded} IS NULL OR #{guarded} <= excluded.#{connection.quote_column_name(@column.name)})
          #{owner_condition(table) if @column.records_owners?}
        SQL
      end

      # `excluded.<name>`; for the owner column, the recorded owner kept at
      # an equal token when the write shows none.
      def excluded(name, table)
        connection = @model.connection
        return "excluded.#{connection.quote_column_name(name)}" unless name == OWNER_COLUMN

        guarded, recorded, token = owner_sql(table)
        "CASE WHEN #{guarded} = #{token} THEN coalesce(excluded.#{connection.quote_column_name(name)}, #{recorded}) " \
          "ELSE excluded.#{connection.quote_column_name(name)} END"
      end

      # An equal token is admitted only for the recorded owner (or where
      # either side names none).
      def owner_condition(table)
        guarded, recorded, token = owner_sql(table)
        shown = "excluded.#{@model.connection.quote_column_name(OWNER_COLUMN)}"
        "AND (#{guarded} <> #{token} OR #{recorded} IS NULL OR #{shown} IS NULL OR #{recorded} = #{shown})"
      end

      def owner_sql(table)
        connection = @model.connection
        ["#{table}.#{connection.quote_column_name(@column.name)}", "#{table}.#{connection.quote_column_name(OWNER_COLUMN)}",
         "excluded.#{connection.quote_column_name(@column.name)}"]
      end

      # The row to insert: `VALUES (...)`, or for a model bound to its store
      # `SELECT ... WHERE <the store admits the token>`, so that neither the
      # insert nor the update happens for a token the store refuses. (The
      # conflict's update reads the same `excluded` row, so the condition
      # holds for both. PostgreSQL types a SELECT's literals as text: each is
      # cast to its column's type.)
      def rows(columns, values, resource)
        admission = @column.admission
        literals = columns.map { |name| literal(name, values[name]) }
        return "VALUES (#{literals.join(', ')})" unless admission.bound?

        unless @model.connection.adapter_name.match?(/sqlite/i)
          literals = columns.zip(literals).map { |name, text| "CAST(#{text} AS #{@model.columns_hash.fetch(name).sql_type})" }
        end
        condition = @model.sanitize_sql_array([admission.condition(@model),
                                               admission.condition_values(@model, resource, values[@column.name])])
        "SELECT #{literals.join(', ')} WHERE #{condition}"
      end

      def literal(name, value)
        type = @model.type_for_attribute(name)
        @model.connection.quote(type.serialize(type.cast(value)))
      end
    end
  end
end
