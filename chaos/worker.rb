# frozen_string_literal: true

# One chaos worker process: `ruby -Ilib chaos/worker.rb CONFIG_JSON`
# (started by Chaos::Runner, respawned when the nemesis kills it). It loops
# until SIGTERM: `hold` a lease on a random resource through the durable
# store, make a few writes to the protected data while it holds it (fenced,
# or plain inserts with FENCING=off), and let `hold` renew and release. Every
# event goes to its own JSON-lines log.
#
# Signals, from the nemesis: USR1 = stop yourself (SIGSTOP) inside your next
# write's transaction, if it comes within 3 s; USR2 = read the clock order
# from the control file (a scale or a jump of the runtime clock).
require "json"
require "lease_machines"
require "lease_machines/stores/sqlite"
require "lease_machines/stores/postgres"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"
require_relative "event_log"
require_relative "skewed_clock"
require_relative "protected_data"
require_relative "worker_writes"

module Chaos
  # The worker's loop; its writes are Chaos::WorkerWrites.
  class Worker
    include WorkerWrites

    STOP_IN_TX_WINDOW = 3.0

    def initialize(config)
      @config = config
      @id = config.fetch("id")
      @ttl = config.fetch("ttl")
      @resources = config.fetch("resources")
      @random = Random.new(config.fetch("seed") ^ Process.pid)
      @log = EventLog.new(config.fetch("log"), worker: @id, pid: Process.pid)
      @clock = SkewedClock.new
      @sequence = 0
      @stopping = false
      @stop_in_tx_until = nil
      @clock_order = false
    end

    def run
      trap_signals
      ready
      subscribe
      @store = open_store
      open_writers
      @log.log(:start, engine: @config.fetch("engine"), fencing: @config.fetch("fencing"),
                       namespace: @config.fetch("namespace"))
      iteration until @stopping
      @log.log(:stop)
    end

    private

    # Tells the nemesis that this process handles USR1 and USR2 now (before,
    # either signal would end it).
    def ready
      path = "#{@config.fetch('control')}.ready"
      File.write("#{path}.tmp", Process.pid.to_s)
      File.rename("#{path}.tmp", path)
    end

    def trap_signals
      trap(:TERM) { @stopping = true }
      trap(:USR1) { @stop_in_tx_until = Process.clock_gettime(Process::CLOCK_MONOTONIC) + STOP_IN_TX_WINDOW }
      trap(:USR2) { @clock_order = true }
    end

    # The runtime's events, as the worker's log lines.
    def subscribe
      LeaseMachines.subscribe do |event, payload|
        next unless %i[acquire renew release lost at_risk fenced].include?(event)

        fields = { resource: payload[:resource], token: payload[:token], status: payload[:status],
                   reason: payload[:reason], owner: payload[:owner] }
        fields[:duration_ns] = (payload[:duration] * 1e9).round if payload[:duration]
        fields[:error] = payload[:error].class.name if payload[:error]
        @log.log(event, **fields)
      end
    end

    def open_store
      if @config.fetch("engine") == "postgres"
        LeaseMachines::Stores::Postgres.new(@config.fetch("store_url"), statement_timeout: 2.0,
                                                                        tokens: @config.fetch("tokens").to_sym)
      else
        LeaseMachines::Stores::SQLite.new(@config.fetch("sqlite_path"))
      end
    end

    def iteration
      obey_clock_order
      index = @random.rand(@resources.size)
      name = @resources[index]
      outcome = @store.authority(name).hold(owner: Process.pid, ttl: @ttl, wait: @ttl, clock: @clock) do |held|
        session(held, index)
      end
      @log.log(:not_held, resource: name, reason: outcome.decision.reason) unless outcome.held?
      Kernel.sleep(@random.rand * 0.05)
    rescue LeaseMachines::StoreError => e
      @log.log(:store_error, resource: name, error: e.class.name, message: e.message[0, 200])
      Kernel.sleep(0.1)
    end

    # A few writes under one lease: a check before each (a careful worker),
    # then the work, where a pause may fall, then the write.
    def session(held, index)
      @random.rand(2..6).times do
        obey_clock_order
        held.check!
        Kernel.sleep(0.05 + (@random.rand * 0.2))
        break unless write(held, index)
      end
    rescue LeaseMachines::LeaseLost => e
      @log.log(:check_lost, resource: held.resource, token: held.token, state: e.state, reason: e.reason)
    end

    def obey_clock_order
      return unless @clock_order

      @clock_order = false
      order = JSON.parse(File.read(@config.fetch("control")))
      @clock.jump(Float(order["jump"])) if order["jump"]
      @clock.scale = Float(order["scale"]) if order["scale"]
      @log.log(:clock, order: order, scale: @clock.scale)
    rescue SystemCallError, JSON::ParserError, ArgumentError => e
      @log.log(:clock_error, error: e.class.name, message: e.message)
    end

    # Called inside a write's transaction: stop here when the nemesis asked.
    def maybe_stop_in_transaction(resource, token)
      asked = @stop_in_tx_until
      return unless asked

      @stop_in_tx_until = nil
      return if Process.clock_gettime(Process::CLOCK_MONOTONIC) > asked

      @log.log(:stop_in_tx, resource: resource, token: token)
      Process.kill(:STOP, Process.pid)
    end
  end
end

Chaos::Worker.new(JSON.parse(ARGV.fetch(0))).run if $PROGRAM_NAME == __FILE__
