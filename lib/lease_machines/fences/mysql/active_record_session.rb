# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # A guard through ActiveRecord's mysql2 adapter: values written in (it
      # binds nothing without prepared statements), and no DDL inside a
      # transaction (DDL commits it).
      class ActiveRecordMySQLSession < ActiveRecordSession
        # A deadlock during the mark (see {Statements.mark}) rolled back the
        # whole transaction: when it was the guard's own (none was open
        # before), nothing of the block has run, and the guard runs again, up
        # to Statements::DEADLOCK_ATTEMPTS times in all; inside the caller's
        # transaction it is raised.
        def guard(resource, token, owner = nil, &)
          own = !@adapter.transaction_open?
          attempts = 1
          begin
            super
          rescue DeadlockedMark => e
            raise e.cause unless own && attempts < Statements::DEADLOCK_ATTEMPTS

            attempts += 1
            retry
          end
        end

        # The error for a refused mark, read with locking reads (see
        # {Statements.highest_sql}).
        def refusal(resource, token, owner = nil)
          @locking = true
          @admission.refusal(self, resource, token, owner: owner)
        ensure
          @locking = false
        end

        def highest(resource)
          value = statement { @adapter.select_rows(Statements.highest_sql(resource, locking: @locking), NAME).dig(0, 0) }
          StoredToken.read(value, "#{TABLE} row #{resource.inspect}")
        end

        def mark_owner(resource)
          value = statement { @adapter.select_rows(Statements.owner_sql(resource, locking: @locking), NAME).dig(0, 0) }
          StoredToken.read(value, "#{TABLE} row #{resource.inspect} (#{OWNER_COLUMN})")
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
          add_owner_column
          engine = statement { @adapter.select_value(Statements::ENGINE_SQL, NAME) }
          return if engine.to_s.casecmp?("InnoDB")

          raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; fences need InnoDB")
        end

        private

        # Raised through the guard's transaction (which rolls back) for a
        # mark that a deadlock rolled back; its cause is the StoreError.
        class DeadlockedMark < StandardError; end

        # See {Session#add_owner_column}.
        def add_owner_column
          return unless statement { @adapter.select_value(Statements::HAS_OWNER_SQL, NAME) }.to_i.zero?

          @adapter.execute(Statements::ADD_OWNER_SQL)
        rescue ::ActiveRecord::StatementInvalid => e
          cause = e.cause
          duplicate = cause.is_a?(Mysql2::Error) && cause.error_number == Statements::DUPLICATE_COLUMN
          raise @failures.statement(cause || e) unless duplicate
        end

        def mark(resource, token, owner)
          statement do
            Statements.mark(@admission.mode, resource, token, owner) { |sql| @adapter.exec_update(sql, NAME) }
          end
        rescue StoreError => e
          raise e unless Statements.deadlock?(e.cause)

          raise DeadlockedMark, e.message
        end
      end
    end
  end
end
