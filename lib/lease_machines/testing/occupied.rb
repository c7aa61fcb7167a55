# frozen_string_literal: true

module LeaseMachines
  module Testing
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
  end
end
