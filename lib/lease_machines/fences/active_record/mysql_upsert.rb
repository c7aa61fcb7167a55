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
    #
    # A model with a `lease_owner` column compares and sets the owner in the
    # UPDATEs as `fenced_update_all` does ({FenceColumn}), and inserts the
    # shown one. A model bound to its store (`store: true`) adds the store's check to
    # both: the UPDATE's WHERE, and the INSERT as `INSERT ... SELECT ... FROM
    # DUAL WHERE <the store admits the token>`.
    class MySQLUpsert < Upsert
      private

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
        connection = @model.connection
        columns = values.keys
        connection.exec_update(<<~SQL, "#{@model.name} Fenced Upsert") == 1
          INSERT INTO #{connection.quote_table_name(@model.table_name)}
          (#{columns.map { |name| connection.quote_column_name(name) }.join(', ')})
          #{row(columns, values, resource)}
        SQL
      rescue ::ActiveRecord::RecordNotUnique
        false
      end

      def row(columns, values, resource)
        literals = columns.map { |name| literal(name, values[name]) }.join(", ")
        admission = @column.admission
        return "VALUES (#{literals})" unless admission.bound?

        condition = @model.sanitize_sql_array([admission.condition(@model),
                                               admission.condition_values(@model, resource, values[@column.name])])
        "SELECT #{literals} FROM DUAL WHERE #{condition}"
      end
    end
  end
end
