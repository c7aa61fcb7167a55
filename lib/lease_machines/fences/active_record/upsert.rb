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
    # `unique_by` names the columns of a unique index (the conflict target).
    # No row inserted or updated means fenced. Values are cast and serialized
    # by the model's attribute types, then quoted by the connection; no
    # callbacks or validations run (as for ActiveRecord's `upsert_all`), and
    # `created_at`/`updated_at` are set when the model records timestamps.
    class Upsert
      def initialize(model, column)
        @model = model
        @column = column
      end

      # @return [true]
      def run(token, attributes, unique_by, resource)
        keys = Array(unique_by).map(&:to_s)
        values = attributes.transform_keys(&:to_s)
        missing = keys - values.keys
        raise ArgumentError, "attributes must include the unique_by columns, missing #{missing.join(', ')}" if missing.any?

        values[@column.name] = token
        timestamps(values)
        return true if token.positive? && execute(values, keys, resource) == 1

        refuse(token, values.slice(*keys), resource)
      end

      private

      def refuse(token, key_values, resource)
        error = { resource: "#{@model.name} #{key_values.map { |k, v| "#{k}=#{v.inspect}" }.join(' ')}", token: token,
                  highest: @model.unscoped.where(key_values).pick(@column.name) }
        raise Refusals.report(FencedError.new(**error)) if token.zero?

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
          #{updates.map { |name| "#{connection.quote_column_name(name)} = excluded.#{connection.quote_column_name(name)}" }.join(', ')}
          WHERE (#{guarded} IS NULL OR #{guarded} <= excluded.#{connection.quote_column_name(@column.name)})
        SQL
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
