# frozen_string_literal: true

require_relative "doc_examples"

module LeaseMachines
  # Every ```ruby block of docs/STORES.md, docs/FENCES.md and docs/JOBS.md,
  # run and checked by DocExamples (the same annotations: `# =>`, `# raises`).
  # docs/RUNTIME.md's run in test/runtime/runtime_doc_test.rb; README.md's and
  # docs/API.md's in readme_test.rb.
  #
  # The examples of models and jobs run in what a Rails app gives them: an
  # `ApplicationRecord` (here on an SQLite database in memory, with the
  # `reports` table the examples fence) and an `ApplicationJob`. A block that
  # sets the configuration runs against a fresh one, reset afterwards.
  #
  # A guide is read top to bottom, and so are its blocks run: docs/JOBS.md's
  # first block defines the `Report` model its jobs write, and its testing
  # blocks run the jobs defined above them (the database, though, is a fresh
  # one for every block).
  class GuidesTest < DocExamples
    GUIDES = %w[docs/STORES.md docs/FENCES.md docs/JOBS.md].freeze

    # Document order: the tests are named by document and zero-padded line
    # (`test_order` is Minitest 5's name, `run_order` Minitest 6's).
    def self.test_order = :sorted
    def self.run_order = :sorted

    # What a Rails app defines before its models and jobs (once per
    # process), and its database (once per test, see #disconnect).
    def self.rails_app!
      unless defined?(::ApplicationRecord) && defined?(::ApplicationJob)
        require "active_record"
        require "active_job"
        ::ActiveJob::Base.logger = Logger.new(nil)
        ::ActiveRecord::Migration.verbose = false
        Object.const_set(:ApplicationRecord, Class.new(::ActiveRecord::Base) { self.abstract_class = true })
        Object.const_set(:ApplicationJob, Class.new(::ActiveJob::Base))
        require "lease_machines/active_job" # what the Railtie does once ActiveJob is loaded
      end
      return if ::ApplicationRecord.connected? && ::ApplicationRecord.connection_db_config.adapter == "sqlite3"

      ::ApplicationRecord.establish_connection(adapter: "sqlite3", database: ":memory:")
      ::ApplicationRecord.connection.create_table(:reports) do |t|
        t.string :day, null: false
        t.text :body
        t.string :lease_token, limit: 20
        t.timestamps
      end
      ::ApplicationRecord.connection.add_index(:reports, :day, unique: true)
    end

    GUIDES.each do |document|
      blocks(document).each do |block|
        next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK

        define_method(format("test_%<document>s_block_at_line_%<line>05d",
                             document: File.basename(document).downcase.gsub(/[^a-z0-9]+/, "_"), line: block.line)) do
          without_gc_stress { self.class.rails_app! }
          sidekiq_mode = ::Sidekiq::Testing.__test_mode if defined?(::Sidekiq::Testing)
          LeaseMachines.reset_configuration!
          if block.marker == :norun
            assert Ripper.sexp(block.code.join("\n")), "#{block.where(block.line)}: the block does not parse"
          else
            # Stores, fences, models and jobs: as the durable README blocks, not under GC.stress.
            without_gc_stress { run_block(block) }
          end
        ensure
          LeaseMachines.reset_configuration!
          restore_sidekiq_testing(sidekiq_mode)
          disconnect
        end
      end
    end

    # A block that requires sidekiq/testing (which turns on fake!) leaves
    # the mode it found: before the require, jobs were pushed to Redis.
    def restore_sidekiq_testing(mode)
      ::Sidekiq::Testing.__set_test_mode(mode || :disable) if defined?(::Sidekiq::Testing)
    end

    # ApplicationRecord is Rails' primary class: its connection is
    # ActiveRecord::Base's. Let go of it after each example, so that the
    # suites connecting ActiveRecord::Base to a database of their own (the
    # ActiveRecord store tests) never find it on this one.
    def disconnect
      ::ApplicationRecord.remove_connection if defined?(::ApplicationRecord) && ::ApplicationRecord.connected?
    end

    def test_the_guides_have_checked_examples
      blocks = GUIDES.flat_map { |document| self.class.blocks(document) }

      assert_operator blocks.sum(&:annotations), :>=, 20
      assert_empty blocks.select { |block| block.marker == :norun }.map { |block| block.where(block.line) },
                   "every example of the guides runs"
    end
  end
end
