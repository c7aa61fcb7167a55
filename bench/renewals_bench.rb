# frozen_string_literal: true

# Batched renewals (issue 29): 1,000 concurrent holds in one process (a
# thread each), renewed by the one renewal thread, on SQLite on disk (WAL,
# synchronous = FULL), on PostgreSQL and on MySQL, batched (the holds of one
# store due in the same tick: one Store#renew_all, one COMMIT) against
# unbatched (each renewal its own transaction, as before: the baseline, in
# the same process).
#
# Per engine and mode: renewal lateness p50 / p99 as a share of renew_after
# (target: p99 under 5%), commits per tick (the commits while watched over
# the renewal thread's ticks: SQLite's transactions, counted on the store;
# PostgreSQL's xact_commit, whose delta is as exact as the server's stats
# flush, about a second; MySQL's counted in this process: each COMMIT and
# each self-committing compare-and-set), write statements per tick (MySQL:
# the server's Com_update, Com_update_multi and Com_insert), and CPU per
# lease per renewal (this process's CPU time while watched over the renewals
# watched; the server's CPU is not in it).
#
# Run: DATABASE_URL=... MYSQL_URL=... ruby bench/renewals_bench.rb (`rake
# bench:renewals` starts the servers; an engine without its URL is left
# out). Knobs: HOLDS=1000, HOLD_TTL=30 (renew_after is ttl / 3),
# HOLD_ROUNDS=2 (renewal rounds watched), HOLD_DIR (where the SQLite file goes).

require "tmpdir"
require_relative "bench_helper"
require "lease_machines/stores/sqlite"
require "lease_machines/stores/postgres"
require "lease_machines/stores/mysql"

HOLDS = Integer(ENV.fetch("HOLDS", "1000"))
TTL = Float(ENV.fetch("HOLD_TTL", "30"))
WATCHED_ROUNDS = Integer(ENV.fetch("HOLD_ROUNDS", "2"))
RENEW_AFTER = TTL / 3

# Counts a store's transactions (each one BEGIN ... COMMIT).
module CountedTransactions
  def transactions = @transactions || 0

  def transaction(...)
    @transactions = transactions + 1
    super
  end
end

# Counts the renewal thread's ticks (each a set of holds due together).
module CountedTicks
  class << self
    attr_accessor :ticks
  end
  self.ticks = 0

  private

  def renew(due)
    CountedTicks.ticks += 1
    super
  end
end
LeaseMachines::Runtime::Scheduler.prepend(CountedTicks)

def cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# Counts MySQL's commits in this process: a transaction's COMMIT
# (Session#commit), and a fast-path write (FastPath#write: a statement in
# autocommit mode, its own commit).
module CountedMySQLCommits
  class << self
    attr_accessor :commits
  end
  self.commits = 0

  # Prepended to MySQL::Session.
  module Commit
    def commit
      CountedMySQLCommits.commits += 1
      super
    end
  end

  # Prepended to MySQL::FastPath.
  module Write
    private

    def write(...)
      CountedMySQLCommits.commits += 1
      super
    end
  end
end

# One run: HOLDS holds on `store`, WATCHED_ROUNDS renewal rounds watched.
# `commits`: a callable counting the database's commits; `writes`: its write
# statements (or nil).
def run(store, prefix, batching:, commits:, writes: nil)
  LeaseMachines::Runtime::Scheduler.batching = batching
  renewals = []
  subscriber = LeaseMachines.subscribe do |name, payload|
    renewals << payload[:late] if name == :renew && payload[:status] == :renewed
  end
  started = monotonic
  _, release = Bench.park(HOLDS, lambda { |index, body|
    store.authority("#{prefix}-#{index}").hold!(owner: index + 1, ttl: TTL) { body.call }
  })
  acquired_in = monotonic - started
  sleep([RENEW_AFTER - acquired_in, 0].max + 0.2) # the first renewals of the earliest holds are due
  watch_from = [renewals.size, CountedTicks.ticks, cpu, commits.call, writes&.call.to_i]
  sleep(WATCHED_ROUNDS * RENEW_AFTER)
  watched_to = [renewals.size, CountedTicks.ticks, cpu, commits.call, writes&.call.to_i]
  late = renewals[watch_from[0]...watched_to[0]]
  release.call
  LeaseMachines.unsubscribe(subscriber)
  count, ticks, cpu_time, committed, written = watched_to.zip(watch_from).map { |to, from| to - from }
  { acquired_in: acquired_in, renewals: count, p50: Bench.percentile(late, 0.5) / RENEW_AFTER,
    p99: Bench.percentile(late, 0.99) / RENEW_AFTER, max: late.max, commits_per_tick: committed.fdiv(ticks),
    renewals_per_tick: count.fdiv(ticks), writes_per_tick: writes && written.fdiv(ticks),
    cpu_per_renewal: cpu_time / count }
ensure
  LeaseMachines::Runtime::Scheduler.batching = true
end

def report(engine, unbatched, batched)
  Bench.heading("#{engine}: #{HOLDS} holds, ttl #{TTL} s, renew_after #{RENEW_AFTER} s, #{WATCHED_ROUNDS} rounds watched")
  rows = [["lateness p50 / renew_after", ->(r) { format("%.3f%%", 100 * r[:p50]) }],
          ["lateness p99 / renew_after", ->(r) { format("%.3f%%", 100 * r[:p99]) }],
          ["lateness max", ->(r) { format("%.1f ms", 1000 * r[:max]) }],
          ["renewals watched", ->(r) { r[:renewals].to_s }],
          ["renewals per tick", ->(r) { format("%.1f", r[:renewals_per_tick]) }],
          ["commits per tick", ->(r) { format("%.2f", r[:commits_per_tick]) }],
          (["write statements per tick", ->(r) { format("%.2f", r[:writes_per_tick]) }] if batched[:writes_per_tick]),
          ["CPU per lease per renewal (this process)", ->(r) { format("%.0f us", 1e6 * r[:cpu_per_renewal]) }],
          ["holds acquired in", ->(r) { format("%.2f s", r[:acquired_in]) }]]
  Bench.table(["figure", "unbatched (before)", "batched"],
              rows.compact.map { |label, cell| [label, cell.call(unbatched), cell.call(batched)] })
  puts "target: #{"#{engine}: lateness p99 under 5% of renew_after (batched)".ljust(56)} " \
       "#{format('%.3f%%', 100 * batched[:p99]).rjust(8)}  #{batched[:p99] < 0.05 ? 'HOLDS' : 'MISSED'}"
  Bench.target("#{engine}: CPU per renewal, batched / unbatched", batched[:cpu_per_renewal] / unbatched[:cpu_per_renewal],
               batched[:cpu_per_renewal] <= unbatched[:cpu_per_renewal])
end

puts Bench.machine
Dir.mktmpdir("lease_machines_renewals_bench", ENV.fetch("HOLD_DIR", Dir.tmpdir)) do |dir|
  puts "SQLite database in #{dir}"
  store = LeaseMachines::Stores::SQLite.new(File.join(dir, "leases.sqlite3")).setup!
  store.singleton_class.prepend(CountedTransactions)
  unbatched = run(store, "unbatched", batching: false, commits: -> { store.transactions })
  batched = run(store, "batched", batching: true, commits: -> { store.transactions })
  report("SQLite on disk", unbatched, batched)
  store.close
end

url = ENV.fetch("DATABASE_URL", nil)
if url
  store = LeaseMachines::Stores::Postgres.new(url).setup!
  stats = PG.connect(url)
  commits = lambda do
    # One statement in autocommit reads fresh stats (its own commit, one in
    # the delta, is noise next to the renewals').
    Integer(stats.exec("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").getvalue(0, 0))
  end
  unbatched = run(store, "pg-unbatched-#{Process.pid}", batching: false, commits: commits)
  batched = run(store, "pg-batched-#{Process.pid}", batching: true, commits: commits)
  report("PostgreSQL", unbatched, batched)
  store.close
  stats.close
else
  puts "PostgreSQL skipped: no DATABASE_URL"
end

url = ENV.fetch("MYSQL_URL", nil)
if url
  store = LeaseMachines::Stores::MySQL.new(url).setup!
  LeaseMachines::Stores::MySQL::Session.prepend(CountedMySQLCommits::Commit)
  LeaseMachines::Stores::MySQL.const_get(:FastPath).prepend(CountedMySQLCommits::Write)
  stats = Mysql2::Client.new(**LeaseMachines::Stores::MySQL.const_get(:URL).options(url))
  writes = lambda do
    stats.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_update', 'Com_update_multi', 'Com_insert')",
                as: :array).sum { |_name, value| Integer(value, 10) }
  end
  commits = -> { CountedMySQLCommits.commits }
  unbatched = run(store, "my-unbatched-#{Process.pid}", batching: false, commits: commits, writes: writes)
  batched = run(store, "my-batched-#{Process.pid}", batching: true, commits: commits, writes: writes)
  report("MySQL (#{stats.server_info.fetch(:version)})", unbatched, batched)
  store.close
  stats.close
else
  puts "MySQL skipped: no MYSQL_URL"
end
