# frozen_string_literal: true

require_relative "mysql_fence_helper"
# RecordCases, the cases of row fencing every engine runs.
require_relative "record_cases"
require_relative "reissued_record_cases"

module LeaseMachines
  class RecordMySQLBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  # Row fencing of ActiveRecord models on MySQL (the mysql2 adapter).
  class MySQLRecordTest < Minitest::Test
    include RecordCases
    include ReissuedRecordCases
    include FenceTestHelper::MySQLData

    def setup
      super
      RecordMySQLBase.establish_connection(@url) unless RecordMySQLBase.connected?
      create_tables
    end

    def base = RecordMySQLBase

    # The migration line for MySQL: decimal(20,0).
    def token_column(table) = table.decimal(:lease_token, precision: 20, scale: 0)

    # The trigger writes while the UPDATE holds the row lock, so the
    # AUTO_INCREMENT order is the commit order.
    def create_row_log
      connection = base.connection
      connection.execute("DROP TABLE IF EXISTS row_log")
      connection.execute("CREATE TABLE row_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, token DECIMAL(20,0)) " \
                         "ENGINE = InnoDB")
      connection.execute("CREATE TRIGGER row_log_update AFTER UPDATE ON #{TABLE} FOR EACH ROW " \
                         "INSERT INTO row_log (token) VALUES (NEW.lease_token)")
    end

    def raw_tokens_at_most(batch, token)
      @admin.query("SELECT COUNT(*) FROM #{TABLE} WHERE day LIKE '#{@admin.escape(batch)}-%' " \
                   "AND lease_token <= #{Integer(token)}", as: :array).to_a.dig(0, 0)
    end

    # BIGINT UNSIGNED holds every token too.
    def test_a_bigint_unsigned_column_is_accepted_and_compares_exactly
      base.connection.create_table("unsigned_reports", force: true) do |t|
        t.column :lease_token, "BIGINT UNSIGNED"
      end
      model = Class.new(base) do
        self.table_name = "unsigned_reports"
        include Fences::Record
        fenced_by
      end
      RecordCases.const_set(:MySQLUnsignedReport, model) unless RecordCases.const_defined?(:MySQLUnsignedReport)
      row = model.create!
      row.fenced_update!((2**63) + 1)
      assert_raises(FencedError) { row.fenced_update!(2**63) }
      row.fenced_update!(U64_MAX)
      assert_equal U64_MAX, model.find(row.id).lease_token
    end
  end
end
