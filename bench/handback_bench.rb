# frozen_string_literal: true

# Handing back (issue 28): PROCESSES processes loop `hold(wait: 5) { sleep
# 0.005 }` on one SQLite resource for SECONDS, and the run prints how often
# the lease went back to the process that had just released it (a fair draw
# among three is 1 in 3), and the grants per process.
#
# Run: ruby bench/handback_bench.rb [SECONDS] [PROCESSES] (`rake bench:handback`).

require "tmpdir"
require_relative "bench_helper"
require "lease_machines/stores/sqlite"

seconds = Float(ARGV.fetch(0, "3"))
processes = Integer(ARGV.fetch(1, "3"))

Dir.mktmpdir("lease_machines_handback") do |dir|
  path = File.join(dir, "handback.sqlite3")
  LeaseMachines::Stores::SQLite.new(path).setup!.close
  log = File.join(dir, "grants")
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
  pids = Array.new(processes) do |index|
    fork do
      authority = LeaseMachines::Stores::SQLite.new(path).authority("handback")
      File.open(log, "a") do |file|
        file.sync = true
        while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
          authority.hold(owner: index + 1, ttl: 5, wait: 5) do |held|
            file.write("#{held.token} #{index}\n")
            sleep 0.005
          end
        end
      end
      exit!(0)
    end
  end
  pids.each { |pid| Process.wait(pid) }
  grants = File.readlines(log).map { |line| line.split.map { |word| Integer(word, 10) } }.sort
  back = grants.each_cons(2).count { |(_, first), (_, second)| first == second }
  puts "machine: #{Bench.machine}"
  printf("SQLite, %d processes, %.1f s: %d grants, %.0f%% handed back to the process that released " \
         "(a fair draw: %.0f%%), grants per process %s\n",
         processes, seconds, grants.size, 100.0 * back / [grants.size - 1, 1].max, 100.0 / processes,
         grants.map(&:last).tally.sort.map(&:last).inspect)
end
