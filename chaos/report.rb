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
      }.merge(losses, writes, violations: tally(@violations) { |violation| violation[:kind].to_s })
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
       "  writes accepted: #{f[:writes_accepted]}, fenced refusals: #{format_tally(f[:fenced_refusals])}, " \
       "write errors: #{f[:write_errors]}",
       "  renewals lost: #{f[:renewals_lost]}, leases lost: #{format_tally(f[:leases_lost])}, " \
       "takeovers: #{f[:takeovers]}, worker exits: #{f[:worker_exits]}",
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
        write_errors: events("write_error").size }
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
