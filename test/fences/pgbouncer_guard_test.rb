# frozen_string_literal: true

require_relative "guard_contract"
require_relative "../support/pgbouncer"

module LeaseMachines
  # The fence contract (test/fences/guard_contract.rb) through PgBouncer in
  # transaction mode (script/pgbouncer) with `prepared_statements: false`: a
  # guard is one transaction, so it keeps one server connection from BEGIN to
  # COMMIT. The committed rows are read directly, without the pooler.
  class PgBouncerGuardTest < Minitest::Test
    include GuardContract
    include FenceTestHelper::PostgresData

    def setup
      super
      @url = PgBouncer.url
      @admin.finish
      @admin = PgBouncer.direct
      prepare_pooled_tables
    end

    def new_fences
      Fences::Postgres.new(@url, prepared_statements: false).tap { |fences| @closing << fences }
    end

    def write(conn, name, body)
      driver_write(conn, name, body)
    end

    private

    def prepare_pooled_tables
      return if self.class.instance_variable_get(:@tables)

      @admin.exec("SET client_min_messages = warning")
      @admin.exec(FenceTestHelper::REPORTS_SQL)
      Fences::Postgres.new(@admin).setup!
      self.class.instance_variable_set(:@tables, true)
    end
  end
end
