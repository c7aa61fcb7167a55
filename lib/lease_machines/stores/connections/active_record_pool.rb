# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # An ActiveRecord pool: the thread's connection, or, when that one is in a transaction, one checked
      # out for the call, so the decision commits independently of the caller's transaction.
      class ActiveRecordPool
        include Borrowed

        def initialize(pool, engine)
          @pool = pool
          @engine = engine
        end

        def with(&)
          @pool.with_connection do |adapter|
            return ActiveRecordConnection.use(adapter, @engine, &) unless busy?(adapter)
          end
          separate(&)
        end

        def to_s = "ActiveRecord's pool"

        private

        def separate(&)
          adapter = @pool.checkout
          begin
            ActiveRecordConnection.use(adapter, @engine, &)
          ensure
            @pool.checkin(adapter)
          end
        end

        def busy?(adapter) = adapter.transaction_open? || @engine.raw_transaction?(adapter)
      end
    end
  end
end
