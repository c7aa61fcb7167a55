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
                                                    limit: option.limit, max_hold: option.max_hold, &)
      end

      # Fences are left to compare tokens.
      def guard(_resource, _token) = nil

      # `on_enqueue: :skip_if_held` finds nothing held: every job is enqueued.
      def held? = false
    end
  end
end
