# frozen_string_literal: true

module LeaseMachinesDemo
  # `bin/demo --simulated`: the same story told in one process on a simulated
  # clock, with the in-memory Authority, Fence and Holder of the README's
  # quick start. Nothing sleeps: every instant is passed in, so the story is
  # the same on every run. The protected resource is a report guarded by a
  # fence, the check and the write made one step (here under one mutex; in a
  # database, in one transaction, as the real story does).
  class ReportStore
    attr_reader :report, :writer

    def initialize
      @fence = LeaseMachines::Fence.new
      @mutex = Mutex.new
      @report = nil
      @writer = nil
    end

    # Writes when `token` passes the fence; returns whether it did.
    def write(token:, writer:, text:)
      @mutex.synchronize do
        next false unless @fence.accept(token)

        @report = text
        @writer = writer
        true
      end
    end

    def highest = @fence.highest
  end

  # The simulated story; `run` returns the store, so a test can check the outcome.
  class SimulatedStory
    TTL = 30.0
    CADENCE = { ttl: TTL, renew_after: 10.0, warn_before: 5.0 }.freeze

    def initialize(out)
      @out = out
      @authority = LeaseMachines::Authority.new
      @store = ReportStore.new
      @cadence = LeaseMachines::Cadence.new(**CADENCE)
    end

    def run
      @out.puts "lease_machines #{LeaseMachines::VERSION}: one report, two workers, a #{TTL.to_i}s lease " \
                "(simulated clock, one process).\n\n"
      seven = worker_seven_starts
      twelve = worker_twelve_takes_over
      worker_seven_wakes(seven)
      worker_twelve_carries_on(twelve)
      outcome
      @store
    end

    private

    def say(time, who, text)
      @out.puts format("t=%<time>5.1fs  %<who>-10s %<text>s", time: time, who: who, text: text)
    end

    def grant(owner, now)
      decision = @authority.acquire(owner: owner, now: now, ttl: TTL)
      lease = decision.lease
      say(now, "worker #{owner}", "acquire -> #{decision.status}, token #{lease.token}, lease until t=#{lease.expires_at}s")
      LeaseMachines::Holder.new(token: lease.token, at: now, cadence: @cadence)
    end

    def write(now, owner, holder, text)
      written = @store.write(token: holder.token, writer: owner, text: text)
      verdict = written ? "accepted" : "REFUSED by the fence (store has seen token #{@store.highest})"
      say(now, "worker #{owner}", "writes #{text.inspect} with token #{holder.token} -> #{verdict}")
      written
    end

    def worker_seven_starts
      holder = grant(7, 0.0)
      write(2.0, 7, holder, "draft by worker 7")
      say(5.0, "worker 7", "sends its final write... and stalls (a long GC pause, a frozen VM)")
      holder
    end

    def worker_twelve_takes_over
      occupied = @authority.acquire(owner: 12, now: 20.0, ttl: TTL)
      say(20.0, "worker 12", "acquire -> #{occupied.status} (#{occupied.reason}): worker 7 still holds the lease")
      say(30.0, "authority", "worker 7's lease expires; nobody can tell worker 7")
      holder = grant(12, 31.0)
      write(32.0, 12, holder, "report by worker 12")
      holder
    end

    def worker_seven_wakes(holder)
      say(45.0, "worker 7", "wakes up; its holder says at_risk?=#{holder.at_risk?(45.0)}, " \
                            "renewal_due?=#{holder.renewal_due?(45.0)}")
      holder.refresh(45.0)
      renewal = @authority.renew(owner: 7, token: holder.token, now: 45.0, ttl: TTL)
      say(45.0, "worker 7", "renew token #{holder.token} -> #{renewal.status} (#{renewal.reason})")
      holder.expire
      say(45.0, "network", "worker 7's write, sent before the stall, reaches the store")
      holder.fence unless write(45.0, 7, holder, "stale draft by worker 7")
      say(45.0, "worker 7", "holder state: #{holder.state}; it stops")
    end

    def worker_twelve_carries_on(holder)
      renewal = @authority.renew(owner: 12, token: holder.token, now: 46.0, ttl: TTL)
      holder.confirm(token: renewal.lease.token, at: 46.0)
      say(46.0, "worker 12", "renew token #{holder.token} -> #{renewal.status}, lease until t=#{renewal.lease.expires_at}s")
    end

    def outcome
      @out.puts "\nOutcome: the report is #{@store.report.inspect}, written by worker #{@store.writer}; " \
                "worker 7's late write (token 1) was turned away because the store had already accepted token " \
                "#{@store.highest}."
    end
  end
end
