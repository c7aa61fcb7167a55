# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # Where a store's connections come from, one source per kind of
      # connection argument (connections/*.rb). Each source's `with` yields a
      # {Session} on a PG::Connection that is open and idle (not inside a
      # transaction); `close` closes what the source opened itself.
      module Connections
        # What a source of connections the caller owns (all but a URL's) does
        # when the store is closed: it leaves them open.
        module Borrowed
          def close; end
        end

        # @return the source for the store's `connection` argument
        def self.for(connection)
          kind, target = ConnectionKind.of(connection, driver: PG::Connection,
                                                       expected: "a PG::Connection, a connection URL String")
          case kind
          when :url then Owned.new(target)
          when :driver then Shared.new(target)
          when :active_record_pool then ActiveRecordPool.new(target)
          when :active_record_connection then ActiveRecordConnection.new(target)
          else Pool.new(target)
          end
        end
      end
      private_constant :Connections
    end
  end
end
