# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One `Model.fenced_upsert!`: an INSERT ... ON CONFLICT (unique_by) DO UPDATE ... WHERE
    # the row's token is NULL or at most `token` (PostgreSQL and SQLite); no row written
    # means fenced. As `upsert_all`: no callbacks or validations; timestamps are set.
    class Upsert
      FROM = "" # what a SELECT of literals selects from

      def initialize(model, column, owner = nil)
        @model = model
        @column = column
        @owner = owner
      end

      def run(token, attributes, unique_by, resource)
        keys = Array(unique_by).map(&:to_s)
        values = attributes.transform_keys(&:to_s)
        missing = keys - values.keys
        raise ArgumentError, "attributes must include the unique_by columns, missing #{missing.join(', ')}" if missing.any?

        values[@column.name] = token
        values[OWNER_COLUMN] = @owner if @column.records_owners?
        timestamps(values)
        return true if token.positive? && execute(values, keys, resource) == 1

        key_values = values.slice(*keys)
        row = @model.unscoped.where(key_values)
        described = "#{@model.name} #{key_values.map { |k, v| "#{k}=#{v.inspect}" }.join(' ')}"
        raise @column.refusal(@model, row, @owner, resource, resource: described, token: token,
                                                             highest: row.pick(@column.name))
      end

      private

      def timestamps(values)
        return unless @model.record_timestamps

        now = Time.now
        %w[created_at created_on updated_at updated_on].each do |name|
          values[name] = now if @model.has_attribute?(name) && !values.key?(name)
        end
      end

      def execute(values, keys, resource)
        columns = values.keys
        table = @model.connection.quote_table_name(@model.table_name)
        guarded, = owner_sql(table)
        updates = columns.reject { |name| keys.include?(name) || name.start_with?("created_") }
        @model.connection.exec_update(<<~SQL, "#{@model.name} Fenced Upsert")
          INSERT INTO #{table} (#{columns.map { |name| quoted(name) }.join(', ')}) #{rows(columns, values, resource)}
          ON CONFLICT (#{keys.map { |name| quoted(name) }.join(', ')}) DO UPDATE SET
          #{updates.map { |name| "#{quoted(name)} = #{excluded(name, table)}" }.join(', ')}
          WHERE (#{guarded} IS NULL OR #{guarded} <= excluded.#{quoted(@column.name)})
          #{owner_condition(table) if @column.records_owners?}
        SQL
      end

      def quoted(name) = @model.connection.quote_column_name(name)

      # For the owner column, the recorded owner kept at an equal token when the write shows none.
      def excluded(name, table)
        return "excluded.#{quoted(name)}" unless name == OWNER_COLUMN

        guarded, recorded, token = owner_sql(table)
        "CASE WHEN #{guarded} = #{token} THEN coalesce(excluded.#{quoted(name)}, #{recorded}) ELSE excluded.#{quoted(name)} END"
      end

      # An equal token is admitted only for the recorded owner (or where either side names none).
      def owner_condition(table)
        guarded, recorded, token = owner_sql(table)
        shown = "excluded.#{quoted(OWNER_COLUMN)}"
        "AND (#{guarded} <> #{token} OR #{recorded} IS NULL OR #{shown} IS NULL OR #{recorded} = #{shown})"
      end

      def owner_sql(table)
        ["#{table}.#{quoted(@column.name)}", "#{table}.#{quoted(OWNER_COLUMN)}", "excluded.#{quoted(@column.name)}"]
      end

      # `VALUES (...)`, or bound to the store `SELECT ... WHERE <the store admits the
      # token>`: then neither the insert nor the update (which reads the same `excluded`
      # row) happens for a token it refuses. PostgreSQL types a SELECT's literals as
      # text: each is cast to its column's type.
      def rows(columns, values, resource)
        literals = columns.map { |name| literal(name, values[name]) }
        return "VALUES (#{literals.join(', ')})" unless @column.admission.bound?

        "SELECT #{selected(columns, literals).join(', ')}#{self.class::FROM} WHERE #{store_condition(values, resource)}"
      end

      # SQLite has no types to cast to.
      def selected(columns, literals)
        return literals if @model.connection.adapter_name.match?(/sqlite/i)

        columns.zip(literals).map { |name, text| "CAST(#{text} AS #{@model.columns_hash.fetch(name).sql_type})" }
      end

      def store_condition(values, resource)
        admission = @column.admission
        @model.sanitize_sql_array([admission.condition(@model),
                                   admission.condition_values(@model, resource, values[@column.name])])
      end

      def literal(name, value)
        type = @model.type_for_attribute(name)
        @model.connection.quote(type.serialize(type.cast(value)))
      end
    end

    # {Upsert} on MySQL, which has no conditional upsert (ON DUPLICATE KEY UPDATE counts a
    # refused row as an inserted one): the fenced UPDATE; else the INSERT (RecordNotUnique:
    # another writer created the row); then the UPDATE once more (0 rows: fenced).
    class MySQLUpsert < Upsert
      FROM = " FROM DUAL"

      private

      def selected(_columns, literals) = literals

      def execute(values, keys, resource)
        return 1 if update(values, keys, resource) == 1
        return 1 if insert(values, resource)

        update(values, keys, resource)
      end

      def update(values, keys, resource)
        token = values.fetch(@column.name)
        updates = values.reject { |name, _| keys.include?(name) || name.start_with?("created_") }
                        .merge(@column.owner_values(token, @owner))
        scope = @model.unscoped.where(values.slice(*keys))
        @model.unscoped do
          @column.admission.admitting(@column.admitting(scope, token, @owner), @model, resource, token).update_all(updates)
        end
      end

      def insert(values, resource)
        columns = values.keys
        @model.connection.exec_update(<<~SQL, "#{@model.name} Fenced Upsert") == 1
          INSERT INTO #{@model.connection.quote_table_name(@model.table_name)}
          (#{columns.map { |name| quoted(name) }.join(', ')})
          #{rows(columns, values, resource)}
        SQL
      rescue ::ActiveRecord::RecordNotUnique
        false
      end
    end
  end
end
