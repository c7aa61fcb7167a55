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

    # @api private: where a server store's connections come from, one source per kind of `connection`
    # argument, the same for every engine ({Engine} declares what differs). `with` yields a ready Session.
    module Connections
      # A source of connections the caller owns leaves them open on close.
      module Borrowed
        def close; end
      end

      def self.shown(url)
        url.to_s.sub(%r{\A([a-z0-9+.-]+://[^:/@?#]*:)[^@/?#]*@}i, '\1***@').gsub(/(password=)[^&;\s]*/i, '\1***')
      end

      def self.for(connection, engine)
        kind, target = ConnectionKind.of(connection, driver: engine.driver, expected: engine.expected)
        case kind
        when :url then Owned.new(target, engine)
        when :driver then Shared.new(target, engine)
        when :active_record_pool then ActiveRecordPool.new(target, engine)
        when :active_record_connection then ActiveRecordConnection.new(target, engine)
        else Pool.new(target, engine)
        end
      end

      # A driver connection the caller owns (and closes); a lock serializes this source's use of it.
      class Shared
        include Borrowed

        def initialize(connection, engine, session: engine.method(:session), lock: Mutex)
          @session = session.call(connection)
          @lock = lock.new
        end

        def with = @lock.synchronize { yield @session.ready }
        def to_s = "a #{@session.connection.class} the caller gave"
      end

      # A connection opened from a URL (or a path) and owned by the source, opened anew in a forked child and,
      # where the engine says so, once it was closed after a failure.
      class Owned
        # `lock`: Mutex (a store), or Monitor (a fence: a guard inside a guard's block joins it)
        def initialize(url, engine, connect: engine.connector(url), session: engine.method(:session), lock: Mutex)
          @engine = engine
          @shown = Connections.shown(url)
          @lock = lock.new
          @session = ProcessLocal.new(inherited: engine.method(:silence)) { session.call(connect.call) }
        end

        def with
          @lock.synchronize do
            session = @session.current
            if @engine.reopen?(session.connection)
              @session.close { nil } # it failed and was closed: open a new one
              session = @session.current
            end
            yield session.ready
          end
        end

        def to_s = @shown
        def close = @lock.synchronize { @session.close { |session| @engine.close(session) } }
      end

      # Anything with `with { |driver_connection| }` (connection_pool): every call checks one out.
      class Pool
        include Borrowed

        def initialize(pool, engine, session: engine.method(:session))
          @pool = pool
          @session = session
        end

        def with = @pool.with { |connection| yield @session.call(connection).ready }
        def to_s = "a pool (#{@pool.class})"
      end
    end
  end
end

require_relative "connections/engine"
require_relative "connections/active_record"
