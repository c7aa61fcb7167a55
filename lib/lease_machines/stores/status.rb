# frozen_string_literal: true

module LeaseMachines
  module Stores
    # One resource's committed state, as an operator reads it. `clock_ns` is
    # the store clock at the time of reading; `updated_at` a Time (the store's
    # wall clock at the last write).
    Status = Struct.new(:name, :last_issued, :lease, :observed_ns, :updated_at, :clock_ns, keyword_init: true) do
      # @return [Checkpoint]
      def checkpoint
        Checkpoint.exact(last_issued: last_issued, lease: lease, observed_ns: observed_ns)
      end

      # @return [Boolean] whether a lease is held at the store's clock
      def held?
        !lease.nil? && lease.expires_at_ns > clock_ns
      end

      # @return [Float, nil] seconds until the lease expires (negative once it
      #   has), nil when there is no lease record
      def expires_in
        lease && ((lease.expires_at_ns - clock_ns) / 1e9)
      end
    end
  end
end
