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
      # @api private (also the fences' engine: Fences::MySQL)
      module Connections
        extend Stores::Connections::Engine

        # The store's own client (from a URL) is opened again once its
        # {Session} closed it after a failure.
        declare driver: Mysql2::Client, expected: "a Mysql2::Client, a mysql2:// URL String",
                session: Session, adapter_session: AdapterSession,
                closed: :closed?, close: :close, reopen_closed: true

        # @return [#call] opens a new client on `url` (read now: {URL})
        def self.connector(url)
          options = URL.options(url)
          -> { Mysql2::Client.new(**options) }
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
    end
  end
end
