# frozen_string_literal: true

require "json"
require "lease_machines/stores"

module LeaseMachines
  module Stores
    # The operators' command line (exe/lease_machines). Exit status: 0 done, 1 no such resource or an unreadable
    # row, 2 usage, 3 store unusable, 4 doctor's verdict, 130 SIGINT. Arguments are bytes, never transcoded.
    class CLI
      EXIT_OK = 0
      EXIT_NOT_FOUND = 1
      EXIT_USAGE = 2
      EXIT_UNAVAILABLE = 3
      # doctor: the database may lose a grant it acknowledged.
      EXIT_AT_RISK = 4
      EXIT_INTERRUPTED = 130
      QUOTED_MAX = 100

      class UsageError < Error; end

      class NotFoundError < Error; end

      def self.start(argv, out: $stdout, err: $stderr, env: ENV) = new(argv, out: out, err: err, env: env).run

      # `text` quoted, at most QUOTED_MAX characters (bytes that are not UTF-8 escaped).
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
        unless invocation.is_a?(Arguments::Invocation)
          @output.puts(invocation) # --help or --version
          return EXIT_OK
        end

        @output.json = invocation.json
        Commands.new(invocation, @output).run
      rescue UsageError, OptionParser::ParseError => e
        @output.usage_error(e.message, Arguments::USAGE)
      rescue NotFoundError => e
        @output.failure(e.message, EXIT_NOT_FOUND)
      rescue StoreError, SystemCallError => e
        @output.failure(e.message, EXIT_UNAVAILABLE)
      rescue Interrupt
        @output.warn("interrupted")
        EXIT_INTERRUPTED
      end
    end
  end
end

require_relative "cli/arguments"
require_relative "cli/store_spec"
require_relative "cli/commands"
require_relative "cli/output"
