# frozen_string_literal: true

# Shared by the bench/*_bench.rb scripts. Every figure a script prints is a
# ratio against a baseline measured in the same process, next to it in time:
# absolute numbers on a shared machine mean little, ratios travel better.
#
# How: entries are measured in small groups (the thing and its baselines).
# Each group is run by benchmark-ips for several short rounds; within a round
# the entries run back to back, so a ratio is taken per round, between
# neighbours in time, and the median of the rounds' ratios is reported. A
# burst of load that slows one round moves that round's ratio, not the median.
#
# Knobs (environment):
#   BENCH_TIME=0.3    seconds measured per entry and round (benchmark-ips `time`)
#   BENCH_WARMUP=0.1  seconds of warm-up per entry and round
#   BENCH_ROUNDS=7    rounds per group (odd: the median is one of them)
#   BENCH_VERBOSE=1   also print benchmark-ips' own report for every round
#   BENCH_LIB=dir     load lease_machines from another lib/ (before/after comparisons)
#   BENCH_CLOCK=wall  time in-process work on the wall clock instead of this
#                     thread's CPU clock (see Bench.cpu_clock!)

require "benchmark/ips"
require_relative "load_gem"
require_relative "results"

# The measuring, formatting and machine-describing helpers of the benchmarks.
module Bench
  TIME = Float(ENV.fetch("BENCH_TIME", "0.3"))
  WARMUP = Float(ENV.fetch("BENCH_WARMUP", "0.1"))
  ROUNDS = Integer(ENV.fetch("BENCH_ROUNDS", "7"))
  VERBOSE = ENV.fetch("BENCH_VERBOSE", "") == "1"

  # One group's rounds: { label => [iterations per second, one per round] }.
  class Rounds
    def initialize(ips_by_label)
      @ips = ips_by_label
    end

    def labels = @ips.keys

    # Median nanoseconds per iteration of `label`.
    def ns(label) = Bench.median(@ips.fetch(label).map { |ips| 1e9 / ips })

    # Median over rounds of time(label) / time(baseline): 2.0 = twice as slow.
    def time_ratio(label, baseline)
      Bench.median(@ips.fetch(label).zip(@ips.fetch(baseline)).map { |mine, theirs| theirs / mine })
    end

    # Median over rounds of how many times faster `label` is than `baseline`.
    def speedup(label, baseline) = 1.0 / time_ratio(label, baseline)

    # Spread of `label`'s rounds: (slowest - fastest) / median, in percent.
    def spread(label)
      times = @ips.fetch(label).map { |ips| 1e9 / ips }
      100.0 * (times.max - times.min) / Bench.median(times)
    end
  end

  module_function

  # In-process work is timed on this thread's CPU clock, not the wall clock:
  # on a shared two-core machine the wall clock also counts the time this
  # process waits for a core, which is noise, not cost. Work that waits on a
  # socket must keep the wall clock: bench/servers_bench.rb does not call this.
  def cpu_clock!
    return if ENV.fetch("BENCH_CLOCK", "cpu") == "wall"

    @clock = "thread CPU clock"
    Benchmark::Timing.singleton_class.class_eval do
      define_method(:now) { Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :float_microsecond) }
    end
  end

  def clock = @clock || "wall clock"

  def settings
    "benchmark-ips #{Benchmark::IPS::VERSION}, #{ROUNDS} rounds x (#{WARMUP} s warm-up + #{TIME} s) per entry, " \
      "#{clock}, median of per-round ratios"
  end

  # Measures one group: the block defines entries (`x.report(label) { |n| ... }`,
  # each running its operation n times). Returns a Rounds.
  def group(&)
    ips = Hash.new { |hash, label| hash[label] = [] }
    ROUNDS.times do
      report = Benchmark.ips(time: TIME, warmup: WARMUP, quiet: !VERBOSE, &)
      report.entries.each { |entry| ips[entry.label] << entry.ips }
    end
    Rounds.new(ips)
  end

  # Interleaved, call by call: `calls` times, each operation once, in a new
  # random order every time, each call timed alone. For operations whose cost
  # drifts with the machine from one second to the next (a disk's commit
  # flush), so that every operation and its baseline meet the same drift.
  # Returns { label => [seconds per call, ...] }.
  def interleaved(operations, calls, seed: 1)
    random = Random.new(seed)
    times = operations.keys.to_h { |label| [label, []] }
    calls.times do
      operations.to_a.shuffle(random: random).each do |label, operation|
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        operation.call
        times[label] << (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
      end
    end
    times
  end

  # Ratios of `label`'s mean time to `baseline`'s over `times` (as Bench.interleaved returns), per
  # transaction: the whole run's, then each of `blocks` consecutive stretches of it. Returns
  # [whole, p50 whole, [per block]]: the blocks' range is the run's spread.
  def interleaved_ratios(times, label, baseline, transactions: 1, blocks: 5)
    mine = times.fetch(label)
    theirs = times.fetch(baseline)
    mean = ->(values) { values.sum / values.size }
    size = (mine.size / blocks.to_f).ceil
    per_block = mine.each_slice(size).zip(theirs.each_slice(size)).map { |m, t| mean.call(m) / mean.call(t) / transactions }
    [mean.call(mine) / mean.call(theirs) / transactions, median(mine) / median(theirs) / transactions, per_block]
  end

  # "1.12x (1.05-1.20x)": a ratio and its blocks' range.
  def ratio_range(ratio, blocks) = "#{ratio(ratio)} (#{format('%.2f', blocks.min)}-#{ratio(blocks.max)})"

  def median(values)
    sorted = values.sort
    mid = sorted.size / 2
    sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
  end

  # The value at `fraction` (0.99: p99) of `values`, nearest rank.
  def percentile(values, fraction)
    sorted = values.sort
    sorted[[(fraction * sorted.size).ceil - 1, 0].max]
  end

  # Parks `count` threads, each inside `wrap` (a lambda taking the thread's
  # index and the body to run; nil: the body bare), and returns
  # [threads, release] once every one is in place.
  def park(count, wrap = nil)
    ready = Queue.new
    gate = Queue.new
    body = lambda do
      ready << true
      gate.pop
    end
    threads = Array.new(count) { |index| Thread.new { wrap ? wrap.call(index, body) : body.call } }
    count.times { ready.pop }
    [threads, -> { count.times { gate << true } && threads.each(&:join) }]
  end

  def heading(title)
    puts
    puts "== #{title} =="
  end

  # A fixed-width table: `rows` are arrays of cells, the first column left-aligned.
  def table(header, rows)
    all = [header] + rows
    widths = header.each_index.map { |i| all.map { |row| row[i].to_s.size }.max }
    line = lambda do |row|
      row.each_with_index.map { |cell, i| i.zero? ? cell.to_s.ljust(widths[i]) : cell.to_s.rjust(widths[i]) }.join("  ")
    end
    puts line.call(header)
    puts widths.map { |w| "-" * w }.join("  ")
    rows.each { |row| puts line.call(row) }
  end

  def ns(value) = format("%.0f", value)
  def ratio(value) = format("%.2fx", value)
  def percent(value) = format("%.0f%%", value)

  # The lines BENCHMARKS.md quotes; HOLDS or MISSED says how it went in this run.
  def target(text, value, holds)
    puts "target: #{text.ljust(56)} #{ratio(value).rjust(8)}  #{holds ? 'HOLDS' : 'MISSED'}"
  end

  # Objects allocated per call of the block: warmed up, GC off while counting.
  def allocations_per_call(calls = 10_000, &)
    # The counter's own call sites get their inline caches (objects) on first use.
    count_allocations(1) { nil } unless @counter_warm
    @counter_warm = true
    200.times(&)
    count_allocations(calls, &)
  end

  def count_allocations(calls, &)
    GC.start
    GC.disable
    before = GC.stat(:total_allocated_objects)
    calls.times(&)
    (GC.stat(:total_allocated_objects) - before).fdiv(calls)
  ensure
    GC.enable
  end

  def rss_kib
    File.foreach("/proc/self/status") { |line| return Integer(line.split[1]) if line.start_with?("VmRSS:") }
    nil
  end

  def machine
    cpu = File.foreach("/proc/cpuinfo").find { |line| line.start_with?("model name") }&.split(":", 2)&.last&.strip
    rustc = `rustc --version 2>/dev/null`.strip
    "#{RUBY_DESCRIPTION}; #{rustc.empty? ? 'rustc ?' : rustc}; nproc #{`nproc 2>/dev/null`.strip}; #{cpu}"
  end
end
