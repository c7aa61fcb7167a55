# frozen_string_literal: true

require "time"

module LeaseMachines
  module Stores
    class CLI
      # A table or prose for people, or one JSON document on stdout with `--json`; messages on stderr.
      class Output
        HEADER = ["RESOURCE", "HOLDER", "TOKEN", "EXPIRES IN", "LAST ISSUED"].freeze
        private_constant :HEADER

        attr_writer :json

        def initialize(out, err)
          @out = out
          @err = err
          @json = false
        end

        def puts(text) = @out.puts(text)

        def warn(message) = @err.puts("lease_machines: #{message}")

        def usage_error(message, usage)
          warn(message)
          @err.puts usage
          EXIT_USAGE
        end

        def failure(message, status)
          @out.puts JSON.generate({ error: message, exit_status: status }) if @json
          warn(message)
          status
        end

        # `entries`: Statuses, and [name, StoreError] for rows that cannot be read.
        def statuses(entries)
          return @out.puts(JSON.pretty_generate(entries.map { |entry| status_hash(entry) })) if @json
          return @out.puts("no resources") if entries.empty?

          table(entries)
        end

        def released(name, before)
          lease = before.lease
          return @out.puts(JSON.pretty_generate(release_hash(name, before))) if @json
          return @out.puts("#{name} has no lease to release (last issued #{before.last_issued || '-'})") unless lease

          @out.puts "released #{name}: cleared the lease of #{holder(before)} (token #{lease.token}, " \
                    "#{expiry(before, 'expires in ')}); last issued stays #{before.last_issued}, so the next " \
                    "grant gets a greater token"
        end

        def durability(durability)
          fields = %i[engine verdict meaning reasons settings].to_h { |field| [field, durability.public_send(field)] }
          return @out.puts(JSON.pretty_generate(fields)) if @json

          @out.puts "#{durability.engine}: #{durability.verdict}: #{durability.meaning}"
          durability.reasons.each { |reason| @out.puts "  because #{reason}" }
          durability.settings.each { |name, value| @out.puts "  #{name} = #{value}" }
        end

        def reconciled(reports)
          return @out.puts(JSON.pretty_generate(reports.map { |report| reconciled_hash(report) })) if @json
          return @out.puts("no marks in the fences: nothing to reconcile") if reports.empty?

          reports.each { |report| @out.puts reconciled_line(report) }
        end

        private

        def reconciled_hash(report)
          voided = report.voided
          { resource: report.name, mark: report.mark, mark_owner: report.mark_owner,
            last_issued_before: report.last_issued_before, last_issued: report.last_issued, raised: report.raised?,
            voided: voided && { holder: voided.owner, token: voided.token, expires_at_ns: voided.expires_at_ns } }
        end

        def reconciled_line(report)
          mark = "the fence's mark #{report.mark}#{" (owner #{report.mark_owner})" if report.mark_owner}"
          line = if report.raised?
                   "#{report.name}: raised last issued from #{report.last_issued_before || '-'} to " \
                     "#{report.last_issued}, #{mark}"
                 else
                   "#{report.name}: last issued #{report.last_issued}, at or above #{mark}: unchanged"
                 end
          voided = report.voided
          return line unless voided

          "#{line}; cleared the lease of owner #{voided.owner} (token #{voided.token}), which the fence refuses"
        end

        def release_hash(name, before)
          lease = before.lease
          { resource: name, released: !lease.nil?, holder: lease&.owner, label: before.label, token: lease&.token,
            expires_at_ns: lease&.expires_at_ns, expires_in: lease && before.expires_in,
            last_issued: before.last_issued }
        end

        def status_hash(status)
          return { resource: status.first, error: status.last.message } unless status.is_a?(Status)

          lease = status.lease
          {
            resource: status.name, holder: lease&.owner, label: lease && status.label, token: lease&.token,
            held: status.held?, expires_at: lease&.expires_at, expires_at_ns: lease&.expires_at_ns,
            expires_in: status.expires_in, last_issued: status.last_issued,
            observed: status.observed_ns / 1e9, observed_ns: status.observed_ns,
            updated_at: status.updated_at&.iso8601(6)
          }
        end

        def table(statuses)
          rows = [HEADER] + statuses.map { |status| table_row(status) }
          widths = HEADER.each_index.map { |column| rows.map { |row| row[column].length }.max }
          rows.each do |row|
            @out.puts row.each_with_index.map { |cell, column| cell.ljust(widths[column]) }.join("  ").rstrip
          end
        end

        def table_row(status)
          return [status.first, "?", "?", "unreadable", "?"] unless status.is_a?(Status)

          lease = status.lease
          return [status.name, "-", "-", "-", (status.last_issued || "-").to_s] unless lease

          [status.name, status.label || lease.owner.to_s, lease.token.to_s, expiry(status), status.last_issued.to_s]
        end

        def holder(status) = status.label ? "owner #{status.lease.owner} (#{status.label})" : "owner #{status.lease.owner}"

        def expiry(status, prefix = "")
          seconds = status.expires_in
          return format("expired %.3fs ago", -seconds) unless seconds.positive?

          format("%<prefix>s%<seconds>.3fs", prefix: prefix, seconds: seconds)
        end
      end
    end
  end
end
