# frozen_string_literal: true

require "optparse"
require "json"
require "time"
require "lease_machines/stores"

module LeaseMachines
  module Stores
    # The operators' command line (exe/lease_machines):
    #
    #   lease_machines --store sqlite:/var/lib/app/leases.sqlite3 status [RESOURCE]
    #   lease_machines --store postgres://app@db/app release RESOURCE --force
    #   lease_machines --store mysql2://app@db/app status
    #
    # Exit status: 0 done, 1 the store failed, the resource does not exist or
    # some resource's row cannot be read (the others are listed, that one is
    # marked), 2 bad arguments (the usage goes to stderr).
    #
    # Arguments are taken as bytes, whatever the locale says (under LC_ALL=C
    # Ruby hands them over as ASCII-8BIT): a resource name must be valid UTF-8,
    # and is never transcoded.
    class CLI
      EXIT_OK = 0
      EXIT_FAILURE = 1
      EXIT_USAGE = 2
      # How many characters of a name (or other argument) a message quotes.
      QUOTED_MAX = 100

      # Bad arguments: usage on stderr, exit 2.
      class UsageError < Error; end

      # @return [Integer] the exit status
      def self.start(argv, out: $stdout, err: $stderr, env: ENV)
        new(argv, out: out, err: err, env: env).run
      end

      def initialize(argv, out:, err:, env:)
        @argv = argv.map { |arg| as_utf8(arg) }
        @out = out
        @err = err
        @options = { store: env["LEASE_MACHINES_STORE"], force: false, json: false }
      end

      def run
        command, args = parse
        return EXIT_OK if command.nil?

        with_store { |store| command == "status" ? status(store, args.first) : release(store, args.first) }
      rescue UsageError, OptionParser::ParseError => e
        @err.puts "lease_machines: #{e.message}"
        @err.puts
        @err.puts parser.help
        EXIT_USAGE
      rescue StoreError => e
        @err.puts "lease_machines: #{e.message}"
        EXIT_FAILURE
      end

      # Quotes `text` for a message, at most QUOTED_MAX characters of it.
      # @return [String]
      def self.quote(text)
        text = text.to_s
        text.length > QUOTED_MAX ? "#{text[0, QUOTED_MAX].inspect}..." : text.inspect
      end

      private

      # The argument's bytes as UTF-8 when they are UTF-8, else as binary (so
      # OptionParser can match it, and the name check refuses it).
      def as_utf8(arg)
        arg = arg.to_s.dup
        utf8 = arg.force_encoding(Encoding::UTF_8)
        utf8.valid_encoding? ? utf8 : arg.force_encoding(Encoding::BINARY)
      end

      def quote(text)
        self.class.quote(text)
      end

      def parser
        @parser ||= OptionParser.new do |opts|
          opts.banner = <<~BANNER
            Usage: lease_machines --store STORE status [RESOURCE]
                   lease_machines --store STORE release RESOURCE --force

            Commands:
                status [RESOURCE]         holder, token, time until expiry and the last issued
                                          token of RESOURCE (of every resource when none is given)
                release RESOURCE --force  clear RESOURCE's lease whoever holds it; the last issued
                                          token stays, so the next grant gets a greater one and the
                                          old holder is fenced at the protected resource

            Options:
          BANNER
          define_options(opts)
        end
      end

      def define_options(opts)
        opts.on("--store STORE", "sqlite:PATH, postgres://USER@HOST:PORT/DATABASE",
                "or mysql2://USER@HOST:PORT/DATABASE", "(default: $LEASE_MACHINES_STORE)") { |value| @options[:store] = value }
        opts.on("--force", "confirm release (required by release)") { @options[:force] = true }
        opts.on("--json", "print status as JSON") { @options[:json] = true }
        opts.on("-h", "--help", "print this help") { @options[:help] = true }
        opts.on("--version", "print the version") { @options[:version] = true }
      end

      # @return [[String, Array<String>]] the command and its arguments, or nil
      #   when help or the version was printed
      def parse
        args = parser.parse(@argv)
        return info(parser.help) if @options[:help]
        return info("lease_machines #{VERSION}") if @options[:version]

        command = args.shift
        check_command(command, args)
        raise UsageError, "missing --store (or LEASE_MACHINES_STORE)" if @options[:store].to_s.empty?

        args.each { |name| resource(name) }
        [command, args]
      end

      def info(text)
        @out.puts text
        nil
      end

      def check_command(command, args)
        case command
        when nil then raise UsageError, "missing command"
        when "status"
          raise UsageError, "status takes at most one RESOURCE, got #{args.size}" if args.size > 1
          raise UsageError, "--force only applies to release" if @options[:force]
        when "release"
          raise UsageError, "release takes exactly one RESOURCE, got #{args.size}" unless args.size == 1
          raise UsageError, "release clears whoever holds the lease: confirm with --force" unless @options[:force]
        else raise UsageError, "unknown command #{quote(command)}"
        end
      end

      def resource(name)
        unless name.encoding == Encoding::UTF_8 && name.valid_encoding?
          raise UsageError, "bad RESOURCE: name must be valid UTF-8, got #{quote(name)}"
        end
        raise UsageError, "bad RESOURCE: name must not contain NUL bytes, got #{quote(name)}" if name.include?("\0")

        Stores.resource_name(name)
      rescue ArgumentError, TypeError => e
        raise UsageError, "bad RESOURCE: #{e.message}"
      end

      def with_store
        store = open_store(@options[:store])
        yield store
      ensure
        store&.close
      end

      def open_store(spec)
        case spec
        when /\Asqlite:(.+)\z/m then sqlite_store(Regexp.last_match(1))
        when %r{\Apostgres(?:ql)?://}
          require "lease_machines/stores/postgres"
          Postgres.new(spec)
        when %r{\Amysql2?://} then mysql_store(spec)
        else
          raise UsageError, "--store must be sqlite:PATH, postgres://... or mysql2://..., got #{quote(spec)}"
        end
      end

      def mysql_store(url)
        require "lease_machines/stores/mysql"
        MySQL.new(url)
      rescue ArgumentError => e
        raise UsageError, "bad --store: #{e.message}"
      end

      def sqlite_store(path)
        raise StoreError, "no SQLite database at #{path}" unless File.file?(path)

        require "lease_machines/stores/sqlite"
        SQLite.new(path)
      end

      def status(store, name)
        statuses, failures = read_statuses(store, name)
        raise StoreError, "no resource named #{quote(name)} in this store" if name && statuses.empty?

        print_statuses((statuses + failures.to_a).sort_by { |entry| entry.is_a?(Status) ? entry.name : entry.first })
        failures.each { |bad, error| @err.puts "lease_machines: resource #{quote(bad)} cannot be read: #{error.message}" }
        failures.empty? ? EXIT_OK : EXIT_FAILURE
      end

      # `entries`: Statuses, and [name, StoreError] for rows that cannot be read.
      def print_statuses(entries)
        if @options[:json]
          @out.puts JSON.pretty_generate(entries.map { |entry| status_hash(entry) })
        elsif entries.empty?
          @out.puts "no resources"
        else
          print_table(entries)
        end
      end

      # @return [[Array<Status>, Hash{String => StoreError}]] the readable
      #   resources and why each other one is not
      def read_statuses(store, name)
        return [[store.status(name)].compact, {}] if name

        [store.statuses, {}]
      rescue UnreadableStatusesError => e
        [e.statuses, e.failures]
      end

      def release(store, name)
        before = store.force_release(name)
        raise StoreError, "no resource named #{quote(name)} in this store" unless before

        lease = before.lease
        if lease
          @out.puts "released #{name}: cleared the lease of owner #{lease.owner} (token #{lease.token}, " \
                    "#{expiry(before, 'expires in ')}); last issued stays #{before.last_issued}, so the next " \
                    "grant gets a greater token"
        else
          @out.puts "#{name} has no lease to release (last issued #{before.last_issued || '-'})"
        end
        EXIT_OK
      end

      # `status`: a Status, or [name, StoreError] for a row that cannot be read.
      def status_hash(status)
        return { resource: status.first, error: status.last.message } unless status.is_a?(Status)

        lease = status.lease
        {
          resource: status.name, holder: lease&.owner, token: lease&.token,
          held: status.held?, expires_at: lease&.expires_at, expires_at_ns: lease&.expires_at_ns,
          expires_in: status.expires_in, last_issued: status.last_issued,
          observed: status.observed_ns / 1e9, observed_ns: status.observed_ns,
          updated_at: status.updated_at&.iso8601(6)
        }
      end

      HEADER = ["RESOURCE", "HOLDER", "TOKEN", "EXPIRES IN", "LAST ISSUED"].freeze
      private_constant :HEADER

      def print_table(statuses)
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

        [status.name, lease.owner.to_s, lease.token.to_s, expiry(status), status.last_issued.to_s]
      end

      def expiry(status, prefix = "")
        seconds = status.expires_in
        return format("expired %.3fs ago", -seconds) unless seconds.positive?

        format("%<prefix>s%<seconds>.3fs", prefix: prefix, seconds: seconds)
      end
    end
  end
end
