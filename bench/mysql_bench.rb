# frozen_string_literal: true

# Durable decisions on LeaseMachines::Stores::MySQL (MariaDB or MySQL, InnoDB)
# against the floor: a bare one-row UPDATE transaction on the same server and
# the same connection (START TRANSACTION, UPDATE, COMMIT). Target: within 1.5x
# of the floor for acquire, renew and release.
#
# Also measured, to choose the serialization: the same granted acquire as a
# locked transaction (START TRANSACTION, SELECT ... FOR UPDATE, the clock, the
# decision, UPDATE, COMMIT: the path a before_commit hook takes), against the
# default compare-and-set (one autocommit read, one autocommit UPDATE).
#
# The server commits durably as script/mysql configures it
# (innodb_flush_log_at_trx_commit = 1): every commit waits for the redo log on
# disk, for the floor as for the store.
#
# Measured twice: one entry at a time (benchmark-ips rounds, the other
# benchmarks' way), and interleaved call by call (each operation once, in a
# shuffled order, MYSQL_BENCH_CALLS times), where the targets are taken: a
# commit's flush here drifts from 0.1 to 3 ms from one second to the next, so
# only calls that alternate with the floor's meet the same disk.
#
# Run: MYSQL_URL=$(script/mysql start) ruby bench/mysql_bench.rb

require "securerandom"
require_relative "bench_helper"
require "lease_machines/stores/mysql"
require "uri"

url = ENV.fetch("MYSQL_URL") { abort "MYSQL_URL is not set (MYSQL_URL=$(script/mysql start))" }
uri = URI.parse(url)
database = "lm_bench_#{Process.pid}_#{SecureRandom.hex(3)}"
options = { host: uri.host, port: uri.port, username: uri.user || "root", encoding: "utf8mb4" }
admin = Mysql2::Client.new(**options)
admin.query("CREATE DATABASE #{database}")
client = Mysql2::Client.new(**options, database: database)
store = LeaseMachines::Stores::MySQL.new(client) # the same connection serves the floor
store.setup!
locked = LeaseMachines::Stores::MySQL.new(client, before_commit: ->(_commit) {})
client.query("CREATE TABLE bench_floor (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE = InnoDB")
client.query("INSERT INTO bench_floor (id, n) VALUES (1, 0)")
version = client.query("SELECT VERSION()", as: :array).first.first

floor = lambda do
  client.query("START TRANSACTION")
  client.query("UPDATE bench_floor SET n = n + 1 WHERE id = 1")
  client.query("COMMIT")
end

start = Process.clock_gettime(Process::CLOCK_REALTIME).floor
# One call of each operation; the rounds below run each n times in a row, the
# interleaved measurement one call at a time in a shuffled order.
calls = { "floor" => floor }

granting = store.authority("bench-acquire")
granting_now = start
calls["acquire granted"] = -> { granting.acquire(owner: 1, ttl: 1, now: granting_now += 10) }

renewing = store.authority("bench-renew")
renew_token = renewing.acquire(owner: 1, ttl: 1_000_000, now: start).lease.token
renewing_now = start
calls["renew granted"] = -> { renewing.renew(owner: 1, token: renew_token, ttl: 1_000_000, now: renewing_now += 1) }

pairing = store.authority("bench-pair")
pairing_now = start
calls["acquire+release granted"] = lambda do
  token = pairing.acquire(owner: 1, ttl: 1, now: pairing_now += 10).lease.token
  pairing.release(owner: 1, token: token, now: pairing_now)
end

locking = locked.authority("bench-locked")
locking_now = start
calls["acquire granted, locked transaction (SELECT ... FOR UPDATE)"] = lambda do
  locking.acquire(owner: 1, ttl: 1, now: locking_now += 10)
end

occupied = store.authority("bench-occupied")
occupied.acquire(owner: 1, ttl: 1_000_000, now: start)
calls["acquire rejected"] = -> { occupied.acquire(owner: 2, ttl: 1, now: start) }

loops = calls.transform_values { |call| ->(n) { n.times { call.call } } }
# Transactions per call: acquire+release is two, compared with two floors.
TRANSACTIONS = { "acquire granted" => 1, "renew granted" => 1, "acquire+release granted" => 2, "acquire rejected" => 1,
                 "acquire granted, locked transaction (SELECT ... FOR UPDATE)" => 1 }.freeze
INTERLEAVED_CALLS = Integer(ENV.fetch("MYSQL_BENCH_CALLS", "1500"))

puts "machine: #{Bench.machine}"
Bench.heading("MySQL store decisions against a bare one-row UPDATE transaction (#{Bench.settings})")
begin
  rounds = Bench.group { |x| loops.each { |label, body| x.report(label, &body) } }
  engine = "MariaDB/MySQL #{version}"
  rows = [["#{engine}: floor (START TRANSACTION, UPDATE one row, COMMIT)",
           format("%.0f", rounds.ns("floor") / 1000), "", ""]]
  TRANSACTIONS.each do |label, transactions|
    ratio = rounds.time_ratio(label, "floor") / transactions
    rows << ["#{engine}: #{label}", format("%.0f", rounds.ns(label) / 1000),
             format("%.0f", 1e9 / rounds.ns(label) * transactions), Bench.ratio(ratio)]
  end
  puts
  puts "one entry at a time (benchmark-ips rounds):"
  Bench.table(["operation", "us per call", "decisions/s", "per transaction vs floor"], rows)

  times = Bench.interleaved(calls, INTERLEAVED_CALLS)
  checks = [granting.acquire(owner: 1, ttl: 1, now: start + 10_000_000).granted?,
            occupied.acquire(owner: 2, ttl: 1, now: 1).reason == :occupied,
            locking.acquire(owner: 1, ttl: 1, now: start + 10_000_000).granted?]
  checks.all? || abort("a timed loop left the path it claims to measure (#{checks.inspect})")
  mean = ->(label) { times.fetch(label).sum / times.fetch(label).size }
  p50 = ->(label) { Bench.median(times.fetch(label)) }
  rows = [["#{engine}: floor", format("%.0f", mean.call("floor") * 1e6), format("%.0f", p50.call("floor") * 1e6), "", ""]]
  targets = []
  vs_floor = {}
  TRANSACTIONS.each do |label, transactions|
    by_mean, by_p50, blocks = Bench.interleaved_ratios(times, label, "floor", transactions: transactions)
    vs_floor[label] = by_mean
    rows << ["#{engine}: #{label}", format("%.0f", mean.call(label) * 1e6), format("%.0f", p50.call(label) * 1e6),
             Bench.ratio_range(by_mean, blocks), Bench.ratio(by_p50)]
    targets << ["MySQL #{label.sub(' granted', '')}", by_mean, by_p50, blocks] unless label.match?(/rejected|locked/)
  end
  puts
  puts "interleaved call by call (#{INTERLEAVED_CALLS} calls of each, shuffled every time, each call timed alone):"
  Bench.table(["operation", "mean us", "p50 us", "mean vs floor (5 stretches of the run)", "p50 vs floor"], rows)
  puts
  puts "per transaction vs floor: acquire+release is two transactions, compared with two floors. acquire rejected " \
       "writes nothing. The targets are taken on the interleaved means: a caller's time per decision over the run, " \
       "next to the floor's over the same seconds (commit flushes drift from one second to the next, and a round " \
       "of one entry meets other flushes than the floor's round)."
  targets.each do |text, by_mean, by_p50, blocks|
    Bench.target("#{text} within 1.5x of the floor (mean; p50 #{Bench.ratio(by_p50)})", by_mean, by_mean <= 1.5)
    next unless text == "MySQL acquire"

    Bench.target("MySQL acquire at most 1.2x the floor (mean #{Bench.ratio_range(by_mean, blocks)}, " \
                 "p50 #{Bench.ratio(by_p50)})", by_mean, by_mean <= 1.2)
  end
  BenchResults.write("mysql", settings: "interleaved means over #{INTERLEAVED_CALLS} calls of each",
                              engines: [{ engine: engine, floor_us: mean.call("floor") * 1e6, vs_floor: vs_floor }])
ensure
  client.close
  admin.query("DROP DATABASE IF EXISTS #{database}")
  admin.close
end
