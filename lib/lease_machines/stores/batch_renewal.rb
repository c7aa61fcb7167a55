# frozen_string_literal: true

module LeaseMachines
  module Stores
    # Several renewals in one transaction, one COMMIT (included by {Store}; docs/RUNTIME.md, "Batched renewals").
    module BatchRenewal
      # Renews several leases in one transaction, all or nothing: a failure is every renewal's answer, a
      # refusal is that renewal's Decision. @return [Array<Decision>] one per renewal, in the order given
      def renew_all(renewals)
        batch = Renewals.new(renewals)
        return [] if batch.empty?

        ensure_durable
        decisions = decide_all(batch)
        batch.names.zip(decisions).map { |name, decision| signed(name, decision) }
      end

      # @api private: the batch's one transaction (an engine wraps it as it wraps #decide).
      def decide_all(batch)
        label = stored_label(nil)
        transaction do |tx|
          tx.lock_all(batch.locking_order) if tx.respond_to?(:lock_all)
          # Without a hook (which may read the rows) an engine may write them all at the end.
          tx.defer_writes if before_commit.nil? && tx.respond_to?(:defer_writes)
          decisions = batch.names.zip(batch.requests).map { |name, request| decided_in(tx, name, request, label) }
          tx.write_deferred if tx.respond_to?(:write_deferred)
          decisions
        end
      end
    end
  end
end
