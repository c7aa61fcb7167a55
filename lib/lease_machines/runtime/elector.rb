# frozen_string_literal: true

module LeaseMachines
  # Leader election in the shape of client-go's (docs/RUNTIME.md). At risk counts as deposed: the leader steps
  # down before its lease can run out.
  class Elector
    JITTER_FACTOR = 1.2

    attr_reader :owner

    def initialize(authority, on_elected:, on_deposed:, owner: LeaseMachines.owner_id, lease_duration: 15, # rubocop:disable Metrics/ParameterLists -- client-go's three timings, by name
                   renew_deadline: 10, retry_period: 2, clock: Runtime::MonotonicClock)
      Elector.check_timings(lease_duration, renew_deadline, retry_period)
      { on_elected: on_elected, on_deposed: on_deposed }.each do |name, callable|
        raise TypeError, "#{name} must respond to #call, got #{callable.inspect}" unless callable.respond_to?(:call)
      end
      raise TypeError, "authority must respond to #hold, got #{authority.inspect}" unless authority.respond_to?(:hold)

      @authority = authority
      @owner = owner
      @timings = { ttl: lease_duration, renew_after: retry_period, warn_before: lease_duration - renew_deadline }
      @on_elected = on_elected
      @on_deposed = on_deposed
      @clock = clock
      @mutex = Mutex.new
      @changed = ConditionVariable.new
      @held = nil
      @running = false
      @thread = nil
    end

    def self.check_timings(lease_duration, renew_deadline, retry_period)
      { lease_duration: lease_duration, renew_deadline: renew_deadline, retry_period: retry_period }.each do |name, value|
        next if (value.is_a?(Integer) || (value.is_a?(Float) && value.finite?)) && value.positive?

        raise ArgumentError, "#{name} must be a positive, finite number of seconds, got #{value.inspect}"
      end
      unless lease_duration > renew_deadline
        raise ArgumentError, "lease_duration (#{lease_duration}) must be greater than renew_deadline (#{renew_deadline})"
      end
      return if renew_deadline > JITTER_FACTOR * retry_period

      raise ArgumentError, "renew_deadline (#{renew_deadline}) must be greater than " \
                           "#{JITTER_FACTOR} * retry_period (#{retry_period})"
    end

    def start
      @mutex.synchronize do
        raise "the elector is already running" if @running

        @running = true
        @thread = Thread.new { campaign }
        @thread.name = "lease_machines elector"
      end
      self
    end

    def stop
      thread = @mutex.synchronize do
        @running = false
        @changed.broadcast
        @thread
      end
      thread.join unless thread.nil? || thread.equal?(Thread.current)
      self
    end

    def leader? = held&.at_risk? == false

    def term = held&.token

    def inspect = "#<#{self.class.name} owner=#{@owner} leader=#{leader?}>"
    alias to_s inspect

    private

    def running? = @mutex.synchronize { @running }

    def held = @mutex.synchronize { @held }

    def campaign
      random = Random.new
      while running?
        @authority.hold(owner: @owner, clock: @clock, on_at_risk: method(:wake), on_lost: method(:wake),
                        **@timings) { |held| lead(held) }
        pause(@timings[:renew_after] * (1 + (random.rand * (JITTER_FACTOR - 1))))
      end
    rescue StandardError => e
      Logging.warning("lease_machines: the elector for owner #{@owner} stopped: #{e.class}: #{e.message}")
      @mutex.synchronize { @running = false }
    end

    def lead(held)
      @mutex.synchronize { @held = held }
      Events.emit(:elected, payload(held, :elected))
      begin
        @on_elected.call(held.token)
        @mutex.synchronize do
          @clock.wait(@mutex, @changed, [held.remaining - @timings[:warn_before], 0.001].max) while @running && !held.at_risk?
        end
      ensure
        @mutex.synchronize { @held = nil }
        Events.emit(:deposed, payload(held, :deposed))
        @on_deposed.call(held.token)
      end
    end

    def wake(_held) = @mutex.synchronize { @changed.broadcast }

    def pause(seconds)
      deadline = @clock.now + seconds
      @mutex.synchronize do
        while @running && (left = deadline - @clock.now).positive?
          @clock.wait(@mutex, @changed, left)
        end
      end
    end

    def payload(held, status)
      { resource: held.resource, owner: @owner, token: held.token, status: status, reason: held.reason,
        duration: nil }
    end
  end
end
