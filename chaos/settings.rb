# frozen_string_literal: true

require "json"

module Chaos
  # One run's settings, read from the environment (`rake chaos ENGINE=...`)
  # and checked once: every other part of the run takes them from here.
  class Settings
    ENGINES = %w[sqlite postgres].freeze
    DEFAULTS = { "ENGINE" => "sqlite", "WORKERS" => "6", "RESOURCES" => "4", "DURATION" => "60",
                 "FENCING" => "on", "TTL" => "0.8", "FAULT_EVERY" => "1.0", "FAILOVER" => "off",
                 "FAILOVER_EVERY" => "15", "TOKENS" => "sequence", "OWNERS" => "on",
                 "NEMESIS" => "all" }.freeze

    attr_reader :engine, :workers, :resources, :duration, :seed, :ttl, :fault_every, :dir, :pg_port,
                :pg_standby_port, :tokens, :failover_every

    # @param env [Hash{String=>String}]
    def initialize(env = ENV)
      value = ->(key) { env.fetch(key, nil).to_s.empty? ? DEFAULTS[key] : env.fetch(key) }
      @engine = choice("ENGINE", value.call("ENGINE"), ENGINES)
      @workers = integer("WORKERS", value.call("WORKERS"), 2..32)
      @resources = integer("RESOURCES", value.call("RESOURCES"), 1..16)
      @duration = number("DURATION", value.call("DURATION"), 1..86_400)
      @fencing = choice("FENCING", value.call("FENCING"), %w[on off]) == "on"
      @ttl = number("TTL", value.call("TTL"), 0.2..30)
      @fault_every = number("FAULT_EVERY", value.call("FAULT_EVERY"), 0.05..600)
      protections(value)
      places(env)
    end

    def fencing?
      @fencing
    end

    # FAILOVER=on (PostgreSQL): the store's cluster is a primary and an
    # asynchronous standby, and the nemesis fails it over losing the
    # commits the standby had not received (chaos/failover.rb). Every
    # resource's data and fence are then in the SQLite file, which does not
    # fail over, and no worker is partitioned (the relay reaches one server).
    def failover?
      @failover
    end

    # Whether a worker's guard shows its owner (OWNERS=on), so the fence
    # records it with the mark and refuses a reissued token; off: bare tokens.
    def owners?
      @owners
    end

    def postgres?
      @engine == "postgres"
    end

    # NEMESIS=workers: the faults of the worker processes only (pauses,
    # kills, clocks; on PostgreSQL also the end of a worker's connections),
    # none of the cluster's or the network's. Every such pause is a chance of
    # a stale write, none lost to a database that was down at the time: the
    # runs with the fences off that must show the checker a stale write.
    def workers_only?
      @nemesis == "workers"
    end

    # The resources whose protected data lives in the store's own database
    # (guarded by a strict, bound fence); the others' data is in the other
    # engine's database (a plain fence: the token is the only link).
    def same_database?(resource_index)
      !@failover && resource_index.even?
    end

    def resource_names
      Array.new(@resources) { |i| "chaos/r#{i}" }
    end

    def pg_dir
      "/tmp/lm_chaos_pg_#{@pg_port}"
    end

    def pg_standby_dir
      "/tmp/lm_chaos_pg_#{@pg_standby_port}"
    end

    # With FAILOVER=on, both servers, and the read-write one chosen at each
    # connection (libpq's target_session_attrs): the workers' store follows
    # a promotion without being told.
    def pg_url(user: "postgres", host: "127.0.0.1", port: @pg_port, application: nil, dbname: "lease_machines_chaos")
      query = ["connect_timeout=2", "tcp_user_timeout=1500", "keepalives=1", "keepalives_idle=1",
               "keepalives_interval=1", "keepalives_count=2"]
      query << "application_name=#{application}" if application
      hosts = "#{host}:#{port}"
      if @failover
        hosts = "127.0.0.1:#{@pg_port},127.0.0.1:#{@pg_standby_port}"
        query << "target_session_attrs=read-write"
      end
      "postgres://#{user}@#{hosts}/#{dbname}?#{query.join('&')}"
    end

    def sqlite_path
      File.join(@dir, "chaos.sqlite3")
    end

    def to_h
      { engine: @engine, workers: @workers, resources: @resources, duration: @duration, fencing: @fencing,
        ttl: @ttl, fault_every: @fault_every, seed: @seed, dir: @dir, pg_port: @pg_port, failover: @failover,
        failover_every: @failover_every, pg_standby_port: @pg_standby_port, tokens: @tokens, owners: @owners,
        nemesis: @nemesis }
    end

    private

    # FAILOVER (and FAILOVER_EVERY, seconds), TOKENS, OWNERS and NEMESIS.
    def protections(value)
      @failover = choice("FAILOVER", value.call("FAILOVER"), %w[on off]) == "on"
      raise ArgumentError, "FAILOVER=on needs ENGINE=postgres, got #{@engine.inspect}" if @failover && !postgres?

      @failover_every = number("FAILOVER_EVERY", value.call("FAILOVER_EVERY"), 1..3600)
      @tokens = choice("TOKENS", value.call("TOKENS"), %w[sequence clock_floor])
      @owners = choice("OWNERS", value.call("OWNERS"), %w[on off]) == "on"
      @nemesis = choice("NEMESIS", value.call("NEMESIS"), %w[all workers])
    end

    # The seed, the chaos cluster's port and the run's folder.
    def places(env)
      @seed = env.fetch("SEED", nil).to_s.empty? ? Random.new_seed % 1_000_000 : integer("SEED", env["SEED"], 0..(2**62))
      @pg_port = integer("CHAOS_PG_PORT", env.fetch("CHAOS_PG_PORT", default_pg_port(env, 17)), 1024..65_535)
      @pg_standby_port = integer("CHAOS_PG_STANDBY_PORT", env.fetch("CHAOS_PG_STANDBY_PORT", default_pg_port(env, 40)),
                                 1024..65_535)
      @dir = env.fetch("CHAOS_DIR", nil).to_s.empty? ? default_dir : File.expand_path(env.fetch("CHAOS_DIR"))
    end

    # The chaos cluster's port: the test cluster's (DATABASE_URL) plus 17 (its
    # standby's: plus 40), so
    # restarting it never restarts a cluster another checkout or test uses;
    # moved 30,000 down when that lands in the kernel's ephemeral range
    # (32768-60999 on Linux), where a client connection open in the suite
    # that starts it can hold the port (test/support/restart_cluster.rb).
    def default_pg_port(env, offset)
      base = env.fetch("DATABASE_URL", "")[%r{\A\w+://[^/]*:(\d+)}, 1] || env.fetch("LEASE_MACHINES_PG_PORT", "54329")
      port = Integer(base, 10) + offset
      port -= 30_000 if (32_768..60_999).cover?(port)
      port.to_s
    end

    def default_dir
      File.expand_path("../tmp/chaos/#{@engine}#{'-failover' if @failover}-#{@fencing ? 'fenced' : 'unfenced'}-#{@seed}",
                       __dir__)
    end

    def choice(name, text, allowed)
      return text if allowed.include?(text)

      raise ArgumentError, "#{name} must be one of #{allowed.join(', ')}, got #{text.inspect}"
    end

    def integer(name, text, range)
      value = Integer(text.to_s, 10)
      raise ArgumentError, "#{name} must be in #{range}, got #{text.inspect}" unless range.cover?(value)

      value
    rescue ArgumentError, TypeError => e
      raise if e.message.start_with?(name)

      raise ArgumentError, "#{name} must be an integer in #{range}, got #{text.inspect}"
    end

    def number(name, text, range)
      value = Float(text.to_s)
      raise ArgumentError, "#{name} must be a number in #{range}, got #{text.inspect}" unless range.cover?(value)

      value
    rescue ArgumentError, TypeError => e
      raise if e.message.start_with?(name)

      raise ArgumentError, "#{name} must be a number in #{range}, got #{text.inspect}"
    end
  end
end
