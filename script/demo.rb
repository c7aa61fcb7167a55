# frozen_string_literal: true

# The stalled-worker story, told by lease_machines with real processes. Run it
# with `bin/demo`, which first prepares the machine (bin/setup installs Ruby,
# the gems and the compiled extension on a fresh one).
#
#   bin/demo                         # SQLite files in a temporary folder, nothing to configure
#   bin/demo --store postgres://...  # the same story on PostgreSQL
#   bin/demo --round fenced          # one round only (fenced or unfenced)
#   bin/demo --simulated             # the story on a simulated clock, in one process
#
# Exits 1 when the fenced round lets the stale write through, 2 for bad arguments.

require "io/wait"
require "optparse"
require "tmpdir"
require "fileutils"

# The demo: the supervisor and its workers (script/demo/), and the simulated story.
module LeaseMachinesDemo
  ROOT = File.expand_path("..", __dir__)
  ROUNDS = { "both" => %i[fenced unfenced], "fenced" => %i[fenced], "unfenced" => %i[unfenced] }.freeze
  USAGE = "usage: bin/demo [--store postgres://...] [--round fenced|unfenced|both] [--simulated]"

  module_function

  # The simulated story (`--simulated`); returns its report store.
  def run_simulated(out = $stdout)
    SimulatedStory.new(out).run
  end

  # The real story; returns its rounds (Supervisor::Round).
  def run(out = $stdout, store: nil, rounds: ROUNDS.fetch("both"))
    backend = store ? PostgresBackend.new(store) : SQLiteBackend.new
    begin
      Supervisor.new(backend, out).run(rounds)
    ensure
      backend.cleanup
    end
  end

  def options(argv)
    options = { simulated: false, store: nil, rounds: ROUNDS.fetch("both") }
    rest = parser(options).parse(argv)
    raise OptionParser::NeedlessArgument, rest.join(" ") unless rest.empty?

    options
  end

  def parser(options)
    OptionParser.new do |parser|
      parser.banner = USAGE
      parser.on("--store URL", "run the story on PostgreSQL (a postgres:// URL)") do |url|
        raise OptionParser::InvalidArgument, url unless url.match?(%r{\Apostgres(ql)?://})

        options[:store] = url
      end
      parser.on("--round ROUND", ROUNDS.keys, "fenced, unfenced or both (the default)") do |round|
        options[:rounds] = ROUNDS.fetch(round)
      end
      parser.on("--simulated", "tell the story on a simulated clock, in one process") { options[:simulated] = true }
    end
  end

  def main(argv)
    options = options(argv)
    return run_simulated && 0 if options[:simulated]

    rounds = run(store: options[:store], rounds: options[:rounds])
    rounds.any? { |round| round.fenced && round.stale_write_went_through? } ? 1 : 0
  rescue OptionParser::ParseError => e
    warn "bin/demo: #{e.message}"
    warn USAGE
    2
  end
end

require_relative "demo/timeline"
require_relative "demo/simulated_story"
require_relative "demo/sqlite_backend"
require_relative "demo/postgres_backend"
require_relative "demo/worker"
require_relative "demo/supervisor"

if $PROGRAM_NAME == __FILE__
  $LOAD_PATH.unshift(File.join(LeaseMachinesDemo::ROOT, "lib"))
  require "lease_machines"
  $stdout.sync = true
  exit LeaseMachinesDemo.main(ARGV)
end
