# frozen_string_literal: true

# The renewal runtime on the SQLite store (on disk, WAL, synchronous = FULL):
#
# 1. 1,000 concurrent holds in one process (each in a thread of its own, as
#    jobs would be), renewed by the one renewal thread: how late each renewal
#    was sent against its plan (renew_after past the last confirmed send), as
#    a share of renew_after (target: p99 under 5%); the threads the runtime
#    added; memory per hold (RSS with the holds, against the same number of
#    threads parked without one).
# 2. `hold { }` against a bare acquire + release on the same store (target:
#    at most 1.15x).
#
# Run: ruby bench/runtime_bench.rb (`rake bench:runtime`). Knobs: HOLDS=1000,
# HOLD_TTL=9 (renew_after is ttl / 3), HOLD_ROUNDS=3 (renewal rounds watched).

require "tmpdir"
require_relative "bench_helper"
require "lease_machines/stores/sqlite"

HOLDS = Integer(ENV.fetch("HOLDS", "1000"))
TTL = Float(ENV.fetch("HOLD_TTL", "9"))
WATCHED_ROUNDS = Integer(ENV.fetch("HOLD_ROUNDS", "3"))

def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def percentile(values, fraction)
  sorted = values.sort
  sorted[[(fraction * sorted.size).ceil - 1, 0].max]
end

# Parks `count` threads, each inside `wrap` (a lambda taking the thread's
# index and the body to run; nil: the body bare), and returns
# [threads, release] once every one is in place.
def park(count, wrap = nil)
  ready = Queue.new
  gate = Queue.new
  body = lambda do
    ready << true
    gate.pop
  end
  threads = Array.new(count) { |index| Thread.new { wrap ? wrap.call(index, body) : body.call } }
  count.times { ready.pop }
  [threads, -> { count.times { gate << true } && threads.each(&:join) }]
end

def concurrent_holds(store)
  Bench.heading("#{HOLDS} concurrent holds, ttl #{TTL} s, renew_after #{TTL / 3} s")
  GC.start
  before = Bench.rss_kib
  threads_before = Thread.list.size
  _, release_bare = park(HOLDS)
  bare_kib = Bench.rss_kib - before
  release_bare.call

  late = []
  LeaseMachines.subscribe { |name, payload| late << payload[:late] if name == :renew && payload[:status] == :renewed }
  GC.start
  before = Bench.rss_kib
  started = monotonic
  holding, release = park(HOLDS, lambda { |index, body|
    store.authority("bench-hold-#{index}").hold!(owner: index, ttl: TTL) { body.call }
  })
  acquired_in = monotonic - started
  held_kib = Bench.rss_kib - before
  runtime_threads = Thread.list.size - threads_before - holding.size
  sleep(acquired_in + (WATCHED_ROUNDS * TTL / 3) + 0.5)
  renewals = late.dup
  release.call

  renew_after = TTL / 3
  p50 = percentile(renewals, 0.5) / renew_after
  p99 = percentile(renewals, 0.99) / renew_after
  Bench.table(%w[figure value],
              [["holds acquired in", format("%.2f s", acquired_in)],
               ["renewals watched", renewals.size.to_s],
               ["lateness p50 / renew_after", format("%.3f%%", 100 * p50)],
               ["lateness p99 / renew_after", format("%.3f%%", 100 * p99)],
               ["lateness max", format("%.1f ms", 1000 * renewals.max)],
               ["threads the runtime added", runtime_threads.to_s],
               ["memory per hold (RSS, minus a parked thread)", format("%.1f KiB", (held_kib - bare_kib).fdiv(HOLDS))]])
  puts "target: renewal lateness p99 under 5% of renew_after #{format('%.3f%%', 100 * p99).rjust(8)}  " \
       "#{p99 < 0.05 ? 'HOLDS' : 'MISSED'}"
end

def hold_against_bare(store)
  Bench.heading("hold { } against a bare acquire + release (#{Bench.settings})")
  authority = store.authority("bench-overhead")
  rounds = Bench.group do |x|
    x.report("acquire + release") do |n|
      n.times do
        lease = authority.acquire(owner: 1, ttl: 30).lease
        authority.release(owner: 1, token: lease.token)
      end
    end
    x.report("hold { }") { |n| n.times { authority.hold!(owner: 1, ttl: 30) { nil } } }
  end
  ratio = rounds.time_ratio("hold { }", "acquire + release")
  Bench.table(%w[operation ns/op ratio spread],
              rounds.labels.map do |label|
                [label, Bench.ns(rounds.ns(label)), Bench.ratio(rounds.time_ratio(label, "acquire + release")),
                 Bench.percent(rounds.spread(label))]
              end)
  Bench.target("hold { } within 1.15x of acquire + release", ratio, ratio <= 1.15)
end

puts Bench.machine
Dir.mktmpdir("lease_machines_runtime_bench") do |dir|
  store = LeaseMachines::Stores::SQLite.new(File.join(dir, "leases.sqlite3")).setup!
  concurrent_holds(store)
  hold_against_bare(store)
  store.close
end
