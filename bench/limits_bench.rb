# frozen_string_literal: true

# Concurrency limits (`hold(limit: N)`) on the SQLite store (on disk, WAL):
# 8 processes hold one resource under a limit of 3, against the same 8
# processes under a limit of 1 (today's hold), measured in the same run.
#
# Workload: every process loops `hold(limit: N, wait: 5, ttl: 5) { sleep 5 ms }`
# for LIMITS_SECONDS; a waiting process backs off and polls as `hold` does.
#
# Figures, each the median of LIMITS_ROUNDS rounds:
#   grants/s            holds granted per second, over all processes
#   vs limit 1          grants/s over the limit-1 rows' (the baseline)
#   most at once        the most blocks running at one instant (the limit, if
#                       it is reached)
#   handover p50/p99    a hold of a slot returned (released) -> the next block
#                       of that slot started, in another process or not
#
# Run: ruby bench/limits_bench.rb (`rake bench:limits`). Knobs:
# LIMITS_SECONDS=2, LIMITS_ROUNDS=3, LIMITS_PROCESSES=8, LIMITS=1,3.

require "tmpdir"
require_relative "load_gem"
require "lease_machines/stores/sqlite"

SECONDS = Float(ENV.fetch("LIMITS_SECONDS", "2"))
ROUNDS = Integer(ENV.fetch("LIMITS_ROUNDS", "3"))
PROCESSES = Integer(ENV.fetch("LIMITS_PROCESSES", "8"))
LIMITS = ENV.fetch("LIMITS", "1,3").split(",").map { |limit| Integer(limit) }
HOLD = 0.005

def realtime_ns = Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)

def percentile(values, fraction)
  sorted = values.sort
  sorted.empty? ? Float::NAN : sorted[[(sorted.size * fraction).ceil - 1, 0].max]
end

def median(values) = values.sort[values.size / 2]

# One worker: [[slot, entered_ns, left_ns, released_ns], ...] over the round
# (entered and left: inside the block, so within the lease).
def work(path, name, limit, owner)
  store = LeaseMachines::Stores::SQLite.new(path)
  authority = store.authority(name)
  stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + SECONDS
  holds = []
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
    entered = left = nil
    outcome = authority.hold(owner: owner, ttl: 5, wait: 5, limit: limit) do |held|
      entered = realtime_ns
      sleep HOLD
      left = realtime_ns
      held.slot
    end
    holds << [outcome.value, entered, left, realtime_ns] if outcome.held?
  end
  holds
end

def round(path, limit)
  name = "limits-#{limit}-#{rand(1 << 30)}"
  readers = Array.new(PROCESSES) do |index|
    reader, writer = IO.pipe
    fork do
      reader.close
      writer.write(Marshal.dump(work(path, name, limit, index + 1)))
      writer.close
      exit!(0)
    end
    writer.close
    reader
  end
  holds = readers.flat_map { |reader| Marshal.load(reader.read).tap { reader.close } } # rubocop:disable Security/MarshalLoad -- our own children
  Process.waitall
  figures(holds)
end

def figures(holds)
  handovers = holds.group_by(&:first).values.flat_map do |in_slot|
    in_slot.sort_by { |hold| hold[1] }.each_cons(2).map { |earlier, later| later[1] - earlier[3] }
  end
  edges = holds.flat_map { |_, entered, left| [[entered, 1], [left, -1]] }.sort
  most = edges.reduce([0, 0]) { |(now, top), (_, change)| [now + change, [top, now + change].max] }.last
  { grants: holds.size / SECONDS, most: most, p50: percentile(handovers, 0.5) / 1e6,
    p99: percentile(handovers, 0.99) / 1e6 }
end

dir = Dir.mktmpdir("lease_machines_limits_bench")
path = File.join(dir, "leases.sqlite3")
LeaseMachines::Stores::SQLite.new(path).setup!.close
rows = LIMITS.to_h do |limit|
  rounds = Array.new(ROUNDS) { round(path, limit) }
  [limit, rounds.first.keys.to_h { |key| [key, median(rounds.map { |r| r[key] })] }]
end
baseline = rows.fetch(LIMITS.first)[:grants]
puts "#{PROCESSES} processes, #{(HOLD * 1000).round} ms per hold, SQLite on disk, " \
     "median of #{ROUNDS} rounds of #{SECONDS} s (ruby #{RUBY_VERSION})"
puts
puts "| limit | grants/s | vs limit #{LIMITS.first} | most at once | handover p50 / p99 (ms) |"
puts "|---|---|---|---|---|"
rows.each do |limit, row|
  puts format("| %<limit>d | %<grants>.0f | %<ratio>.2fx | %<most>d | %<p50>.2f / %<p99>.2f |",
              limit: limit, ratio: row[:grants] / baseline, **row)
end
FileUtils.rm_rf(dir)
