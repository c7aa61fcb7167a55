# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # What both MySQL sessions share, each through its `rows(sql)`, `create(sql)` and
      # `add_owner_column`; a refused mark's error is read with locking reads (see {Statements.read_sql}).
      module SharedSession
        def refusal(resource, token, owner = nil)
          @locking = true
          @admission.refusal(self, resource, token, owner: owner)
        ensure
          @locking = false
        end

        # DDL commits an open transaction, so it refuses to run inside one; then adds the
        # owner column to a table made before it, and checks that the table is InnoDB.
        def setup(sql)
          if in_transaction?
            raise @failures.problem("setup! creates a table, which commits the open transaction in MySQL: run it " \
                                    "outside a transaction")
          end

          create(sql)
          add_owner_column
          engine = rows(Statements::ENGINE_SQL).dig(0, 0)
          return if engine.to_s.casecmp?("InnoDB")

          raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; fences need InnoDB" \
                                  "#{self.class::INNODB_ADVICE}")
        end

        private

        def read(kind, resource) = rows(Statements.read_sql(kind, resource, locking: @locking)).first

        # MySQL 8/9 have no ADD COLUMN IF NOT EXISTS: looked for first.
        def owner_column_missing? = rows(Statements::HAS_OWNER_SQL).dig(0, 0).to_i.zero?
      end

      # One Mysql2::Client as a guard uses it: the store's session plus the guard's statements.
      class Session < Stores::MySQL::Session
        include Admission::Reads
        include DriverSession
        include SharedSession

        IN_TRANSACTION = 1568 # ER_CANT_CHANGE_TX_CHARACTERISTICS
        INNODB_ADVICE = " (transactions and row locks): ALTER TABLE #{TABLE} ENGINE = InnoDB".freeze

        def initialize(connection, failures, admission: Admission.new(:any))
          super(connection)
          @failures = failures
          @admission = admission
        end

        # mysql2 cannot tell: `SET TRANSACTION READ WRITE` fails with 1568 inside a
        # transaction, on MySQL and MariaDB alike. A lost connection raises StoreError.
        def in_transaction?
          @connection.query("SET TRANSACTION READ WRITE")
          false
        rescue Mysql2::Error => e
          return true if e.error_number == IN_TRANSACTION

          recover unless refused?(e)
          raise @failures.statement(e)
        end

        def begin_and_mark(resource, token, owner = nil)
          @connection.query("START TRANSACTION")
          mark(resource, token, owner, restart: true) # its own transaction: begun again after a deadlock
        end

        def mark_rows = query(Mark::SQL)

        def setup(sql)
          super
        rescue Mysql2::Error => e
          raise @failures.statement(e, "nothing was created")
        end

        private

        def execute(sql) = @connection.query(sql)
        def create(sql) = @connection.query(sql)
        def rows(sql) = query(sql)

        def mark(resource, token, owner, restart: false)
          Statements.mark(@admission.mode, resource, token, owner, restart: restart) do |sql|
            @connection.query(sql)
            @connection.affected_rows
          end
        end

        # A concurrent setup! may add it first.
        def add_owner_column
          @connection.query(Statements::ADD_OWNER_SQL) if owner_column_missing?
        rescue Mysql2::Error => e
          raise unless e.error_number == Statements::DUPLICATE_COLUMN
        end
      end

      # A guard through ActiveRecord's mysql2 adapter: values written in (it binds
      # nothing without prepared statements), and no DDL inside a transaction.
      class ActiveRecordMySQLSession < ActiveRecordSession
        include SharedSession

        INNODB_ADVICE = ""

        # A deadlock during the mark rolled back the whole transaction: when it was the
        # guard's own, nothing of the block ran and the guard runs again, up to
        # DEADLOCK_ATTEMPTS times in all; inside the caller's transaction it is raised.
        def guard(resource, token, owner = nil, &)
          own = !in_transaction?
          attempts = 1
          begin
            super
          rescue DeadlockedMark => e
            raise e.cause unless own && attempts < Statements::DEADLOCK_ATTEMPTS

            attempts += 1
            retry
          end
        end

        def in_transaction? = @adapter.transaction_open?

        private

        # Raised through the guard's transaction (which rolls back); its cause is the StoreError.
        class DeadlockedMark < StandardError; end

        def rows(sql) = statement { @adapter.select_rows(sql, NAME) }

        def create(sql) = statement { @adapter.execute(sql.lines.grep_v(/\A\s*--/).join) }

        def add_owner_column
          @adapter.execute(Statements::ADD_OWNER_SQL) if owner_column_missing?
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
