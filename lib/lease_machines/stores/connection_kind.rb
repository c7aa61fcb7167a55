# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What kind of `connection` a server store (or fence) was given, the same rule for every engine.
    module ConnectionKind
      # @return [Array(Symbol, Object)] the kind and what the source wraps; TypeError for anything else
      def self.of(connection, driver:, expected:)
        return [:url, connection] if connection.is_a?(String)
        return [:driver, connection] if connection.is_a?(driver)

        active_record(connection) || pool(connection, expected)
      end

      def self.active_record(connection)
        if connection.is_a?(Class) && connection.respond_to?(:connection_pool)
          [:active_record_pool, connection.connection_pool]
        elsif connection.respond_to?(:with_connection) && connection.respond_to?(:checkout)
          [:active_record_pool, connection]
        elsif connection.respond_to?(:raw_connection) && connection.respond_to?(:transaction_open?)
          [:active_record_connection, connection]
        end
      end

      def self.pool(connection, expected)
        return [:pool, connection] if connection.respond_to?(:with)

        raise TypeError, "connection must be #{expected}, a pool responding to #with, or ActiveRecord " \
                         "(ActiveRecord::Base, a model class, a pool or a connection), got #{connection.inspect}"
      end
      private_class_method :active_record, :pool
    end
  end
end
