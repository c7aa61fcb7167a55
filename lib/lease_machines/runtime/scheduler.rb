# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The renewal thread: one per process and clock, renewing every lease
    # held by `hold`, each when its Holder says it is due. Renewals run one
    # after another (every store call has the store's own timeout).
    class Scheduler
      # How long {#settle} waits, at most, in real seconds.
      SETTLE_TIMEOUT = 5.0
      # Seconds the default clock's thread stays once nothing is held, so
      # back-to-back holds do not start a thread each (other clocks: none).
      LINGER = 1.0

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
        @thread = nil
        @busy = false
        @linger = clock.equal?(MonotonicClock) ? LINGER : 0
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
          @wake.signal if @due.empty?
        end
      end

      # @return [Integer] the holds being renewed
      def size
        @mutex.synchronize { @due.size }
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
        while (held = next_due)
          renew(held)
        end
      end

      def renew(held)
        held.renew
      rescue StandardError => e
        Logging.warning("lease_machines: renewing #{held.subject} raised #{e.class}: #{e.message}")
      ensure
        @mutex.synchronize do
          @due.set(held, held.due_at) if @due.include?(held)
          @busy = false
        end
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

      def sleep_until(at, now)
        @sleeping_until = at
        @clock.wait(@mutex, @wake, at - now)
      ensure
        @sleeping_until = nil
      end

      # The next hold that is due, waiting on the clock until one is; nil
      # (and the thread ends) once nothing is held.
      def next_due
        @mutex.synchronize do
          loop do
            if @due.empty?
              return nil if done_lingering?

              next
            end
            @linger_until = nil
            held, at = @due.first
            now = @clock.now
            if at <= now
              @busy = true
              return held
            end
            sleep_until(at, now)
          end
        end
      end
    end
  end
end
