# frozen_string_literal: true

require_relative "../test_helper"
require "json"
require "tmpdir"
require_relative "../../chaos/checker"

module LeaseMachines
  # The chaos report's availability figure on a history written by hand: per
  # resource, the longest stretch with no accepted write, in seconds and TTLs,
  # with the faults that overlapped it.
  class ChaosReportTest < Minitest::Test
    S = 1_000_000_000 # ns

    def test_the_longest_stretch_without_an_accepted_write_per_resource_and_its_faults
      figures = report(writes: { "chaos/r0" => [1, 2, 6], "chaos/r1" => [] },
                       faults: [fault("pg_crash", 2.5, 3.0), fault("pause", 8.0, 9.0)]).figures

      r0, r1 = figures[:longest_without_a_write].values_at("chaos/r0", "chaos/r1")
      assert_equal({ seconds: 4.0, ttls: 8.0, faults: { "pg_crash" => 1 } }, r0)
      assert_equal({ seconds: 10.0, ttls: 20.0, faults: { "pause" => 1, "pg_crash" => 1 } }, r1)
    end

    def test_the_summary_names_the_worst_resource_in_ttls
      summary = report(writes: { "chaos/r0" => [1, 9.5], "chaos/r1" => [0.5, 4, 7] },
                       faults: [fault("partition", 3.0, 5.0)]).summary

      assert_includes summary, "availability: longest stretch with no accepted write, per resource: r0 8.5 s, r1 3.5 s; " \
                               "the worst (chaos/r0) is 17.0 TTLs, under partition 1"
    end

    private

    def fault(kind, from, to)
      { t: to * S, event: "fault", kind: kind, started: from * S, ended: to * S }
    end

    # A 10-second run with a TTL of 0.5 s and two resources.
    def report(writes:, faults:)
      Dir.mktmpdir("chaos-report") do |dir|
        Dir.mkdir(File.join(dir, "workers"))
        File.write(File.join(dir, "runner.jsonl"),
                   "#{JSON.generate(t: 0, event: 'run', engine: 'sqlite', resources: 2, duration: 10.0, ttl: 0.5, seed: 1)}\n")
        events = writes.flat_map do |resource, seconds|
          seconds.map { |at| { t: at * S, event: "write", worker: 0, pid: 100, resource: resource, token: 1 } }
        end
        File.write(File.join(dir, "workers", "w0.jsonl"), events.sort_by { |e| e[:t] }.map { |e| "#{JSON.generate(e)}\n" }.join)
        File.write(File.join(dir, "nemesis.jsonl"), faults.map { |f| "#{JSON.generate(f)}\n" }.join)
        File.write(File.join(dir, "data.json"), JSON.generate(rows: [], last_issued: {}))
        Chaos::Checker.new(dir).run
      end
    end
  end
end
