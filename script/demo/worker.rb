# frozen_string_literal: true

module LeaseMachinesDemo
  # One worker process of the story: takes the lease of the report from the
  # store and writes the report, through the fence or (in the round without
  # it) straight to the table. Runs in a forked child, on connections of its
  # own; its exit status says how its write went.
  class Worker
    TTL = 1.5
    WROTE = 0
    FENCED = 3

    def initialize(owner, backend, timeline, resource, fenced:)
      @owner = owner
      @backend = backend
      @timeline = timeline
      @resource = resource
      @fenced = fenced
      @who = "worker #{owner}"
    end

    # Worker 7: takes the lease, renders, checks that it still holds the
    # lease, tells the supervisor (`channel`) it is about to write, and
    # writes. The supervisor stops it right there, between its check and its
    # write.
    # @return [Integer] the exit status
    def first(channel)
      authority = @backend.store.authority(@resource)
      token = acquire(authority).token
      say("renders the report...")
      sleep 0.2
      renewal = authority.renew(owner: @owner, token: token, ttl: TTL)
      say("checks its lease before writing: renew token #{token} -> #{renewal.status}; sends its write")
      channel.puts(renewal.lease.expires_at_ns)
      channel.flush
      sleep 0.3 # the write is on its way; this is where the supervisor stops the process
      write(token, "stale draft by worker 7")
    end

    # Worker 12: takes the lease once worker 7's has run out and writes.
    def successor
      authority = @backend.store.authority(@resource)
      write(acquire(authority).token, "report by worker 12")
    end

    private

    def say(text) = @timeline.say(@who, text)

    def acquire(authority)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      loop do
        decision = authority.acquire(owner: @owner, ttl: TTL)
        if decision.granted?
          say("(pid #{Process.pid}) acquire -> granted, token #{decision.lease.token}, a #{TTL} s lease")
          return decision.lease
        end
        raise "#{@who}: acquire -> #{decision.reason}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.05
      end
    end

    def write(token, text)
      if @fenced
        fences = @backend.fences
        fences.guard(@resource, token) { |conn| @backend.write_on(conn, @resource, text, @owner, token) }
        say("guarded write #{text.inspect} with token #{token} -> accepted")
      else
        @backend.plain_write(@resource, text, @owner, token)
        say("plain write #{text.inspect} with token #{token} -> written (nothing checks the token)")
      end
      WROTE
    rescue LeaseMachines::FencedError => e
      say("guarded write with token #{token} -> REFUSED by the fence: #{e.message}")
      FENCED
    end
  end
end
