# frozen_string_literal: true

require "fileutils"
require "pg"

module Chaos
  # FAILOVER=on: the store's cluster is a primary and an asynchronous
  # streaming standby (pg_basebackup -R) on the run's two ports. The fault
  # loses acknowledged commits, as a failover to an asynchronous replica does
  # (issue #26): the standby is cut off (stopped), the primary goes on
  # granting for a moment, is SIGKILLed, and the standby is started and
  # promoted without what it missed. The workers' store URL names both
  # servers with target_session_attrs=read-write, so their next connection
  # lands on the promoted one. The old primary's folder is then made a
  # standby of the new one, ready for the next failover: the two swap roles.
  class Failover
    ROOT = File.expand_path("..", __dir__)
    BINDIR = Dir["/usr/lib/postgresql/*/bin"].max_by { |dir| dir[/\d+/].to_i }

    def initialize(settings)
      @settings = settings
      @primary = { port: settings.pg_port, dir: settings.pg_dir }
      @standby = { port: settings.pg_standby_port, dir: settings.pg_standby_dir }
    end

    # Both servers stopped at once (their data is not kept) and removed:
    # each run starts from a fresh primary (a run before may have left the
    # roles swapped).
    def reset
      [@primary, @standby].each do |server|
        immediate_stop(server)
        FileUtils.rm_rf([server[:dir], "#{server[:dir]}.initdb.log"])
      end
    end

    # The standby, once the primary holds the run's database.
    def start_standby
      base_backup
      script(@standby, "start") or raise "chaos: the standby on port #{@standby[:port]} did not start"
    end

    # The fault, up to the promotion. @return [Hash] what it did, for the nemesis' log
    def run(random)
      cut_off = 0.5 + random.rand
      immediate_stop(@standby)
      sleep cut_off # the primary acknowledges grants the standby never receives
      kill(@primary)
      killed = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      script(@standby, "start")
      promote(@standby)
      promoted_after = Process.clock_gettime(Process::CLOCK_MONOTONIC) - killed
      @primary, @standby = @standby, @primary
      { cut_off: cut_off.round(3), promoted_after: promoted_after.round(3), primary_port: @primary[:port] }
    end

    # The old primary's folder made a standby of the new primary, for the
    # next failover.
    def rebuild_standby
      FileUtils.rm_rf(@standby[:dir])
      start_standby
    end

    private

    def environment(server)
      { "LEASE_MACHINES_PG_PORT" => server[:port].to_s, "LEASE_MACHINES_PG_DIR" => server[:dir] }
    end

    def script(server, command)
      system(environment(server), File.join(ROOT, "script/postgres"), command, out: File::NULL, err: File::NULL)
    end

    # pg_ctl stop -m immediate: no checkpoint (a standby restarts from its
    # last restartpoint and replays what it had received).
    def immediate_stop(server)
      tool("pg_ctl", "-D", server[:dir], "-m", "immediate", "stop") if File.exist?(File.join(server[:dir], "postmaster.pid"))
    end

    # SIGKILL of the postmaster and its children: nothing is flushed to the
    # standby on the way out.
    def kill(server)
      postmaster = Integer(File.foreach(File.join(server[:dir], "postmaster.pid")).first, 10)
      children = `ps -o pid= --ppid #{postmaster}`.split.map { |pid| Integer(pid, 10) }
      ([postmaster] + children).each do |pid|
        Process.kill(:KILL, pid)
      rescue Errno::ESRCH
        nil
      end
      sleep 0.01 while alive?(postmaster)
    end

    def alive?(pid)
      Process.kill(0, pid)
      true
    rescue Errno::ESRCH
      false
    end

    def promote(server)
      tool("pg_ctl", "-D", server[:dir], "-w", "-t", "60", "promote")
      conn = PG.connect(host: "127.0.0.1", port: server[:port], user: "postgres", dbname: "postgres", connect_timeout: 5)
      sleep 0.02 while conn.exec("SELECT pg_is_in_recovery()").getvalue(0, 0) == "t"
    ensure
      conn&.close
    end

    def base_backup
      tool("pg_basebackup", "-h", "127.0.0.1", "-p", @primary[:port].to_s, "-U", "postgres", "-D", @standby[:dir],
           "-R", "-X", "stream", "-c", "fast") or raise "chaos: pg_basebackup from port #{@primary[:port]} failed"
    end

    # PostgreSQL's tools refuse to run as root: as postgres then.
    def tool(name, *args)
      command = [File.join(BINDIR, name), *args]
      command = ["runuser", "-u", "postgres", "--", *command] if Process.uid.zero?
      system(*command, out: File::NULL, err: File::NULL)
    end
  end
end
