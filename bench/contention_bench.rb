# frozen_string_literal: true

# Contention: 1, 2, 4 and 8 processes on one resource, and 4 processes on 4
# resources, for each engine, next to a bare PostgreSQL advisory lock
# (pg_try_advisory_lock / pg_advisory_unlock) measured in the same run with
# the same workload.
#
# Workload (hammer): every process tries to acquire without blocking; a
# granted process holds the lease 1 ms (5 ms in the "5ms" rows) and releases
# it; a refused one tries again at once. Held: the same, while the bench
# itself holds the lease (or the advisory lock) for the whole round, so every
# try is refused: what a refusal costs, with no handover in the way. Wait: a refused process waits
# for the release (await_handover: LISTEN on PostgreSQL, a short jittered
# poll on SQLite) before it tries again.
#
# Figures, each the median of ROUNDS rounds of SECONDS seconds:
#   grants/s, refusals/s        over all processes
#   vs lock                     PostgreSQL: the store's refusals/s over the
#                               advisory lock's, per pair of rounds (each
#                               store round is followed by a lock round), the
#                               median
#   refusals wrote              the share of refusals that wrote a row
#                               (PostgreSQL: pg_stat_user_tables after the
#                               round's backends exited; SQLite: the
#                               connections' total_changes), minus grants and
#                               releases
#   fair                        per round, fewest grants / most grants of the
#                               processes (the median and the worst round)
#   try p50/p99, granted p99    latency of one try, all tries / granted ones
#   handover p50/p99            a release returned -> the next grant of that
#                               resource returned, in another process or not
#
# Run: DATABASE_URL=... ruby bench/contention_bench.rb (`rake bench:contention`
# starts PostgreSQL with script/postgres). Knobs: CONTENTION_SECONDS=2,
# CONTENTION_ROUNDS=3, CONTENTION_ENGINES=postgres,sqlite, CONTENTION_SHAPES="4 on 1,4 on 1 wait"
# (labels of the rows to run; all by default).

require "etc"
require "securerandom"
require "tmpdir"
require_relative "load_gem"
require_relative "contention_workers"
require_relative "results"
require "lease_machines/stores/sqlite"
require "lease_machines/stores/postgres"

SECONDS = Float(ENV.fetch("CONTENTION_SECONDS", "2"))
ROUNDS = Integer(ENV.fetch("CONTENTION_ROUNDS", "3"))
ENGINES = ENV.fetch("CONTENTION_ENGINES", "postgres,sqlite").split(",")
# One row of the table: `hold` is the seconds a granted process holds the
# lease before it releases it.
Shape = Struct.new(:label, :processes, :resources, :mode, :hold) do
  def initialize(label, processes, resources, mode, hold = ContentionWorkers::HOLD) = super

  # Whether the row's processes wait for releases, and so listen for them.
  def listen? = mode == :wait
end
SHAPES = [["1 on 1", 1, 1, :hammer], ["2 on 1", 2, 1, :hammer], ["4 on 1", 4, 1, :hammer],
          ["8 on 1", 8, 1, :hammer], ["4 on 4", 4, 4, :hammer], ["4 on 1 5ms", 4, 1, :hammer, 0.005],
          ["8 on 1 5ms", 8, 1, :hammer, 0.005], ["4 on 1 held", 4, 1, :held], ["4 on 1 wait", 4, 1, :wait]]
         .map { |columns| Shape.new(*columns) }
         .select { |shape| ENV.fetch("CONTENTION_SHAPES", shape.label).split(",").include?(shape.label) }.freeze

# NaN (a figure a round did not have, say no handover at all) is left out.
def median(values)
  sorted = values.reject { |value| value.is_a?(Float) && value.nan? }.sort
  sorted.empty? ? Float::NAN : sorted[sorted.size / 2]
end

def percentile(values, fraction)
  sorted = values.sort
  sorted.empty? ? Float::NAN : sorted[[(sorted.size * fraction).ceil - 1, 0].max]
end

# Release -> next grant on the same resource, in nanoseconds.
def handovers(reports, resources)
  events = reports.flat_map(&:events).group_by { |event| event[3] % resources }
  events.values.flat_map do |list|
    last_release = nil
    list.sort_by { |event| event[2] }.filter_map do |kind, _token, at, _index|
      if kind == :released
        last_release = at
        nil
      elsif last_release
        (at - last_release).tap { last_release = nil }
      end
    end
  end
end

# One round's figures.
def figures(reports, resources, writes)
  grants = reports.sum(&:grants)
  refusals = reports.sum(&:refusals)
  handover = handovers(reports, resources)
  served = reports.map(&:grants)
  {
    grants: grants / SECONDS, refusals: refusals / SECONDS,
    wrote: writes && refusals.positive? ? [writes - (2 * grants), 0].max.fdiv(refusals) : nil,
    fair: served.max.zero? ? Float::NAN : served.min.fdiv(served.max),
    p50: percentile(reports.flat_map(&:try_ns), 0.5) / 1e6,
    p99: percentile(reports.flat_map(&:try_ns), 0.99) / 1e6,
    granted_p99: percentile(reports.flat_map(&:granted_try_ns), 0.99) / 1e6,
    handover_p50: percentile(handover, 0.5) / 1e6, handover_p99: percentile(handover, 0.99) / 1e6
  }
end

# Medians of every figure over the rounds, and the worst round's fairness.
def summary(rounds)
  keys = rounds.first.keys
  keys.to_h { |key| [key, rounds.first[key].nil? ? nil : median(rounds.map { |r| r[key] })] }
      .merge(worst_fair: rounds.map { |r| r[:fair] }.reject(&:nan?).min || Float::NAN)
end

ROW = "| %<engine>-9s | %<label>-11s | %<grants>8.0f | %<refusals>9.0f | %<ratio>6s | %<wrote>6s " \
      "| %<fair>4.2f (%<worst_fair>4.2f) | %<p50>6.2f / %<p99>6.2f | %<granted_p99>7.2f " \
      "| %<handover_p50>6.2f / %<handover_p99>7.2f |"

# Every row printed, for BenchResults.
RECORDED = [] # rubocop:disable Style/MutableConstant

# `ratio`: the store's refusals/s over the advisory lock's, the median of
# the rounds' ratios (nil: no baseline for this row).
def row(engine, label, figures, ratio = nil)
  RECORDED << { engine: engine, processes: label, vs_lock: ratio }.merge(figures)
  wrote = figures[:wrote] ? format("%<share>.1f%%", share: 100 * figures[:wrote]) : "-"
  shown = ratio.nil? || ratio.nan? ? "-" : format("%<r>.2fx", r: ratio)
  format(ROW, **figures, engine: engine, label: label, wrote: wrote, ratio: shown)
end

# PostgreSQL: rows written to the table, from the statistics (flushed when a
# backend exits; the round's workers have exited).
def pg_writes(admin, schema)
  sql = "SELECT n_tup_upd + n_tup_ins FROM pg_stat_user_tables WHERE schemaname = $1 " \
        "AND relname = 'lease_machines_resources'"
  admin.exec("SELECT pg_stat_clear_snapshot()")
  Integer(admin.exec_params(sql, [schema]).getvalue(0, 0), 10)
end

# The bench's PostgreSQL: its URL (search_path set), an admin connection and the schema.
PgBench = Struct.new(:url, :admin, :schema)

# In :held mode the bench holds resource 0 of `store` for the round.
def holding(store, prefix, mode)
  return yield unless mode == :held

  store.authority("#{prefix}-0").acquire(owner: 0, ttl: 600)
  begin
    yield
  ensure
    store.force_release("#{prefix}-0")
  end
end

def pg_round(server, shape)
  url = server.url
  prefix = SecureRandom.hex(4)
  holder = LeaseMachines::Stores::Postgres.new(url)
  before = pg_writes(server.admin, server.schema)
  reports = holding(holder, prefix, shape.mode) do
    ContentionWorkers.round(shape.processes, SECONDS, shape.mode, lambda do |index|
      ContentionWorkers::StoreWorker.new(LeaseMachines::Stores::Postgres.new(url),
                                         "#{prefix}-#{index % shape.resources}", index + 1, nil,
                                         listen: shape.listen?)
    end, hold: shape.hold)
  end
  holder.close
  sleep 0.3 # the exited backends' statistics reach the shared counters
  writes = pg_writes(server.admin, server.schema) - before - (shape.mode == :held ? 2 : 0)
  figures(reports, shape.resources, writes)
end

def advisory_round(url, shape)
  base = rand(1 << 40)
  holder = PG.connect(url)
  holder.exec_params("SELECT pg_advisory_lock($1)", [base]) if shape.mode == :held
  reports = ContentionWorkers.round(shape.processes, SECONDS, shape.mode, lambda do |index|
    ContentionWorkers::AdvisoryWorker.new(PG.connect(url), base + (index % shape.resources))
  end, hold: shape.hold)
  holder.close
  figures(reports, shape.resources, nil)
end

def sqlite_round(path, shape)
  prefix = SecureRandom.hex(4)
  holder = LeaseMachines::Stores::SQLite.new(path)
  reports = holding(holder, prefix, shape.mode) do
    ContentionWorkers.round(shape.processes, SECONDS, shape.mode, lambda do |index|
      store = LeaseMachines::Stores::SQLite.new(path)
      db = store.transaction(&:connection) # @api private: the store's own connection
      start = db.total_changes
      ContentionWorkers::StoreWorker.new(store, "#{prefix}-#{index % shape.resources}", index + 1,
                                         -> { db.total_changes - start }, listen: shape.listen?)
    end, hold: shape.hold)
  end
  holder.close
  figures(reports, shape.resources, reports.sum(&:writes))
end

def postgres_rows
  url0 = ENV.fetch("DATABASE_URL")
  schema = "lm_contention_#{Process.pid}"
  admin = PG.connect(url0)
  admin.exec("SET client_min_messages = warning")
  admin.exec("CREATE SCHEMA #{schema}")
  url = "#{url0}#{url0.include?('?') ? '&' : '?'}options=-c%20search_path%3D#{schema}"
  LeaseMachines::Stores::Postgres.new(url).tap(&:setup!).close
  server = PgBench.new(url, admin, schema)
  rows = SHAPES.flat_map do |shape|
    next [row("postgres", shape.label, summary(Array.new(ROUNDS) { pg_round(server, shape) }))] if shape.mode == :wait

    # Interleaved, so that each store round has an advisory-lock round next
    # to it in time (and in the machine's load).
    pairs = Array.new(ROUNDS) do
      [pg_round(server, shape), advisory_round(url, shape)]
    end
    ratio = median(pairs.map { |store, lock| lock[:refusals].positive? ? store[:refusals] / lock[:refusals] : Float::NAN })
    [row("postgres", shape.label, summary(pairs.map(&:first)), ratio),
     row("advisory", shape.label, summary(pairs.map(&:last)))]
  end
  admin.exec("DROP SCHEMA #{schema} CASCADE")
  rows
end

def sqlite_rows
  Dir.mktmpdir("lease_machines_contention") do |dir|
    path = File.join(dir, "contention.sqlite3")
    LeaseMachines::Stores::SQLite.new(path).tap(&:setup!).close
    SHAPES.map do |shape|
      row("sqlite", shape.label, summary(Array.new(ROUNDS) { sqlite_round(path, shape) }))
    end
  end
end

puts "Contention: #{ROUNDS} rounds of #{SECONDS} s per row, medians (fair: the median round, the worst in " \
     "parentheses); #{Etc.nprocessors} CPUs, Ruby #{RUBY_VERSION}"
puts
puts "| engine    | processes   | grants/s | refusals/s | vs lock | wrote  | fair (worst) | try p50 / p99 ms | " \
     "granted p99 | handover p50 / p99 ms |"
puts "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
puts postgres_rows if ENGINES.include?("postgres")
puts sqlite_rows if ENGINES.include?("sqlite")
BenchResults.write("contention", rounds: ROUNDS, seconds: SECONDS, rows: RECORDED)
