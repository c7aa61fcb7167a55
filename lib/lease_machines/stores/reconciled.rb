# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What {Store#reconcile} did to one resource: the fence's `mark` (and the
    # `mark_owner` recorded with it, nil: none), the store's last issued
    # token before and after (`last_issued_before` nil: the store had no
    # grant of it), and the lease record it cleared (`voided`, nil: none),
    # one the fence had passed. The rule is the core's (`Checkpoint::reconciled`).
    Reconciled = Struct.new(:name, :mark, :mark_owner, :last_issued_before, :last_issued, :voided,
                            keyword_init: true) do
      # @return [Boolean] whether the last issued token went up
      def raised?
        last_issued != last_issued_before
      end

      # @return [Boolean] whether anything was written
      def changed?
        raised? || !voided.nil?
      end
    end
  end
end
