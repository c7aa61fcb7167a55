# frozen_string_literal: true

module LeaseMachines
  module Stores
    class CLI
      # The store `--store` names, opened for one command: read-only for a
      # read-only command (SQLite opened read-only, never created, its
      # journal mode left alone), every wait bounded by `--timeout`.
      class StoreSpec
        # `sqlite:PATH`, `sqlite3:PATH` (Rails' spelling), `sqlite3:///ABSOLUTE/PATH`.
        SQLITE = %r{\Asqlite3?:(?://(?=/))?(?<path>.+)\z}m
        POSTGRES = %r{\Apostgres(?:ql)?://}
        MYSQL = %r{\Amysql2?://}
        private_constant :SQLITE, :POSTGRES, :MYSQL

        def initialize(spec, timeout:, readonly:)
          @spec = spec
          @timeout = timeout
          @readonly = readonly
        end

        # Yields the open store and closes it.
        def open
          store = connect
          yield store
        ensure
          store&.close
        end

        private

        def connect
          case @spec
          when SQLITE then sqlite(Regexp.last_match(:path))
          when POSTGRES then postgres
          when MYSQL then mysql
          else
            raise UsageError, "--store must be sqlite:PATH, sqlite3:PATH, postgres://... or mysql2://..., " \
                              "got #{CLI.quote(@spec)}"
          end
        end

        def sqlite(path)
          raise UsageError, "bad --store: #{CLI.quote(@spec)} names no path" if path.start_with?("//")
          raise StoreError, "no SQLite database at #{CLI.quote(path)}" unless File.file?(path)
          raise StoreError, "#{CLI.quote(path)} is an empty file, not a lease_machines database" if File.empty?(path)

          require "lease_machines/stores/sqlite"
          SQLite.new(path, busy_timeout: @timeout, readonly: @readonly)
        end

        def postgres
          require "lease_machines/stores/postgres"
          # libpq's own wait for a connection, unless the environment sets one.
          ENV["PGCONNECT_TIMEOUT"] ||= [@timeout.ceil, 2].max.to_s
          Postgres.new(@spec, lock_timeout: @timeout, statement_timeout: @timeout)
        rescue ArgumentError => e
          raise UsageError, "bad --store: #{e.message}"
        end

        def mysql
          require "lease_machines/stores/mysql"
          MySQL.new(@spec)
        rescue ArgumentError => e
          raise UsageError, "bad --store: #{e.message}"
        end
      end
    end
  end
end
