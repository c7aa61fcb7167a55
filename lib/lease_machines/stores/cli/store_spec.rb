# frozen_string_literal: true

module LeaseMachines
  module Stores
    class CLI
      # The store `--store` names (or the fences `--fences` names), opened for one command: read-only for a
      # read-only command, every wait bounded by `--timeout`.
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

        def open(kind = :store)
          opened = connect(kind)
          yield opened
        ensure
          opened&.close
        end

        private

        def connect(kind)
          option = kind == :store ? "--store" : "--fences"
          case @spec
          when SQLITE then sqlite(Regexp.last_match(:path), kind, option)
          when POSTGRES then postgres(kind, option)
          when MYSQL then mysql(kind, option)
          else
            raise UsageError, "#{option} must be sqlite:PATH, sqlite3:PATH, postgres://... or mysql2://..., " \
                              "got #{CLI.quote(@spec)}"
          end
        rescue LoadError => e # the engine's driver gem (sqlite3, pg, mysql2) is not installed
          raise StoreError, "#{option} #{CLI.quote(@spec)} needs a driver gem that cannot be loaded here: #{e.message}"
        end

        def sqlite(path, kind, option)
          raise UsageError, "bad #{option}: #{CLI.quote(@spec)} names no path" if path.start_with?("//")
          raise StoreError, "no SQLite database at #{CLI.quote(path)}" unless File.file?(path)
          raise StoreError, "#{CLI.quote(path)} is an empty file, not a lease_machines database" if File.empty?(path)

          return engine(:fences, "sqlite", :SQLite).new(path, busy_timeout: @timeout) if kind == :fences

          engine(:stores, "sqlite", :SQLite).new(path, busy_timeout: @timeout, readonly: @readonly)
        end

        def postgres(kind, option)
          # libpq's own wait for a connection, unless the environment sets one.
          ENV["PGCONNECT_TIMEOUT"] ||= [@timeout.ceil, 2].max.to_s
          return engine(:fences, "postgres", :Postgres).new(@spec) if kind == :fences

          engine(:stores, "postgres", :Postgres).new(@spec, lock_timeout: @timeout, statement_timeout: @timeout)
        rescue ArgumentError => e
          raise UsageError, "bad #{option}: #{e.message}"
        end

        def mysql(kind, option)
          return engine(:fences, "mysql", :MySQL).new(@spec) if kind == :fences

          # A client-side bound on each call (InnoDB's lock wait is 50 s by default).
          engine(:stores, "mysql", :MySQL).new(@spec, timeout: @timeout)
        rescue ArgumentError => e
          raise UsageError, "bad #{option}: #{e.message}"
        end

        # The class of a store or a fence, its file required only now (its driver gem may be missing).
        def engine(kind, file, name)
          require "lease_machines/#{kind}/#{file}"
          (kind == :fences ? Fences : Stores).const_get(name, false)
        end
      end
    end
  end
end
