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
# Then the target of issue 29, through a `sidekiq -c 1` of its own: what the
# lease adds to a job (the seconds a leased job takes over an empty one, from
# the two throughputs) against what two bare one-row commits on the same
# engine add (TwoCommitsJob: SQLite in WAL with synchronous = FULL, as the
# store's, in the same folder), each round the four jobs in turn. For
# information, against two commits on the job's own row of a table with a row
# per resource, as the store's (RowPerJobCommitsJob).
require "lease_machines"
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

median = ->(values) { values.sort[values.size / 2] }

# Rounds of the jobs named, in turn, through one `sidekiq -c CONCURRENCY`:
# [{ job => jobs per second }, ...].
def rounds(concurrency, jobs)
  cluster = LeaseMachines::SidekiqCluster.new(ttl: 30)
  cluster.start(concurrency: concurrency)
  run(cluster, "LeasedEmptyJob") # warm-up: the store's file, the extension, the scheduler thread
  Array.new(ROUNDS) { jobs.to_h { |job| [job, run(cluster, job)] } }
ensure
  cluster&.stop
end

ratios = rounds(5, %w[EmptyJob LeasedEmptyJob LimitedEmptyJob]).each_with_index.map do |rates, round|
  plain, leased, limited = rates.values_at("EmptyJob", "LeasedEmptyJob", "LimitedEmptyJob")
  puts format("round %<round>d: empty job %<plain>.0f jobs/s, leased %<leased>.0f jobs/s (%<ratio>.2fx the time), " \
              "limit 3 %<limited>.0f jobs/s (%<limited_ratio>.2fx)",
              round: round + 1, plain: plain, leased: leased, ratio: plain / leased, limited: limited,
              limited_ratio: plain / limited)
  [plain / leased, plain / limited]
end
puts format("median: a leased job takes %<leased>.2fx the time of an empty one, a limit-3 job %<limited>.2fx " \
            "(%<jobs>d jobs a round, sidekiq -c 5, SQLite store)",
            leased: median.call(ratios.map(&:first)), limited: median.call(ratios.map(&:last)), jobs: JOBS)

# One job at a time, so that a job's added time is its own, not its share of
# five threads waiting on one SQLite write lock.
floors = rounds(1, %w[EmptyJob LeasedEmptyJob TwoCommitsJob RowPerJobCommitsJob]).each_with_index.map do |rates, round|
  plain, leased, commits, row_commits = rates.values_at("EmptyJob", "LeasedEmptyJob", "TwoCommitsJob",
                                                        "RowPerJobCommitsJob")
  added = (1.0 / leased) - (1.0 / plain)
  floor = (1.0 / commits) - (1.0 / plain)
  row_floor = (1.0 / row_commits) - (1.0 / plain)
  puts format("sidekiq -c 1, round %<round>d: the lease adds %<added>.3f ms a job, two bare one-row commits " \
              "%<floor>.3f ms (%<ratio>.2fx); two commits on the job's own row %<row_floor>.3f ms (%<row_ratio>.2fx)",
              round: round + 1, added: added * 1e3, floor: floor * 1e3, ratio: added / floor,
              row_floor: row_floor * 1e3, row_ratio: added / row_floor)
  [added / floor, added / row_floor]
end
puts format("median: the lease adds %<ratio>.2fx what two bare one-row commits on the same engine add to a job " \
            "(sidekiq -c 1; target: at most 1.2x); %<row_ratio>.2fx what two commits on the job's own row add " \
            "(information)", ratio: median.call(floors.map(&:first)), row_ratio: median.call(floors.map(&:last)))
