# frozen_string_literal: true

module LeaseMachines
  module Testing
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
  end
end
