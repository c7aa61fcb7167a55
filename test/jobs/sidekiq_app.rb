# frozen_string_literal: true

# The app a real `sidekiq` process runs in test/jobs/sidekiq_test.rb
# (`sidekiq -r test/jobs/sidekiq_app.rb`). Its folder (LM_JOBS_DIR) holds the
# lease store (leases.sqlite3) and the protected data (data.sqlite3: a fence
# table, the report each job writes through it, and a log of who held the
# lease when). Everything a job saw is in data.sqlite3, for the test to check.
require "lease_machines"
require "lease_machines/sidekiq"
require "active_job"
require "lease_machines/active_job"
require "sqlite3"

# Sidekiq 6.4 on Debian's redis gem 4.8 warns on every fetch; the logs are read by the test.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

DIR = ENV.fetch("LM_JOBS_DIR")
RESOURCE = "reports/nightly"

LeaseMachines.configure do |config|
  config.store = -> { LeaseMachines::Stores::SQLite.new(File.join(DIR, "leases.sqlite3")).setup! }
  config.default_ttl = Float(ENV.fetch("LM_JOBS_TTL", "2"))
end

# The protected data, one connection per job run (SQLite connections are not
# shared between threads here).
module JobData
  def self.open
    db = SQLite3::Database.new(File.join(DIR, "data.sqlite3"))
    db.busy_timeout = 5000
    db
  end

  def self.setup!
    db = open
    db.execute("CREATE TABLE IF NOT EXISTS report (id INTEGER PRIMARY KEY, body TEXT, token TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS held (jid TEXT, job TEXT, token INTEGER, started_ns INTEGER, ended_ns INTEGER, " \
               "outcome TEXT, pid INTEGER)")
    db.execute("INSERT OR IGNORE INTO report (id, body) VALUES (1, 'none')")
    LeaseMachines::Fences::SQLite.new(File.join(DIR, "data.sqlite3")).setup!
  ensure
    db&.close
  end

  def self.now_ns
    Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
  end

  # Runs a job's work under its lease: logs the interval, and writes the
  # report through the fence with the job's token.
  def self.work(job, seconds, id: job.jid)
    started = now_ns
    sleep seconds
    outcome = begin
      LeaseMachines::Fences::SQLite.new(File.join(DIR, "data.sqlite3")).guard(RESOURCE, job.lease.token) do |db|
        db.execute("UPDATE report SET body = ?, token = ? WHERE id = 1", ["written by #{id}", job.lease.token.to_s])
      end
      "written"
    rescue LeaseMachines::FencedError
      "fenced"
    end
    log(id, job.class.name, job.lease.token, started, outcome)
  end

  def self.runs(jid)
    db = open
    db.get_first_value("SELECT COUNT(*) FROM held WHERE jid = ?", [jid])
  ensure
    db&.close
  end

  def self.log(jid, job, token, started, outcome)
    db = open
    db.execute("INSERT INTO held VALUES (?, ?, ?, ?, ?, ?, ?)", [jid, job, token, started, now_ns, outcome, Process.pid])
  ensure
    db&.close
  end
end

JobData.setup!

# Rescheduled jobs wait in Sidekiq's scheduled set; poll it often (the default
# is every 5 to 15 seconds), as a test cannot wait that long per job.
Sidekiq.configure_server do |config|
  options = Sidekiq.respond_to?(:options) ? Sidekiq.options : config
  options[:poll_interval_average] = 0.2
end

JOB = defined?(Sidekiq::Job) ? Sidekiq::Job : Sidekiq::Worker

# Jobs on one resource that wait their turn (rescheduled while it is held).
class ReportJob
  include JOB
  sidekiq_options retry: false, lease: { resource: ->(_args) { RESOURCE }, on_occupied: :reschedule, reschedule_in: 0.2 }

  def perform(seconds)
    JobData.work(self, seconds)
  end
end

# Jobs dropped while the resource is held.
class SkippingReportJob
  include JOB
  sidekiq_options retry: false, lease: { resource: RESOURCE, on_conflict: :discard }

  def perform(seconds)
    JobData.work(self, seconds)
  end
end

# Fails its first run and is retried by Sidekiq a second later: the key is
# computed from the arguments again, so the retry takes the same resource.
# Each run logs the resource it held (in `outcome`) and its token.
class RetriedReportJob
  include JOB
  sidekiq_options retry: 1, lease: { resource: ->(args) { "reports/#{args[0]}" } }
  sidekiq_retry_in { 1 }

  def perform(_day)
    JobData.log(jid, self.class.name, lease.token, JobData.now_ns, lease.resource)
    raise "the first run fails" if JobData.runs(jid) == 1
  end
end

# A job that declares no lease runs as it always did.
class PlainJob
  include JOB
  sidekiq_options retry: false

  def perform
    JobData.log(jid, self.class.name, 0, JobData.now_ns, lease.inspect)
  end
end

# An ActiveJob job on the Sidekiq adapter, retried while the resource is held.
class ActiveReportJob < ActiveJob::Base
  self.queue_adapter = :sidekiq
  include LeaseMachines::ActiveJob
  leased resource: RESOURCE, on_occupied: :retry, reschedule_in: 0.2

  def perform(seconds)
    JobData.work(self, seconds, id: job_id)
  end
end

# bench/jobs_bench.rb: an empty job, and the same with a lease (a resource of
# its own per job, so that none waits). Each counts itself done in Redis.
class EmptyJob
  include JOB
  sidekiq_options retry: false

  def perform(_index)
    Sidekiq.redis { |redis| redis.incr("bench:done") }
  end
end

class LeasedEmptyJob
  include JOB
  sidekiq_options retry: false, lease: { resource: ->(args) { "bench/#{args[0]}" }, on_occupied: :raise }

  def perform(_index)
    Sidekiq.redis { |redis| redis.incr("bench:done") }
  end
end

# The floor of what a lease adds to a job: two bare one-row commits on the
# same engine, as the store makes them (SQLite, WAL, synchronous = FULL), on a
# connection per thread.
class TwoCommitsJob
  include JOB
  sidekiq_options retry: false

  def perform(_index)
    db = Thread.current[:lm_floor] ||= SQLite3::Database.new(File.join(DIR, "floor.sqlite3")).tap do |floor|
      floor.busy_timeout = 5000
      floor.execute("PRAGMA journal_mode = WAL")
      floor.execute("PRAGMA synchronous = FULL")
      floor.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
      floor.execute("INSERT OR IGNORE INTO floor (id, n) VALUES (1, 0)")
    end
    2.times { db.transaction(:immediate) { db.execute("UPDATE floor SET n = n + 1 WHERE id = 1") } }
    Sidekiq.redis { |redis| redis.incr("bench:done") }
  end
end

# The floor of LeasedEmptyJob's lease as its store makes it: two commits on the job's own row (`bench/<index>`,
# one of JOBS rows, as its resource is), the first writing it whole (an upsert, as a grant writes the lease),
# the second clearing it (as a release does), where TwoCommitsJob updates one hot row twice.
class RowPerJobCommitsJob
  include JOB
  sidekiq_options retry: false

  UPSERT = "INSERT INTO floor (name, n, holder) VALUES (?, 1, ?) ON CONFLICT (name) DO UPDATE SET n = n + 1, " \
           "holder = excluded.holder"

  def perform(index)
    db = Thread.current[:lm_row_per_job] ||= SQLite3::Database.new(File.join(DIR, "row_per_job.sqlite3")).tap do |floor|
      floor.busy_timeout = 5000
      floor.execute("PRAGMA journal_mode = WAL")
      floor.execute("PRAGMA synchronous = FULL")
      floor.execute("CREATE TABLE IF NOT EXISTS floor (name TEXT PRIMARY KEY, n INTEGER NOT NULL, holder TEXT) " \
                    "WITHOUT ROWID")
    end
    name = "bench/#{index}"
    db.transaction(:immediate) { db.execute(UPSERT, [name, jid]) }
    db.transaction(:immediate) { db.execute("UPDATE floor SET holder = NULL WHERE name = ?", [name]) }
    Sidekiq.redis { |redis| redis.incr("bench:done") }
  end
end

# The same under a limit of 3: each job holds a slot of a resource of its own.
class LimitedEmptyJob
  include JOB
  sidekiq_options retry: false, lease: { resource: ->(args) { "bench/limited/#{args[0]}" }, limit: 3, on_conflict: :raise }

  def perform(_index)
    Sidekiq.redis { |redis| redis.incr("bench:done") }
  end
end
