# frozen_string_literal: true

require "json"
require "pg"
require "sqlite3"
require_relative "event_log"
require_relative "protected_data"

module Chaos
  # Everything a finished run left behind, read once: its settings (the
  # runner's first line), the rows of both protected tables, the store's
  # rows, and the logs of every worker, the nemesis and the runner.
  class RunRecord
    attr_reader :settings, :rows, :events, :faults, :runner_events, :last_issued

    def initialize(dir)
      @dir = dir
      @runner_events = EventLog.read(File.join(dir, "runner.jsonl"))
      @settings = @runner_events.find { |event| event["event"] == "run" } or raise "chaos: #{dir} has no run to check"
      @events = Dir[File.join(dir, "workers", "*.jsonl")].flat_map { |path| EventLog.read(path) }
                                                         .sort_by { |event| event["t"] }
      nemesis = File.join(dir, "nemesis.jsonl")
      @faults = File.exist?(nemesis) ? EventLog.read(nemesis).select { |event| event["event"] == "fault" } : []
      @snapshot = File.join(dir, "data.json")
      @rows, @last_issued = File.exist?(@snapshot) ? read_snapshot : [read_rows, read_last_issued]
    end

    # Keeps the protected rows and the store's marks in the run's folder
    # (data.json): the next run recreates the databases, and the check and
    # the plot of this one can still be made again.
    def snapshot
      File.write(@snapshot, JSON.generate(rows: @rows.map(&:to_h), last_issued: @last_issued))
    end

    def engine
      @settings["engine"]
    end

    def resources
      Array.new(@settings["resources"]) { |i| "chaos/r#{i}" }
    end

    # Whether the resource's data shares the store's database.
    def bound?(resource)
      !failover? && Integer(resource[/\d+\z/], 10).even?
    end

    # Whether the run's store cluster failed over (FAILOVER=on), losing
    # acknowledged commits by design.
    def failover?
      @settings["failover"] == true
    end

    def grants
      @events.select { |event| event["event"] == "acquire" && event["status"] == "granted" }
    end

    # The worker events of one resource and every fault within `window`
    # seconds of `at_ns`, as printable lines.
    def around(resource, at_ns, window: 1.5)
      return [] unless at_ns

      low = at_ns - (window * 1e9)
      high = at_ns + (window * 1e9)
      faults = @faults.select { |fault| fault["ended"] >= low && fault["started"] <= high }
                      .map { |fault| fault.merge("t" => fault["started"]) }
      (telling(resource, low, high) + faults).sort_by { |event| event["t"] }.map do |event|
        "#{format('%+9.1f', (event['t'] - at_ns) / 1e6)} ms #{JSON.generate(event.except('t'))}"
      end
    end

    private

    # A resource's events between two instants, less the refused acquires.
    def telling(resource, low, high)
      @events.select do |event|
        event["resource"] == resource && event["t"].between?(low, high) && event["status"] != "rejected" &&
          event["event"] != "not_held"
      end
    end

    # @return [Hash{String=>Integer,nil}] the store's last_issued per resource
    def read_last_issued
      values = if engine == "postgres"
                 with_postgres { |conn| conn.exec("SELECT name, last_issued FROM lease_machines_resources").values }
               else
                 with_sqlite(sqlite_path) { |db| db.execute("SELECT name, last_issued FROM lease_machines_resources") }
               end
      values.to_h.transform_values { |issued| issued && Integer(issued.to_s, 10) }
    end

    def read_snapshot
      data = JSON.parse(File.read(@snapshot))
      [data.fetch("rows").map { |row| ProtectedData::Row.new(**row.transform_keys(&:to_sym)) }, data.fetch("last_issued")]
    end

    def sqlite_path
      File.join(@dir, "chaos.sqlite3")
    end

    def read_rows
      other = engine == "postgres" ? File.join(@dir, "data.sqlite3") : sqlite_path
      postgres = ProtectedData.read_postgres(postgres_url, "postgres")
      sqlite = ProtectedData.read_sqlite(other, "sqlite")
      # each resource's data is in one of the two databases
      in_store = engine == "postgres" ? postgres : sqlite
      elsewhere = engine == "postgres" ? sqlite : postgres
      in_store.select { |row| bound?(row.resource) } + elsewhere.reject { |row| bound?(row.resource) }
    end

    def postgres_url
      return "postgres://postgres@127.0.0.1:#{@settings['pg_port']}/lease_machines_chaos" unless failover?

      # Whichever of the two servers is the primary when the run ends.
      "postgres://postgres@127.0.0.1:#{@settings['pg_port']},127.0.0.1:#{@settings['pg_standby_port']}/" \
        "lease_machines_chaos?target_session_attrs=read-write"
    end

    def with_postgres
      conn = PG.connect(postgres_url)
      yield conn
    ensure
      conn&.close
    end

    def with_sqlite(path)
      db = SQLite3::Database.new(path, readonly: true)
      db.busy_timeout = 10_000
      yield db
    ensure
      db&.close
    end
  end
end
