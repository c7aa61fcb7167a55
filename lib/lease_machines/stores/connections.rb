# frozen_string_literal: true

module LeaseMachines
  module Stores
    # @api private: where a server store's connections come from, one source
    # per kind of connection argument ({ConnectionKind}; connections/*.rb),
    # the same for every engine. Each source's `with` yields the engine's
    # Session, ready for one call (open, and outside a transaction); `close`
    # closes what the source opened itself.
    #
    # What differs between engines comes from the engine's own `Connections`
    # module (postgres/connections.rb, mysql/connections.rb; see {Engine}),
    # given to every source as `engine`: its driver connection class, its
    # Session class (and the one on an ActiveRecord adapter), how a
    # connection is opened from a URL, tested for being closed, and closed,
    # whether a closed one is opened again, and how a forked child silences
    # the connection it inherited.
    module Connections
      # What a source of connections the caller owns (all but a URL's) does
      # when the store is closed: it leaves them open.
      module Borrowed
        def close; end
      end

      # @param engine the engine's `Connections` module (see above)
      # @return the source for the store's `connection` argument
      # @raise [TypeError] for a `connection` of no kind the store takes
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
    end
  end
end

require_relative "connections/engine"
require_relative "connections/shared"
require_relative "connections/owned"
require_relative "connections/pool"
require_relative "connections/adapter_session"
require_relative "connections/active_record_connection"
require_relative "connections/active_record_pool"
