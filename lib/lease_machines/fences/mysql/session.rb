# frozen_string_literal: true

module LeaseMachines
  module Fences
    class MySQL < Table
      # One Mysql2::Client as a guard uses it: the store's session plus the
      # guard's statements.
      class Session < Stores::MySQL::Session
        IN_TRANSACTION = 1568 # ER_CANT_CHANGE_TX_CHARACTERISTICS

        # @return [Failures]
        attr_reader :failures

        def initialize(connection, failures, admission: Admission.new(:any))
          super(connection)
          @failures = failures
          @admission = admission
        end

        # What the guard's block is given.
        def argument
          @connection
        end

        # Asked of the server (mysql2 cannot tell): `SET TRANSACTION READ
        # WRITE` (the default) fails with 1568 inside a transaction, on MySQL
        # and MariaDB alike. A lost connection raises StoreError.
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

        def savepoint_and_mark(resource, token, owner = nil)
          @connection.query("SAVEPOINT #{Statements::SAVEPOINT}")
          mark(resource, token, owner)
        end

        def mark(resource, token, owner, restart: false)
          Statements.mark(@admission.mode, resource, token, owner, restart: restart) do |sql|
            @connection.query(sql)
            @connection.affected_rows
          end
        end
        private :mark

        # @return [Integer, nil] the resource's mark
        def highest(resource)
          value = query(Statements.highest_sql(resource, locking: @locking)).dig(0, 0)
          StoredToken.read(value, "#{TABLE} row #{resource.inspect}")
        end

        # @return [Array<Array>] the rows of {Mark::SQL}
        def mark_rows
          query(Mark::SQL)
        end

        # @return [Integer, nil] the owner recorded with the resource's mark
        def mark_owner(resource)
          value = query(Statements.owner_sql(resource, locking: @locking)).dig(0, 0)
          StoredToken.read(value, "#{TABLE} row #{resource.inspect} (#{OWNER_COLUMN})")
        end

        # @return [Array(Integer, Integer, Integer, Integer), nil] see {Admission#refusal}
        def store_row(resource)
          row = query(Statements.store_row_sql(resource, locking: @locking)).first
          return nil unless row

          where = "#{STORE_TABLE} row #{resource.inspect}"
          row.map { |value| StoredToken.read(value, where) }
        end

        # @return [FencedError] the error for a refused mark, read with
        #   locking reads (see {Statements.highest_sql})
        def refusal(resource, token, owner = nil)
          @locking = true
          @admission.refusal(self, resource, token, owner: owner)
        ensure
          @locking = false
        end

        # Runs the schema (DDL: it commits an open transaction, so it refuses
        # to run inside one), adds the owner column to a table made before
        # it, then checks that the table is InnoDB.
        def setup(sql)
          if in_transaction?
            raise @failures.problem("setup! creates a table, which commits the open transaction in MySQL: run it " \
                                    "outside a transaction")
          end

          @connection.query(sql)
          add_owner_column
          engine = query(Statements::ENGINE_SQL).dig(0, 0)
          return if engine.to_s.casecmp?("InnoDB")

          raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; fences need InnoDB " \
                                  "(transactions and row locks): ALTER TABLE #{TABLE} ENGINE = InnoDB")
        rescue Mysql2::Error => e
          raise @failures.statement(e, "nothing was created")
        end

        # MySQL 8/9 have no ADD COLUMN IF NOT EXISTS: looked for first, and
        # a concurrent setup! that added it in between is no failure.
        def add_owner_column
          return unless query(Statements::HAS_OWNER_SQL).dig(0, 0).to_i.zero?

          @connection.query(Statements::ADD_OWNER_SQL)
        rescue Mysql2::Error => e
          raise unless e.error_number == Statements::DUPLICATE_COLUMN
        end
        private :add_owner_column

        def roll_back_savepoint
          @connection.query("ROLLBACK TO SAVEPOINT #{Statements::SAVEPOINT}")
          release_savepoint
        end

        def release_savepoint
          @connection.query("RELEASE SAVEPOINT #{Statements::SAVEPOINT}")
        end
      end
    end
  end
end
