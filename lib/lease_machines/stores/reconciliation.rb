# frozen_string_literal: true

module LeaseMachines
  module Stores
    # `store.reconcile(fences)` (included by {Store}): after a failover or a
    # restore that lost grants, the store's counters raised to the marks its
    # fences have seen (docs/STORES.md, "Durability and failover").
    module Reconciliation
      # Operator action after a failover (or a restore) that lost grants:
      # raises each resource's last issued token to at least the mark its
      # fence has seen, so the next grant's token is above every token the
      # fence admitted. A lease the fence has passed (its token below the
      # mark, or equal to it while the mark records another owner) is
      # cleared. Never lowers anything; running it again changes nothing.
      # One transaction per resource, in the order of the marks.
      # @param fences [Fences::Table] the fences whose marks to read (in this
      #   store's database or another)
      # @return [Array<Reconciled>] one per resource the fences hold a mark of
      def reconcile(fences)
        unless fences.respond_to?(:marks)
          raise TypeError, "fences must be a fence (LeaseMachines::Fences::SQLite, Fences::Postgres or " \
                           "Fences::MySQL), got #{Stores.described(fences)}"
        end

        fences.marks.select { |mark| mark.highest.positive? }.map { |mark| raise_to(mark) }
      end

      private

      # One resource of {#reconcile}, locked as a force release is.
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
