# frozen_string_literal: true

# `rake bench:fences`: fenced writes against the same writes unfenced, on
# SQLite and PostgreSQL (bench/fences_bench.rb). Uses BenchTasks from
# rakelib/bench.rake, and part of `rake bench`.
namespace :bench do
  desc "Fenced writes (guard, fenced_update!) against the same writes unfenced, SQLite and PostgreSQL"
  task fences: :compile do
    BenchTasks.run("fences_bench.rb", "DATABASE_URL" => BenchTasks.server_url("postgres"))
  end
end
