# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold` and `hold!` (docs/RUNTIME.md), included by every authority through {OnCallerClock} or {OnStoreClock}.
    module Holding
      def hold(ttl:, owner: LeaseMachines.owner_id, wait: 0, renew_after: nil, warn_before: nil, # rubocop:disable Metrics/ParameterLists -- the keywords of docs/RUNTIME.md
               on_at_risk: nil, on_lost: nil, interrupt: false, clock: MonotonicClock, tags: nil, label: nil, limit: 1,
               max_hold: nil, &block)
        raise ArgumentError, "hold needs a block" unless block

        callbacks = Callbacks.for(on_at_risk: on_at_risk, on_lost: on_lost)
        cadence = Holding.cadence(ttl, renew_after, warn_before, max_hold)
        tags = Holding.tags(tags)
        calls = lease_calls(owner, cadence, clock, [tags, Label.for(label, tags)], Slots.check(limit))
        HoldCall.new(calls, wait, interrupt, callbacks).run(&block)
      end

      def hold!(**options, &)
        outcome = hold(**options, &)
        raise Occupied.new(resource: hold_resource, decision: outcome.decision) unless outcome.held?

        outcome.value
      end

      CLOCK_CALLS = %i[now now_ns sleep wait].freeze

      # The last cadence made, with what it was made of: a process holding leases of one kind makes it once.
      @last_cadence = nil

      def self.cadence(ttl, renew_after, warn_before, max_hold = nil)
        last = @last_cadence
        if last && last[0].eql?(ttl) && last[1].eql?(renew_after) && last[2].eql?(warn_before) && last[3].eql?(max_hold)
          return last[4]
        end

        cadence = checked_cadence(ttl, renew_after, warn_before, max_hold)
        @last_cadence = [ttl, renew_after, warn_before, max_hold, cadence].freeze
        cadence
      end

      def self.checked_cadence(ttl, renew_after, warn_before, max_hold)
        Seconds.check(:ttl, ttl, positive: true)
        Seconds.optional(:renew_after, renew_after, positive: true)
        Seconds.optional(:warn_before, warn_before, positive: false)
        max_hold = Seconds.optional(:max_hold, Seconds.plain(max_hold), positive: true)
        raise ArgumentError, "renew_after must be at most ttl (#{ttl}), got #{renew_after}" if renew_after&.>(ttl)
        raise ArgumentError, "warn_before must be less than ttl (#{ttl}), got #{warn_before}" if warn_before&.>=(ttl)

        renew_after ||= warn_before ? [ttl / 3.0, ttl - warn_before].min : ttl / 3.0
        warn_before ||= [ttl / 4.0, ttl - renew_after].min
        Cadence.new(ttl: ttl, renew_after: renew_after, warn_before: warn_before, max_hold: max_hold)
      end
      private_class_method :checked_cadence

      def self.tags(tags)
        return nil if tags.nil?

        valid = tags.is_a?(Hash) && tags.all? do |key, value|
          key.is_a?(Symbol) && (value.is_a?(String) || value.is_a?(Symbol) || value.is_a?(Integer))
        end
        raise TypeError, "tags must be a Hash of Symbol => String, Symbol or Integer, got #{tags.inspect}" unless valid

        tags.transform_values { |value| value.is_a?(String) ? -value : value }.freeze
      end

      private

      # `identity`: [tags, label]. One {LeaseCalls} a slot; most holds have one.
      def lease_calls(owner, cadence, clock, identity, limit)
        unless clock.equal?(MonotonicClock) || CLOCK_CALLS.all? { |call| clock.respond_to?(call) }
          raise TypeError, "clock must respond to #now, #now_ns, #sleep and #wait, got #{clock.inspect}"
        end
        return [LeaseCalls.new(self, hold_resource, 0, owner, cadence, clock, *identity)] if limit == 1

        Array.new(limit) do |index|
          LeaseCalls.new(hold_slot(index, limit), Slots.slot_name(hold_resource, index, limit), index, owner, cadence,
                         clock, *identity)
        end
      end

      # For an in-memory {Authority}: every call is told `now:` on the hold's clock; it keeps no label.
      module OnCallerClock
        include Holding

        private

        def hold_acquire(clock, owner, ttl, _label, reacquire)
          reacquire ? self.reacquire(owner: owner, ttl: ttl, now: clock.now) : acquire(owner: owner, ttl: ttl, now: clock.now)
        end

        def hold_renew(clock, owner, token, ttl) = renew(owner: owner, token: token, ttl: ttl, now: clock.now)
        def hold_release(clock, owner, token) = release(owner: owner, token: token, now: clock.now)

        def hold_resource = "authority 0x#{object_id.to_s(16)}"

        def hold_slot(_index, limit)
          raise ArgumentError, "limit: #{limit} (above 1) needs a store's authority (store.authority(name)), " \
                               "whose name names the slots; an in-memory Authority has none"
        end
      end

      # For a {Stores::DurableAuthority}: the store's clock decides.
      module OnStoreClock
        include Holding

        private

        def hold_acquire(_clock, owner, ttl, label, reacquire)
          reacquire ? self.reacquire(owner: owner, ttl: ttl, label: label) : acquire(owner: owner, ttl: ttl, label: label)
        end

        def hold_renew(_clock, owner, token, ttl) = renew(owner: owner, token: token, ttl: ttl)
        def hold_release(_clock, owner, token) = release(owner: owner, token: token)

        def hold_resource = name

        def hold_slot(index, limit) = store.authority(Slots.slot_name(name, index, limit))
      end
    end
  end
end
