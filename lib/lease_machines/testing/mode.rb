# frozen_string_literal: true

module LeaseMachines
  # The test modes' switches (docs/JOBS.md, "Testing a leased job").
  module Testing
    # Switches the test modes, for the whole process (the renewal thread and a job's threads see what the test set).
    module Mode
      MODES = { bypass: -> { Bypass.new }, occupied: -> { Occupied.new }, fenced: -> { Fenced.new } }.freeze
      LOCK = Mutex.new

      class << self
        def current = TestMode.current&.name

        def switch(name)
          mode = name && MODES.fetch(name) { raise ArgumentError, "unknown test mode #{name.inspect}" }.call
          LOCK.synchronize do
            previous = TestMode.current
            TestMode.current = mode
            previous
          end
        end

        def within(name)
          raise ArgumentError, "LeaseMachines::Testing.#{name} needs a block (or call #{name}!)" unless block_given?

          previous = switch(name)
          begin
            yield
          ensure
            LOCK.synchronize { TestMode.current = previous }
          end
        end
      end
    end

    class << self
      def bypass!
        Mode.switch(:bypass)
        nil
      end

      def occupied!
        Mode.switch(:occupied)
        nil
      end

      def fenced!
        Mode.switch(:fenced)
        nil
      end

      def disable!
        Mode.switch(nil)
        nil
      end

      def mode = Mode.current

      def bypass(&) = Mode.within(:bypass, &)

      def occupied(&) = Mode.within(:occupied, &)

      def fenced(&) = Mode.within(:fenced, &)
    end
  end
end
