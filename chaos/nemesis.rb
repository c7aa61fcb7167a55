# frozen_string_literal: true

require "json"
require_relative "event_log"

module Chaos
  # The nemesis: a process of its own that injects faults at random (from the
  # run's seed), each in a thread of its own so that faults overlap, and logs
  # each with its start and end. It finds the workers' current process ids in
  # the runner's pids file (the runner respawns the ones it kills). Worker
  # faults: pause, kill, kill_in_tx, pause_in_tx, clock_slow, clock_jump; the
  # database's: pg_terminate, pg_restart, pg_crash, and with FAILOVER=on
  # pg_failover (chaos/failover.rb) every FAILOVER_EVERY seconds, the first
  # after half of that, in place of the restarts and the network's faults;
  # the network's: partition, slow_link. NEMESIS=workers keeps the workers'
  # faults and pg_terminate only.
  class Nemesis
    # kind => weight, per engine
    FAULTS = {
      "sqlite" => { pause: 4, kill: 1, kill_in_tx: 2, clock_slow: 1, clock_jump: 1 },
      "postgres" => { pause: 4, kill: 1, kill_in_tx: 1, pause_in_tx: 1, clock_slow: 1, clock_jump: 1,
                      pg_terminate: 1, pg_restart: 0.5, pg_crash: 0.5, partition: 1.5, slow_link: 0.5 },
      "postgres_workers" => { pause: 4, kill: 1, kill_in_tx: 1, pause_in_tx: 1, clock_slow: 1, clock_jump: 1,
                              pg_terminate: 1 }
    }.freeze
    MAX_AT_ONCE = 3

    def initialize(settings, cluster:, network:, failover: nil)
      @settings = settings
      @pids_path = File.join(settings.dir, "pids.json")
      @control_dir = File.join(settings.dir, "control")
      @log = EventLog.new(File.join(settings.dir, "nemesis.jsonl"), process: "nemesis")
      @cluster = cluster
      @network = network
      @failover = failover
      @random = Random.new(settings.seed)
      workers_only = settings.postgres? && (failover || settings.workers_only?)
      @faults = FAULTS.fetch(workers_only ? "postgres_workers" : settings.engine)
      @busy = {} # worker id or :cluster / :network => true while a fault holds it
      @mutex = Mutex.new
      @threads = []
      @stopping = false
    end

    def run
      trap(:TERM) { @stopping = true }
      @threads << Thread.new { fail_over_on_schedule } if @failover
      until @stopping
        sleep_interruptibly(@settings.fault_every * (0.5 + @random.rand))
        break if @stopping

        kind = pick_kind
        target = pick_target(kind)
        next unless target

        @threads << Thread.new(kind, target) { |k, t| inject(k, t) }
        @threads.select!(&:alive?)
      end
      @threads.each(&:join)
      @log.log(:nemesis_stopped)
    end

    private

    # The failovers, on their schedule: one waits for the cluster to be
    # free of other faults.
    def fail_over_on_schedule
      sleep_interruptibly(@settings.failover_every / 2)
      until @stopping
        target = pick_target(:pg_failover)
        next sleep_interruptibly(0.1) unless target

        inject(:pg_failover, target)
        sleep_interruptibly(@settings.failover_every)
      end
    end

    def sleep_interruptibly(seconds)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
      sleep 0.05 while !@stopping && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    end

    def pick_kind
      total = @faults.values.sum
      point = @random.rand * total
      @faults.each do |kind, weight|
        return kind if point < weight

        point -= weight
      end
      @faults.keys.last
    end

    # A worker (or the cluster, or the link) that no other fault holds.
    def pick_target(kind)
      @mutex.synchronize do
        return nil if @busy.size >= MAX_AT_ONCE

        target = case kind
                 when :pg_restart, :pg_crash, :pg_failover then :cluster
                 when :partition, :slow_link then :network
                 else
                   free = pids.keys.reject { |id| @busy[id] }
                   free.empty? ? nil : free[@random.rand(free.size)]
                 end
        return nil if target.nil? || @busy[target] || (target == :network && @busy[:cluster])

        @busy[target] = true
        target
      end
    end

    def pids
      JSON.parse(File.read(@pids_path)).transform_keys { |id| Integer(id, 10) }
    rescue SystemCallError, JSON::ParserError
      {}
    end

    def inject(kind, target)
      pid = target.is_a?(Integer) ? pids[target] : nil
      started = EventLog.now_ns
      detail = __send__(kind, target, pid) || {}
      @log.log(:fault, kind: kind, target: target, target_pid: pid, started: started, ended: EventLog.now_ns, **detail)
    rescue StandardError => e
      @log.log(:fault_error, kind: kind, target: target, error: e.class.name, message: e.message[0, 200])
    ensure
      @mutex.synchronize { @busy.delete(target) }
    end

    def ttl
      @settings.ttl
    end

    # USR1 and USR2 only reach a worker that said it handles them.
    def signal(name, pid)
      return false if %i[USR1 USR2].include?(name) && !ready?(pid)

      Process.kill(name, pid)
      true
    rescue Errno::ESRCH
      false
    end

    # SIGSTOP past the TTL, then SIGCONT: the GC pause.
    def pause(_id, pid)
      seconds = ttl * (1.5 + (@random.rand * 1.5))
      return { delivered: false } unless signal(:STOP, pid)

      sleep seconds
      signal(:CONT, pid)
      { seconds: seconds.round(3), delivered: true }
    end

    def kill(_id, pid)
      { delivered: signal(:KILL, pid) }
    end

    # The worker stops itself inside its next write's transaction; then it is
    # killed there (kill_in_tx) or left stopped past the TTL (pause_in_tx).
    def kill_in_tx(_id, pid)
      landed = stop_inside_transaction(pid)
      signal(:KILL, pid)
      { landed_in_tx: landed }
    end

    def pause_in_tx(_id, pid)
      landed = stop_inside_transaction(pid)
      seconds = ttl * (1.5 + @random.rand)
      sleep seconds if landed
      signal(:CONT, pid)
      { landed_in_tx: landed, seconds: landed ? seconds.round(3) : 0 }
    end

    def stop_inside_transaction(pid)
      return false unless signal(:USR1, pid)

      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 3.5
      while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
        return true if stopped?(pid)

        sleep 0.01
      end
      false
    end

    def ready?(pid)
      Dir[File.join(@control_dir, "*.ready")].any? { |path| File.read(path) == pid.to_s }
    rescue SystemCallError
      false
    end

    def stopped?(pid)
      File.read("/proc/#{pid}/stat").split(") ", 2).last.start_with?("T")
    rescue SystemCallError
      false
    end

    # The holder's clock runs at a quarter of real time for a few seconds.
    def clock_slow(id, pid)
      seconds = 2 + (@random.rand * 3)
      scale = 0.25
      return { delivered: false } unless order(id, pid, "scale" => scale)

      sleep seconds
      order(id, pid, "scale" => 1.0)
      { scale: scale, seconds: seconds.round(3), delivered: true }
    end

    def clock_jump(id, pid)
      seconds = ttl * (1 + @random.rand)
      { jump: seconds.round(3), delivered: order(id, pid, "jump" => seconds) }
    end

    def order(id, pid, order)
      path = File.join(@control_dir, "w#{id}.json")
      File.write("#{path}.tmp", JSON.generate(order))
      File.rename("#{path}.tmp", path)
      signal(:USR2, pid)
    end

    def pg_terminate(id, _pid)
      { terminated: @cluster.terminate("chaos-w#{id}-") }
    end

    def pg_restart(_target, _pid)
      { restarted: @cluster.restart_fast }
    end

    def pg_crash(_target, _pid)
      { recovered: @cluster.crash }
    end

    # Promoted, then (unless the run is ending) the next standby made.
    def pg_failover(_target, _pid)
      detail = @failover.run(@random)
      rebuilt = !@stopping && @failover.rebuild_standby
      detail.merge(standby_rebuilt: rebuilt)
    end

    # The partitioned workers' link goes down for longer than the TTL.
    def partition(_target, _pid)
      seconds = ttl * (2 + (@random.rand * 2))
      @network.cut
      sleep seconds
      { seconds: seconds.round(3) }
    ensure
      @network.heal
    end

    def slow_link(_target, _pid)
      seconds = 2 + (@random.rand * 2)
      @network.slow(16)
      sleep seconds
      { kbit: 16, seconds: seconds.round(3) }
    ensure
      @network.unslow
    end
  end
end
