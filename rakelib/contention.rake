# frozen_string_literal: true

# `rake bench:contention`: many processes on one resource, each engine next to
# a bare PostgreSQL advisory lock in the same run (bench/contention_bench.rb;
# BenchTasks is defined in rakelib/bench.rake).
namespace :bench do
  desc "Processes contending for one resource: grants, refusals, fairness, latency, handover"
  task contention: :compile do
    BenchTasks.run("contention_bench.rb", "DATABASE_URL" => BenchTasks.server_url("postgres"))
  end
end
