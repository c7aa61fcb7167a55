# frozen_string_literal: true

module LeaseMachines
  module Fences
    # A guard's transaction through ActiveRecord: a transaction of its own,
    # or a savepoint inside the caller's, begun and ended through the
    # adapter's transaction manager, so ActiveRecord's bookkeeping (nesting,
    # commit callbacks of records written in the block) sees it, as for
    # `transaction(requires_new: true)`.
    #
    # Unlike `transaction`, it commits only when the block returns. Left any
    # other way it rolls back: an exception (re-raised), ActiveRecord::Rollback
    # (swallowed: the guard returns nil, as `transaction` does), and a block
    # left without an exception: `throw`, `break`, `return`, Thread#kill and
    # Timeout (a throw on Ruby 3.1 and 3.2). ActiveRecord 6.1 commits a
    # transaction left by a throw, and 7.1 and later commit one left by
    # `throw`, `break` or `return`: for a guard that would commit a half-run
    # block with its mark.
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

      # As ActiveRecord does: a COMMIT (or RELEASE) that failed has taken the
      # transaction off the stack; it is rolled back, unless the database
      # already ended it, and the error is raised.
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
