# frozen_string_literal: true

require "fileutils"
require "json"
require "rbconfig"
require "lease_machines"
require "lease_machines/stores/sqlite"
require "lease_machines/stores/postgres"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"
require_relative "settings"
require_relative "event_log"
require_relative "cluster"
require_relative "failover"
require_relative "network"
require_relative "protected_data"
require_relative "nemesis"
require_relative "checker"

module Chaos
  # One chaos run: prepares the databases (and, on PostgreSQL, the network
  # namespaces and the relay), starts the workers and the nemesis, respawns
  # the workers the nemesis kills, stops everything after DURATION seconds,
  # and hands the run's folder to the checker.
  class Runner
    ROOT = File.expand_path("..", __dir__)
    WORKER = File.expand_path("worker.rb", __dir__)

    def initialize(settings, out: $stdout)
      @settings = settings
      @out = out
      @cluster = Cluster.new(settings)
      @network = settings.postgres? && !settings.failover? ? Network.new(settings) : nil
      @failover = settings.failover? ? Failover.new(settings) : nil
      @workers = {} # id => pid
      @nemesis = nil
    end

    # @return [Checker::Report]
    def run
      Network.check! if @network
      prepare
      attack
      check
    ensure
      stop_all
      @network&.teardown
      @failover&.reset # the roles may be swapped: the next run starts from a fresh primary
      @log&.close
    end

    private

    def attack
      @out.puts "chaos: #{@settings.to_h.map { |key, value| "#{key}=#{value}" }.join(' ')}"
      @log = EventLog.new(File.join(@settings.dir, "runner.jsonl"), process: "runner")
      @log.log(:run, **@settings.to_h)
      @settings.workers.times { |id| spawn_worker(id) }
      @nemesis = fork_nemesis
      supervise
      stop_all
    end

    def check
      RunRecord.new(@settings.dir).snapshot
      report = Checker.new(@settings.dir).run
      File.write(File.join(@settings.dir, "report.json"), JSON.pretty_generate(report.to_h))
      @out.puts report.summary
      report
    end

    def prepare
      FileUtils.rm_rf(@settings.dir)
      FileUtils.mkdir_p(%w[workers control].map { |sub| File.join(@settings.dir, sub) })
      # A standby left where the primary belongs (a failover run that was
      # killed) is removed, with its pair.
      (@failover || Failover.new(@settings)).reset if @failover || File.exist?(File.join(@settings.pg_dir, "standby.signal"))
      @cluster.start
      @cluster.recreate_database
      setup_databases
      @failover&.start_standby
      return unless @network

      @network.create
      @network.start_relay(@cluster.socket_path, File.join(@settings.dir, "relay.log"))
    end

    # The store in the engine's database; fences and the protected table in
    # both databases.
    def setup_databases
      postgres_url = @settings.pg_url
      sqlite = @settings.sqlite_path
      if @settings.postgres?
        LeaseMachines::Stores::Postgres.new(postgres_url).tap(&:setup!).close
        sqlite = data_sqlite_path
      else
        LeaseMachines::Stores::SQLite.new(sqlite).tap(&:setup!).close
      end
      LeaseMachines::Fences::Postgres.new(postgres_url).tap(&:setup!).close
      LeaseMachines::Fences::SQLite.new(sqlite).tap(&:setup!).close
      ProtectedData.setup_postgres(postgres_url)
      ProtectedData.setup_sqlite(sqlite)
    end

    def data_sqlite_path
      File.join(@settings.dir, "data.sqlite3")
    end

    # On PostgreSQL the odd workers run in the partitioned namespace and
    # reach the database through the relay.
    def partitioned?(id)
      @network && id.odd?
    end

    def worker_config(id)
      host, port = partitioned?(id) ? [Network::RELAY_ADDRESS, Network::RELAY_PORT] : ["127.0.0.1", @settings.pg_port]
      { id: id, engine: @settings.engine, fencing: @settings.fencing?, ttl: @settings.ttl, seed: @settings.seed + id,
        tokens: @settings.tokens, owners: @settings.owners?,
        resources: @settings.resource_names,
        same_database: Array.new(@settings.resources) { |i| @settings.same_database?(i) },
        store_url: @settings.pg_url(host: host, port: port, application: "chaos-w#{id}-store"),
        writer_url: @settings.pg_url(user: Cluster::WRITER, host: host, port: port, application: "chaos-w#{id}-writer"),
        sqlite_path: @settings.sqlite_path, data_sqlite_path: data_sqlite_path,
        log: File.join(@settings.dir, "workers", "w#{id}.jsonl"), control: File.join(@settings.dir, "control", "w#{id}.json"),
        namespace: partitioned?(id) ? @network.worker_namespace : nil }
    end

    def spawn_worker(id)
      command = [RbConfig.ruby, "-I", File.join(ROOT, "lib"), WORKER, JSON.generate(worker_config(id))]
      command = @network.exec_prefix + command if partitioned?(id)
      output = File.join(@settings.dir, "workers", "w#{id}.out")
      pid = Process.spawn(*command, out: [output, "a"], err: [output, "a"], pgroup: true)
      @workers[id] = pid
      write_pids
      @log.log(:spawn, worker: id, worker_pid: pid)
    end

    def write_pids
      path = File.join(@settings.dir, "pids.json")
      File.write("#{path}.tmp", JSON.generate(@workers))
      File.rename("#{path}.tmp", path)
    end

    def fork_nemesis
      nemesis = Nemesis.new(@settings, cluster: @cluster, network: @network, failover: @failover)
      fork do
        nemesis.run
        exit!(0)
      rescue StandardError, Interrupt => e
        warn "chaos: the nemesis failed: #{e.class}: #{e.message}"
        exit!(1)
      end
    end

    def monotonic
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Respawns every worker that died, until the run's time is up.
    def supervise
      deadline = monotonic + @settings.duration
      while monotonic < deadline
        reap.each do |id, status|
          @log.log(:exit, worker: id, status: status.exitstatus, signal: status.termsig)
          sleep 0.2
          spawn_worker(id)
        end
        sleep 0.05
      end
    end

    def reap
      @workers.filter_map do |id, pid|
        _, status = Process.wait2(pid, Process::WNOHANG)
        [id, status] if status
      rescue Errno::ECHILD
        nil
      end
    end

    # The nemesis first (it resumes what it stopped and heals the link), then
    # the workers: resumed, asked to stop, killed if they do not.
    def stop_all
      stop_nemesis
      if @network&.exists?
        @network.heal
        @network.unslow
      end
      resume_and_terminate(@workers.values) # every worker is asked before any is waited for
      @workers.each_value { |pid| stop(pid, 10) }
      @workers.clear
    end

    def resume_and_terminate(pids)
      pids.each { |pid| signal(:CONT, pid) && signal(:TERM, pid) }
    end

    def stop_nemesis
      return unless @nemesis

      signal(:TERM, @nemesis)
      stop(@nemesis, 30)
      @nemesis = nil
    end

    # Waits `seconds` for the process to end, then kills it.
    def stop(pid, seconds)
      wait_for(pid, seconds) || (signal(:KILL, pid) && wait_for(pid, 5))
    end

    def signal(name, pid)
      Process.kill(name, pid)
      true
    rescue Errno::ESRCH
      false
    end

    def wait_for(pid, seconds)
      deadline = monotonic + seconds
      loop do
        return true if Process.wait(pid, Process::WNOHANG)
        return false if monotonic > deadline

        sleep 0.05
      end
    rescue Errno::ECHILD
      true
    end
  end
end
