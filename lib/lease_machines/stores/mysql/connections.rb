# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # MySQL's part in the connection sources (also Fences::MySQL's). A caller's client whose connection
      # failed stays closed (mysql2 cannot reconnect safely).
      module Connections
        extend Stores::Connections::Engine

        # The store's own client (from a URL) is opened again once its {Session} closed it.
        declare driver: Mysql2::Client, expected: "a Mysql2::Client, a mysql2:// URL String",
                session: Session, adapter_session: AdapterSession,
                closed: :closed?, close: :close, reopen_closed: true

        def self.connector(url)
          options = URL.options(url)
          -> { Mysql2::Client.new(**options) }
        end

        # Never: mysql2 tells nothing of a transaction ActiveRecord does not know of.
        def self.raw_transaction?(_adapter) = false

        # Without `automatic_close`, finalizing it at the child's exit sends no COM_QUIT.
        def self.silence(session)
          session.connection.automatic_close = false
        rescue Mysql2::Error
          nil
        end
      end
    end
  end
end
