# frozen_string_literal: true

require "test_helper"
require "lease_machines/testing"
require "logger"
require "stringio"

module LeaseMachines
  # What the runtime tests share: a Memory store on a manual clock, a store
  # hook that fails on demand (a real before_commit hook: its error rolls the
  # decision back and reaches the caller, as a failing database would), and
  # the events seen.
  module RuntimeHelper
    TTL = 30

    def setup
      super
      @clock = Testing::Clock.new(start: 1_000)
      @store_failures = Queue.new
      @gate = nil
      @store = Stores::Memory.new(clock: @clock, before_commit: method(:hook))
      @events = []
      @subscriber = LeaseMachines.subscribe { |name, payload| @events << [name, payload] }
    end

    def teardown
      LeaseMachines.unsubscribe(@subscriber)
      super
    end

    # @return [String] what the block wrote to the gem's logger
    #   (LeaseMachines.configuration.logger: here a Logger on a StringIO)
    def capture_log
      log = StringIO.new
      LeaseMachines.configuration.logger = Logger.new(log)
      yield
      log.string
    ensure
      LeaseMachines.configuration.logger = nil
    end

    # The next `count` decisions fail with `error` (nothing is committed).
    def fail_next(count, error = StoreError.new("database unreachable"))
      count.times { @store_failures << error }
    end

    # Decisions wait until #open_gate (to see the holder before any answer arrives).
    def close_gate
      @gate = Queue.new
      @entered = Queue.new
    end

    def open_gate
      gate = @gate
      @gate = nil
      gate << true
    end

    def hook(_commit)
      if @gate
        @entered << true
        @gate.pop
      end
      raise @store_failures.pop unless @store_failures.empty?
    end

    def authority(name = "nightly")
      @store.authority(name)
    end

    def hold(name = "nightly", **options, &)
      authority(name).hold(owner: 7, ttl: TTL, clock: @clock, **options, &)
    end

    # The payloads of the events called `name`, or just the given fields of
    # each (one field: its value; more: an Array).
    def events(name, *fields)
      payloads = @events.select { |event, _| event == name }.map(&:last)
      return payloads if fields.empty?

      payloads.map { |payload| fields.one? ? payload.fetch(fields.first) : payload.values_at(*fields) }
    end

    # Runs `hold` in a thread; yields the Held to the test while the block waits.
    def in_hold(name = "nightly", **options)
      inside = Queue.new
      done = Queue.new
      thread = Thread.new do
        hold(name, **options) do |held|
          inside << held
          done.pop
        end
      end
      held = inside.pop
      yield held, thread
    ensure
      done << true
      thread&.join(5)
    end
  end
end
