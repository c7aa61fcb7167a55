# frozen_string_literal: true

module LeaseMachines
  module Jobs
    # `on_enqueue: :skip_if_held` (docs/JOBS.md): a job is not enqueued while
    # the lease it would take is held (under `limit:`, while every slot is).
    # A load optimization, never the guarantee: the check reads the store
    # ({Stores::Store#status}, never a grant) and races the run, whose lease
    # stays what keeps two runs apart.
    module EnqueueCheck
      # @param tags [Hash{Symbol => String}] the job's class and id, in the event
      # @return [Boolean] whether to skip enqueueing the job (an
      #   `enqueue_skipped` event is emitted then)
      def self.skip?(option, resource, tags:)
        return false unless option.on_enqueue == :skip_if_held && held?(option, resource)

        if Events.listened?
          Events.emit(:enqueue_skipped, { resource: resource, owner: nil, token: nil, status: :held, reason: nil,
                                          duration: nil, tags: tags })
        end
        true
      end

      # Whether every slot of the resource is held now (a store that cannot
      # answer is warned about and the job is enqueued: the run decides).
      def self.held?(option, resource)
        substitute = TestMode.current
        return substitute.held? if substitute

        store = option.store
        Array.new(option.limit) { |index| Runtime::Slots.slot_name(resource, index, option.limit) }
             .all? { |name| store.status(name)&.held? }
      rescue StoreError => e
        Logging.warning("lease_machines: on_enqueue could not read #{resource.inspect} (enqueued anyway): " \
                        "#{e.class}: #{e.message}")
        false
      end
    end
  end
end
