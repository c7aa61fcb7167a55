# frozen_string_literal: true

module LeaseMachines
  # The test modes' switches (docs/JOBS.md, "Testing a leased job").
  module Testing
    # Switches the test modes, for the whole process (the renewal thread and
    # a job's threads see what the test set). A switch is made under a
    # Mutex; the block forms restore the mode they found, however the block
    # ends, so they nest. Tests that switch modes should not run in parallel
    # threads of one process (as with Sidekiq::Testing's modes).
    module Mode
      MODES = { bypass: -> { Bypass.new }, occupied: -> { Occupied.new }, fenced: -> { Fenced.new } }.freeze
      LOCK = Mutex.new

      class << self
        # @return [Symbol, nil] :bypass, :occupied, :fenced, or nil (normal)
        def current
          TestMode.current&.name
        end

        # Turns `name` on (nil: normal); returns the mode it replaced.
        def switch(name)
          mode = name && MODES.fetch(name) { raise ArgumentError, "unknown test mode #{name.inspect}" }.call
          LOCK.synchronize do
            previous = TestMode.current
            TestMode.current = mode
            previous
          end
        end

        # Runs the block in mode `name`, then restores the mode it found.
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
      # Every job's lease granted at once, without a store (see {Bypass}).
      def bypass!
        Mode.switch(:bypass)
        nil
      end

      # Every job's lease refused, as held by another owner (see {Occupied}).
      def occupied!
        Mode.switch(:occupied)
        nil
      end

      # Jobs get their leases, fences refuse every write (see {Fenced}).
      def fenced!
        Mode.switch(:fenced)
        nil
      end

      # Back to normal: leases from the configured store, fences that compare.
      def disable!
        Mode.switch(nil)
        nil
      end

      # @return [Symbol, nil] the mode in force: :bypass, :occupied, :fenced, or nil
      def mode
        Mode.current
      end

      # The block forms: the mode for the block, then the one before.
      def bypass(&) = Mode.within(:bypass, &)

      def occupied(&) = Mode.within(:occupied, &)

      def fenced(&) = Mode.within(:fenced, &)
    end
  end
end
