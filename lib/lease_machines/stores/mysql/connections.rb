# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # MySQL's part in the store's connection sources (the sources
      # themselves, shared with PostgreSQL, are {Stores::Connections}): each
      # source's `with` yields a {Session} on an open Mysql2::Client.
      #
      # A Mysql2::Client the caller gave must be in autocommit mode and
      # outside a transaction between calls (a decision commits its own). A
      # client whose connection failed is closed ({Session#recover}) and stays
      # closed: give the store a URL, a pool or ActiveRecord to have it
      # reconnect.
      module Connections
        # A {Session} on an ActiveRecord adapter's raw connection: a failed
        # one is closed ({Session#recover}), then reconnected through the
        # adapter (`reconnect!`), so ActiveRecord knows of it.
        class AdapterSession < Session
          include Stores::Connections::AdapterSession

          def recover
            super
            reconnect_adapter
          rescue StoreError
            nil # the next call reconnects again
          end
        end

        # @return the source for the store's `connection` argument
        def self.for(connection)
          Stores::Connections.for(connection, self)
        end

        def self.driver
          Mysql2::Client
        end

        # How the TypeError for a wrong `connection` names this engine's kinds.
        def self.expected
          "a Mysql2::Client, a mysql2:// URL String"
        end

        def self.session(connection)
          Session.new(connection)
        end

        def self.adapter_session(adapter)
          AdapterSession.new(adapter)
        end

        # @return [#call] opens a new client on `url` (read now: {URL})
        def self.connector(url)
          options = URL.options(url)
          -> { Mysql2::Client.new(**options) }
        end

        def self.closed?(connection)
          connection.closed?
        end

        def self.close(connection)
          connection.close unless connection.closed?
        end

        # Whenever the store's own client is closed: its {Session} closes a
        # client whose connection failed, and the store opens a new one.
        def self.reopen?(connection)
          connection.closed?
        end

        # Never: mysql2 tells nothing of a transaction ActiveRecord does not
        # know of.
        def self.raw_transaction?(_adapter)
          false
        end

        # Turns an inherited client's `automatic_close` off, so finalizing it
        # when the child exits points its socket at /dev/null (mysql2 does
        # that) instead of sending COM_QUIT.
        def self.silence(session)
          session.connection.automatic_close = false
        rescue Mysql2::Error
          nil
        end
      end
      private_constant :Connections
    end
  end
end
