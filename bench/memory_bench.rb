# frozen_string_literal: true

# Memory: objects and bytes allocated per decision (the gem next to the pure
# Ruby baseline and the floor, in the same process), and the resident set size
# over ten million decisions.
#
# Allocation counts are exact (GC.stat(:total_allocated_objects) deltas, GC
# off while counting); test/properties/allocation_test.rb asserts the gem's. Bytes are
# ObjectSpace.memsize_of of what a decision returns (a Ruby slot, 40 bytes on
# 64-bit, holds an object with up to three instance variables inline).
#
# Run: ruby bench/memory_bench.rb (or `rake bench:memory`).
# BENCH_DECISIONS=10000000 sets how many decisions the RSS run makes.

require "objspace"
require_relative "bench_helper"
require_relative "pure_ruby_authority"
require_relative "floor"

DECISIONS = Integer(ENV.fetch("BENCH_DECISIONS", "10000000"))

puts "machine: #{Bench.machine}"
Bench.heading("objects allocated per call (exact; GC off while counting)")

implementations = {
  "gem" => -> { [LeaseMachines::Authority.new, LeaseMachines::Fence.new] },
  "pure Ruby" => -> { [PureRuby::Authority.new, PureRuby::Fence.new] }
}

# Each operation: a setup (returns the state) and one call on that state.
operations = {
  "acquire granted" => [->(_a, _f) { [1.0] }, ->(a, _f, s) { a.acquire(owner: 1, now: s[0] += 10.0, ttl: 1.0) }],
  "acquire rejected (occupied)" => [->(a, _f) { a.acquire(owner: 1, now: 0.0, ttl: 1e9) },
                                    ->(a, _f, _s) { a.acquire(owner: 2, now: 1.0, ttl: 1.0) }],
  "acquire rejected (clock_regressed)" => [->(a, _f) { a.acquire(owner: 1, now: 5.0, ttl: 1.0) },
                                           ->(a, _f, _s) { a.acquire(owner: 2, now: 1.0, ttl: 1.0) }],
  "renew granted" => [->(a, _f) { a.acquire(owner: 1, now: 0.0, ttl: 10.0) && [0.0] },
                      ->(a, _f, s) { a.renew(owner: 1, token: 1, now: s[0] += 1.0, ttl: 10.0) }],
  "renew rejected (stale_token)" => [->(a, _f) { a.acquire(owner: 1, now: 0.0, ttl: 1e9) },
                                     ->(a, _f, _s) { a.renew(owner: 1, token: 99, now: 1.0, ttl: 1.0) }],
  "release rejected (not_owner)" => [->(a, _f) { a.acquire(owner: 1, now: 0.0, ttl: 1e9) },
                                     ->(a, _f, _s) { a.release(owner: 2, token: 1, now: 1.0) }],
  "fence accept true" => [->(_a, _f) {}, ->(_a, f, _s) { f.accept(7) }],
  "fence accept false" => [->(_a, f) { f.accept(9) }, ->(_a, f, _s) { f.accept(7) }]
}

rows = operations.map do |name, (setup, call)|
  counts = implementations.map do |_label, build|
    authority, fence = build.call
    state = setup.call(authority, fence)
    format("%.2f", Bench.allocations_per_call { call.call(authority, fence, state) })
  end
  [name, *counts]
end

# Releases need a live lease each time: count acquire+release, then subtract
# the acquire's count, measured the same way.
release_row = implementations.map do |_label, build|
  authority, = build.call
  now = 1.0
  pair = Bench.allocations_per_call do
    token = authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0).lease.token
    authority.release(owner: 1, token: token, now: now)
  end
  single = Bench.allocations_per_call { authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0) }
  format("%.2f", pair - single)
end
rows.insert(5, ["release granted (released)", *release_row])

floor = Floor.new
floor_now = 1.0
floor_count = Bench.allocations_per_call { floor.acquire(owner: 1, now: floor_now += 10.0, ttl: 1.0) }
rows << ["floor: one method call returning a new object", format("%.2f", floor_count), ""]
Bench.table(["operation", "gem objects", "pure Ruby objects"], rows)

Bench.heading("bytes per granted decision (ObjectSpace.memsize_of)")
implementations.each do |label, build|
  authority, = build.call
  decision = authority.acquire(owner: 1, now: 1.0, ttl: 1.0)
  lease = decision.lease
  bytes = ObjectSpace.memsize_of(decision) + ObjectSpace.memsize_of(lease)
  kind = ObjectSpace.memsize_of(lease.expires_at_ns).zero? ? "an immediate Fixnum" : "a heap Bignum"
  puts "#{label.ljust(10)} Decision #{ObjectSpace.memsize_of(decision)} + Lease #{ObjectSpace.memsize_of(lease)} " \
       "= #{bytes} bytes; expires_at_ns is #{kind}"
end
realistic = LeaseMachines::Authority.new.acquire(owner: 1, now: Process.clock_gettime(Process::CLOCK_REALTIME),
                                                 ttl: 30.0).lease.expires_at_ns
puts "expires_at_ns for a Unix-epoch time today: #{realistic} " \
     "(#{realistic <= (2**62) - 1 ? 'a Fixnum: no allocation' : 'a Bignum: allocates'}; " \
     "Fixnums reach 2**62-1 ns, about 146 years of nanoseconds)"

Bench.heading("resident set size over #{DECISIONS} decisions (gem)")
authority = LeaseMachines::Authority.new
fence = LeaseMachines::Fence.new
# One cycle = six decisions: acquire, fence accept, renew, renew, rejected acquire, release.
run_cycles = lambda do |cycles, now|
  i = 0
  while i < cycles
    token = authority.acquire(owner: 1, now: now += 10.0, ttl: 5.0).lease.token
    fence.accept(token)
    authority.renew(owner: 1, token: token, now: now + 1.0, ttl: 5.0)
    authority.renew(owner: 1, token: token, now: now + 2.0, ttl: 5.0)
    authority.acquire(owner: 2, now: now + 3.0, ttl: 5.0)
    authority.release(owner: 1, token: token, now: now + 4.0)
    i += 1
  end
  now
end
cycles = DECISIONS / 6
warm = cycles / 10
started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
rss_start = Bench.rss_kib
now = run_cycles.call(warm, 1.0)
rss_warm = Bench.rss_kib
slots_warm = GC.stat(:heap_live_slots)
run_cycles.call(cycles - warm, now)
rss_end = Bench.rss_kib
GC.start
slots_end = GC.stat(:heap_live_slots)
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
puts "VmRSS at start #{rss_start} KiB; after the first #{warm * 6} decisions #{rss_warm} KiB; " \
     "after all #{cycles * 6} decisions #{rss_end} KiB"
puts "growth over the last #{(cycles - warm) * 6} decisions: #{format('%+d', rss_end - rss_warm)} KiB " \
     "(heap live slots: #{slots_warm} before, #{slots_end} after a full GC at the end)"
puts "last token issued: #{authority.checkpoint.last_issued} (one per cycle); #{elapsed.round(1)} s"
