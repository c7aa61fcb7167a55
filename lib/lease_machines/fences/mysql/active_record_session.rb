# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # A guard through ActiveRecord's mysql2 adapter: values written in (it
      # binds nothing without prepared statements), and no DDL inside a
      # transaction (DDL commits it).
      class ActiveRecordMySQLSession < ActiveRecordSession
        # The error for a refused mark, read with locking reads (see
        # {Statements.highest_sql}).
        def refusal(resource, token)
          @locking = true
          @admission.refusal(self, resource, token)
        ensure
          @locking = false
        end

        def highest(resource)
          value = statement { @adapter.select_rows(Statements.highest_sql(resource, locking: @locking), NAME).dig(0, 0) }
          StoredToken.read(value, "#{TABLE} row #{resource.inspect}")
        end

        def store_row(resource)
          row = statement { @adapter.select_rows(Statements.store_row_sql(resource, locking: @locking), NAME).first }
          return nil unless row

          where = "#{STORE_TABLE} row #{resource.inspect}"
          row.map { |value| StoredToken.read(value, where) }
        end

        def setup(sql)
          if @adapter.transaction_open?
            raise @failures.problem("setup! creates a table, which commits the open transaction in MySQL: run it " \
                                    "outside a transaction")
          end

          statement { @adapter.execute(sql.lines.grep_v(/\A\s*--/).join) }
          engine = statement { @adapter.select_value(Statements::ENGINE_SQL, NAME) }
          return if engine.to_s.casecmp?("InnoDB")

          raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; fences need InnoDB")
        end

        private

        def mark(resource, token)
          statement { Statements.mark(@admission.mode, resource, token) { |sql| @adapter.exec_update(sql, NAME) } }
        end
      end
    end
  end
end
