# frozen_string_literal: true

# In-process decisions: the gem against baselines run in the same process.
#
#   pure Ruby   bench/pure_ruby_authority.rb: the same rules, checks and frozen
#               values, written by hand (what a user could write instead);
#   floor       Ruby methods with the same arguments that each return one newly
#               allocated small object: no Ruby method that answers with a new
#               object can be cheaper;
#   mutex+hash  Mutex#synchronize around a Hash update behind the same keywords
#               (what "just take a lock" costs, with no rules at all).
#
# Run: ruby bench/decisions_bench.rb (or `rake bench:decisions`).

require_relative "bench_helper"
require_relative "pure_ruby_authority"
require_relative "floor"

# "Just take a lock": a Mutex around a Hash update, same keywords as acquire.
class MutexHash
  def initialize
    @mutex = Mutex.new
    @expiries = {}
  end

  def acquire(owner:, now:, ttl:)
    @mutex.synchronize { @expiries[owner] = now + ttl }
  end
end

# acquire, fence accept, two renews, one rejected acquire, release.
def cycle(authority, fence, now)
  token = authority.acquire(owner: 1, now: now, ttl: 5.0).lease.token
  fence.accept(token)
  authority.renew(owner: 1, token: token, now: now + 1.0, ttl: 5.0)
  authority.renew(owner: 1, token: token, now: now + 2.0, ttl: 5.0)
  authority.acquire(owner: 2, now: now + 3.0, ttl: 5.0)
  authority.release(owner: 1, token: token, now: now + 4.0)
end

# A timed loop for one operation against `authority` (and `fence`), as a
# benchmark-ips entry: a bare `while`, no block call per iteration. Clocks live
# in this method's scope, so they keep moving forward across the many calls
# benchmark-ips makes. Each loop returns its last answer, to check the path.
def timed_loop(operation, authority, fence)
  case operation
  when "acquire granted"
    now = 1.0
    lambda do |n|
      i = 0
      while i < n
        last = authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0)
        i += 1
      end
      last
    end
  when "acquire rejected"
    authority.acquire(owner: 1, now: 0.0, ttl: 1e9)
    lambda do |n|
      i = 0
      while i < n
        last = authority.acquire(owner: 2, now: 1.0, ttl: 1.0)
        i += 1
      end
      last
    end
  when "renew granted"
    authority.acquire(owner: 1, now: 0.0, ttl: 10.0)
    now = 0.0
    lambda do |n|
      i = 0
      while i < n
        last = authority.renew(owner: 1, token: 1, now: now += 1.0, ttl: 10.0)
        i += 1
      end
      last
    end
  when "renew rejected"
    authority.acquire(owner: 1, now: 0.0, ttl: 1e9)
    lambda do |n|
      i = 0
      while i < n
        last = authority.renew(owner: 1, token: 99, now: 1.0, ttl: 1.0)
        i += 1
      end
      last
    end
  when "acquire+release granted"
    now = 1.0
    lambda do |n|
      i = 0
      while i < n
        token = authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0).lease.token
        last = authority.release(owner: 1, token: token, now: now)
        i += 1
      end
      last
    end
  when "release rejected"
    authority.acquire(owner: 1, now: 0.0, ttl: 1e9)
    lambda do |n|
      i = 0
      while i < n
        last = authority.release(owner: 2, token: 1, now: 1.0)
        i += 1
      end
      last
    end
  when "fence accept true"
    lambda do |n|
      i = 0
      while i < n
        last = fence.accept(7)
        i += 1
      end
      last
    end
  when "fence accept false"
    fence.accept(9)
    lambda do |n|
      i = 0
      while i < n
        last = fence.accept(7)
        i += 1
      end
      last
    end
  when "full cycle"
    now = 1.0
    lambda do |n|
      i = 0
      while i < n
        last = cycle(authority, fence, now += 10.0)
        i += 1
      end
      last
    end
  end
end

# What each loop's last answer must be, or it measured the wrong path.
EXPECTED = {
  "acquire granted" => ->(d) { d.granted? },
  "acquire rejected" => ->(d) { d.reason == :occupied },
  "renew granted" => ->(d) { d.renewed? },
  "renew rejected" => ->(d) { d.reason == :stale_token },
  "acquire+release granted" => ->(d) { d.released? },
  "release rejected" => ->(d) { d.reason == :not_owner },
  "fence accept true" => ->(accepted) { accepted == true },
  "fence accept false" => ->(accepted) { accepted == false },
  "full cycle" => ->(d) { d.released? }
}.freeze

IMPLEMENTATIONS = {
  "gem" => -> { [LeaseMachines::Authority.new, LeaseMachines::Fence.new] },
  "pure Ruby" => -> { [PureRuby::Authority.new, PureRuby::Fence.new] },
  "floor" => -> { [Floor.new, Floor.new] }
}.freeze

# Both implementations must give the same answers before they are timed.
def same_answers!
  answers = IMPLEMENTATIONS.except("floor").transform_values do |build|
    authority, fence = build.call
    token = authority.acquire(owner: 1, now: 1.0, ttl: 5.0).lease.token
    trace = [fence.accept(token), fence.accept(0)]
    trace << authority.renew(owner: 1, token: token, now: 2.0, ttl: 5.0).lease.expires_at_ns
    trace << authority.renew(owner: 1, token: token + 1, now: 2.0, ttl: 5.0).reason
    trace << authority.renew(owner: 2, token: token, now: 2.0, ttl: 5.0).reason
    trace << authority.acquire(owner: 2, now: 3.0, ttl: 5.0).reason
    trace << authority.acquire(owner: 2, now: 2.5, ttl: 5.0).reason
    trace << authority.release(owner: 1, token: token, now: 4.0).status
    trace << authority.acquire(owner: 2, now: 4.0, ttl: 0).reason
    trace << authority.acquire(owner: 2, now: 4.0, ttl: 1).lease.token
    trace << authority.renew(owner: 2, token: token + 1, now: 5.0, ttl: 1).reason
    trace << authority.acquire(owner: 2, now: 5.0, ttl: 10).lease.token
    trace << authority.reacquire(owner: 2, now: 6.0, ttl: 1).lease.token
    trace << authority.reacquire(owner: 3, now: 6.0, ttl: 1).reason
    trace << cycle(authority, fence, 10.0).status
  end
  return if answers.values.uniq.size == 1

  abort "pure Ruby baseline disagrees with the gem: #{answers.inspect}"
end

same_answers!
Bench.cpu_clock!
puts "machine: #{Bench.machine}"
Bench.heading("in-process decisions (#{Bench.settings})")

operations = EXPECTED.keys
recorded = []
rows = operations.map do |operation|
  loops = IMPLEMENTATIONS.transform_values { |build| timed_loop(operation, *build.call) }
  mutex_hash = MutexHash.new
  rounds = Bench.group do |x|
    loops.each { |name, body| x.report(name, &body) }
    next unless operation == "acquire granted"

    x.report("mutex+hash") do |n|
      now = 1.0
      i = 0
      while i < n
        mutex_hash.acquire(owner: 1, now: now += 10.0, ttl: 1.0)
        i += 1
      end
    end
  end
  loops.except("floor").each do |name, body|
    EXPECTED.fetch(operation).call(body.call(1)) || abort("#{name}: #{operation} left the path it claims to measure")
  end
  if operation == "acquire granted"
    @mutex_row = ["(mutex+hash acquire)", Bench.ns(rounds.ns("mutex+hash")), "", "", "",
                  Bench.ratio(rounds.time_ratio("mutex+hash", "floor")), Bench.percent(rounds.spread("mutex+hash"))]
    @granted_vs_floor = rounds.time_ratio("gem", "floor")
    @gem_vs_mutex = rounds.time_ratio("gem", "mutex+hash")
  end
  @cycle_speedup = rounds.speedup("gem", "pure Ruby") if operation == "full cycle"
  recorded << { operation: operation, gem_ns: rounds.ns("gem"), floor_ns: rounds.ns("floor"),
                gem_vs_floor: rounds.time_ratio("gem", "floor") }
  [operation, Bench.ns(rounds.ns("gem")), Bench.ns(rounds.ns("pure Ruby")), Bench.ns(rounds.ns("floor")),
   Bench.ratio(rounds.speedup("gem", "pure Ruby")), Bench.ratio(rounds.time_ratio("gem", "floor")),
   Bench.percent(rounds.spread("gem"))]
end

puts
Bench.table(["operation", "gem ns", "pure Ruby ns", "floor ns", "gem speedup", "gem/floor", "gem spread"],
            rows + [@mutex_row])
puts
puts "gem speedup = pure Ruby time / gem time; gem/floor = gem time / floor time (2.00x = twice the floor)."
puts "Both are medians of per-round ratios; ns columns are medians of rounds (absolute, so noisier)."
puts "full cycle = acquire, fence accept, renew, renew, rejected acquire, release (floor: six floor calls)."
puts format("gem acquire granted / mutex+hash acquire: %.2fx", @gem_vs_mutex)
Bench.target("full cycle at least 5x faster than pure Ruby", @cycle_speedup, @cycle_speedup >= 5)
Bench.target("granted acquire within 3x of the floor", @granted_vs_floor, @granted_vs_floor <= 3)
BenchResults.write("decisions", settings: Bench.settings, operations: recorded)
