# frozen_string_literal: true

# Jobs per second through a real `sidekiq` process (Debian's Sidekiq, a real
# Redis from script/redis), an empty job against the same job declaring a
# lease (each job its own resource, on the SQLite store) and against it with
# `limit: 3` (each job a slot of a resource of its own), in one run:
#
#   ruby -Ilib bench/jobs_bench.rb [JOBS] [ROUNDS]     # default 2000 jobs, 3 rounds
#
# Both jobs count themselves done in Redis (one INCR each), so the ratio is the
# cost the lease adds to a job: one acquire and one release (the lease of a job
# shorter than its renew_after is never renewed); under a limit the acquire is
# a slot's, found free on the first try. Prints the median of the per-round
# ratios.
#
# And the target of issue 29: what the lease adds to a job (the seconds a
# leased job takes over an empty one, from the two throughputs) against two
# bare one-row commits on the same engine (SQLite in WAL with synchronous =
# FULL, as the store's, in a file on the same disk), measured in each round
# right after the jobs.
require "lease_machines"
require "sqlite3"
require "tmpdir"
require_relative "../test/jobs/sidekiq_cluster"

JOBS = Integer(ARGV.fetch(0, "2000"))
ROUNDS = Integer(ARGV.fetch(1, "3"))

def run(cluster, job)
  ::Sidekiq.redis { |redis| redis.set("bench:done", 0) }
  args = Array.new(JOBS) { |index| [index] }
  ::Sidekiq::Client.push_bulk("class" => job, "args" => args, "queue" => "default")
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  cluster.wait_for("#{JOBS} #{job}s", seconds: 600) { ::Sidekiq.redis { |redis| redis.get("bench:done").to_i } >= JOBS }
  JOBS / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
end

# Seconds of two bare one-row commits, the mean of `pairs` pairs.
def two_commits(dir, pairs: 500)
  db = SQLite3::Database.new(File.join(dir, "floor.sqlite3"))
  db.execute("PRAGMA journal_mode = WAL")
  db.execute("PRAGMA synchronous = FULL")
  db.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
  db.execute("INSERT OR IGNORE INTO floor (id, n) VALUES (1, 0)")
  update = db.prepare("UPDATE floor SET n = n + 1 WHERE id = 1")
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  (2 * pairs).times { db.transaction(:immediate) { update.execute! } }
  (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) / pairs
ensure
  update&.close
  db&.close
end

floor_dir = Dir.mktmpdir("lm_jobs_floor")
cluster = LeaseMachines::SidekiqCluster.new(ttl: 30)
begin
  cluster.start(concurrency: 5)
  run(cluster, "LeasedEmptyJob") # warm-up: the store's file, the extension, the scheduler thread
  ratios = Array.new(ROUNDS) do |round|
    plain = run(cluster, "EmptyJob")
    leased = run(cluster, "LeasedEmptyJob")
    limited = run(cluster, "LimitedEmptyJob")
    added = (1.0 / leased) - (1.0 / plain)
    commits = two_commits(floor_dir)
    puts format("round %<round>d: empty job %<plain>.0f jobs/s, leased %<leased>.0f jobs/s (%<ratio>.2fx the time), " \
                "limit 3 %<limited>.0f jobs/s (%<limited_ratio>.2fx); the lease adds %<added>.2f ms a job, " \
                "two bare commits take %<commits>.2f ms (%<floor>.2fx)",
                round: round + 1, plain: plain, leased: leased, ratio: plain / leased, limited: limited,
                limited_ratio: plain / limited, added: added * 1e3, commits: commits * 1e3, floor: added / commits)
    [plain / leased, plain / limited, added / commits]
  end
  median = ->(values) { values.sort[values.size / 2] }
  puts format("median: a leased job takes %<leased>.2fx the time of an empty one, a limit-3 job %<limited>.2fx " \
              "(%<jobs>d jobs a round, sidekiq -c 5, SQLite store)",
              leased: median.call(ratios.map { |r| r[0] }), limited: median.call(ratios.map { |r| r[1] }), jobs: JOBS)
  puts format("median: the lease adds %<floor>.2fx two bare one-row commits on the same engine to a job (target: 1.2x)",
              floor: median.call(ratios.map { |r| r[2] }))
ensure
  cluster.stop
  FileUtils.rm_rf(floor_dir)
end
