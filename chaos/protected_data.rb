# frozen_string_literal: true

require "pg"
require "sqlite3"

module Chaos
  # The protected data: an append-only table, `chaos_writes`, in each of the
  # two databases of a run (the store's own, and the other engine's). A write
  # records the token it was made with and, when the store's table is in the
  # same database, the store's lease row as the write's transaction saw it,
  # and the transaction's start on the database clock: the checker needs
  # nothing else to tell whether the lease was live.
  module ProtectedData
    SQLITE_SCHEMA = <<~SQL
      CREATE TABLE IF NOT EXISTS chaos_writes (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        resource         TEXT    NOT NULL,
        token            INTEGER NOT NULL,
        worker           INTEGER NOT NULL,
        pid              INTEGER NOT NULL,
        sequence         INTEGER NOT NULL,
        written_at_ns    INTEGER NOT NULL,
        store_token      INTEGER,
        store_expires_ns INTEGER,
        fenced           INTEGER NOT NULL
      )
    SQL
    POSTGRES_SCHEMA = <<~SQL
      CREATE TABLE IF NOT EXISTS chaos_writes (
        id               bigserial     PRIMARY KEY,
        resource         text          NOT NULL,
        token            numeric(20,0) NOT NULL,
        worker           integer       NOT NULL,
        pid              integer       NOT NULL,
        sequence         integer       NOT NULL,
        written_at_ns    numeric(20,0) NOT NULL,
        store_token      numeric(20,0),
        store_expires_ns numeric(20,0),
        fenced           boolean       NOT NULL
      )
    SQL
    COLUMNS = "resource, token, worker, pid, sequence, written_at_ns, store_token, store_expires_ns, fenced"

    # The rows every write makes, in commit order per resource (the fence's
    # lock orders a resource's guarded writes, and the id is taken under it).
    Row = Struct.new(:id, :database, :resource, :token, :worker, :pid, :sequence, :written_at_ns, :store_token,
                     :store_expires_ns, :fenced, keyword_init: true)

    module_function

    def setup_sqlite(path)
      db = SQLite3::Database.new(path)
      db.busy_timeout = 10_000
      db.execute("PRAGMA journal_mode = WAL")
      db.execute(SQLITE_SCHEMA)
    ensure
      db&.close
    end

    def setup_postgres(url)
      conn = PG.connect(url)
      conn.exec(POSTGRES_SCHEMA)
    ensure
      conn&.close
    end

    # One write on SQLite, inside the caller's transaction. `clock_ns` is the
    # transaction's start (read before BEGIN IMMEDIATE, or right after it).
    def insert_sqlite(db, write, clock_ns, with_store:)
      store = if with_store
                "(SELECT CAST(lease_token AS INTEGER) FROM lease_machines_resources WHERE name = ?1), " \
                  "(SELECT CAST(lease_expires_at_ns AS INTEGER) FROM lease_machines_resources WHERE name = ?1)"
              else
                "NULL, NULL"
              end
      db.execute("INSERT INTO chaos_writes (#{COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, #{store}, ?7)",
                 [write[:resource], write[:token], write[:worker], write[:pid], write[:sequence], clock_ns,
                  write[:fenced] ? 1 : 0])
    end

    # One write on PostgreSQL, inside the caller's transaction (REPEATABLE
    # READ: the store's row is read from the snapshot of its first
    # statement); its time is the transaction's start.
    def insert_postgres(conn, write, with_store:)
      store = if with_store
                "(SELECT lease_token FROM lease_machines_resources WHERE name = $1), " \
                  "(SELECT lease_expires_at_ns FROM lease_machines_resources WHERE name = $1)"
              else
                "NULL, NULL"
              end
      conn.exec_params("INSERT INTO chaos_writes (#{COLUMNS}) SELECT $1, $2, $3, $4, $5, " \
                       "floor(extract(epoch FROM transaction_timestamp()) * 1e9), #{store}, $6",
                       [write[:resource], write[:token], write[:worker], write[:pid], write[:sequence], write[:fenced]])
    end

    def read_sqlite(path, database)
      db = SQLite3::Database.new(path, readonly: true)
      db.busy_timeout = 10_000
      db.execute("SELECT id, #{COLUMNS} FROM chaos_writes ORDER BY id").map { |values| row(values, database) }
    ensure
      db&.close
    end

    def read_postgres(url, database)
      conn = PG.connect(url)
      conn.exec("SELECT id, #{COLUMNS} FROM chaos_writes ORDER BY id").values.map { |values| row(values, database) }
    ensure
      conn&.close
    end

    def row(values, database)
      id, resource, token, worker, pid, sequence, written, store_token, store_expires, fenced = values
      integer = ->(value) { value.nil? ? nil : Integer(value.to_s, 10) }
      Row.new(id: integer.call(id), database: database, resource: resource, token: integer.call(token),
              worker: integer.call(worker), pid: integer.call(pid), sequence: integer.call(sequence),
              written_at_ns: integer.call(written), store_token: integer.call(store_token),
              store_expires_ns: integer.call(store_expires), fenced: [true, 1, "t"].include?(fenced))
    end
  end
end
