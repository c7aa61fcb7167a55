# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  # A bound fence refused a token the store never issued for the resource.
  class UnknownTokenError
    # @return [Integer, nil] the store's last issued token for the resource (nil: no row)
    attr_reader :last_issued

    # `fenced`: the {FencedError}'s keywords.
    def initialize(last_issued:, **fenced)
      @last_issued = last_issued
      super(**fenced)
    end

    private

    def reason
      issued = @last_issued.nil? ? "the store has issued no token for it" : "the store has issued up to #{@last_issued}"
      "the store never issued it (#{issued})"
    end
  end

  # A fence refused a token equal to its mark shown by another owner than the one
  # recorded: the store issued the token twice (a failover lost a grant).
  class ReissuedTokenError
    # The owner the guard showed, and the one recorded with the mark (or, strict, of the store's live lease).
    attr_reader :owner, :recorded_owner

    # @param leased [Boolean] whether `recorded_owner` is the store's lease's, not the mark's
    def initialize(owner:, recorded_owner:, leased: false, **fenced)
      @owner = owner
      @recorded_owner = recorded_owner
      @leased = leased
      super(**fenced)
    end

    private

    def reason
      holder = "owner #{@recorded_owner} has already written with it"
      holder = "the store's live lease of it is owner #{@recorded_owner}'s" if @leased
      "it was reissued: #{holder}, and this is owner #{@owner}"
    end
  end

  # A strict fence refused an issued token whose lease is no longer live at the database clock.
  class ExpiredTokenError
    # The store's last issued token for the resource, the token of the lease it records (nil:
    # released), when that lease ends and the database clock as read for the error (ns since the epoch).
    attr_reader :last_issued, :lease_token, :expires_at_ns, :clock_ns

    def initialize(last_issued:, lease_token:, expires_at_ns:, clock_ns:, **fenced)
      @last_issued = last_issued
      @lease_token = lease_token
      @expires_at_ns = expires_at_ns
      @clock_ns = clock_ns
      super(**fenced)
    end

    private

    def reason
      if @lease_token.nil?
        "its lease is no longer held (released)"
      elsif @lease_token != @token
        "its lease was replaced by the lease of token #{@lease_token}"
      else
        "its lease expired at #{@expires_at_ns} ns (database clock: #{@clock_ns} ns)"
      end
    end
  end

  # A fence with `signing_keys:` refused a token whose proof is missing, malformed or
  # made by none of its keys. Nothing was read.
  class ForgedTokenError
    PROBLEMS = %i[missing malformed forged].freeze

    # The proof that was shown (nil: none), and what was wrong with it (one of PROBLEMS).
    attr_reader :proof, :problem

    def initialize(resource:, token:, proof:, problem:)
      raise ArgumentError, "problem must be one of #{PROBLEMS.inspect}, got #{problem.inspect}" unless PROBLEMS.include?(problem)

      @proof = proof
      @problem = problem
      super(resource: resource, token: token, highest: nil, last_issued: nil)
    end

    private

    def reason
      case @problem
      when :missing then "it carries no proof, and this fence admits signed tokens only (guard with the lease, or " \
                         "proof: lease.proof)"
      when :malformed then "its proof is not 64 lowercase hexadecimal digits"
      else "its proof was made by none of this fence's signing keys (forged, made for another resource or " \
           "another token, or signed with a key the fence does not hold)"
      end
    end
  end

  module Fences
    # Every refused token is reported as a `fence_refused` event (docs/RUNTIME.md#events)
    # where the refusal is decided, just before its error is raised.
    module Refusals
      module_function

      # @return [FencedError] `error`, to raise (nothing is built when nobody listens)
      def report(error)
        return error unless Events.listened?(:fence_refused)

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
