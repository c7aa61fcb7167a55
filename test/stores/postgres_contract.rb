# frozen_string_literal: true

require_relative "store_contract"

module LeaseMachines
  # The store contract (store_contract.rb) on PostgreSQL: the test database,
  # and the rows, log and schema read and written directly. Run by
  # PostgresStoreTest, and through the pooler by PgBouncerStoreTest.
  module PostgresContract
    include StoreContract

    COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"

    def setup
      @url = StoreTestHelper::PostgresServer.url
      @admin = StoreTestHelper::PostgresServer.connect
      @stores = []
    end

    def teardown
      @stores&.each(&:close)
      @admin&.close
    end

    # --- what the contract needs ----------------------------------------------

    def new_store(**options)
      Stores::Postgres.new(@url, **options).tap { |store| @stores << store }
    end

    def engine_connection_class
      PG::Connection
    end

    def engine
      :postgres
    end

    def raw_row(name)
      types = @admin.exec_params("SELECT #{COLUMNS.split(', ').map { |c| "pg_typeof(#{c})::text" }.join(', ')} " \
                                 "FROM lease_machines_resources WHERE name = $1", [name]).values.first
      assert_equal ["numeric"], types.uniq, "every u64 column is numeric"
      values = @admin.exec_params("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = $1", [name])
      U64_COLUMNS.zip(values.values.first).to_h
    end

    def insert_row(name, last_issued: nil, owner: nil, token: nil, expires_at_ns: nil, observed_ns: 0)
      @admin.exec_params("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)",
                         [name, *[last_issued, owner, token, expires_at_ns, observed_ns].map { |v| v&.to_s }])
    end

    def raw_columns(name)
      @admin.exec_params("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = $1", [name]).values.first
    end

    def with_old_table
      schema = "lm_before_labels_#{SecureRandom.hex(4)}"
      @admin.exec("SET client_min_messages = warning")
      @admin.exec("CREATE SCHEMA #{schema}")
      url = StoreTestHelper::PostgresServer.url.sub(/search_path%3D[^&]*/, "search_path%3D#{schema}")
      StoreTestHelper::PostgresServer.connect(url).tap { |conn| conn.exec(old_schema_sql) }.close
      yield ->(**options) { Stores::Postgres.new(url, **options).tap { |store| @stores << store } }
    ensure
      @admin.exec("DROP SCHEMA IF EXISTS #{schema} CASCADE") if schema
    end

    def raw_label(name)
      @admin.exec_params("SELECT holder_label FROM lease_machines_resources WHERE name = $1", [name]).getvalue(0, 0)
    end

    def write_raw_label(name, label)
      @admin.exec_params("UPDATE lease_machines_resources SET holder_label = $1 WHERE name = $2", [label, name])
    end

    # The table has no CHECK constraints: the library validates what it reads.
    def insert_unchecked(name, columns)
      @admin.exec_params("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)",
                         [name, *columns])
    end

    def delete_row(name)
      @admin.exec_params("DELETE FROM lease_machines_resources WHERE name = $1", [name])
    end

    def engine_bad_rows
      {}
    end

    def create_log_table
      @admin.exec("SET client_min_messages = warning")
      @admin.exec(<<~SQL)
        CREATE TABLE IF NOT EXISTS lm_log (
          seq bigserial PRIMARY KEY, resource text, owner numeric(20,0), status text,
          token numeric(20,0), expires_at_ns numeric(20,0), observed_ns numeric(20,0))
      SQL
    end

    def log_hook(owner)
      lambda do |commit|
        decision = commit.decision or next
        lease = decision.lease
        commit.connection.exec_params(
          "INSERT INTO lm_log (resource, owner, status, token, expires_at_ns, observed_ns) " \
          "VALUES ($1, $2, $3, $4, $5, $6)",
          [commit.name, owner.to_s, decision.status.to_s, lease&.token&.to_s, lease&.expires_at_ns&.to_s,
           commit.checkpoint.observed_ns.to_s]
        )
      end
    end

    def read_log(name)
      @admin.exec_params("SELECT owner, status, token, expires_at_ns, observed_ns FROM lm_log WHERE resource = $1 " \
                         "ORDER BY seq", [name]).values.map do |owner, status, token, expires_at_ns, observed_ns|
        { owner: Integer(owner), status: status, token: token && Integer(token),
          expires_at_ns: expires_at_ns && Integer(expires_at_ns), observed_ns: Integer(observed_ns) }
      end
    end

    # Contention runs with synchronous_commit off for its sessions: the same
    # server, locks and transactions, but a commit does not wait ~4 ms for the
    # WAL to reach the disk, so the processes make thousands of decisions in a
    # few seconds. Every other test commits with the server's fsync.
    def with_contention_database
      durable = @url
      @url = "#{@url}%20-c%20synchronous_commit%3Doff"
      yield
    ensure
      @url = durable
    end

    def assert_shipped_schema_installed
      shipped = Stores::Postgres.schema_sql.scan(/CONSTRAINT (\w+)/).flatten.sort
      # The constraints the schema names; PostgreSQL 18 also lists every NOT
      # NULL column as a constraint (contype 'n'), which the schema does not name.
      installed = @admin.exec("SELECT conname FROM pg_constraint " \
                              "WHERE conrelid = 'lease_machines_resources'::regclass AND contype <> 'n' ORDER BY conname")
      assert_equal shipped, installed.column_values(0).sort
      types = @admin.exec(<<~SQL).values.to_h
        SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
         WHERE attrelid = 'lease_machines_resources'::regclass AND attnum > 0 AND NOT attisdropped
      SQL
      U64_COLUMNS.each { |column| assert_equal "numeric(20,0)", types.fetch(column) }
    end
  end
end
