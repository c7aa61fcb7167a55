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

cluster = LeaseMachines::SidekiqCluster.new(ttl: 30)
begin
  cluster.start(concurrency: 5)
  run(cluster, "LeasedEmptyJob") # warm-up: the store's file, the extension, the scheduler thread
  ratios = Array.new(ROUNDS) do |round|
    plain = run(cluster, "EmptyJob")
    leased = run(cluster, "LeasedEmptyJob")
    limited = run(cluster, "LimitedEmptyJob")
    puts format("round %<round>d: empty job %<plain>.0f jobs/s, leased %<leased>.0f jobs/s (%<ratio>.2fx the time), " \
                "limit 3 %<limited>.0f jobs/s (%<limited_ratio>.2fx)",
                round: round + 1, plain: plain, leased: leased, ratio: plain / leased, limited: limited,
                limited_ratio: plain / limited)
    [plain / leased, plain / limited]
  end
  median = ->(values) { values.sort[values.size / 2] }
  puts format("median: a leased job takes %<leased>.2fx the time of an empty one, a limit-3 job %<limited>.2fx " \
              "(%<jobs>d jobs a round, sidekiq -c 5, SQLite store)",
              leased: median.call(ratios.map(&:first)), limited: median.call(ratios.map(&:last)), jobs: JOBS)
ensure
  cluster.stop
end
