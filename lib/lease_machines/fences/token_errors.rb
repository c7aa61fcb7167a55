# frozen_string_literal: true

require_relative "../fenced_error"

module LeaseMachines
  # A fence bound to its store (`store: true`) refused a token the store never
  # issued for the resource: greater than the resource's `last_issued`, or for
  # a resource the store has no row for. Nothing was written; the block did
  # not run. A FencedError, so code that stops on FencedError stops here too,
  # but a distinct class: a stale worker gets FencedError, a forged or
  # corrupted token (2**64-1, say) this one.
  class UnknownTokenError < FencedError
    # @return [Integer, nil] the store's last issued token for the resource
    #   when it refused (nil: the store has no row for it)
    attr_reader :last_issued

    def initialize(resource:, token:, highest:, last_issued:)
      @last_issued = last_issued
      super(resource: resource, token: token, highest: highest)
    end

    private

    def reason
      issued = @last_issued.nil? ? "the store has issued no token for it" : "the store has issued up to #{@last_issued}"
      "the store never issued it (#{issued})"
    end
  end

  # A strict fence (`store: true, strict: true`) refused an issued token
  # whose lease is no longer live at the database clock: it expired, was
  # released, or was replaced by a newer lease. Nothing was written; the block
  # did not run. A FencedError, distinct from {UnknownTokenError}.
  class ExpiredTokenError < FencedError
    # @return [Integer] the store's last issued token for the resource
    attr_reader :last_issued
    # @return [Integer, nil] the token of the lease the store records (nil:
    #   none, it was released)
    attr_reader :lease_token
    # @return [Integer, nil] when that lease ends, in ns since the Unix epoch
    attr_reader :expires_at_ns
    # @return [Integer, nil] the database clock, in ns, as read for the error
    attr_reader :clock_ns

    # rubocop:disable Metrics/ParameterLists -- keywords, each one reader
    def initialize(resource:, token:, highest:, last_issued:, lease_token:, expires_at_ns:, clock_ns:)
      @last_issued = last_issued
      @lease_token = lease_token
      @expires_at_ns = expires_at_ns
      @clock_ns = clock_ns
      super(resource: resource, token: token, highest: highest)
    end
    # rubocop:enable Metrics/ParameterLists

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
end
