# frozen_string_literal: true

module LeaseMachines
  module Testing
    # `Testing.occupied!`: every job finds its resource held by another
    # owner, at once (the job's `wait:` is not waited), and does what its
    # `on_occupied` says: the refusal is a real decision of an in-memory
    # store where another owner holds the resource.
    class Occupied
      def name = :occupied

      # @return [Runtime::Outcome] not held; its decision's reason is :occupied
      def hold(option, resource, &)
        owner = LeaseMachines.configuration.owner
        authority = Stores::Memory.new.authority(resource)
        authority.acquire(owner: owner.zero? ? 1 : owner - 1, ttl: option.ttl)
        authority.hold(owner: owner, ttl: option.ttl, wait: 0, &)
      end

      # Fences are left to compare tokens.
      def guard(_resource, _token) = nil

      # `on_enqueue: :skip_if_held` finds every resource held: no such job is enqueued.
      def held? = true
    end
  end
end
