# frozen_string_literal: true

require "minitest/autorun"
require "tmpdir"
require "stringio"
require "active_record"
require "rails/generators"
require "generators/lease_machines/install/install_generator"

module LeaseMachines
  # The install generator run in-process (the whole app from `rails new` is
  # test/rails/install_test.rb): its migration names the running Rails'
  # migration version, so Rails 6.1 to 8 each load and run it.
  class InstallGeneratorTest < Minitest::Test
    def setup
      super
      @dir = Dir.mktmpdir("lm_generator")
    end

    def teardown
      FileUtils.rm_rf(@dir)
      super
    end

    def generate(*args)
      $stdout = StringIO.new
      Generators::InstallGenerator.start(args, destination_root: @dir)
    ensure
      $stdout = STDOUT
    end

    def migration
      path = Dir.glob(File.join(@dir, "db/migrate/*_create_lease_machines.rb")).first
      refute_nil path, "a migration in db/migrate"
      File.read(path)
    end

    def test_the_migration_names_the_running_rails_version
      generate("--database=sqlite3")
      version = "#{::ActiveRecord::VERSION::MAJOR}.#{::ActiveRecord::VERSION::MINOR}"

      assert_includes migration, "class CreateLeaseMachines < ActiveRecord::Migration[#{version}]"
    end

    def test_the_migration_loads_and_runs_on_the_running_rails
      generate("--database=sqlite3")
      ::ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: ":memory:")
      ::ActiveRecord::Migration.verbose = false
      namespace = Module.new
      namespace.module_eval(migration, "create_lease_machines.rb")
      namespace.const_get(:CreateLeaseMachines).migrate(:up)

      assert_equal %w[lease_machines_fences lease_machines_resources],
                   (::ActiveRecord::Base.connection.tables & %w[lease_machines_fences lease_machines_resources]).sort
    ensure
      ::ActiveRecord::Base.remove_connection
    end
  end
end
