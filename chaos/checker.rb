# frozen_string_literal: true

require "json"
require_relative "settings"
require_relative "event_log"
require_relative "protected_data"
require_relative "run_record"
require_relative "report"

module Chaos
  # Reads a finished run (the protected data in both databases, the store's
  # rows, every log) and checks, per resource:
  #
  # - `token_went_down`: an accepted write has a smaller token than the
  #   accepted write before it;
  # - `write_after_greater`: a write was accepted from a token after a greater
  #   one was accepted;
  # - `duplicate_grant`: two grants of one token;
  # - `writes_from_two_grants`: writes with one token accepted from two
  #   grants (two worker processes): a token issued twice, both holders
  #   admitted by the fence (issue #26);
  # - `grant_out_of_order`: a grant that ended before another began has the
  #   greater token;
  # - `lost_grant`: the store's high-water mark (last_issued) is below a
  #   token a worker was granted, or wrote with (not checked with
  #   FAILOVER=on, whose fault loses acknowledged grants by design: what
  #   must hold then is that no token is granted twice, and no fence admits
  #   writes from two grants of one token);
  # - `expired_lease_write`: a write accepted (in the store's own database)
  #   while the store's row, in the same transaction, showed its lease
  #   expired or replaced: what the strict guard refuses.
  class Checker
    def initialize(dir)
      @record = RunRecord.new(dir)
    end

    # @return [Report]
    def run
      violations = []
      rows = @record.rows.group_by(&:resource)
      grants = @record.grants.group_by { |grant| grant["resource"] }
      last_issued = @record.last_issued
      @record.resources.each do |resource|
        writes = rows.fetch(resource, [])
        violations.concat(stale_writes(resource, writes))
        violations.concat(expired_writes(resource, writes))
        violations.concat(duplicate_grants(resource, grants.fetch(resource, [])))
        violations.concat(writes_from_two_grants(resource, writes))
        violations.concat(out_of_order_grants(resource, grants.fetch(resource, [])))
        next if @record.failover?

        violations.concat(high_water(resource, grants.fetch(resource, []), writes, last_issued[resource]))
      end
      Report.new(@record, violations)
    end

    private

    def violation(kind, resource, message, at_ns, **fields)
      { kind: kind, resource: resource, message: message, at_ns: at_ns, context: @record.around(resource, at_ns) }
        .merge(fields)
    end

    def stale_writes(resource, writes)
      found = []
      highest = nil
      previous = nil
      writes.sort_by(&:id).each do |row|
        if previous && row.token < previous.token
          found << violation(:token_went_down, resource, "write ##{row.id} (worker #{row.worker}, token #{row.token}) " \
                                                         "came after write ##{previous.id} with token #{previous.token}",
                             row.written_at_ns, write: row.to_h)
        end
        if highest && row.token < highest.token
          found << violation(:write_after_greater, resource,
                             "write ##{row.id} with token #{row.token} was accepted after token #{highest.token} " \
                             "(write ##{highest.id}, worker #{highest.worker})", row.written_at_ns, write: row.to_h)
        end
        highest = row if highest.nil? || row.token > highest.token
        previous = row
      end
      found
    end

    def expired_writes(resource, writes)
      return [] unless @record.bound?(resource)

      writes.filter_map do |row|
        live = row.store_token == row.token && row.store_expires_ns && row.store_expires_ns > row.written_at_ns
        next if live

        why = if row.store_token == row.token
                "the lease expired #{((row.written_at_ns - row.store_expires_ns) / 1e6).round(1)} ms before"
              else
                "the store's lease was #{row.store_token ? "token #{row.store_token}'s" : 'released'}"
              end
        violation(:expired_lease_write, resource, "write ##{row.id} with token #{row.token} was accepted: #{why}",
                  row.written_at_ns, write: row.to_h)
      end
    end

    def duplicate_grants(resource, grants)
      grants.group_by { |grant| grant["token"] }.select { |_, same| same.size > 1 }.map do |token, same|
        violation(:duplicate_grant, resource, "token #{token} was granted #{same.size} times " \
                                              "(workers #{same.map { |g| g['worker'] }.join(', ')})", same.last["t"])
      end
    end

    # A grant is held by one worker process: writes with one token from two
    # (worker, pid) pairs came from two grants of that token.
    def writes_from_two_grants(resource, writes)
      writes.group_by(&:token).filter_map do |token, same|
        holders = same.sort_by(&:id).uniq { |row| [row.worker, row.pid] }
        next if holders.size < 2

        described = holders.map { |row| "worker #{row.worker} (pid #{row.pid}, write ##{row.id})" }.join(" and ")
        violation(:writes_from_two_grants, resource, "writes with token #{token} were accepted from two grants: " \
                                                     "#{described}", holders[1].written_at_ns, write: holders[1].to_h)
      end
    end

    # Tokens in real-time order: when one grant's request ended before
    # another's began, its token is the smaller. (A grant is logged when its
    # answer is back: a pause in between only widens its interval.)
    def out_of_order_grants(resource, grants)
      by_end = grants.sort_by { |grant| grant["t"] }
      ended = nil
      index = 0
      grants.sort_by { |grant| started_at(grant) }.filter_map do |grant|
        while index < by_end.size && by_end[index]["t"] < started_at(grant)
          ended = by_end[index] if ended.nil? || by_end[index]["token"] > ended["token"]
          index += 1
        end
        next unless ended && ended["token"] >= grant["token"]

        violation(:grant_out_of_order, resource, "token #{grant['token']} (worker #{grant['worker']}) was granted " \
                                                 "after token #{ended['token']} (worker #{ended['worker']}) had been",
                  started_at(grant))
      end
    end

    def started_at(grant)
      grant["t"] - grant.fetch("duration_ns", 0)
    end

    def high_water(resource, grants, writes, last_issued)
      granted = grants.map { |grant| grant["token"] }.max
      written = writes.map(&:token).max
      [[granted, "granted"], [written, "written with"]].filter_map do |token, what|
        next if token.nil? || (last_issued && last_issued >= token)

        violation(:lost_grant, resource, "token #{token} was #{what}, but the store's last_issued is " \
                                         "#{last_issued.inspect}", nil)
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  report = Chaos::Checker.new(ARGV.fetch(0)).run
  puts report.details
  puts report.summary
  exit(report.ok? ? 0 : 1)
end
