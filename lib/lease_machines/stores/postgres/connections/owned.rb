# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      module Connections
        # A connection this store opens from a URL, and opens again in a
        # forked child (see {ProcessLocal}); a Mutex serializes its use.
        class Owned
          def initialize(url)
            @mutex = Mutex.new
            @session = ProcessLocal.new { Session.new(PG.connect(url)) }
          end

          def with
            @mutex.synchronize { yield @session.current.ready }
          end

          def close
            @mutex.synchronize do
              @session.close do |session|
                session.connection.finish unless session.connection.finished?
              end
            end
          end
        end
      end
    end
  end
end
