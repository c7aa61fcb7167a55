# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  module Runtime
    # The renewal thread: one per process and clock, renewing every lease held by `hold`.
    class Scheduler
      SETTLE_TIMEOUT = 5.0
      LINGER = 1.0
      TICK = 0.005

      class << self
        attr_accessor :batching

        # The monotonic clock's, which nearly every hold asks for, is kept aside: asked without the lock.
        def for(clock)
          return @monotonic || @mutex.synchronize { @monotonic = made(clock) } if clock.equal?(MonotonicClock)

          @mutex.synchronize { made(clock) }
        end

        def settle(clock) = @mutex.synchronize { @schedulers[clock] }&.settle

        # Weak: a test's clock and its idle scheduler go away with the test.
        def forget_all
          @mutex = Mutex.new
          @schedulers = ObjectSpace::WeakMap.new
          @monotonic = nil
        end

        private

        def made(clock) = @schedulers[clock] ||= new(clock)
      end
      self.batching = true
      forget_all
      # In a forked child the parent's schedulers are forgotten: no renewal thread there for the parent's leases.
      ForkHook.in_child { forget_all }

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

      def add(held)
        @mutex.synchronize do
          at = held.due_at
          @due.set(held, at)
          if @thread&.alive?
            @wake.signal if @sleeping_until.nil? || (at && at < @sleeping_until)
          else
            @thread = Thread.new { run }
          end
        end
      end

      # The last hold gone, a thread asleep past a linger is woken to linger and end; one already lingering is
      # not, so holds taken and given back in a loop do not wake it each time.
      def remove(held)
        @mutex.synchronize do
          @due.delete(held)
          @running.delete(held)
          @wake.signal if @due.empty? && !lingering?
        end
      end

      def size = @mutex.synchronize { @due.size + @running.size }

      def thread = @mutex.synchronize { @thread if @thread&.alive? }

      def settle
        return if Thread.current.equal?(@thread)

        deadline = MonotonicClock.now + SETTLE_TIMEOUT
        until idle? || MonotonicClock.now > deadline
          Thread.pass
          sleep 0.001
        end
      end

      def inspect = "#<#{self.class.name} holds=#{size} clock=#{@clock.inspect}>"
      alias to_s inspect

      private

      # Asleep for no longer than a linger: it ends then unless a hold came.
      def lingering? = @linger.positive? && @sleeping_until && @sleeping_until <= @clock.now + @linger

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

      # The holds of one store that came due in the same tick, renewed with one {Stores::BatchRenewal#renew_all}.
      def renew_together(store, helds)
        sent = helds.map(&:begin_renewal)
        started = MonotonicClock.now
        results = renew_all(store, helds.zip(sent).select { |_, renewal| renewal })
        helds.each_with_index { |held, index| held.conclude_renewal(sent[index], results[held], started: started) }
      rescue StandardError => e
        Logging.warning("lease_machines: renewing #{helds.size} holds on #{store.inspect} together raised " \
                        "#{e.class}: #{e.message} (#{helds.map(&:subject).join(', ')})")
      ensure
        helds.each(&:abandon_renewal)
      end

      def renew_all(store, due)
        return {} if due.empty?

        answers = begin
          store.renew_all(due.map { |held, (token, _, _)| held.renewal_request(token) })
        rescue StoreError => e
          Array.new(due.size, e)
        end
        due.each_with_index.to_h { |(held, _), index| [held, answers.fetch(index)] }
      end

      def take_due(now)
        @busy = true
        @linger_until = nil
        due = []
        while (entry = @due.first) && entry.last <= now + @tick
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

      # The holds due now, or nil once none was due for the linger: the thread ends.
      def next_due
        @mutex.synchronize do
          loop do
            now = @clock.now
            _, at = @due.first
            return take_due(now) if at && at <= now
            return stop_lingering if at.nil? && (@linger_until ||= now + @linger) <= now

            @linger_until = nil if at
            sleep_until(at || @linger_until, now)
          end
        end
      end

      def stop_lingering
        @thread = @linger_until = nil
      end
    end
  end
end
