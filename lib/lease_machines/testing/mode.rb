# frozen_string_literal: true

module LeaseMachines
  # The test modes and their switches (docs/JOBS.md, "Testing a leased job").
  module Testing
    # Switches the test modes, for the whole process (the renewal thread and a job's threads see what the test set).
    module Mode
      MODES = { bypass: -> { Bypass.new }, occupied: -> { Occupied.new }, fenced: -> { Fenced.new } }.freeze
      LOCK = Mutex.new

      class << self
        def current = TestMode.current&.name

        def switch(name)
          mode = name && MODES.fetch(name) { raise ArgumentError, "unknown test mode #{name.inspect}" }.call
          LOCK.synchronize { TestMode.current.tap { TestMode.current = mode } }
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

    # `Testing.bypass!`: a job's lease granted by a fresh in-memory store nobody else holds.
    class Bypass
      def name = :bypass

      def hold(option, resource, &)
        Stores::Memory.new.authority(resource).hold(owner: LeaseMachines.configuration.owner, ttl: option.ttl,
                                                    limit: option.limit, max_hold: option.max_hold, &)
      end

      def guard(_resource, _token) = nil

      def held? = false
    end

    # `Testing.occupied!`: every job's lease refused, as held by another owner.
    class Occupied
      def name = :occupied

      def hold(option, resource, &)
        owner = LeaseMachines.configuration.owner
        authority = Stores::Memory.new.authority(resource)
        authority.acquire(owner: owner.zero? ? 1 : owner - 1, ttl: option.ttl)
        authority.hold(owner: owner, ttl: option.ttl, wait: 0, &)
      end

      def guard(_resource, _token) = nil

      def held? = true
    end

    # `Testing.fenced!`: leases as under {Bypass}, every fenced write refused with FencedError before any statement.
    class Fenced < Bypass
      def name = :fenced

      def guard(resource, token) = raise(FencedError.new(resource: resource, token: token, highest: token + 1))
    end

    class << self
      def bypass! = switch(:bypass)
      def occupied! = switch(:occupied)
      def fenced! = switch(:fenced)
      def disable! = switch(nil)
      def bypass(&) = Mode.within(:bypass, &)
      def occupied(&) = Mode.within(:occupied, &)
      def fenced(&) = Mode.within(:fenced, &)
      def mode = Mode.current

      private

      def switch(mode)
        Mode.switch(mode)
        nil
      end
    end
  end
end
