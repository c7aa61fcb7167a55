# frozen_string_literal: true

# One operation in a loop, for instruction counts under valgrind (callgrind or
# plain `--tool=none` is too coarse: use callgrind). Deterministic where the
# timing benchmarks are noisy: bench/instructions.rb runs this twice (N and 0
# iterations) and divides the difference by N.
#
#   ruby bench/callgrind_loop.rb OPERATION ITERATIONS
#
# OPERATION: floor, acquire_granted, acquire_rejected, renew_granted,
# renew_rejected, release_rejected, fence_accept, cycle, pure_acquire_granted,
# pure_cycle; store_pair (an acquire + release on Stores::Memory) and hold
# (`hold! { }` there: the runtime's own instructions are the difference).

require_relative "load_gem"
require_relative "pure_ruby_authority"
require_relative "floor"

def cycle(authority, fence, now)
  token = authority.acquire(owner: 1, now: now, ttl: 5.0).lease.token
  fence.accept(token)
  authority.renew(owner: 1, token: token, now: now + 1.0, ttl: 5.0)
  authority.renew(owner: 1, token: token, now: now + 2.0, ttl: 5.0)
  authority.acquire(owner: 2, now: now + 3.0, ttl: 5.0)
  authority.release(owner: 1, token: token, now: now + 4.0)
end

operation = ARGV.fetch(0)
n = Integer(ARGV.fetch(1))
authority = LeaseMachines::Authority.new
pure = PureRuby::Authority.new
fence = LeaseMachines::Fence.new
pure_fence = PureRuby::Fence.new
floor = Floor.new
held = LeaseMachines::Authority.new
token = held.acquire(owner: 1, now: 0.0, ttl: 1e9).lease.token
now = 1.0
i = 0

stored = LeaseMachines::Stores::Memory.new.authority("bench")

# Warm every path once so the measured loop meets only steady-state work.
cycle(LeaseMachines::Authority.new, LeaseMachines::Fence.new, 1.0)
cycle(PureRuby::Authority.new, PureRuby::Fence.new, 1.0)
100.times do
  stored.release(owner: 1, token: stored.acquire(owner: 1, ttl: 30).lease.token)
  stored.hold!(owner: 1, ttl: 30) { nil }
end

case operation
when "floor"
  while i < n
    floor.acquire(owner: 1, now: now += 10.0, ttl: 1.0)
    i += 1
  end
when "acquire_granted"
  while i < n
    authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0)
    i += 1
  end
when "acquire_rejected"
  while i < n
    held.acquire(owner: 2, now: 1.0, ttl: 1.0)
    i += 1
  end
when "renew_granted"
  while i < n
    held.renew(owner: 1, token: token, now: now += 1.0, ttl: 10.0)
    i += 1
  end
when "renew_rejected"
  while i < n
    held.renew(owner: 1, token: 99, now: 1.0, ttl: 1.0)
    i += 1
  end
when "release_rejected"
  while i < n
    held.release(owner: 2, token: token, now: 1.0)
    i += 1
  end
when "fence_accept"
  while i < n
    fence.accept(7)
    i += 1
  end
when "cycle"
  while i < n
    cycle(authority, fence, now += 10.0)
    i += 1
  end
when "pure_acquire_granted"
  while i < n
    pure.acquire(owner: 1, now: now += 10.0, ttl: 1.0)
    i += 1
  end
when "pure_cycle"
  while i < n
    cycle(pure, pure_fence, now += 10.0)
    i += 1
  end
when "store_pair"
  while i < n
    stored.release(owner: 1, token: stored.acquire(owner: 1, ttl: 30).lease.token)
    i += 1
  end
when "hold"
  while i < n
    stored.hold!(owner: 1, ttl: 30) { nil }
    i += 1
  end
else
  abort "unknown operation #{operation}"
end
