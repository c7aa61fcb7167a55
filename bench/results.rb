# frozen_string_literal: true

# Where a benchmark leaves its figures for `rake bench:plots`: one JSON file
# per benchmark, docs/benchmarks/<name>.json (BENCH_RESULTS=dir puts them
# elsewhere), stamped with the date and the machine. The files are the
# recorded results behind BENCHMARKS.md's plots: commit them with the
# notebook's text of the same run. A figure a run did not have (NaN) is null.

require "fileutils"
require "json"
require "time"

# Writes and reads the recorded results of the benchmarks.
module BenchResults
  module_function

  def dir = ENV.fetch("BENCH_RESULTS", File.expand_path("../docs/benchmarks", __dir__))

  def path(name, folder = dir) = File.join(folder, "#{name}.json")

  # Writes `figures` (a Hash) as the latest result of benchmark `name`.
  def write(name, figures)
    FileUtils.mkdir_p(dir)
    record = { "recorded" => Time.now.utc.iso8601, "machine" => machine }.merge(finite(figures))
    File.write(path(name), "#{JSON.pretty_generate(record)}\n")
    puts "recorded in #{path(name)}"
  end

  # The latest result of benchmark `name`, as written by `write` (into `folder`).
  def read(name, folder = dir)
    JSON.parse(File.read(path(name, folder)))
  rescue Errno::ENOENT
    raise ArgumentError, "no recorded result for #{name.inspect} at #{path(name, folder)}: run bench/#{name}_bench.rb first"
  end

  def machine
    "Ruby #{RUBY_VERSION}, #{`nproc 2>/dev/null`.strip} CPUs, load average " \
      "#{File.read('/proc/loadavg').split.first(3).join(' ')}"
  end

  def finite(value)
    case value
    when Hash then value.to_h { |key, each| [key.to_s, finite(each)] }
    when Array then value.map { |each| finite(each) }
    when Float then value.finite? ? value.round(6) : nil
    else value
    end
  end
end
