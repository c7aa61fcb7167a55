# frozen_string_literal: true

# The web UI's list of 10,000 resources on SQLite (on disk, WAL): the index
# page (its first 100 rows; filtered by a glob; the last page), each against
# the store's own read of every row (`store.statuses`, what the page cannot
# do without), in the same process. Prints the milliseconds per page too:
# the target is under 200 ms (issue 27), asserted nowhere.
#
# Run: ruby bench/web_bench.rb (`rake bench:web`). RESOURCES=n changes the count.

require "tmpdir"
require "stringio"
require_relative "bench_helper"
require "lease_machines/stores/sqlite"
require "lease_machines/web"
require "sqlite3"

RESOURCES = Integer(ENV.fetch("RESOURCES", "10000"))
TARGET_MS = 200.0

# RESOURCES rows: one real grant, copied under other names in one
# transaction (10,000 durable grants would take minutes of fsyncs); half of
# them then released by hand, so the list has held and free rows.
def fill(path, store)
  store.authority("jobs/00000").acquire(owner: 7, ttl: 3600)
  db = SQLite3::Database.new(path)
  db.transaction do
    copy = db.prepare("INSERT INTO lease_machines_resources SELECT ?, last_issued, lease_owner, lease_token, " \
                      "lease_expires_at_ns, observed_ns, updated_at FROM lease_machines_resources WHERE name = 'jobs/00000'")
    (1...RESOURCES).each { |at| copy.execute(format("jobs/%05d", at)) }
    copy.close
    db.execute("UPDATE lease_machines_resources SET lease_owner = NULL, lease_token = NULL, lease_expires_at_ns = NULL " \
               "WHERE substr(name, -1) IN ('1', '3', '5', '7', '9')")
  end
  db.close
end

def page(web, query)
  env = { "REQUEST_METHOD" => "GET", "SCRIPT_NAME" => "/leases", "PATH_INFO" => "/", "QUERY_STRING" => query,
          "rack.input" => StringIO.new, "REMOTE_ADDR" => "127.0.0.1" }
  status, _headers, body = web.call(env)
  raise "the page answered #{status}" unless status == 200

  body.sum(&:bytesize)
end

Bench.cpu_clock!
puts Bench.machine
Dir.mktmpdir("lease_machines_web_bench") do |dir|
  path = File.join(dir, "leases.sqlite3")
  store = LeaseMachines::Stores::SQLite.new(path).setup!
  fill(path, store)
  raise "expected #{RESOURCES} resources" unless store.statuses.size == RESOURCES

  web = LeaseMachines::Web.new(store: store, events: false)
  pages = { "index page 1 (100 rows)" => "", "index, glob jobs/1*5 (100 of 1,000)" => "match=jobs%2F1*5",
            "index, last page" => "page=#{(RESOURCES + 99) / 100}" }
  Bench.heading("the web UI's index of #{RESOURCES} resources on SQLite (#{Bench.settings})")
  baseline = "store.statuses (#{RESOURCES} rows)"
  rounds = Bench.group do |x|
    x.report(baseline) { |n| n.times { store.statuses } }
    pages.each { |label, query| x.report(label) { |n| n.times { page(web, query) } } }
  end
  Bench.table(%w[operation ms/op ratio spread],
              rounds.labels.map do |label|
                [label, format("%.1f", rounds.ns(label) / 1e6), Bench.ratio(rounds.time_ratio(label, baseline)),
                 Bench.percent(rounds.spread(label))]
              end)
  slowest = pages.keys.map { |label| rounds.ns(label) / 1e6 }.max
  puts format("target: the index of %<count>d resources under %<target>.0f ms: slowest page %<ms>.1f ms  %<verdict>s",
              count: RESOURCES, target: TARGET_MS, ms: slowest, verdict: slowest < TARGET_MS ? "HOLDS" : "MISSED")
  store.close
end
