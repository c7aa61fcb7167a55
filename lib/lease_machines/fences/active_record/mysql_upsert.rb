# frozen_string_literal: true

module LeaseMachines
  module Fences
    # {Upsert} on MySQL, which has no conditional `ON CONFLICT ... DO UPDATE
    # ... WHERE` (and whose `ON DUPLICATE KEY UPDATE` reports the same row
    # count for a refused row and an inserted one under CLIENT_FOUND_ROWS,
    # which ActiveRecord's mysql2 adapter sets). Up to three statements, each
    # atomic on the row:
    #
    # 1. UPDATE the row WHERE the key matches AND the token column admits the
    #    token (NULL or at most the token): 1 row matched means written;
    # 2. else INSERT the row: written, unless a row with the key exists
    #    (ActiveRecord::RecordNotUnique, the statement changed nothing);
    # 3. then the UPDATE once more (another writer created the row between
    #    1 and 2): 1 row matched means written, 0 means fenced.
    class MySQLUpsert < Upsert
      private

      def execute(values, keys)
        return 1 if update(values, keys) == 1
        return 1 if insert(values)

        update(values, keys)
      end

      def update(values, keys)
        updates = values.reject { |name, _| keys.include?(name) || name.start_with?("created_") }
        scope = @model.unscoped.where(values.slice(*keys))
        @model.unscoped { @column.admitting(scope, values.fetch(@column.name)).update_all(updates) }
      end

      def insert(values)
        connection = @model.connection
        columns = values.keys
        connection.exec_update(<<~SQL, "#{@model.name} Fenced Upsert") == 1
          INSERT INTO #{connection.quote_table_name(@model.table_name)}
          (#{columns.map { |name| connection.quote_column_name(name) }.join(', ')})
          VALUES (#{columns.map { |name| literal(name, values[name]) }.join(', ')})
        SQL
      rescue ::ActiveRecord::RecordNotUnique
        false
      end
    end
  end
end
