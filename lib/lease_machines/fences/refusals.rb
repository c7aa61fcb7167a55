# frozen_string_literal: true

module LeaseMachines
  module Fences
    # Every refused token is reported as a `fence_refused` event (docs/RUNTIME.md#events)
    # where the refusal is decided, just before its error is raised.
    module Refusals
      module_function

      # @return [FencedError] `error`, to raise (nothing is built when nobody listens)
      def report(error)
        return error unless Events.listened?

        Events.emit(:fence_refused, { resource: error.resource, owner: nil, token: error.token, status: :refused,
                                      reason: reason(error), duration: nil, highest: error.highest })
        error
      end

      def reason(error)
        case error
        when ReissuedTokenError then :reissued
        when ForgedTokenError then :forged_token
        when ExpiredTokenError then :expired_token
        when UnknownTokenError then :unknown_token
        else error.token.zero? ? :zero_token : :stale
        end
      end
    end
  end
end
