# frozen_string_literal: true

module LeaseMachines
  # Leader election for singleton work, in the shape of client-go's
  # leaderelection (docs/RUNTIME.md). At risk counts as deposed: the leader
  # steps down (and releases) before its lease can run out.
  class Elector
    JITTER_FACTOR = 1.2

    # @return [Integer] the owner this elector campaigns as
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
      @retry_period = retry_period
      @on_elected = on_elected
      @on_deposed = on_deposed
      @clock = clock
      @mutex = Mutex.new
      @changed = ConditionVariable.new
      @held = nil
      @running = false
      @thread = nil
    end

    # client-go's validation; ArgumentError names the timing that does not fit.
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

    # Starts campaigning on a thread of its own. @return [self]
    def start
      @mutex.synchronize do
        raise "the elector is already running" if @running

        @running = true
        @thread = Thread.new { campaign }
        @thread.name = "lease_machines elector"
      end
      self
    end

    # Stops campaigning; a leader steps down and releases (on_deposed runs
    # first). Waits for the elector's thread unless called from it.
    # @return [self]
    def stop
      thread = @mutex.synchronize do
        @running = false
        @changed.broadcast
        @thread
      end
      thread.join unless thread.nil? || thread.equal?(Thread.current)
      self
    end

    # @return [Boolean] elected, and not at risk on this elector's clock (a
    #   leader resumed after a pause answers false at once)
    def leader?
      held = @mutex.synchronize { @held }
      !held.nil? && !held.at_risk?
    end

    # @return [Integer, nil] the current term's fencing token, while leader
    def term
      held = @mutex.synchronize { @held }
      held&.token
    end

    def inspect
      "#<#{self.class.name} owner=#{@owner} leader=#{leader?}>"
    end
    alias to_s inspect

    private

    def running?
      @mutex.synchronize { @running }
    end

    def campaign
      random = Random.new
      while running?
        @authority.hold(owner: @owner, clock: @clock, on_at_risk: method(:wake), on_lost: method(:wake),
                        **@timings) { |held| lead(held) }
        pause(@retry_period * (1 + (random.rand * (JITTER_FACTOR - 1))))
      end
    rescue StandardError => e
      Logging.warning("lease_machines: the elector for owner #{@owner} stopped: #{e.class}: #{e.message}")
      @mutex.synchronize { @running = false }
    end

    # One term: from election until at risk, lost or stopped.
    def lead(held)
      @mutex.synchronize { @held = held }
      Events.emit(:elected, payload(held, :elected))
      begin
        @on_elected.call(held.token)
        @mutex.synchronize do
          @clock.wait(@mutex, @changed, [held.remaining - held_warn_margin, 0.001].max) while @running && !held.at_risk?
        end
      ensure
        @mutex.synchronize { @held = nil }
        Events.emit(:deposed, payload(held, :deposed))
        @on_deposed.call(held.token)
      end
    end

    # How long before the lease runs out a leader steps down.
    def held_warn_margin
      @timings.fetch(:warn_before)
    end

    def wake(_held)
      @mutex.synchronize { @changed.broadcast }
    end

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
