# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  module Runtime
    # The renewal thread: one per process and clock, renewing every lease held by `hold`.
    class Scheduler
      SETTLE_TIMEOUT = 5.0
      LINGER = 1.0
      TICK = 0.005

      # Weak: a test's clock and its idle scheduler go away with the test.
      @schedulers = ObjectSpace::WeakMap.new
      @mutex = Mutex.new

      class << self
        attr_accessor :batching

        def for(clock) = @mutex.synchronize { @schedulers[clock] ||= new(clock) }

        def settle(clock) = @mutex.synchronize { @schedulers[clock] }&.settle

        def forget_all
          @mutex = Mutex.new
          @schedulers = ObjectSpace::WeakMap.new
        end
      end
      self.batching = true
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

      def remove(held)
        @mutex.synchronize do
          @due.delete(held)
          @running.delete(held)
          @wake.signal if @due.empty?
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

      def renew_together(store, helds)
        RenewalBatch.new(store, helds).run
      rescue StandardError => e
        Logging.warning("lease_machines: renewing #{helds.size} holds on #{store.inspect} together raised " \
                        "#{e.class}: #{e.message} (#{helds.map(&:subject).join(', ')})")
      end

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
