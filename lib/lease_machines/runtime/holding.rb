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
        identity = { tags: tags, label: Label.for(label, tags) }
        calls = lease_calls(owner, cadence, clock, identity, Slots.check(limit))
        HoldCall.new(calls, wait: wait, interrupt: interrupt, callbacks: callbacks).run(&block)
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

      def lease_calls(owner, cadence, clock, identity, limit)
        unless clock.equal?(MonotonicClock) || CLOCK_CALLS.all? { |call| clock.respond_to?(call) }
          raise TypeError, "clock must respond to #now, #now_ns, #sleep and #wait, got #{clock.inspect}"
        end

        Array.new(limit) do |index|
          LeaseCalls.new(authority: limit == 1 ? self : hold_slot(index, limit),
                         resource: Slots.slot_name(hold_resource, index, limit), slot: index, owner: owner, clock: clock,
                         cadence: cadence, **identity)
        end
      end

      # For an in-memory {Authority}: every call is told `now:` on the hold's clock.
      module OnCallerClock
        include Holding

        private

        # `arguments`: the keywords of the call, one Hash handed along rather than splatted at each step.
        def hold_decide(operation, clock, arguments)
          arguments = arguments.except(:label) if arguments.key?(:label) # an in-memory Authority keeps no label
          public_send(operation, now: clock.now, **arguments)
        end

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

        def hold_decide(operation, _clock, arguments) = public_send(operation, **arguments)

        def hold_resource = name

        def hold_slot(index, limit) = store.authority(Slots.slot_name(name, index, limit))
      end
    end
  end
end
