# frozen_string_literal: true

require "open3"
require "rbconfig"
require "sidekiq"
require "sidekiq/api"
require "sqlite3"
require "timeout"
require "tmpdir"
require "fileutils"
require_relative "../support/sidekiq_redis"

# Sidekiq 6.4 on Debian's redis gem 4.8 warns on every call.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

module LeaseMachines
  # Real `sidekiq` processes running test/jobs/sidekiq_app.rb against a real
  # Redis (script/redis, on loopback), with the app's store and data in a
  # temporary folder. The test pushes jobs through Sidekiq::Client, as an app
  # would, and reads what the jobs did from the app's data.sqlite3.
  class SidekiqCluster
    ROOT = File.expand_path("../..", __dir__)
    APP = File.join(__dir__, "sidekiq_app.rb")
    READY = /Booting Sidekiq|Sidekiq \S+ connecting to Redis/
    REDIS_PORT = Integer(ENV.fetch("LEASE_MACHINES_REDIS_PORT", "63799"))

    def self.redis_url
      @redis_url ||= begin
        out, status = Open3.capture2({ "LEASE_MACHINES_REDIS_PORT" => REDIS_PORT.to_s },
                                     File.join(ROOT, "script/redis"), "start")
        raise "script/redis start failed" unless status.success?

        # A database of the tests' own, emptied by each cluster.
        out.strip.sub(%r{/0\z}, "/5")
      end
    end

    attr_reader :dir

    def initialize(ttl:)
      @dir = Dir.mktmpdir("lm_sidekiq")
      @ttl = ttl
      @pids = []
      @logs = []
      SidekiqRedis.use(self.class.redis_url)
      ::Sidekiq.redis(&:flushdb)
    end

    # Starts one `sidekiq` process; returns its pid once it is ready.
    def start(concurrency: 5, timeout: 1)
      log = File.join(@dir, "sidekiq-#{@pids.size}.log")
      env = { "REDIS_URL" => self.class.redis_url, "LM_JOBS_DIR" => @dir, "LM_JOBS_TTL" => @ttl.to_s,
              "RUBYLIB" => File.join(ROOT, "lib") }
      pid = Process.spawn(env, RbConfig.ruby, Gem.bin_path("sidekiq", "sidekiq"), "-r", APP,
                          "-c", concurrency.to_s, "-t", timeout.to_s, "-q", "default",
                          out: log, err: log, chdir: ROOT)
      @pids << pid
      @logs << log
      # Sidekiq 6 says "Booting Sidekiq", 7 and 8 "Sidekiq 7.3.2 connecting to Redis", once the app is loaded.
      wait_for("sidekiq #{pid} to start") { File.read(log).match?(READY) }
      pid
    end

    def push(job, *args)
      ::Sidekiq::Client.push("class" => job, "args" => args, "queue" => "default")
    end

    # @return [Array<Hash>] the app's log of lease intervals, oldest first
    def held
      rows("SELECT jid, job, token, started_ns, ended_ns, outcome, pid FROM held ORDER BY started_ns")
        .map { |row| %w[jid job token started_ns ended_ns outcome pid].zip(row).to_h }
    end

    def report
      rows("SELECT body, token FROM report WHERE id = 1").first
    end

    def log
      @logs.map { |path| File.read(path) }.join
    end

    def store
      @store ||= Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
    end

    def wait_for(what, seconds: 30)
      Timeout.timeout(seconds, Timeout::Error, "timed out waiting for #{what}\n#{log.chars.last(3000).join}") do
        sleep 0.02 until yield
      end
    end

    def alive?(pid)
      Process.waitpid(pid, Process::WNOHANG).nil?
    end

    def stop
      @pids.each do |pid|
        Process.kill(:CONT, pid)
        Process.kill(:KILL, pid)
        Process.waitpid(pid)
      rescue Errno::ESRCH, Errno::ECHILD
        nil
      end
      FileUtils.rm_rf(@dir)
    end

    private

    def rows(sql)
      db = SQLite3::Database.new(File.join(@dir, "data.sqlite3"))
      db.busy_timeout = 5000
      db.execute(sql)
    rescue SQLite3::SQLException
      []
    ensure
      db&.close
    end
  end
end
