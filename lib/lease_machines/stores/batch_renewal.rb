# frozen_string_literal: true

module LeaseMachines
  module Stores
    # Several renewals in one transaction, one COMMIT (included by {Store}):
    # what the renewal thread sends for the holds of one store that come due
    # in the same tick (docs/RUNTIME.md, "Batched renewals").
    module BatchRenewal
      # Renews several leases in one transaction: the rows locked in the
      # order of their names (one locking statement where the engine has
      # one: `SELECT ... FOR UPDATE`; SQLite holds its write lock), each
      # renewal decided by the core exactly as {DurableAuthority#renew}'s,
      # in the order given, the rows written (PostgreSQL: one statement,
      # without a before_commit hook), then one COMMIT.
      #
      # All or nothing: when the transaction fails, the call raises what a
      # single renew would have ({StoreError}: nothing committed;
      # {OutcomeUnknownError}: perhaps committed), and that is every
      # renewal's answer. A refusal (lost, wrong token) is an answer, not a
      # failure: it is that renewal's Decision while the others renew.
      # @param renewals [Array<Hash>] `{ name:, owner:, token:, ttl: }` each
      #   (duplicate names are decided one after the other)
      # @return [Array<Decision>] one per renewal, in the order given
      # @raise [TypeError, ArgumentError] a bad entry (`renewals[i]` named),
      #   before any I/O
      def renew_all(renewals)
        batch = Renewals.new(renewals)
        return [] if batch.empty?

        ensure_durable
        decisions = decide_all(batch)
        batch.names.zip(decisions).map { |name, decision| signed(name, decision) }
      end

      # @api private: the batch's one transaction (an engine wraps it in its
      # own deadline and the sorting of its connection failures, as its #decide).
      # @param batch [Renewals]
      # @return [Array<Decision>]
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
