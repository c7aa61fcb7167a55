# frozen_string_literal: true

# The web UI's index of 10,000 resources on each store: SQLite (on disk,
# WAL), PostgreSQL (DATABASE_URL) and MySQL/MariaDB (MYSQL_URL), each left
# out when its URL is not set. Measured, in the same process, on the wall
# clock (the page waits on the server's socket): the index's first page of
# 100 rows, a page filtered by a glob, the last page, and one resource's
# page, each against the store's read of every row (`store.statuses`, what
# the index read before it was paged by name). Prints the milliseconds per
# page too: the target is under 200 ms (issue 27), asserted nowhere.
#
# Run: ruby bench/web_bench.rb (`rake bench:web` starts PostgreSQL and
# MySQL on loopback first). RESOURCES=n changes the count.

require "securerandom"
require "stringio"
require "tmpdir"
require "uri"
require_relative "bench_helper"
require "lease_machines/stores/sqlite"
require "lease_machines/web"

RESOURCES = Integer(ENV.fetch("RESOURCES", "10000"))
TARGET_MS = 200.0
TABLE = LeaseMachines::Stores::TABLE
COPIED = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns, updated_at, holder_label, " \
         "holder_label_token"

# RESOURCES rows: one real grant, copied under other names by INSERT ...
# SELECT in batches (10,000 durable grants would take minutes of commits);
# half of them then released by hand, so the list has held and free rows.
# `execute` runs one SQL statement on the store's database.
def fill(store, execute)
  store.authority("jobs/00000").acquire(owner: 7, ttl: 3600, label: "worker-1 pid 4242")
  (1...RESOURCES).each_slice(500) do |batch|
    names = batch.map { |at| format("SELECT 'jobs/%05d' AS n", at) }.join(" UNION ALL ")
    execute.call("INSERT INTO #{TABLE} (name, #{COPIED}) SELECT x.n, #{COPIED.gsub(/(\w+)/, 't.\1')} " \
                 "FROM #{TABLE} t, (#{names}) x WHERE t.name = 'jobs/00000'")
  end
  execute.call("UPDATE #{TABLE} SET lease_owner = NULL, lease_token = NULL, lease_expires_at_ns = NULL " \
               "WHERE substr(name, 10, 1) IN ('1', '3', '5', '7', '9')")
  raise "expected #{RESOURCES} resources" unless store.statuses.size == RESOURCES
end

def page(web, path, query)
  env = { "REQUEST_METHOD" => "GET", "SCRIPT_NAME" => "/leases", "PATH_INFO" => path, "QUERY_STRING" => query,
          "rack.input" => StringIO.new, "REMOTE_ADDR" => "127.0.0.1" }
  status, _headers, body = web.call(env)
  raise "#{path}?#{query} answered #{status}" unless status == 200

  body.sum(&:bytesize)
end

def measure(engine, store)
  web = LeaseMachines::Web.new(store: store, events: false)
  baseline = "store.statuses (#{RESOURCES} rows)"
  pages = { "index page 1 (100 rows)" => ["/", ""],
            "index, glob jobs/1*5 (100 of 1,000)" => ["/", "match=jobs%2F1*5"],
            "index, last page" => ["/", "page=#{(RESOURCES + 99) / 100}"],
            "one resource's page" => ["/resource", "name=jobs%2F00042"] }
  Bench.heading("#{engine}: the web UI on #{RESOURCES} resources (#{Bench.settings})")
  rounds = Bench.group do |x|
    x.report(baseline) { |n| n.times { store.statuses } }
    pages.each { |label, (path, query)| x.report(label) { |n| n.times { page(web, path, query) } } }
  end
  Bench.table(%w[operation ms/op ratio spread],
              rounds.labels.map do |label|
                [label, format("%.1f", rounds.ns(label) / 1e6), Bench.ratio(rounds.time_ratio(label, baseline)),
                 Bench.percent(rounds.spread(label))]
              end)
  slowest = pages.keys.first(3).map { |label| rounds.ns(label) / 1e6 }.max
  puts format("target: %<engine>s, the index of %<count>d resources under %<target>.0f ms: slowest page " \
              "%<ms>.1f ms  %<verdict>s",
              engine: engine, count: RESOURCES, target: TARGET_MS, ms: slowest,
              verdict: slowest < TARGET_MS ? "HOLDS" : "MISSED")
end

def sqlite
  Dir.mktmpdir("lease_machines_web_bench") do |dir|
    path = File.join(dir, "leases.sqlite3")
    store = LeaseMachines::Stores::SQLite.new(path).setup!
    db = SQLite3::Database.new(path)
    fill(store, ->(sql) { db.execute(sql) })
    db.close
    measure("SQLite #{SQLite3::SQLITE_VERSION}", store)
    store.close
  end
end

# A database of its own on the server, dropped afterwards.
def postgres(url)
  require "lease_machines/stores/postgres"
  database = "lm_web_bench_#{Process.pid}_#{SecureRandom.hex(3)}"
  admin = PG.connect(url)
  admin.exec("CREATE DATABASE #{database}")
  conn = PG.connect(URI.parse(url).tap { |uri| uri.path = "/#{database}" }.to_s)
  store = LeaseMachines::Stores::Postgres.new(conn).setup!
  fill(store, ->(sql) { conn.exec(sql) })
  measure("PostgreSQL #{conn.exec('SHOW server_version').getvalue(0, 0).split.first}", store)
  conn.close
  admin.exec("DROP DATABASE #{database}")
  admin.close
end

def mysql(url)
  require "lease_machines/stores/mysql"
  uri = URI.parse(url)
  database = "lm_web_bench_#{Process.pid}_#{SecureRandom.hex(3)}"
  options = { host: uri.host, port: uri.port, username: uri.user || "root", encoding: "utf8mb4" }
  admin = Mysql2::Client.new(**options)
  admin.query("CREATE DATABASE #{database}")
  client = Mysql2::Client.new(**options, database: database)
  store = LeaseMachines::Stores::MySQL.new(client).setup!
  fill(store, ->(sql) { client.query(sql) })
  version = client.query("SELECT VERSION()", as: :array).first.first
  measure("#{version.include?('MariaDB') ? 'MariaDB' : 'MySQL'} #{version[/\A[\d.]+/]}", store)
  client.close
  admin.query("DROP DATABASE #{database}")
  admin.close
end

puts Bench.machine
sqlite
ENV["DATABASE_URL"] ? postgres(ENV.fetch("DATABASE_URL")) : puts("\n(PostgreSQL left out: DATABASE_URL is not set)")
ENV["MYSQL_URL"] ? mysql(ENV.fetch("MYSQL_URL")) : puts("\n(MySQL left out: MYSQL_URL is not set)")
