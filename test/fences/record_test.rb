# frozen_string_literal: true

require_relative "record_cases"
require_relative "reissued_record_cases"
require "lease_machines/fences/active_record"

module LeaseMachines
  class RecordSQLiteBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class RecordPostgresBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class SQLiteRecordTest < Minitest::Test
    include RecordCases
    include ReissuedRecordCases
    include FenceTestHelper::SQLiteData

    def setup
      super
      RecordSQLiteBase.establish_connection(adapter: "sqlite3", database: @path, timeout: 10_000)
      create_tables
    end

    def teardown
      RecordSQLiteBase.remove_connection
      super
    end

    def base = RecordSQLiteBase

    # The migration line for SQLite: text, so that the 20-digit form stays text.
    def token_column(table) = table.string(:lease_token, limit: 20)

    def create_row_log
      base.connection.execute("CREATE TABLE row_log (id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT)")
      base.connection.execute("CREATE TRIGGER row_log_update AFTER UPDATE ON #{TABLE} BEGIN " \
                              "INSERT INTO row_log (token) VALUES (NEW.lease_token); END")
    end

    def raw_tokens_at_most(batch, token)
      with_sqlite do |db|
        db.get_first_value("SELECT count(*) FROM #{TABLE} WHERE day LIKE ? AND lease_token <= ?",
                           ["#{batch}-%", format("%020d", token)])
      end
    end
  end

  class PostgresRecordTest < Minitest::Test
    include RecordCases
    include ReissuedRecordCases
    include FenceTestHelper::PostgresData

    def setup
      super
      unless RecordPostgresBase.connected?
        RecordPostgresBase.establish_connection(adapter: "postgresql", url: PostgresServer.base_url,
                                                schema_search_path: PostgresServer.schema)
      end
      create_tables
    end

    def base = RecordPostgresBase

    # The migration line for PostgreSQL: numeric(20,0).
    def token_column(table) = table.decimal(:lease_token, precision: 20, scale: 0)

    def create_row_log
      connection = base.connection
      connection.execute("DROP TABLE IF EXISTS row_log")
      connection.execute("CREATE TABLE row_log (id bigserial PRIMARY KEY, token numeric(20,0))")
      connection.execute(<<~SQL)
        CREATE OR REPLACE FUNCTION row_log_update() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN INSERT INTO row_log (token) VALUES (NEW.lease_token); RETURN NEW; END $$
      SQL
      connection.execute("CREATE TRIGGER row_log_update AFTER UPDATE ON #{TABLE} FOR EACH ROW EXECUTE FUNCTION row_log_update()")
    end

    def raw_tokens_at_most(batch, token)
      Integer(@admin.exec_params("SELECT count(*) FROM #{TABLE} WHERE day LIKE $1 AND lease_token <= $2::numeric",
                                 ["#{batch}-%", token.to_s]).getvalue(0, 0))
    end
  end
end
