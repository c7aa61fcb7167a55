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
loops = {}
loops["floor"] = ->(n) { n.times { floor.call } }

granting = store.authority("bench-acquire")
granting_now = start
loops["acquire granted"] = ->(n) { n.times { granting.acquire(owner: 1, ttl: 1, now: granting_now += 10) } }

renewing = store.authority("bench-renew")
renew_token = renewing.acquire(owner: 1, ttl: 1_000_000, now: start).lease.token
renewing_now = start
loops["renew granted"] = lambda do |n|
  n.times { renewing.renew(owner: 1, token: renew_token, ttl: 1_000_000, now: renewing_now += 1) }
end

pairing = store.authority("bench-pair")
pairing_now = start
loops["acquire+release granted"] = lambda do |n|
  n.times do
    token = pairing.acquire(owner: 1, ttl: 1, now: pairing_now += 10).lease.token
    pairing.release(owner: 1, token: token, now: pairing_now)
  end
end

locking = locked.authority("bench-locked")
locking_now = start
loops["acquire granted, locked transaction (SELECT ... FOR UPDATE)"] = lambda do |n|
  n.times { locking.acquire(owner: 1, ttl: 1, now: locking_now += 10) }
end

occupied = store.authority("bench-occupied")
occupied.acquire(owner: 1, ttl: 1_000_000, now: start)
loops["acquire rejected"] = ->(n) { n.times { occupied.acquire(owner: 2, ttl: 1, now: start) } }

puts "machine: #{Bench.machine}"
Bench.heading("MySQL store decisions against a bare one-row UPDATE transaction (#{Bench.settings})")
begin
  rounds = Bench.group { |x| loops.each { |label, body| x.report(label, &body) } }
  checks = [granting.acquire(owner: 1, ttl: 1, now: start + 10_000_000).granted?,
            occupied.acquire(owner: 2, ttl: 1, now: 1).reason == :occupied,
            locking.acquire(owner: 1, ttl: 1, now: start + 10_000_000).granted?]
  checks.all? || abort("a timed loop left the path it claims to measure (#{checks.inspect})")
  engine = "MariaDB/MySQL #{version}"
  rows = [["#{engine}: floor (START TRANSACTION, UPDATE one row, COMMIT)",
           format("%.0f", rounds.ns("floor") / 1000), "", ""]]
  targets = []
  { "acquire granted" => 1, "renew granted" => 1, "acquire+release granted" => 2, "acquire rejected" => 1,
    "acquire granted, locked transaction (SELECT ... FOR UPDATE)" => 1 }.each do |label, transactions|
    ratio = rounds.time_ratio(label, "floor") / transactions
    rows << ["#{engine}: #{label}", format("%.0f", rounds.ns(label) / 1000),
             format("%.0f", 1e9 / rounds.ns(label) * transactions), Bench.ratio(ratio)]
    next if label.include?("rejected") || label.include?("locked")

    targets << ["MySQL #{label.sub(' granted', '')}", ratio]
  end
  puts
  Bench.table(["operation", "us per call", "decisions/s", "per transaction vs floor"], rows)
  puts
  puts "per transaction vs floor: time / floor time, per round, median; acquire+release is two transactions, " \
       "compared with two floors. acquire rejected writes nothing."
  targets.each { |text, ratio| Bench.target("#{text} within 1.5x of the floor", ratio, ratio <= 1.5) }
ensure
  client.close
  admin.query("DROP DATABASE IF EXISTS #{database}")
  admin.close
end
