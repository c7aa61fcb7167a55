# frozen_string_literal: true

# What LeaseMachines::Metrics costs a hold: `hold { }` with nothing
# subscribed, with an empty subscriber (the events' payloads are built and
# delivered), and with a metrics registry installed, each against a bare
# acquire + release on the same store, in the same process. On the
# in-memory store (a decision costs next to nothing, so the overhead shows
# most) and on SQLite (on disk, WAL, synchronous = FULL: what a job pays).
#
# Run: ruby bench/metrics_bench.rb (`rake bench:metrics`). BENCH_LIB=other/lib
# runs the same rows on another tree (before/after: the "hold { }" row with
# nothing subscribed is the one the metrics work must leave unchanged).

require "tmpdir"
require_relative "bench_helper"
require "lease_machines/testing"
require "lease_machines/stores/sqlite"

METRICS = defined?(LeaseMachines::Metrics) && (require "lease_machines/metrics") && LeaseMachines::Metrics.new

# Runs `count` holds with `subscriber` installed for the batch (nil: nothing).
def holds(authority, count, subscriber)
  installed = subscriber && LeaseMachines.subscribe(subscriber)
  count.times { authority.hold!(owner: 1, ttl: 30) { nil } }
ensure
  LeaseMachines.unsubscribe(installed) if installed
end

def compare(store)
  Bench.heading("hold { } and its subscribers on #{store.class.name} (#{Bench.settings})")
  authority = store.authority("reports/bench")
  empty = ->(_name, _payload) {}
  rounds = Bench.group do |x|
    x.report("acquire + release") do |n|
      n.times do
        lease = authority.acquire(owner: 1, ttl: 30).lease
        authority.release(owner: 1, token: lease.token)
      end
    end
    x.report("hold { }, nothing subscribed") { |n| holds(authority, n, nil) }
    x.report("hold { }, an empty subscriber") { |n| holds(authority, n, empty) }
    x.report("hold { }, Metrics installed") { |n| holds(authority, n, METRICS) } if METRICS
  end
  Bench.table(%w[operation ns/op ratio spread],
              rounds.labels.map do |label|
                [label, Bench.ns(rounds.ns(label)), Bench.ratio(rounds.time_ratio(label, "acquire + release")),
                 Bench.percent(rounds.spread(label))]
              end)
  return unless METRICS

  bare = "hold { }, nothing subscribed"
  puts format("Metrics installed / nothing subscribed: %<ratio>s (%<ns>s ns per hold)",
              ratio: Bench.ratio(rounds.time_ratio("hold { }, Metrics installed", bare)),
              ns: Bench.ns(rounds.ns("hold { }, Metrics installed") - rounds.ns(bare)))
end

puts Bench.machine
compare(LeaseMachines::Stores::Memory.new)
Dir.mktmpdir("lease_machines_metrics_bench", ENV.fetch("HOLD_DIR", Dir.tmpdir)) do |dir|
  store = LeaseMachines::Stores::SQLite.new(File.join(dir, "leases.sqlite3")).setup!
  compare(store)
  store.close
end
