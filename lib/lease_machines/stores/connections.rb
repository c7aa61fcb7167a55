# frozen_string_literal: true

module LeaseMachines
  module Stores
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
