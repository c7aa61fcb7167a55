# frozen_string_literal: true

# `rake bench`: every benchmark in bench/, each in its own Ruby process, each
# printing ratios against baselines measured in the same process. See
# BENCHMARKS.md for what the rows mean and the last recorded run. The
# decisions, stores, MySQL, contention and runtime benchmarks also record
# their figures in docs/benchmarks/<name>.json (bench/results.rb), from which
# `rake bench:plots` draws BENCHMARKS.md's figures.

require "open3"

# Helpers of the bench tasks.
module BenchTasks
  extend Rake::FileUtilsExt

  ROOT = File.expand_path("..", __dir__)

  module_function

  # Runs bench/<script> with this Ruby; a failing benchmark fails the task.
  def run(script, env = {})
    sh(env, RbConfig.ruby, File.join(ROOT, "bench", script))
  end

  # Starts a loopback server with its script (idempotent) and returns its URL.
  def server_url(script)
    url, status = Open3.capture2(File.join(ROOT, "script", script), "start")
    raise "script/#{script} start failed (#{status})" unless status.success? && !url.strip.empty?

    url.strip
  end
end

namespace :bench do
  desc "In-process decisions against pure Ruby, Mutex+Hash and the floor"
  task(decisions: :compile) { BenchTasks.run("decisions_bench.rb") }

  desc "Allocations and bytes per decision, RSS over ten million decisions"
  task(memory: :compile) { BenchTasks.run("memory_bench.rb") }

  desc "Redis SET NX PX and PostgreSQL advisory locks on loopback, next to in-process decisions"
  task servers: :compile do
    BenchTasks.run("servers_bench.rb", "REDIS_URL" => BenchTasks.server_url("redis"),
                                       "DATABASE_URL" => BenchTasks.server_url("postgres"))
  end

  desc "Durable store decisions (SQLite, PostgreSQL) against a bare one-row UPDATE transaction"
  task stores: :compile do
    BenchTasks.run("stores_bench.rb", "DATABASE_URL" => BenchTasks.server_url("postgres"))
  end

  desc "The renewal runtime: 1,000 concurrent holds on SQLite, and hold { } against acquire + release"
  task(runtime: :compile) { BenchTasks.run("runtime_bench.rb") }

  desc "Batched renewals: 1,000 holds on SQLite on disk, PostgreSQL and MySQL, batched against one transaction each"
  task renewals: :compile do
    BenchTasks.run("renewals_bench.rb", "DATABASE_URL" => BenchTasks.server_url("postgres"),
                                        "MYSQL_URL" => BenchTasks.server_url("mysql"))
  end

  desc "Concurrency limits: 8 processes on hold(limit: 3) against limit: 1, on SQLite"
  task(limits: :compile) { BenchTasks.run("limits_bench.rb") }

  desc "SQLite: how often hold(wait:) hands the lease back to the process that released it"
  task(handback: :compile) { BenchTasks.run("handback_bench.rb") }

  desc "What a Metrics registry costs hold { }: nothing subscribed, an empty subscriber, Metrics installed"
  task(metrics: :compile) { BenchTasks.run("metrics_bench.rb") }

  desc "The web UI's index of 10,000 resources on SQLite, PostgreSQL and MySQL against the store's read of every row"
  task web: :compile do
    BenchTasks.run("web_bench.rb", "DATABASE_URL" => BenchTasks.server_url("postgres"),
                                   "MYSQL_URL" => BenchTasks.server_url("mysql"))
  end

  desc "BENCHMARKS.md's figures (docs/benchmarks/*.png) from the recorded results (docs/benchmarks/*.json), by gnuplot"
  task :plots do
    require_relative "../bench/plots"
    BenchPlots.new.draw.each { |image| puts "drew #{image}" }
  end

  desc "Instructions per operation under callgrind (slow, deterministic; not part of `rake bench`)"
  task(instructions: :compile) { BenchTasks.run("instructions.rb") }
end

desc "Run every benchmark (bench/*_bench.rb); starts Redis and PostgreSQL on loopback"
task bench: %w[bench:decisions bench:memory bench:servers bench:stores bench:fences bench:runtime bench:renewals bench:metrics
               bench:web]
