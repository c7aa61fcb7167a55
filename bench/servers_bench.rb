# frozen_string_literal: true

# What an in-process decision costs next to a lock held by a server on
# loopback (the cheapest network there is):
#
#   Redis       redlock-style: `SET key token NX PX ttl` to acquire, a Lua
#               compare-and-delete (EVALSHA) to release (ruby-redis);
#   PostgreSQL  with_advisory_lock-style: pg_try_advisory_lock(key) and
#               pg_advisory_unlock(key), one statement each (ruby-pg).
#
# Each is timed on the wall clock (it waits on a socket) in the same rounds as
# the gem's in-process Authority doing the same thing. These are not the same
# guarantee: a process-local Authority arbitrates between the threads of one
# process; the servers arbitrate between processes and hosts (for that, the
# gem has durable stores: bench/stores_bench.rb). The point is the price of
# the decision itself next to the price of a round trip.
#
# Run: REDIS_URL=... DATABASE_URL=... ruby bench/servers_bench.rb
# (`rake bench:servers` starts both servers with script/redis and script/postgres).

require "securerandom"
require "redis"
require "pg"
require_relative "bench_helper"

REDIS_URL = ENV.fetch("REDIS_URL") { abort "REDIS_URL is not set (script/redis start prints it)" }
DATABASE_URL = ENV.fetch("DATABASE_URL") { abort "DATABASE_URL is not set (script/postgres start prints it)" }

# The usual redlock release: delete the key only while it still holds our token.
COMPARE_AND_DELETE = <<~LUA
  if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
  else
    return 0
  end
LUA

redis = Redis.new(url: REDIS_URL)
pg = PG.connect(DATABASE_URL)
holder = PG.connect(DATABASE_URL) # holds the advisory lock for the "rejected" rows
release_sha = redis.script(:load, COMPARE_AND_DELETE)
key = "lease_machines:bench:#{Process.pid}"
held_key = "#{key}:held"
lock_id = 0x4c4d_0000 + (Process.pid % 0xffff) # an advisory lock key of our own
held_lock_id = lock_id + 0x1_0000

redis.set(held_key, "someone else", px: 600_000)
holder.exec_params("SELECT pg_advisory_lock($1)", [held_lock_id])
pg.prepare("try_lock", "SELECT pg_try_advisory_lock($1)")
pg.prepare("unlock", "SELECT pg_advisory_unlock($1)")

# Each path must do what its row says before it is timed.
token = SecureRandom.hex(16)
redis.set(key, token, nx: true, px: 30_000) || abort("redis: SET NX on a free key failed")
redis.evalsha(release_sha, keys: [key], argv: [token]) == 1 || abort("redis: compare-and-delete failed")
redis.set(held_key, "me", nx: true, px: 30_000) && abort("redis: SET NX on a held key succeeded")
pg.exec_prepared("try_lock", [lock_id]).getvalue(0, 0) == "t" || abort("pg: try_advisory_lock failed")
pg.exec_prepared("unlock", [lock_id]).getvalue(0, 0) == "t" || abort("pg: advisory_unlock failed")
pg.exec_prepared("try_lock", [held_lock_id]).getvalue(0, 0) == "f" || abort("pg: a held advisory lock was taken")

puts "machine: #{Bench.machine}"
puts "servers: Redis #{redis.info('server').fetch('redis_version')} (ruby-redis #{Redis::VERSION}), " \
     "#{pg.exec('SELECT version()').getvalue(0, 0)[/PostgreSQL [\d.]+/]} (ruby-pg #{PG::VERSION}), both on loopback"
Bench.heading("in-process decisions next to network locks (#{Bench.settings})")

granted = Bench.group do |x|
  authority = LeaseMachines::Authority.new
  now = 1.0
  x.report("gem") do |n|
    i = 0
    while i < n
      lease_token = authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0).lease.token
      authority.release(owner: 1, token: lease_token, now: now)
      i += 1
    end
  end
  x.report("redis") do |n|
    i = 0
    while i < n
      value = SecureRandom.hex(16)
      redis.set(key, value, nx: true, px: 30_000)
      redis.evalsha(release_sha, keys: [key], argv: [value])
      i += 1
    end
  end
  x.report("postgres") do |n|
    i = 0
    while i < n
      pg.exec_prepared("try_lock", [lock_id])
      pg.exec_prepared("unlock", [lock_id])
      i += 1
    end
  end
end

rejected = Bench.group do |x|
  authority = LeaseMachines::Authority.new
  authority.acquire(owner: 1, now: 0.0, ttl: 1e9)
  x.report("gem") do |n|
    i = 0
    while i < n
      authority.acquire(owner: 2, now: 1.0, ttl: 1.0)
      i += 1
    end
  end
  x.report("redis") do |n|
    i = 0
    while i < n
      redis.set(held_key, "me", nx: true, px: 30_000)
      i += 1
    end
  end
  x.report("postgres") do |n|
    i = 0
    while i < n
      pg.exec_prepared("try_lock", [held_lock_id])
      i += 1
    end
  end
end

groups = { "acquire + release (granted)" => granted, "acquire refused (held by another)" => rejected }
rows = groups.map do |name, rounds|
  [name, format("%.2f", rounds.ns("gem") / 1000), format("%.1f", rounds.ns("redis") / 1000),
   format("%.1f", rounds.ns("postgres") / 1000), Bench.ratio(rounds.time_ratio("redis", "gem")),
   Bench.ratio(rounds.time_ratio("postgres", "gem"))]
end
puts
Bench.table(["operation", "gem us", "redis us", "postgres us", "redis/gem", "postgres/gem"], rows)
puts
puts "redis/gem = Redis time / in-process gem time, per round, median (wall clock: waiting on a socket counts)."
puts "Loopback is the best case; across a network add the round-trip time to every Redis and PostgreSQL call."

redis.del(key, held_key)
holder.exec_params("SELECT pg_advisory_unlock($1)", [held_lock_id])
[pg, holder].each(&:close)
redis.close
