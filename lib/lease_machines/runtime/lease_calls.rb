# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # Every call one `hold` makes to the authority, and the event each reports. Made for each hold
    # ({Holding}): positional arguments (keywords through `new` cost a Hash each).
    class LeaseCalls
      attr_reader :authority, :resource, :slot, :owner, :cadence, :clock, :tags, :label

      def initialize(authority, resource, slot, owner, cadence, clock, tags, label) # rubocop:disable Metrics/ParameterLists -- one hold's parts
        @authority = authority
        @resource = resource
        @slot = slot
        @owner = owner
        @cadence = cadence
        @clock = clock
        @tags = tags
        @label = label
        freeze
      end

      # Each call is timed and told ({Events}) only while something listens: a hold's calls build no payload
      # otherwise.
      def acquire(reacquire: false, waited: 0.0)
        return sent_acquire(reacquire) unless Events.listened?(:acquire)

        timed(:acquire, nil, { waited: waited, label: @label }) { sent_acquire(reacquire) }
      end

      def renew(held, token, late:)
        return sent_renew(token) unless Events.listened?(:renew)

        timed(:renew, held, { late: late }) { sent_renew(token) }
      rescue StoreError => e
        e
      end

      # The store that renews this hold together with others due with it ({Stores::BatchRenewal#renew_all}), if any.
      def renewal_store = (@authority.store if @authority.respond_to?(:store))

      def renewal_request(token) = { name: @authority.name, owner: @owner, token: token, ttl: @cadence.ttl }

      def batch_renewed(held, result, started:, late:)
        return unless Events.listened?(:renew)
        return failed(:renew, held, result, started, { late: late }) if result.is_a?(StoreError)

        decided(:renew, held, result, started, { late: late })
      end

      # `token`: the hold's last ({Held#finish} reads it as it ends); `fields`: what the release's event adds.
      def release(held, token, fields)
        decision = Events.listened?(:release) ? timed(:release, held, fields) { sent_release(token) } : sent_release(token)
        return if decision.released?

        Logging.warning("lease_machines: releasing #{subject} (token #{token}) was refused: #{decision.reason}")
      rescue StoreError => e
        Logging.warning("lease_machines: releasing #{subject} (token #{token}) failed: #{e.class}: #{e.message}")
      end

      def subject = Logging.subject(@resource, @tags)

      def emit(name, held, **fields)
        return unless Events.listened?(name)

        payload = { resource: @resource, owner: @owner, token: held&.token, status: nil, reason: nil, duration: nil }
        payload[:tags] = @tags if @tags
        Events.emit(name, payload.merge(fields))
      end

      private

      # The authority's decisions on the hold's clock ({Holding::OnCallerClock}, {Holding::OnStoreClock}).
      def sent_acquire(reacquire) = @authority.__send__(:hold_acquire, @clock, @owner, @cadence.ttl, @label, reacquire)
      def sent_renew(token) = @authority.__send__(:hold_renew, @clock, @owner, token, @cadence.ttl)
      def sent_release(token) = @authority.__send__(:hold_release, @clock, @owner, token)

      def timed(name, held, fields)
        started = MonotonicClock.now
        begin
          decision = yield
        rescue StoreError => e
          failed(name, held, e, started, fields)
          raise
        end
        decided(name, held, decision, started, fields)
        decision
      end

      def decided(name, held, decision, started, fields)
        emit(name, held, token: decision.lease&.token || held&.token, status: decision.status,
                         reason: decision.reason, duration: MonotonicClock.now - started, **fields)
      end

      def failed(name, held, error, started, fields)
        emit(name, held, status: :failed, reason: error.is_a?(OutcomeUnknownError) ? :outcome_unknown : :store_error,
                         error: error, duration: MonotonicClock.now - started, **fields)
      end
    end
  end
end
