# frozen_string_literal: true

# Fenced writes against the same writes unfenced, on each engine, on the same
# connection, committing durably as configured (SQLite WAL with
# synchronous = FULL; PostgreSQL fsync = on):
#
# - a guarded write, `fences.guard(resource, token) { UPDATE one row }`,
#   against the same UPDATE in a plain transaction (SQLite: BEGIN IMMEDIATE,
#   UPDATE, COMMIT; PostgreSQL: BEGIN, UPDATE, COMMIT). The guard adds the
#   statement that raises the mark (on PostgreSQL sent with BEGIN, in the same
#   round trip: libpq's pipeline mode; the row "by hand, two round trips" is
#   what it cost before);
# - `record.fenced_update!(token, body: ...)` against `record.update!(body: ...)`
#   on an ActiveRecord model (one UPDATE with the token condition, against
#   update!'s transaction around its UPDATE).
#
# - the strict guard (`store: true, strict: true`: the mark's statement also
#   checks that the store's live lease has the token, at the database clock),
#   with the store's table in the same database and a live lease, against the
#   same plain transaction.
#
# Target: at most 1.10x for the guard and fenced_update!, at most 1.25x for
# the strict guard, on both engines. Rows marked "(information)" show other
# configurations and have no target.
#
# Run: DATABASE_URL=... ruby bench/fences_bench.rb (`rake bench:fences`
# starts PostgreSQL with script/postgres).

require "securerandom"
require "tmpdir"
require_relative "bench_helper"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"
require "lease_machines/fences/active_record"
require "lease_machines/stores/sqlite"
require "lease_machines/stores/postgres"

TOKEN = 7
STRICT = "bench-strict"

# A lease on STRICT that outlives the run, from `store` (its table in the fence's database): its token.
def live_token(store)
  store.setup!
  store.authority(STRICT).acquire(owner: 1, ttl: 1_000_000).lease.token
end
BODIES = %w[a b].freeze

# A timed loop calling `body` n times.
def loop_of(body)
  lambda do |n|
    i = 0
    while i < n
      body.call(i)
      i += 1
    end
  end
end

# The model of the update! rows, on an abstract class per engine.
def report_model(base, fenced)
  Class.new(base) do
    self.table_name = "bench_reports"
    if fenced
      include LeaseMachines::Fences::Record
      fenced_by :lease_token
    end
  end
end

def sqlite_loops(dir)
  path = File.join(dir, "fences.sqlite3")
  fences = LeaseMachines::Fences::SQLite.new(path)
  fences.setup!
  db = fences.guard("bench-setup", 1) { |conn| conn } # the fence's own connection
  db.execute("CREATE TABLE bench_floor (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
  db.execute("INSERT INTO bench_floor (id, body) VALUES (1, 'a')")
  begin_immediate = db.prepare("BEGIN IMMEDIATE")
  commit = db.prepare("COMMIT")
  update = db.prepare("UPDATE bench_floor SET body = ? WHERE id = 1")
  write = ->(i) { update.execute!(BODIES[i & 1]) }
  shared_db = SQLite3::Database.new(path)
  shared_db.busy_timeout = 5000
  shared = LeaseMachines::Fences::SQLite.new(shared_db)
  shared_update = "UPDATE bench_floor SET body = ? WHERE id = 1"
  rising = 0
  store = LeaseMachines::Stores::SQLite.new(path)
  strict_token = live_token(store)
  strict = LeaseMachines::Fences::SQLite.new(path, store: true, strict: true)
  strict_update = strict.guard(STRICT, strict_token) { |conn| conn }.prepare(shared_update) # on its own connection

  base = Class.new(ActiveRecord::Base) { self.abstract_class = true }
  Object.const_set(:BenchSQLiteRecord, base)
  base.establish_connection(adapter: "sqlite3", database: File.join(dir, "records.sqlite3"))
  base.connection.execute("PRAGMA journal_mode = WAL")
  base.connection.execute("PRAGMA synchronous = FULL")
  base.connection.create_table(:bench_reports) do |t|
    t.text :body
    t.string :lease_token, limit: 20
  end
  loops = {
    "plain transaction" => loop_of(lambda do |i|
      begin_immediate.execute!
      write.call(i)
      commit.execute!
    end),
    "guarded write" => loop_of(->(i) { fences.guard("bench", TOKEN) { write.call(i) } }),
    "strict guarded write" => loop_of(->(i) { strict.guard(STRICT, strict_token) { strict_update.execute!(BODIES[i & 1]) } }),
    "guarded write, a greater token every time (information)" =>
      loop_of(->(i) { fences.guard("bench-rising", rising += 1) { write.call(i) } }),
    "guarded write, a caller's SQLite3::Database (information)" =>
      loop_of(->(i) { shared.guard("bench", TOKEN) { |conn| conn.execute(shared_update, [BODIES[i & 1]]) } })
  }
  cleanup = lambda do
    [begin_immediate, commit, update, strict_update].each(&:close)
    [fences, strict, store].each(&:close)
    shared_db.close
    base.remove_connection
  end
  ["SQLite #{SQLite3::SQLITE_VERSION}", loops.merge(record_loops(base)), cleanup]
end

def postgres_loops(url)
  schema = "lm_fence_bench_#{Process.pid}_#{SecureRandom.hex(3)}"
  admin = PG.connect(url)
  admin.exec("SET client_min_messages = warning")
  admin.exec("CREATE SCHEMA #{schema}")
  scoped = "#{url}#{url.include?('?') ? '&' : '?'}options=-c%20search_path%3D#{schema}"
  conn = PG.connect(scoped)
  fences = LeaseMachines::Fences::Postgres.new(conn)
  fences.setup!
  conn.exec("CREATE TABLE bench_floor (id integer PRIMARY KEY, body text NOT NULL)")
  conn.exec("INSERT INTO bench_floor (id, body) VALUES (1, 'a')")
  conn.prepare("bench_update", "UPDATE bench_floor SET body = $1 WHERE id = 1")
  # By hand, what a guard sent before its pipeline: the mark's prepared statement in its own round trip.
  conn.prepare("bench_mark", LeaseMachines::Fences::Postgres::Statements::MARK_SQL)
  # A larger write: a 4 KB report inserted and five rows updated, in one statement.
  conn.exec("CREATE TABLE bench_reports_log (id bigserial PRIMARY KEY, body text NOT NULL)")
  conn.exec("INSERT INTO bench_floor (id, body) SELECT g, 'a' FROM generate_series(2, 5) g")
  conn.prepare("bench_larger", "WITH report AS (INSERT INTO bench_reports_log (body) VALUES ($2)) " \
                               "UPDATE bench_floor SET body = $1 WHERE id BETWEEN 1 AND 5")
  report = "r" * 4096
  larger = ->(i) { conn.exec_prepared("bench_larger", [BODIES[i & 1], report]) }
  write = ->(i) { conn.exec_prepared("bench_update", [BODIES[i & 1]]) }
  ar_update = "UPDATE bench_floor SET body = $1 WHERE id = 1"
  rising = 0

  base = Class.new(ActiveRecord::Base) { self.abstract_class = true }
  Object.const_set(:BenchPostgresRecord, base)
  base.establish_connection(adapter: "postgresql", url: url, schema_search_path: schema)
  base.connection.create_table(:bench_reports) do |t|
    t.text :body
    t.decimal :lease_token, precision: 20, scale: 0
  end
  ar_fences = LeaseMachines::Fences::Postgres.new(base)
  strict_token = live_token(LeaseMachines::Stores::Postgres.new(conn))
  strict = LeaseMachines::Fences::Postgres.new(conn, store: true, strict: true)
  unprepared = LeaseMachines::Fences::Postgres.new(conn, prepared_statements: false)
  loops = {
    "plain transaction" => loop_of(lambda do |i|
      conn.exec("BEGIN")
      write.call(i)
      conn.exec("COMMIT")
    end),
    "guarded write" => loop_of(->(i) { fences.guard("bench", TOKEN) { write.call(i) } }),
    "strict guarded write" => loop_of(->(i) { strict.guard(STRICT, strict_token) { write.call(i) } }),
    "guarded write, a greater token every time (information)" =>
      loop_of(->(i) { fences.guard("bench-rising", rising += 1) { write.call(i) } }),
    "by hand, two round trips: BEGIN, the prepared mark, UPDATE, COMMIT (information)" => loop_of(lambda do |i|
      conn.exec("BEGIN")
      conn.exec_prepared("bench_mark", ["bench-by-hand", TOKEN.to_s, nil])
      write.call(i)
      conn.exec("COMMIT")
    end),
    "larger write: plain transaction (information)" => loop_of(lambda do |i|
      conn.exec("BEGIN")
      larger.call(i)
      conn.exec("COMMIT")
    end),
    "larger write: guarded (information)" => loop_of(->(i) { fences.guard("bench-larger", TOKEN) { larger.call(i) } }),
    "guarded write, prepared_statements: false (information)" =>
      loop_of(->(i) { unprepared.guard("bench", TOKEN) { write.call(i) } }),
    "ActiveRecord transaction, same UPDATE (information)" =>
      loop_of(->(i) { base.transaction { base.connection.exec_update(ar_update, "bench", [BODIES[i & 1]]) } }),
    "guarded write through ActiveRecord (information)" =>
      loop_of(->(i) { ar_fences.guard("bench-ar", TOKEN) { |c| c.exec_update(ar_update, "bench", [BODIES[i & 1]]) } })
  }
  version = conn.exec("SHOW server_version").getvalue(0, 0)[/\A[\d.]+/]
  cleanup = lambda do
    base.remove_connection
    conn.close
    admin.exec("DROP SCHEMA #{schema} CASCADE")
    admin.close
  end
  ["PostgreSQL #{version}", loops.merge(record_loops(base)), cleanup]
end

# update! and fenced_update! on one row each, every call changing the body.
def record_loops(base)
  plain = report_model(base, false).create!(body: "a")
  fenced = report_model(base, true)
  Object.const_set("#{base.name}FencedReport", fenced)
  fenced_row = fenced.create!(body: "a")
  {
    "update!" => loop_of(->(i) { plain.update!(body: BODIES[i & 1]) }),
    "fenced_update!" => loop_of(->(i) { fenced_row.fenced_update!(TOKEN, body: BODIES[i & 1]) })
  }
end

puts "machine: #{Bench.machine}"
Bench.heading("fenced writes against the same writes unfenced (#{Bench.settings})")

engines = []
targets = []
rows = []
Dir.mktmpdir("lease_machines_fence_bench") do |dir|
  engines << sqlite_loops(dir)
  engines << postgres_loops(ENV.fetch("DATABASE_URL") { abort "DATABASE_URL is not set (script/postgres start)" })
  engines.each do |name, loops, _cleanup|
    rounds = Bench.group { |x| loops.each { |label, body| x.report(label, &body) } }
    loops.each_key do |label|
      baseline = if label.start_with?("update!", "fenced_update!") then "update!"
                 elsif label.start_with?("larger write") then "larger write: plain transaction (information)"
                 else
                   "plain transaction"
                 end
      ratio = rounds.time_ratio(label, baseline)
      rows << ["#{name}: #{label}", format("%.0f", rounds.ns(label) / 1000), Bench.ratio(ratio),
               Bench.percent(rounds.spread(label))]
    end
    targets << ["#{name} guarded write / plain transaction", rounds.time_ratio("guarded write", "plain transaction"), 1.10]
    targets << ["#{name} strict guard / plain transaction", rounds.time_ratio("strict guarded write", "plain transaction"),
                1.25]
    targets << ["#{name} fenced_update! / update!", rounds.time_ratio("fenced_update!", "update!"), 1.10]
  end
ensure
  engines.each { |_, _, cleanup| cleanup.call }
end
puts
Bench.table(["operation", "us per call", "vs baseline", "spread"], rows)
puts
puts "vs baseline: time / the baseline's time (the plain transaction, or update!), per round, median."
targets.each { |text, ratio, limit| Bench.target("#{text} at most #{Bench.ratio(limit)}", ratio, ratio <= limit) }
