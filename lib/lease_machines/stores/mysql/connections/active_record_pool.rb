# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      module Connections
        # An ActiveRecord connection pool: the thread's connection through
        # `with_connection`, or, when that one is inside a transaction (say the
        # call is made from an `ActiveRecord::Base.transaction` block), a
        # connection of its own checked out for the call, so the decision
        # commits independently of the caller's transaction.
        class ActiveRecordPool
          include Borrowed

          def initialize(pool)
            @pool = pool
          end

          def with(&)
            @pool.with_connection do |adapter|
              return ActiveRecordConnection.use(adapter, &) unless adapter.transaction_open?
            end
            separate(&)
          end

          private

          def separate(&)
            adapter = @pool.checkout
            begin
              ActiveRecordConnection.use(adapter, &)
            ensure
              @pool.checkin(adapter)
            end
          end
        end
      end
    end
  end
end
