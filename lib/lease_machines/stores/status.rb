# frozen_string_literal: true

module LeaseMachines
  module Stores
    # One resource's committed state, as an operator reads it: `clock_ns` the store clock when read,
    # `updated_at` the last write's wall clock, `label` the holder's own words (nil: none).
    Status = Struct.new(:name, :last_issued, :lease, :observed_ns, :updated_at, :clock_ns, :label,
                        keyword_init: true) do
      def checkpoint = Checkpoint.exact(last_issued: last_issued, lease: lease, observed_ns: observed_ns)

      # The store clock, clamped to `observed_ns` as a decision would be (ns since the epoch).
      def now_ns = [clock_ns, observed_ns].max
      def held? = !lease.nil? && lease.expires_at_ns > now_ns

      # @return [Float, nil] seconds until the lease expires (negative once it has), nil without a lease
      def expires_in = lease && ((lease.expires_at_ns - now_ns) / 1e9)
    end

    # {Store#statuses} found rows it cannot read (a hand edit), rather than return part of the list.
    class UnreadableStatusesError < StoreError
      attr_reader :statuses, :failures

      def initialize(statuses, failures)
        @statuses = statuses.freeze
        @failures = failures.freeze
        super("#{failures.size} of #{statuses.size + failures.size} resources cannot be read " \
              "(the others are in #statuses): #{failures.values.map(&:message).join('; ')}")
      end
    end
  end
end
