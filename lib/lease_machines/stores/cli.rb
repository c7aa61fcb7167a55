# frozen_string_literal: true

require "json"
require "lease_machines/stores"

module LeaseMachines
  module Stores
    # The operators' command line (exe/lease_machines): `cli/arguments.rb`
    # reads the command line, `cli/store_spec.rb` opens the store it names,
    # `cli/commands.rb` runs the command, `cli/output.rb` prints the answer.
    # Exit status (also in `--help` and docs/STORES.md):
    #
    # - 0 done;
    # - 1 the resource does not exist, or a row cannot be read;
    # - 2 usage: bad arguments, a one-line message and the usage hint;
    # - 3 the store is unreachable or unusable (no such database file, an
    #   empty one, connection refused, a lock held past `--timeout`);
    # - 130 interrupted (SIGINT): one line, no backtrace.
    #
    # Arguments are taken as bytes whatever the locale (under LC_ALL=C Ruby
    # hands them over as ASCII-8BIT), never transcoded.
    class CLI
      EXIT_OK = 0
      EXIT_NOT_FOUND = 1
      EXIT_USAGE = 2
      EXIT_UNAVAILABLE = 3
      # doctor: the database may lose a grant it acknowledged (the verdict says how).
      EXIT_AT_RISK = 4
      EXIT_INTERRUPTED = 130
      # How many characters of a name (or other argument) a message quotes.
      QUOTED_MAX = 100

      # Bad arguments: a message and the usage hint on stderr, exit 2.
      class UsageError < Error; end

      # The named resource is not in the store (or its row cannot be read): exit 1.
      class NotFoundError < Error; end

      # @return [Integer] the exit status
      def self.start(argv, out: $stdout, err: $stderr, env: ENV)
        new(argv, out: out, err: err, env: env).run
      end

      # Quotes `text` for a message, at most QUOTED_MAX characters of it
      # (bytes that are not UTF-8 escaped).
      # @return [String]
      def self.quote(text)
        text = text.to_s
        text = text.b unless text.valid_encoding?
        text.length > QUOTED_MAX ? "#{text[0, QUOTED_MAX].inspect}..." : text.inspect
      end

      def initialize(argv, out:, err:, env:)
        @arguments = Arguments.new(argv, env)
        @output = Output.new(out, err)
      end

      def run
        invocation = @arguments.parse
        return info(invocation) unless invocation.is_a?(Arguments::Invocation)

        @output.json = invocation.json
        Commands.new(invocation, @output).run
      rescue UsageError, OptionParser::ParseError => e
        @output.usage_error(e.message, Arguments::USAGE)
        EXIT_USAGE
      rescue NotFoundError => e
        @output.failure(e.message, EXIT_NOT_FOUND)
      rescue StoreError, SystemCallError => e
        @output.failure(e.message, EXIT_UNAVAILABLE)
      rescue Interrupt
        @output.interrupted
        EXIT_INTERRUPTED
      end

      private

      # --help or --version: printed, exit 0.
      def info(text)
        @output.puts(text)
        EXIT_OK
      end
    end
  end
end

require_relative "cli/arguments"
require_relative "cli/store_spec"
require_relative "cli/commands"
require_relative "cli/output"
