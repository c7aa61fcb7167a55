# frozen_string_literal: true

module LeaseMachines
  module Rails
    # The store a Rails app gets when its initializer names none: its primary database. SQLite gets a connection
    # of its own: its BEGIN IMMEDIATE transactions would interleave with the app's on a shared one.
    module DefaultStore
      ENGINES = {
        "postgresql" => :postgres, "postgis" => :postgres,
        "sqlite3" => :sqlite,
        "mysql2" => :mysql, "trilogy" => :mysql
      }.freeze

      class << self
        def for(base, root: ::Rails.root)
          config = base.connection_db_config
          adapter = config.adapter.to_s
          case ENGINES[adapter]
          when :postgres then Stores::Postgres.new(base)
          when :sqlite then Stores::SQLite.new(sqlite_path(config.database, root))
          when :mysql then Stores::MySQL.new(base)
          else
            raise NotConfiguredError, "lease_machines has no store for the #{adapter.inspect} adapter: set config.store " \
                                      "in config/initializers/lease_machines.rb (PostgreSQL, MySQL, MariaDB and SQLite " \
                                      "are supported)"
          end
        end

        private

        def sqlite_path(database, root)
          if database.nil? || database.to_s.empty? || database.to_s == ":memory:"
            raise NotConfiguredError, "the app's SQLite database is #{database.inspect}: a lease store needs a file " \
                                      "every process opens; set config.store in config/initializers/lease_machines.rb"
          end

          File.expand_path(database.to_s, root.to_s)
        end
      end
    end
  end
end
