# frozen_string_literal: true

require "json"
require "set"

module Chaos
  # What a checked run found: the violations (each with the events around
  # it) and the run's figures (faults by kind, decisions, fenced refusals,
  # renewals lost, takeovers, writes).
  class Report
    attr_reader :violations

    def initialize(record, violations)
      @record = record
      @violations = violations
    end

    def ok?
      @violations.empty?
    end

    def figures
      @figures ||= {
        settings: @record.settings.except("t", "event", "process"),
        faults: tally(@record.faults.reject { |f| f["delivered"] == false }) { |fault| fault["kind"] },
        faults_missed: tally(@record.faults.select { |f| f["delivered"] == false }) { |fault| fault["kind"] },
        faults_inside_a_transaction: tally(@record.faults.select { |f| f["landed_in_tx"] }) { |fault| fault["kind"] },
        decisions: decisions
      }.merge(losses, writes, availability, network, violations: tally(@violations) { |violation| violation[:kind].to_s })
    end

    def to_h
      figures.merge(violation_list: @violations.first(50))
    end

    def summary
      f = figures
      settings = f[:settings].slice("engine", "fencing", "workers", "resources", "duration", "seed", "ttl")
      ["chaos: #{settings.map { |key, value| "#{key}=#{value}" }.join(' ')}",
       "  faults: #{format_tally(f[:faults])} (inside a transaction: #{format_tally(f[:faults_inside_a_transaction])}; " \
       "missed, the worker was gone or not ready: #{format_tally(f[:faults_missed])})",
       "  decisions: #{f[:decisions].map { |op, counts| "#{op} #{format_tally(counts)}" }.join('; ')}",
       "  writes accepted: #{f[:writes_accepted]}, fenced refusals: #{format_tally(f[:fenced_refusals])} " \
       "(of a worker under #{format_tally(f[:refusals_after_fault])}), write errors: #{f[:write_errors]}",
       loss_line(f), availability_line(f), *network_lines(f),
       "  violations: #{@violations.size}#{ok? ? '' : " (#{format_tally(f[:violations])})"}"].join("\n")
    end

    # Every violation with the events around it (at most `limit`).
    def details(limit: 10)
      @violations.first(limit).map do |violation|
        ["VIOLATION #{violation[:kind]} on #{violation[:resource]}: #{violation[:message]}",
         *violation[:context].map { |line| "    #{line}" }].join("\n")
      end.join("\n")
    end

    private

    def loss_line(figures)
      "  renewals lost: #{figures[:renewals_lost]}, leases lost: #{format_tally(figures[:leases_lost])}, " \
        "takeovers: #{figures[:takeovers]}, worker exits: #{figures[:worker_exits]}"
    end

    def availability_line(figures)
      worst = figures[:longest_without_a_write]
      return "  availability: no resource" if worst.empty?

      resource, stretch = worst.max_by { |_, each| each[:seconds] }
      "  availability: longest stretch with no accepted write, per resource: " \
        "#{worst.map { |name, each| "#{name.delete_prefix('chaos/')} #{each[:seconds]} s" }.join(', ')}; " \
        "the worst (#{resource}) is #{stretch[:ttls]} TTLs, under #{format_tally(stretch[:faults])}"
    end

    # Per resource, the longest stretch of the run with no accepted write
    # (from the run's start to its first, between two, from its last to the
    # end): seconds, TTLs, and the faults that overlapped it. A fault that
    # wedges a worker or the store shows up here as a number.
    def availability
      start = @record.settings.fetch("t")
      finish = start + (@record.settings.fetch("duration") * 1e9)
      accepted = events("write").group_by { |event| event["resource"] }
      stretches = @record.resources.to_h do |resource|
        times = [start, *accepted.fetch(resource, []).map { |event| event["t"] }.sort, finish]
        from, to = times.each_cons(2).max_by { |low, high| high - low }
        [resource, stretch(from, to)]
      end
      { longest_without_a_write: stretches }
    end

    def stretch(from, to)
      seconds = (to - from) / 1e9
      faults = @record.faults.select { |fault| fault["started"] <= to && fault["ended"] >= from }
      ttl = @record.settings["ttl"]
      { seconds: seconds.round(2), ttls: ttl && (seconds / ttl).round(1),
        faults: tally(faults) { |fault| fault["kind"] } }
    end

    def network_lines(figures)
      return [] unless figures[:calls_failed_during_partitions]

      ["  partitioned workers (odd): store calls failed during partitions " \
       "#{figures[:calls_failed_during_partitions].map { |k, v| "#{k} #{v}" }.join(', ')}; median renewal during " \
       "slow links #{figures[:renew_median_ms_during_slow_link].map { |k, v| "#{k} #{v.inspect} ms" }.join(', ')}"]
    end

    def losses
      { renewals_lost: events("renew").count { |event| event["status"] != "renewed" },
        leases_lost: tally(events("lost")) { |event| event["reason"] },
        takeovers: takeovers,
        checks_that_found_the_lease_lost: events("check_lost").size,
        worker_exits: @record.runner_events.count { |event| event["event"] == "exit" } }
    end

    def writes
      { writes_accepted: @record.rows.size,
        writes_accepted_per_resource: tally(@record.rows, &:resource),
        fenced_refusals: tally(events("refused")) { |event| event["error"] },
        write_errors: events("write_error").size,
        refusals_after_fault: refusals_after_fault }
    end

    # The fenced refusals of a worker under a fault aimed at it (from the
    # fault's start to 2 s after its end), per fault kind: which faults made
    # a holder write when it should not have.
    def refusals_after_fault
      refused = events("refused")
      counts = @record.faults.group_by { |fault| fault["kind"] }.to_h do |kind, faults|
        hits = refused.count do |event|
          faults.any? { |f| f["target_pid"] == event["pid"] && event["t"].between?(f["started"], f["ended"] + 2e9) }
        end
        [kind, hits]
      end
      counts.reject { |_, count| count.zero? }.sort.to_h
    end

    # Whether the partition and the slow link reached the partitioned workers
    # (the odd ones, on PostgreSQL) and them only.
    def network
      return {} unless @record.engine == "postgres"

      cut = windows("partition")
      slow = windows("slow_link")
      failed = @record.events.select { |event| event["status"] == "failed" && within?(event, cut) }
      renewals = events("renew").select { |event| event["duration_ns"] && within?(event, slow) }
      inside, outside = failed.partition { |event| event["worker"].odd? }
      slow_inside, slow_outside = renewals.partition { |event| event["worker"].odd? }
      { calls_failed_during_partitions: { partitioned: inside.size, others: outside.size },
        renew_median_ms_during_slow_link: { partitioned: median_ms(slow_inside), others: median_ms(slow_outside) } }
    end

    def windows(kind)
      @record.faults.select { |fault| fault["kind"] == kind }.map { |fault| fault["started"]..fault["ended"] }
    end

    def within?(event, windows)
      windows.any? { |window| window.cover?(event["t"]) }
    end

    def median_ms(events)
      sorted = events.map { |event| event["duration_ns"] }.sort
      sorted.empty? ? nil : (sorted[sorted.size / 2] / 1e6).round(1)
    end

    def events(name)
      @record.events.select { |event| event["event"] == name }
    end

    def tally(list, &)
      list.map(&).tally.sort_by { |key, _| key.to_s }.to_h
    end

    def format_tally(hash)
      hash.empty? ? "none" : hash.map { |key, count| "#{key} #{count}" }.join(", ")
    end

    def decisions
      %w[acquire renew release].to_h do |name|
        [name, tally(events(name)) { |event| [event["status"], event["reason"]].compact.uniq.join("/") }]
      end
    end

    # Grants whose predecessor (the resource's previous token) was never
    # released: the lease was taken over after it ran out.
    def takeovers
      released = events("release").select { |event| event["status"] == "released" }
                                  .to_set { |event| [event["resource"], event["token"]] }
      @record.grants.group_by { |grant| grant["resource"] }.sum do |resource, grants|
        tokens = grants.map { |grant| grant["token"] }.sort
        tokens.each_cons(2).count { |previous, _| !released.include?([resource, previous]) }
      end
    end
  end
end
