# frozen_string_literal: true

module LeaseMachines
  module Fences
    # Every token a fence refuses is reported as a `fence_refused` event
    # (docs/RUNTIME.md#events) as its error is made, just before it is raised:
    # the stale writes that only a fencing library can count. Made where the
    # refusal is decided: {Admission#refusal} (every engine's mark, and a
    # bound or strict record's), the token 0 of a guard or a record, a
    # record's unbound refusal, and a forged proof ({Token.authenticate}).
    module Refusals
      module_function

      # Reports `error` to the subscribers (nothing is built when nobody
      # listens). @return [FencedError] `error`, to raise
      def report(error)
        return error unless Events.listened?

        Events.emit(:fence_refused, { resource: error.resource, owner: nil, token: error.token, status: :refused,
                                      reason: reason(error), duration: nil, highest: error.highest })
        error
      end

      # @return [Symbol] `:stale` (below the mark), `:zero_token`,
      #   `:unknown_token`, `:expired_token`, `:forged_token` or `:reissued`
      #   (the mark's token, written by another owner)
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
