# frozen_string_literal: true

# Durable decisions: LeaseMachines::Stores::SQLite and ::Postgres, each against
# its floor, a bare one-row UPDATE transaction on the same engine and the same
# connection, with its statements prepared (SQLite: BEGIN IMMEDIATE, UPDATE,
# COMMIT; PostgreSQL: BEGIN, UPDATE, COMMIT). A durable decision is one transaction too (lock the row,
# decide in Rust, write the row, commit), so the ratio is what the rules, the
# row lock and the decoding add to the price of a durable write. Target: within
# 1.5x of the floor for acquire, renew and release.
#
# Both engines commit durably as configured by the store and script/postgres
# (SQLite WAL with synchronous = FULL; PostgreSQL fsync = on): every commit
# waits for the disk, for the floor as for the store.
#
# Run: DATABASE_URL=... ruby bench/stores_bench.rb (`rake bench:stores` starts
# PostgreSQL with script/postgres). An engine whose store file or driver is
# missing is reported and skipped; the rest still runs.

require "securerandom"
require "tmpdir"
require_relative "bench_helper"

# Every engine's rows: a store, its floor transaction and, for a diagnosis,
# a bare transaction running the store's own row UPDATE (nil when the store no
# longer exposes the statement), and other configurations of the store whose
# granted acquire is shown next to the default's ({ label => store }).
Engine = Struct.new(:name, :store, :floor, :row_update, :cleanup, :variants)

# A lambda running `statement` (the store's UPDATE, parameters: name and the
# five columns as decimal text) in a bare transaction on `execute`, on a row
# that a real grant created, advancing only observed_ns.
def row_update(store, execute)
  name = "bench-row-update"
  lease = store.authority(name).acquire(owner: 1, ttl: 1_000_000).lease
  observed = store.authority(name).checkpoint.observed_ns
  columns = [lease.token, lease.owner, lease.token, lease.expires_at_ns].map(&:to_s)
  -> { execute.call([name, *columns, (observed += 1).to_s]) }
end

def sqlite_engine(dir)
  require "lease_machines/stores/sqlite"
  store = LeaseMachines::Stores::SQLite.new(File.join(dir, "bench.sqlite3"))
  store.setup!
  db = store.transaction(&:connection) # the store's own connection (@api private)
  db.execute("CREATE TABLE bench_floor (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
  db.execute("INSERT INTO bench_floor (id, n) VALUES (1, 0)")
  # Prepared once, as the store prepares its own statements.
  begin_immediate = db.prepare("BEGIN IMMEDIATE")
  commit = db.prepare("COMMIT")
  increment = db.prepare("UPDATE bench_floor SET n = n + 1 WHERE id = ?")
  floor = lambda do
    begin_immediate.execute!
    increment.execute!(1)
    commit.execute!
  end
  store_update = if LeaseMachines::Stores::SQLite.const_defined?(:UPDATE_SQL)
                   update = db.prepare(LeaseMachines::Stores::SQLite::UPDATE_SQL)
                   row_update(store, lambda do |params|
                     begin_immediate.execute!
                     update.execute!(*params)
                     commit.execute!
                   end)
                 end
  floored = LeaseMachines::Stores::SQLite.new(File.join(dir, "bench.sqlite3"), tokens: :clock_floor)
  cleanup = lambda do
    [begin_immediate, commit, increment, update].compact.each(&:close)
    [store, floored].each(&:close)
  end
  Engine.new("SQLite #{SQLite3::SQLITE_VERSION}", store, floor, store_update, cleanup,
             { "tokens: :clock_floor" => floored })
end

def postgres_engine(url)
  require "lease_machines/stores/postgres"
  schema = "lm_bench_#{Process.pid}_#{SecureRandom.hex(3)}"
  admin = PG.connect(url)
  admin.exec("SET client_min_messages = warning")
  admin.exec("CREATE SCHEMA #{schema}")
  conn = PG.connect(url)
  conn.exec("SET search_path TO #{schema}")
  store = LeaseMachines::Stores::Postgres.new(conn) # the same connection serves the floor
  store.setup!
  conn.exec("CREATE TABLE bench_floor (id integer PRIMARY KEY, n bigint NOT NULL)")
  conn.exec("INSERT INTO bench_floor (id, n) VALUES (1, 0)")
  conn.prepare("bench_floor", "UPDATE bench_floor SET n = n + 1 WHERE id = $1")
  floor = lambda do
    conn.exec("BEGIN")
    conn.exec_prepared("bench_floor", [1])
    conn.exec("COMMIT")
  end
  cleanup = lambda do
    conn.close
    admin.exec("DROP SCHEMA #{schema} CASCADE")
    admin.close
  end
  store_update = if LeaseMachines::Stores::Postgres.const_defined?(:UPDATE_SQL)
                   conn.prepare("bench_store_update", LeaseMachines::Stores::Postgres::UPDATE_SQL)
                   row_update(store, lambda do |params|
                     conn.exec("BEGIN")
                     conn.exec_prepared("bench_store_update", params)
                     conn.exec("COMMIT")
                   end)
                 end
  version = conn.exec("SHOW server_version").getvalue(0, 0)
  variants = {
    "lock_timeout: 5 (SET LOCAL with every write)" => LeaseMachines::Stores::Postgres.new(conn, lock_timeout: 5),
    "with a before_commit hook (a locked transaction)" =>
      LeaseMachines::Stores::Postgres.new(conn, before_commit: ->(_commit) {}),
    "tokens: :clock_floor" => LeaseMachines::Stores::Postgres.new(conn, tokens: :clock_floor)
  }
  Engine.new("PostgreSQL #{version[/\A[\d.]+/]}", store, floor, store_update, cleanup, variants)
end

# What a job's hold sends by default, and the row of a grant carrying it.
HOLDER_LABEL = "web-1.example.internal pid 4242 job=ReportJob jid=7f3a9c2b1d4e"
LABELLED = "acquire granted, label: (#{HOLDER_LABEL.bytesize} bytes)".freeze

# The timed loops of one engine, built once (benchmark-ips runs them in every
# round). `now:` is passed explicitly (seconds on the store's Unix-epoch
# timeline) so that every acquire finds the previous lease expired, as it would
# a few seconds later on the store's own clock.
def timed_loops(engine)
  start = Process.clock_gettime(Process::CLOCK_REALTIME).floor
  loops = {}
  loops["floor"] = lambda do |n|
    i = 0
    while i < n
      engine.floor.call
      i += 1
    end
  end

  if engine.row_update
    loops["row update"] = lambda do |n|
      i = 0
      while i < n
        engine.row_update.call
        i += 1
      end
    end
  end

  granting = engine.store.authority("bench-acquire")
  granting_now = start
  loops["acquire granted"] = lambda do |n|
    i = 0
    while i < n
      granting.acquire(owner: 1, ttl: 1, now: granting_now += 10)
      i += 1
    end
  end

  # The same grant carrying a holder's label (docs/STORES.md, "Holder labels").
  labelling = engine.store.authority("bench-acquire-labelled")
  labelling_now = start
  loops[LABELLED] = lambda do |n|
    i = 0
    while i < n
      labelling.acquire(owner: 1, ttl: 1, now: labelling_now += 10, label: HOLDER_LABEL)
      i += 1
    end
  end

  renewing = engine.store.authority("bench-renew")
  renew_token = renewing.acquire(owner: 1, ttl: 1_000_000, now: start).lease.token
  renewing_now = start
  loops["renew granted"] = lambda do |n|
    i = 0
    while i < n
      renewing.renew(owner: 1, token: renew_token, ttl: 1_000_000, now: renewing_now += 1)
      i += 1
    end
  end

  pairing = engine.store.authority("bench-pair")
  pairing_now = start
  loops["acquire+release granted"] = lambda do |n|
    i = 0
    while i < n
      token = pairing.acquire(owner: 1, ttl: 1, now: pairing_now += 10).lease.token
      pairing.release(owner: 1, token: token, now: pairing_now)
      i += 1
    end
  end

  # On the store's own clock, nobody else waiting: each acquire comes a moment
  # after the release before it (SQLite's handover fairness must not charge it).
  back_to_back = engine.store.authority("bench-back-to-back")
  loops["acquire+release back to back"] = lambda do |n|
    i = 0
    while i < n
      token = back_to_back.acquire(owner: 1, ttl: 30).lease.token
      back_to_back.release(owner: 1, token: token)
      i += 1
    end
  end

  engine.variants.each do |label, store|
    authority = store.authority("bench-variant-#{label.hash}")
    now = start
    loops["acquire granted, #{label}"] = lambda do |n|
      i = 0
      while i < n
        authority.acquire(owner: 1, ttl: 1, now: now += 10)
        i += 1
      end
    end
  end

  occupied = engine.store.authority("bench-occupied")
  occupied.acquire(owner: 1, ttl: 1_000_000, now: start)
  loops["acquire rejected"] = lambda do |n|
    i = 0
    while i < n
      occupied.acquire(owner: 2, ttl: 1, now: start)
      i += 1
    end
  end
  loops
end

# The operations measured again call by call, and their transactions per call.
INTERLEAVED = { "floor" => 1, "acquire granted" => 1, "renew granted" => 1, "acquire+release granted" => 2,
                "acquire rejected" => 1 }.freeze
CALLS = Integer(ENV.fetch("STORES_BENCH_CALLS", "1000"))

def check_paths(engine)
  store = engine.store
  start = Process.clock_gettime(Process::CLOCK_REALTIME).floor + 10_000_000
  checks = [
    store.authority("bench-acquire").acquire(owner: 1, ttl: 1, now: start).granted?,
    store.authority("bench-occupied").acquire(owner: 2, ttl: 1, now: 1).reason == :occupied, # clamped: still held
    store.authority("bench-renew").checkpoint.lease&.token == 1,
    *engine.variants.map do |label, variant|
      variant.authority("bench-variant-#{label.hash}").acquire(owner: 1, ttl: 1, now: start).granted?
    end
  ]
  checks.all? || abort("#{engine.name}: a timed loop left the path it claims to measure (#{checks.inspect})")
end

puts "machine: #{Bench.machine}"
Bench.heading("durable store decisions against a bare one-row UPDATE transaction (#{Bench.settings})")

engines = []
Dir.mktmpdir("lease_machines_bench") do |dir|
  builders = {
    "SQLite" => -> { sqlite_engine(dir) },
    "PostgreSQL" => lambda {
      postgres_engine(ENV.fetch("DATABASE_URL") { raise LoadError, "DATABASE_URL is not set (script/postgres start)" })
    }
  }
  builders.each do |label, build|
    engines << build.call
  rescue LoadError => e
    puts "#{label}: skipped, the store cannot be loaded here (#{e.message})"
  end

  rows = []
  targets = []
  acquire_targets = []
  recorded = []
  interleaved_rows = []
  engines.each do |engine|
    loops = timed_loops(engine)
    rounds = Bench.group { |x| loops.each { |label, body| x.report(label, &body) } }
    # Then call by call, each operation once in a shuffled order (a commit's flush drifts from one second
    # to the next: only calls next to the floor's meet the same disk).
    times = Bench.interleaved(INTERLEAVED.keys.to_h { |label| [label, -> { loops.fetch(label).call(1) }] }, CALLS)
    check_paths(engine)
    INTERLEAVED.each do |label, transactions|
      next if label == "floor"

      by_mean, by_p50, blocks = Bench.interleaved_ratios(times, label, "floor", transactions: transactions)
      interleaved_rows << ["#{engine.name}: #{label}", Bench.ratio_range(by_mean, blocks), Bench.ratio(by_p50)]
      next unless label == "acquire granted"

      acquire_targets << ["#{engine.name} acquire granted at most 1.2x the floor, interleaved mean " \
                          "(#{Bench.ratio_range(by_mean, blocks)}, p50 #{Bench.ratio(by_p50)})", by_mean]
    end
    floor_us = rounds.ns("floor") / 1000
    rows << ["#{engine.name}: floor (BEGIN, UPDATE one row, COMMIT)", format("%.0f", floor_us), "", ""]
    if engine.row_update
      rows << ["#{engine.name}: (diagnosis) BEGIN, the store's row UPDATE, COMMIT",
               format("%.0f", rounds.ns("row update") / 1000), "",
               Bench.ratio(rounds.time_ratio("row update", "floor"))]
    end
    ratios = recorded.push({ engine: engine.name, floor_us: floor_us, vs_floor: {} }).last[:vs_floor]
    {
      "acquire granted" => 1, "renew granted" => 1, "acquire+release granted" => 2,
      "acquire+release back to back" => 2, "acquire rejected" => 1
    }.each do |label, transactions|
      ratio = ratios[label] = rounds.time_ratio(label, "floor") / transactions
      ops = 1e9 / rounds.ns(label) * transactions
      rows << ["#{engine.name}: #{label}", format("%.0f", rounds.ns(label) / 1000), format("%.0f", ops),
               Bench.ratio(ratio)]
      targets << ["#{engine.name} #{label == 'acquire+release granted' ? 'acquire+release' : label}", ratio] unless
        ["acquire rejected", "acquire+release back to back"].include?(label)
    end
    engine.variants.each_key do |variant|
      label = "acquire granted, #{variant}"
      rows << ["#{engine.name}: #{label}", format("%.0f", rounds.ns(label) / 1000),
               format("%.0f", 1e9 / rounds.ns(label)), Bench.ratio(rounds.time_ratio(label, "floor"))]
    end
    rows << ["#{engine.name}: #{LABELLED}", format("%.0f", rounds.ns(LABELLED) / 1000),
             format("%.0f", 1e9 / rounds.ns(LABELLED)), Bench.ratio(rounds.time_ratio(LABELLED, "floor"))]
    rows << ["#{engine.name}: (label's cost) the same / acquire granted without one", "", "",
             Bench.ratio(rounds.time_ratio(LABELLED, "acquire granted"))]
  end
  puts
  Bench.table(["operation", "us per call", "decisions/s", "per transaction vs floor"], rows)
  puts
  puts "per transaction vs floor: time / floor time, per round, median; acquire+release is two transactions, " \
       "compared with two floors."
  puts "acquire rejected writes nothing (the row is unchanged), so its COMMIT has nothing to flush."
  puts "back to back: on the store's clock, each acquire a moment after the release before it, nobody else " \
       "waiting (issue 29: SQLite's handover fairness once charged it 0-1 ms)."
  puts "The rows naming another configuration are the same granted acquire on a store built that way; " \
       "the targets are for the defaults."
  puts "(diagnosis) is not a decision: the store's own UPDATE statement alone, to tell the engine's share of a " \
       "decision from the Ruby around it."
  puts
  puts "interleaved call by call (#{CALLS} calls of each, shuffled every time, each call timed alone), per transaction:"
  Bench.table(["operation", "mean vs floor (5 stretches of the run)", "p50 vs floor"], interleaved_rows)
  targets.each { |text, ratio| Bench.target("#{text} within 1.5x of the floor", ratio, ratio <= 1.5) }
  acquire_targets.each { |text, ratio| Bench.target(text, ratio, ratio <= 1.2) }
  BenchResults.write("stores", settings: Bench.settings, engines: recorded)
ensure
  engines.each { |engine| engine.cleanup.call }
end
