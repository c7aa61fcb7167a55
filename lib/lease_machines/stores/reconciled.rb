# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What {Store#reconcile} did to one resource (`voided`: the lease record it cleared, nil: none).
    Reconciled = Struct.new(:name, :mark, :mark_owner, :last_issued_before, :last_issued, :voided,
                            keyword_init: true) do
      def raised? = last_issued != last_issued_before
      def changed? = raised? || !voided.nil?
    end
  end
end
