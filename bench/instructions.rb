# frozen_string_literal: true

# Instructions per operation, counted by valgrind's callgrind: deterministic,
# unlike wall-clock time on a shared machine. Each operation runs twice under
# callgrind (N iterations and 0) and the difference is divided by N, so Ruby's
# start-up cancels out. Slow (about 15 s per run); not part of `rake bench`.
#
#   ruby bench/instructions.rb [N] [OPERATION...]      (or `rake bench:instructions`)
#   BENCH_LIB=/other/lib ruby bench/instructions.rb     (count another build)

require "open3"
require "tmpdir"

LOOP = File.expand_path("callgrind_loop.rb", __dir__)
DEFAULT_OPERATIONS = %w[
  floor acquire_granted acquire_rejected renew_granted renew_rejected release_rejected fence_accept cycle
  pure_acquire_granted pure_cycle store_pair hold
].freeze

def instructions(operation, iterations)
  Dir.mktmpdir do |dir|
    out = File.join(dir, "callgrind.out")
    _, err, status = Open3.capture3("valgrind", "--tool=callgrind", "--callgrind-out-file=#{out}",
                                    RbConfig.ruby, LOOP, operation, iterations.to_s)
    abort "valgrind failed for #{operation}:\n#{err}" unless status.success?
    Integer(err[/Collected : (\d+)/, 1] || abort("no instruction count in valgrind output:\n#{err}"))
  end
end

abort "valgrind is not installed" unless system("valgrind --version", out: File::NULL)
n = Integer(ARGV.fetch(0, "100000"))
operations = ARGV.drop(1)
operations = DEFAULT_OPERATIONS if operations.empty?
puts "instructions per operation (callgrind, #{n} iterations minus 0; lib: #{ENV.fetch('BENCH_LIB', 'lib')})"
counts = operations.to_h do |operation|
  per = (instructions(operation, n) - instructions(operation, 0)).fdiv(n)
  puts "  #{operation.ljust(22)} #{per.round.to_s.rjust(8)}"
  [operation, per]
end
puts format("  pure_cycle / cycle      %7.2fx", counts["pure_cycle"] / counts["cycle"]) if counts["cycle"] && counts["pure_cycle"]
puts format("  hold - store_pair       %8d", counts["hold"] - counts["store_pair"]) if counts["hold"] && counts["store_pair"]
if counts["acquire_granted"] && counts["floor"]
  puts format("  acquire_granted / floor %7.2fx", counts["acquire_granted"] / counts["floor"])
end
