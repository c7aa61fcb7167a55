# frozen_string_literal: true

require "optparse"

module LeaseMachines
  module Stores
    class CLI
      # The command line, read and checked before any store is opened.
      class Arguments
        Invocation = Struct.new(:command, :names, :store, :force, :json, :match, :timeout, :fences, keyword_init: true)

        USAGE = "Usage: lease_machines [--store STORE] [--json] [--timeout SECONDS] " \
                "status [RESOURCE | --match GLOB] | release RESOURCE --force | doctor | reconcile [--fences FENCES] " \
                "(see --help)"

        DEFAULT_TIMEOUT = 5.0

        BANNER = <<~BANNER
          Usage: lease_machines --store STORE status [RESOURCE | --match GLOB]
                 lease_machines --store STORE release RESOURCE --force
                 lease_machines --store STORE doctor
                 lease_machines --store STORE reconcile [--fences FENCES]

          Commands:
              status [RESOURCE]         holder, token, time until expiry and the last issued
                                        token of RESOURCE (of every resource when none is given);
                                        read-only: never writes, never creates a database
              status --match GLOB       the same for every resource whose name matches GLOB
                                        (* ? [..] {a,b}; * also matches : and /)
              release RESOURCE --force  clear RESOURCE's lease whoever holds it; the last issued
                                        token stays, so the next grant gets a greater one and the
                                        old holder is fenced at the protected resource
              doctor                    what the database promises about a grant it acknowledged
                                        (a crash, a failover), from its settings; read-only
              reconcile                 after a failover or a restore that lost grants: raise each
                                        resource's last issued token to at least the mark its fence
                                        has seen (the fences' table in FENCES, by default in STORE),
                                        clearing a lease the fence refuses; never lowers anything,
                                        safe to run again; prints what it raised

          Exit status:
              0    done (also: status --match matching nothing, release of a free resource,
                   reconcile with nothing to raise)
              1    RESOURCE does not exist, or a row cannot be read
              2    usage: bad arguments (a message and the usage line on stderr)
              3    the store is unreachable or unusable: no such database (or an empty file),
                   connection refused, no table, a lock held longer than --timeout (reconcile:
                   also the fences' database or table); reconcile may have raised some
                   resources before it failed: run it again
              4    doctor: the database may lose a grant it acknowledged (a failover to an
                   asynchronous replica, a crash), and so issue its token again
              130  interrupted (Ctrl-C)

          Options:
        BANNER
        private_constant :BANNER

        def initialize(argv, env)
          @argv = argv.map { |arg| as_utf8(arg) }
          @options = { store: env["LEASE_MACHINES_STORE"], force: false, json: false, timeout: DEFAULT_TIMEOUT }
        end

        def parse
          args = parser.parse(@argv)
          return parser.help if @options[:help]
          return "lease_machines #{VERSION}" if @options[:version]

          command = args.shift
          check_command(command, args)
          raise UsageError, "missing --store (or LEASE_MACHINES_STORE)" if @options[:store].to_s.empty?

          Invocation.new(command: command, names: args.map { |name| resource(name) },
                         **@options.slice(:store, :force, :json, :match, :timeout, :fences))
        end

        private

        # The argument's bytes as UTF-8 when they are, else binary (OptionParser matches it; the name check refuses it).
        def as_utf8(arg)
          arg = arg.to_s.dup.force_encoding(Encoding::UTF_8)
          arg.valid_encoding? ? arg : arg.force_encoding(Encoding::BINARY)
        end

        def parser
          @parser ||= OptionParser.new do |opts|
            opts.banner = BANNER
            # `--f` is not `--force`: an abbreviation is an unknown option.
            opts.require_exact = true
            define_options(opts)
          end
        end

        def define_options(opts)
          opts.on("--store STORE", "sqlite:PATH, sqlite3:PATH, sqlite3:///ABSOLUTE/PATH,",
                  "postgres://USER@HOST:PORT/DATABASE or mysql2://USER@HOST:PORT/DATABASE",
                  "(default: $LEASE_MACHINES_STORE)") { |value| @options[:store] = value }
          opts.on("--fences FENCES", "reconcile: the fences' database, in --store's forms (default: STORE)") do |value|
            @options[:fences] = value
          end
          opts.on("--match GLOB", "status: the resources whose names match GLOB") { |glob| @options[:match] = glob }
          opts.on("--force", "confirm release (required by release)") { @options[:force] = true }
          opts.on("--json", "print the answer (or the failure) as one JSON document") { @options[:json] = true }
          opts.on("--timeout SECONDS", "wait at most SECONDS for a lock, a statement or a connection",
                  "(default: #{DEFAULT_TIMEOUT})") { |seconds| @options[:timeout] = timeout(seconds) }
          opts.on("-h", "--help", "print this help") { @options[:help] = true }
          opts.on("--version", "print the version") { @options[:version] = true }
        end

        def timeout(text)
          seconds = Float(text, exception: false) || -1.0
          return seconds if seconds.finite? && seconds.positive?

          raise UsageError, "--timeout must be a positive number of seconds, got #{CLI.quote(text)}"
        end

        # Each command's RESOURCE count (as its message says it), and the options only one command takes.
        RESOURCES = { "status" => [0..1, "at most one"], "release" => [1..1, "exactly one"],
                      "doctor" => [0..0, "no"], "reconcile" => [0..0, "no"] }.freeze
        OWNERS = { fences: "reconcile", match: "status", force: "release" }.freeze
        private_constant :RESOURCES, :OWNERS

        def check_command(command, args)
          raise UsageError, "missing command" if command.nil?
          raise UsageError, "unknown command #{CLI.quote(command)}" unless RESOURCES.key?(command)

          count, words = RESOURCES.fetch(command)
          raise UsageError, "#{command} takes #{words} RESOURCE, got #{args.size}" unless count.cover?(args.size)

          check_options(command, args)
        end

        def check_options(command, args)
          OWNERS.each do |option, owner|
            raise UsageError, "--#{option} only applies to #{owner}" if @options[option] && command != owner
          end
          if command == "release" && !@options[:force]
            raise UsageError, "release clears whoever holds the lease: confirm with --force"
          end
          return unless command == "status" && @options[:match]

          raise UsageError, "status takes RESOURCE or --match GLOB, not both" unless args.empty?
          raise UsageError, "bad --match: GLOB must be valid UTF-8" unless @options[:match].encoding == Encoding::UTF_8
        end

        def resource(name)
          unless name.encoding == Encoding::UTF_8 && name.valid_encoding?
            raise UsageError, "bad RESOURCE: name must be valid UTF-8, got #{CLI.quote(name)}"
          end
          raise UsageError, "bad RESOURCE: name must not contain NUL bytes, got #{CLI.quote(name)}" if name.include?("\0")

          Stores.resource_name(name)
        rescue ArgumentError, TypeError => e
          raise UsageError, "bad RESOURCE: #{e.message}"
        end
      end
    end
  end
end
