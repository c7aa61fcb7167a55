# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      module Connections
        # Anything with `with { |mysql2_client| }` (connection_pool): every
        # call checks a client out, so nothing is serialized here.
        class Pool
          include Borrowed

          def initialize(pool)
            @pool = pool
          end

          def with
            @pool.with { |client| yield Session.new(client).ready }
          end
        end
      end
    end
  end
end
