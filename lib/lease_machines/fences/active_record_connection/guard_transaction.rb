# frozen_string_literal: true

module LeaseMachines
  module Fences
    # A guard's transaction through the adapter's transaction manager (so
    # ActiveRecord's bookkeeping sees it). Unlike `transaction`, it commits
    # only when the block returns: ActiveRecord 6.1 commits a transaction left
    # by a throw (Timeout on Ruby 3.1/3.2), 7.1+ one left by `throw`, `break`
    # or `return`, which for a guard would commit a half-run block.
    module GuardTransaction
      # @return the block's value, nil when it raised ActiveRecord::Rollback
      def self.run(adapter)
        adapter.lock.synchronize do
          transaction = adapter.begin_transaction(joinable: true)
          returned = false
          value = begin
            yield.tap { returned = true }
          rescue ::ActiveRecord::Rollback
            nil
          ensure
            roll_back(adapter, transaction) unless returned
          end
          returned ? commit(adapter, transaction, value) : value
        end
      end

      # Rolls back the guard's transaction (or savepoint), the innermost one.
      def self.roll_back(adapter, transaction)
        adapter.rollback_transaction if adapter.current_transaction.equal?(transaction)
      end

      # As ActiveRecord does: a failed COMMIT (or RELEASE) is rolled back
      # unless the database already ended it, and raised.
      def self.commit(adapter, transaction, value)
        adapter.commit_transaction
        value
      rescue Exception # rubocop:disable Lint/RescueException -- as ActiveRecord's own transaction does
        adapter.rollback_transaction(transaction) unless transaction.state.completed?
        raise
      end
      private_class_method :roll_back, :commit
    end
  end
end
