# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # Where a store's connections come from, one source per kind of
      # connection argument (connections/*.rb). Each source's `with` yields a
      # {Session} on an open Mysql2::Client; `close` closes what the source
      # opened itself.
      module Connections
        # What a source of connections the caller owns (all but a URL's) does
        # when the store is closed: it leaves them open.
        module Borrowed
          def close; end
        end

        class << self
          # @return the source for the store's `connection` argument
          def for(connection)
            case connection
            when String then Owned.new(connection)
            when Mysql2::Client then Shared.new(connection)
            else other(connection)
            end
          end

          private

          def other(connection)
            if connection.is_a?(Class) && connection.respond_to?(:connection_pool)
              ActiveRecordPool.new(connection.connection_pool)
            elsif connection.respond_to?(:with_connection) && connection.respond_to?(:checkout)
              ActiveRecordPool.new(connection)
            elsif connection.respond_to?(:raw_connection) && connection.respond_to?(:transaction_open?)
              ActiveRecordConnection.new(connection)
            elsif connection.respond_to?(:with)
              Pool.new(connection)
            else
              raise TypeError, "connection must be a Mysql2::Client, a mysql2:// URL String, a pool responding to " \
                               "#with, an ActiveRecord connection or ActiveRecord::Base, got #{connection.inspect}"
            end
          end
        end
      end
      private_constant :Connections
    end
  end
end
