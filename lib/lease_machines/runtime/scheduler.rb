# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The renewal thread: one per process and clock, renewing every lease
    # held by `hold`, each when its Holder says it is due. Renewals run one
    # after another (every store call has the store's own timeout); the
    # holds of one store due in the same tick are renewed together, in one
    # transaction ({RenewalBatch}).
    class Scheduler
      # How long {#settle} waits, at most, in real seconds.
      SETTLE_TIMEOUT = 5.0
      # Seconds the default clock's thread stays once nothing is held, so
      # back-to-back holds do not start a thread each (other clocks: none).
      LINGER = 1.0
      # The tick, in seconds: on the default clock, the holds due within it
      # of the first due are renewed with it, a few ms early (other clocks:
      # only the holds due at the same instant).
      TICK = 0.005

      class << self
        # @api private: whether the holds of one store due in the same tick
        # are renewed in one transaction (true); false: each alone, as
        # before 0.x (the benchmarks' baseline).
        attr_accessor :batching
      end
      self.batching = true

      # Weak: a test's Testing::Clock and its idle scheduler go away with the
      # test (a scheduler whose thread runs is kept alive by that thread).
      @schedulers = ObjectSpace::WeakMap.new
      @mutex = Mutex.new

      class << self
        # The scheduler of `clock` in this process.
        def for(clock)
          @mutex.synchronize { @schedulers[clock] ||= new(clock) }
        end

        # Waits (real time) until the scheduler of `clock` has nothing due
        # and nothing running: {Testing::Clock#advance} after moving the clock.
        def settle(clock)
          scheduler = @mutex.synchronize { @schedulers[clock] }
          scheduler&.settle
        end

        # @api private: in a forked child, forget the parent's schedulers
        # (their threads do not exist here).
        def forget_all
          @mutex = Mutex.new
          @schedulers = ObjectSpace::WeakMap.new
        end
      end

      # @return [#now, #wait]
      attr_reader :clock

      def initialize(clock)
        @clock = clock
        @mutex = Mutex.new
        @wake = ConditionVariable.new
        @due = DueQueue.new
        @running = {}.compare_by_identity # holds taken from @due, being renewed
        @thread = nil
        @busy = false
        @linger = clock.equal?(MonotonicClock) ? LINGER : 0
        @tick = clock.equal?(MonotonicClock) ? TICK : 0
        @linger_until = nil
        @sleeping_until = nil
      end

      # Starts renewing `held` (and the thread, when it is not running).
      def add(held)
        @mutex.synchronize do
          at = held.due_at
          @due.set(held, at)
          if @thread&.alive?
            # Wake the thread only when it would otherwise sleep past this one.
            @wake.signal if @sleeping_until.nil? || (at && at < @sleeping_until)
          else
            @thread = Thread.new { run }
          end
        end
      end

      # Stops renewing `held`. With nothing left the thread is woken now, so
      # that it lingers from now, not from the removed hold's next renewal.
      def remove(held)
        @mutex.synchronize do
          @due.delete(held)
          @running.delete(held)
          @wake.signal if @due.empty?
        end
      end

      # @return [Integer] the holds being renewed
      def size
        @mutex.synchronize { @due.size + @running.size }
      end

      # @return [Thread, nil] the renewal thread, while it runs
      def thread
        @mutex.synchronize { @thread if @thread&.alive? }
      end

      # See {.settle}.
      def settle
        return if Thread.current.equal?(@thread)

        deadline = MonotonicClock.now + SETTLE_TIMEOUT
        until idle? || MonotonicClock.now > deadline
          Thread.pass
          sleep 0.001
        end
      end

      def inspect
        "#<#{self.class.name} holds=#{size} clock=#{@clock.inspect}>"
      end
      alias to_s inspect

      private

      def idle?
        @mutex.synchronize do
          now = @clock.now
          !@busy && !@due.due?(now) && (!@due.empty? || @thread.nil?)
        end
      end

      def run
        Thread.current.name = "lease_machines renewals"
        while (due = next_due)
          renew(due)
        end
      end

      # Renews the holds due now: one batch per store (a hold alone, or on
      # an in-memory Authority, renewed by itself), then plans each again
      # (unless its hold ended meanwhile).
      def renew(due)
        groups = Scheduler.batching ? due.group_by(&:renewal_store) : { nil => due }
        groups.each do |store, helds|
          if store && helds.size > 1
            renew_together(store, helds)
          else
            helds.each { |held| renew_alone(held) }
          end
        end
      ensure
        @mutex.synchronize do
          due.each { |held| @due.set(held, held.due_at) if @running.delete(held) }
          @busy = false
        end
      end

      def renew_alone(held)
        held.renew
      rescue StandardError => e
        Logging.warning("lease_machines: renewing #{held.subject} raised #{e.class}: #{e.message}")
      end

      def renew_together(store, helds)
        RenewalBatch.new(store, helds).run
      rescue StandardError => e
        Logging.warning("lease_machines: renewing #{helds.size} holds on #{store.inspect} together raised " \
                        "#{e.class}: #{e.message} (#{helds.map(&:subject).join(', ')})")
      end

      # Nothing is held: true once the linger is over (the thread ends), else
      # waits for a new hold or the end of the linger. Inside @mutex.
      def done_lingering?
        @linger_until ||= @clock.now + @linger
        left = @linger_until - @clock.now
        if left <= 0
          @thread = nil
          @linger_until = nil
          return true
        end
        sleep_until(@linger_until, @clock.now)
        false
      end

      # Inside @mutex: the holds due by `limit`, moved from @due to @running.
      def take_due(limit)
        due = []
        while (entry = @due.first) && entry.last <= limit
          held = entry.first
          @due.delete(held)
          @running[held] = true
          due << held
        end
        due
      end

      def sleep_until(at, now)
        @sleeping_until = at
        @clock.wait(@mutex, @wake, at - now)
      ensure
        @sleeping_until = nil
      end

      # The holds due now (and within the tick of the first), taken from
      # the queue while they are renewed, waiting on the clock until one is;
      # nil (and the thread ends) once nothing is held.
      def next_due
        @mutex.synchronize do
          loop do
            if @due.empty?
              return nil if done_lingering?

              next
            end
            @linger_until = nil
            _, at = @due.first
            now = @clock.now
            if at <= now
              @busy = true
              return take_due(now + @tick)
            end
            sleep_until(at, now)
          end
        end
      end
    end
  end
end
