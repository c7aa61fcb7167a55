# frozen_string_literal: true

require "pg"

module Chaos
  # The run's own PostgreSQL cluster (script/postgres on a port and folder of
  # its own), which the nemesis may restart: no other cluster is touched.
  # It also listens on the relay's Unix socket folder, which is how workers
  # cut off in a network namespace reach it.
  class Cluster
    ROOT = File.expand_path("..", __dir__)
    WRITER = "chaos_writer"

    def initialize(settings)
      @settings = settings
    end

    def environment
      { "LEASE_MACHINES_PG_PORT" => @settings.pg_port.to_s, "LEASE_MACHINES_PG_DIR" => @settings.pg_dir }
    end

    def start
      out = IO.popen(environment, [File.join(ROOT, "script/postgres"), "start"], err: %i[child out], &:read)
      raise "chaos: could not start the chaos cluster on port #{@settings.pg_port}: #{out}" unless Process.last_status.success?

      self
    end

    def stop
      system(environment, File.join(ROOT, "script/postgres"), "stop", out: File::NULL, err: File::NULL)
    end

    # A fresh database for the run, and the role the data connections use:
    # its transactions are REPEATABLE READ, so a write that reads the store's
    # row reads it from the same snapshot as the guard's statement did.
    def recreate_database
      admin do |conn|
        conn.exec("SET client_min_messages = warning")
        conn.exec("DROP DATABASE IF EXISTS lease_machines_chaos WITH (FORCE)")
        conn.exec("CREATE DATABASE lease_machines_chaos")
        exists = conn.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", [WRITER]).ntuples.positive?
        conn.exec("CREATE ROLE #{WRITER} LOGIN SUPERUSER") unless exists
        conn.exec("ALTER ROLE #{WRITER} SET default_transaction_isolation = 'repeatable read'")
      end
    end

    # The Unix socket the relay forwards to.
    def socket_path
      File.join(@settings.pg_dir, ".s.PGSQL.#{@settings.pg_port}")
    end

    # `pg_ctl restart -m fast`: every session is cut, the server is back once
    # it accepts connections again.
    def restart_fast
      bindir = Dir["/usr/lib/postgresql/*/bin"].max_by { |dir| dir[/\d+/].to_i }
      system("runuser", "-u", "postgres", "--", File.join(bindir, "pg_ctl"), "-D", @settings.pg_dir, "-w", "-t", "60",
             "-m", "fast", "restart", out: File::NULL, err: File::NULL)
    end

    # SIGKILL of the postmaster: a crash. Its backends see it gone and exit;
    # the next start replays the WAL (crash recovery), which keeps every
    # commit acknowledged with fsync on. Started again once the old
    # processes have let go of the shared memory.
    # @return [Boolean] whether the server is back
    def crash
      pid = Integer(File.foreach(File.join(@settings.pg_dir, "postmaster.pid")).first, 10)
      Process.kill(:KILL, pid)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
      until system(environment, File.join(ROOT, "script/postgres"), "start", out: File::NULL, err: File::NULL)
        return false if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.2
      end
      true
    end

    # Ends the backends of one worker (named by application_name).
    # @return [Integer] how many were terminated
    def terminate(application_prefix)
      admin(dbname: "lease_machines_chaos") do |conn|
        conn.exec_params("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity " \
                         "WHERE application_name LIKE $1", ["#{application_prefix}%"]).getvalue(0, 0).to_i
      end
    end

    # On the read-write server of the two with FAILOVER=on.
    def admin(dbname: "postgres")
      conn = PG.connect(@settings.pg_url(dbname: dbname).sub("connect_timeout=2", "connect_timeout=5"))
      yield conn
    ensure
      conn&.close
    end
  end
end
