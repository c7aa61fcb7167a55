# frozen_string_literal: true

namespace :stores do
  desc "Write db/*.sql from the schema the stores run (LeaseMachines::Stores::Schema)"
  task :schema do
    require_relative "../lib/lease_machines/stores/schema"
    schema = LeaseMachines::Stores::Schema
    { postgres: schema::POSTGRES, sqlite: schema::SQLITE }.each do |engine, sql|
      path = File.expand_path("../#{schema::FILES.fetch(engine)}", __dir__)
      next if File.exist?(path) && File.read(path) == sql

      FileUtils.mkdir_p(File.dirname(path))
      File.write(path, sql)
      puts "wrote #{schema::FILES.fetch(engine)}"
    end
  end
end
