# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A driver connection the caller owns (and closes); a Mutex serializes
      # this store's use of it.
      class Shared
        include Borrowed

        def initialize(connection, engine)
          @session = engine.session(connection)
          @mutex = Mutex.new
        end

        def with
          @mutex.synchronize { yield @session.ready }
        end
      end
    end
  end
end
