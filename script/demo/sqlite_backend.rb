# frozen_string_literal: true

module LeaseMachinesDemo
  # The story's state in SQLite, in a temporary folder: the lease store in one
  # file, the reports table and its fence in another (the token is the only
  # link between them). Every process opens its own connections.
  class SQLiteBackend
    UPSERT = "INSERT INTO demo_reports (name, body, writer, token) VALUES (?, ?, ?, ?) " \
             "ON CONFLICT (name) DO UPDATE SET body = excluded.body, writer = excluded.writer, token = excluded.token"

    def initialize
      require "lease_machines/stores/sqlite"
      require "lease_machines/fences/sqlite"
      @dir = Dir.mktmpdir("lease_machines_demo")
      @store_path = File.join(@dir, "leases.sqlite3")
      @data_path = File.join(@dir, "reports.sqlite3")
    end

    def describe = "SQLite files in #{@dir}"

    def prepare
      store.tap(&:setup!).close
      fences.tap(&:setup!).close
      with_data { |db| db.execute("CREATE TABLE demo_reports (name TEXT PRIMARY KEY, body TEXT, writer INTEGER, token TEXT)") }
    end

    def store = LeaseMachines::Stores::SQLite.new(@store_path)

    def fences = LeaseMachines::Fences::SQLite.new(@data_path)

    # The write as the fence guards it, on the guard's connection.
    def write_on(db, name, body, writer, token)
      db.execute(UPSERT, [name, body, writer, token.to_s])
    end

    # The same write without a fence.
    def plain_write(name, body, writer, token)
      with_data { |db| write_on(db, name, body, writer, token) }
    end

    # @return [Array(String, Integer, Integer), nil] body, writer, token
    def report(name)
      row = with_data { |db| db.get_first_row("SELECT body, writer, token FROM demo_reports WHERE name = ?", [name]) }
      row && [row[0], row[1], Integer(row[2], 10)]
    end

    def cleanup
      FileUtils.remove_entry(@dir)
    end

    private

    def with_data
      db = SQLite3::Database.new(@data_path)
      db.busy_timeout = 5000
      yield db
    ensure
      db&.close
    end
  end
end
