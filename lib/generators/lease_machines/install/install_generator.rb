# frozen_string_literal: true

require "rails/generators"
require "rails/generators/active_record"
require "lease_machines"

module LeaseMachines
  module Generators
    # `rails generate lease_machines:install`: the gem's SQL copied into a migration (so an upgrade never changes
    # it under the app) and an initializer.
    class InstallGenerator < ::Rails::Generators::Base
      include ::Rails::Generators::Migration

      SQL_FOLDERS = { "postgresql" => "postgres", "postgis" => "postgres", "sqlite3" => "sqlite",
                      "mysql2" => "mysql", "trilogy" => "mysql" }.freeze

      source_root File.expand_path("templates", __dir__)

      class_option :database, type: :string, aliases: "-d",
                              desc: "The store's engine: #{SQL_FOLDERS.keys.join(', ')} (default: the app's adapter)"

      def self.exit_on_failure? = true

      def self.next_migration_number(dirname) = ::ActiveRecord::Generators::Base.next_migration_number(dirname)

      def check_database = sql_folder

      def create_migration_file = migration_template "migration.rb.tt", "db/migrate/create_lease_machines.rb"

      def create_initializer = template "initializer.rb.tt", "config/initializers/lease_machines.rb"

      private

      def migration_version = "[#{::ActiveRecord::Migration.current_version}]"

      def statements
        folder = File.join(Stores::Schema::ROOT, "db", sql_folder)
        Dir.glob("*.sql", base: folder).sort.map do |file|
          sql = File.read(File.join(folder, file), encoding: Encoding::UTF_8)
          sql.lines.reject { |line| line.start_with?("--") }.join.strip
        end
      end

      def sql_folder
        adapter = options[:database] || app_adapter
        folder = SQL_FOLDERS[adapter.to_s]
        if folder.nil? || !File.directory?(File.join(Stores::Schema::ROOT, "db", folder))
          raise ::Thor::Error, "lease_machines:install: no lease store for the #{adapter.inspect} database " \
                               "(--database takes #{supported.join(', ')})"
        end

        folder
      end

      def supported = SQL_FOLDERS.select { |_, folder| File.directory?(File.join(Stores::Schema::ROOT, "db", folder)) }.keys

      def app_adapter = ::ActiveRecord::Base.configurations.configs_for(env_name: ::Rails.env).first&.adapter || "sqlite3"
    end
  end
end
