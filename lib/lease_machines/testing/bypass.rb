# frozen_string_literal: true

module LeaseMachines
  module Testing
    # `Testing.bypass!`: a job's lease is granted without the configured
    # store: `hold` on a fresh in-memory store that nobody else holds, so
    # the job runs with a real Held (a token, the renewal thread, events);
    # fences compare tokens as usual.
    class Bypass
      def name = :bypass

      # @return [Runtime::Outcome] held, the block's value
      def hold(option, resource, &)
        Stores::Memory.new.authority(resource).hold(owner: LeaseMachines.configuration.owner, ttl: option.ttl,
                                                    limit: option.limit, &)
      end

      # Fences are left to compare tokens.
      def guard(_resource, _token) = nil
    end
  end
end
