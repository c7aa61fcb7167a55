# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What {Store#reconcile} did to one resource (`voided`: the lease record it cleared, nil: none).
    Reconciled = Struct.new(:name, :mark, :mark_owner, :last_issued_before, :last_issued, :voided,
                            keyword_init: true) do
      def raised? = last_issued != last_issued_before
      def changed? = raised? || !voided.nil?
    end

    # `store.reconcile(fences)`, included by {Store} (docs/STORES.md, "Durability and failover").
    module Reconciliation
      # Operator action after a failover that lost grants: raises each last issued token to at least its
      # fence's mark and clears a lease the fence has passed. Never lowers; idempotent; one transaction each.
      def reconcile(fences)
        unless fences.respond_to?(:marks)
          raise TypeError, "fences must be a fence (LeaseMachines::Fences::SQLite, Fences::Postgres or " \
                           "Fences::MySQL), got #{Stores.described(fences)}"
        end

        fences.marks.select { |mark| mark.highest.positive? }.map { |mark| raise_to(mark) }
      end

      private

      def raise_to(mark)
        name = Stores.resource_name(mark.resource)
        labelled = labelled?
        transaction do |tx|
          columns, = tx.lock(name, create: true)
          before, after, voided = Native.row_reconciled(name, columns, mark.highest, mark.owner)
          unless after == before
            after_columns = Native.row_columns(after)
            # A lease cleared takes its holder's label with it.
            tx.write(name, after_columns, exists: !columns.nil?, label: voided && labelled ? nil : HolderLabel::KEEP)
            announce_release(tx, name) if voided
            notify(tx, name, nil, after_columns)
          end
          Reconciled.new(name: name, mark: mark.highest, mark_owner: mark.owner, last_issued_before: before.last_issued,
                         last_issued: after.last_issued, voided: voided).freeze
        end
      end
    end
  end
end
