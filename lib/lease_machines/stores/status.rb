# frozen_string_literal: true

module LeaseMachines
  module Stores
    # One resource's committed state, as an operator reads it. `clock_ns` is
    # the store clock at the time of reading; `updated_at` a Time (the store's
    # wall clock at the last write). `label` is the holder's own words for
    # itself (host, pid, job), shown to operators and never decided on; nil
    # when the holder gave none.
    Status = Struct.new(:name, :last_issued, :lease, :observed_ns, :updated_at, :clock_ns, :label,
                        keyword_init: true) do
      # @return [Checkpoint]
      def checkpoint
        Checkpoint.exact(last_issued: last_issued, lease: lease, observed_ns: observed_ns)
      end

      # The store clock, clamped to `observed_ns` as a decision would be.
      # @return [Integer] nanoseconds since the Unix epoch
      def now_ns
        [clock_ns, observed_ns].max
      end

      # @return [Boolean] whether a lease is held at {#now_ns}
      def held?
        !lease.nil? && lease.expires_at_ns > now_ns
      end

      # @return [Float, nil] seconds from {#now_ns} until the lease expires
      #   (negative once it has), nil when there is no lease record
      def expires_in
        lease && ((lease.expires_at_ns - now_ns) / 1e9)
      end
    end

    # {Store#statuses} found rows it cannot read (a hand edit), rather than
    # return part of the list silently.
    class UnreadableStatusesError < StoreError
      # @return [Array<Status>] the readable resources
      attr_reader :statuses
      # @return [Hash{String => StoreError}] why each other resource is not
      attr_reader :failures

      def initialize(statuses, failures)
        @statuses = statuses.freeze
        @failures = failures.freeze
        super("#{failures.size} of #{statuses.size + failures.size} resources cannot be read " \
              "(the others are in #statuses): #{failures.values.map(&:message).join('; ')}")
      end
    end
  end
end
