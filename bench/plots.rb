# frozen_string_literal: true

# BENCHMARKS.md's headline figures, drawn by gnuplot (bench/gnuplot.rb) from
# the recorded results (bench/results.rb, docs/benchmarks/*.json): decision
# cost against the floor, contention, handover latency, renewal lateness.
# Each target is a dashed red line. `rake bench:plots` (BenchPlots.new.draw);
# the images go to docs/benchmarks/, the data files and scripts to
# tmp/bench-plots/.

require "fileutils"
require_relative "gnuplot"
require_relative "results"

# Draws the four figures from the recorded results.
class BenchPlots
  FIGURES = %w[decision-cost contention handover renewal-lateness].freeze
  TARGET = "lw 1.5 lc rgb '#dc0000'"
  BARS = ["set style data histograms", "set style histogram clustered gap 1", "set style fill solid 0.8 noborder",
          "set boxwidth 0.9", "set rmargin 6", "set grid ytics lc rgb '#dddddd'", "set key below",
          "set xtics rotate by -25 scale 0"].freeze
  # The contention rows BENCHMARKS.md leaves out: nobody to contend with.
  UNCONTENDED = ["1 on 1", "4 on 4"].freeze

  # `results`: the recorded results' folder; `images`: where the figures
  # go; `scratch`: their data files and scripts.
  def initialize(results: BenchResults.dir, images: File.expand_path("../docs/benchmarks", __dir__),
                 scratch: File.expand_path("../tmp/bench-plots", __dir__))
    @results = results
    @images = images
    @scratch = scratch
  end

  # Draws every figure; returns the images' paths.
  def draw
    FileUtils.mkdir_p([@images, @scratch])
    FIGURES.map { |name| send(name.tr("-", "_"), Gnuplot.new(File.join(@images, "#{name}.png"), scratch: @scratch)) }
  end

  private

  # In process (a bar per operation, gem / floor) and durable (a group per
  # operation, a bar per engine, per transaction against the engine's floor).
  def decision_cost(plot)
    decisions = read("decisions")
    in_process = decisions.fetch("operations").map { |row| [row.fetch("operation"), row.fetch("gem_vs_floor")] }
    engines = %w[stores mysql].flat_map { |name| read(name).fetch("engines") }
    durable = ["acquire granted", "renew granted", "acquire+release granted"].map do |operation|
      [operation, *engines.map { |engine| engine.fetch("vs_floor")[operation] }]
    end
    plot << ["set multiplot layout 1,2 title 'Decision cost against the floor (time / floor time)'", *BARS,
             "set yrange [0:#{ceiling(in_process.map(&:last) + [3])}]", arrow(3)]
    plot << "plot #{plot.data('in-process', in_process)} using 2:xtic(1) title " \
            "#{plot.quote("in process, #{day(decisions)} (floor: a Ruby method call)")} lc rgb '#1f77b4', " \
            "#{key('target, a granted acquire: 3x')}"
    plot << ["unset arrow", "set yrange [0:#{ceiling(durable.flat_map { |row| row.drop(1) }.compact + [1.2])}]", arrow(1.2)]
    columns = engines.each_with_index.map do |engine, i|
      "#{i.zero? ? plot.data('durable', durable) : "''"} using #{i + 2}#{i.zero? ? ':xtic(1)' : ''} " \
        "title #{plot.quote("#{engine.fetch('engine')} (floor #{engine.fetch('floor_us').round} µs)")}"
    end
    plot << "plot #{columns.join(', ')}, #{key('target, durable: 1.2x')}" << "unset multiplot"
    plot.draw
  end

  # Fairness (fewest grants / most, the median round and the worst) per row,
  # and PostgreSQL's refusals/s against a bare advisory lock's.
  def contention(plot)
    result = read("contention")
    rows = contended(result)
    shapes = rows.reject { |row| row["fair"].nil? }.map { |row| row["processes"] }.uniq
    fairness = shapes.map { |shape| [shape, *%w[postgres sqlite].flat_map { |e| figure(rows, e, shape, "fair", "worst_fair") }] }
    versus = rows.select { |row| row["engine"] == "postgres" && row["vs_lock"] }
                 .map { |row| [row["processes"], row["vs_lock"]] }
    plot << ["set multiplot layout 1,2 title #{plot.quote("Contention: processes on one resource (#{day(result)})")}",
             *BARS, "set yrange [0:1.05]", "set ylabel 'fewest grants / most (bar: the median round, line: the worst)'",
             "set style histogram errorbars gap 1 lw 1", arrow(0.25)]
    plot << "plot #{plot.data('fairness', fairness)} using 2:3:2:xtic(1) title 'PostgreSQL', '' using 4:5:4 title 'SQLite', " \
            "#{key('target, SQLite 4 on 1: 1/4')}"
    plot << ["unset arrow", "set style histogram clustered gap 1", "set yrange [0:#{ceiling(versus.map(&:last) + [0.5])}]",
             "set ylabel 'refusals/s, store / advisory lock'", arrow(0.5)]
    plot << "plot #{plot.data('versus-lock', versus)} using 2:xtic(1) title 'PostgreSQL against pg_try_advisory_lock' " \
            "lc rgb '#1f77b4', #{key("target: half the lock's")}" << "unset multiplot"
    plot.draw
  end

  # Release -> next grant, p50 and p99, per row and engine (log scale).
  def handover(plot)
    result = read("contention")
    rows = contended(result).reject { |row| row["handover_p50"].nil? }
    data = rows.map { |row| ["#{row['engine']} #{row['processes']}", row["handover_p50"], row["handover_p99"]] }
    plot << [*BARS, "set logscale y", "set yrange [0.1:#{ceiling(data.flat_map { |row| row.drop(1) } + [25])}]",
             "set ylabel 'ms'", "set title #{plot.quote("Handover latency: a release to the next grant (#{day(result)})")}",
             arrow(5), arrow(25, "dt 4")]
    plot << "plot #{plot.data('handover', data)} using 2:xtic(1) title 'p50', '' using 3 title 'p99', " \
            "#{key('target p50, PostgreSQL: 5 ms')}, #{key('target p50, SQLite: 25 ms', 'dt 4')}"
    plot.draw
  end

  # Lateness of each renewal against its plan, as a share of renew_after,
  # at every percentile.
  def renewal_lateness(plot)
    result = read("runtime")
    renewals = result.fetch("renewals")
    data = renewals.fetch("lateness_percentiles").each_with_index.map { |share, i| [i + 1, 100 * share] }
    plot << ["set title #{plot.quote("Renewal lateness, #{renewals['holds']} holds on SQLite in " \
                                     "#{renewals['directory']}, #{renewals['watched']} renewals (#{day(result)})")}",
             "set xlabel 'percentile of renewals'", "set ylabel 'late, % of renew_after'", "set grid lc rgb '#dddddd'",
             "set key top left", "set xrange [0:100]", "set yrange [0:*]",
             "set arrow from 99, graph 0 to 99, graph 1 nohead dt 3 lc rgb '#777777'", arrow(5)]
    plot << "plot #{plot.data('lateness', data)} with lines lw 2 lc rgb '#1f77b4' title 'lateness', " \
            "NaN with lines dt 3 lc rgb '#777777' title 'p99', #{key('target: p99 under 5%')}"
    plot.draw
  end

  def read(name) = BenchResults.read(name, @results)

  # The rows of the stores on one contended resource (the advisory lock's
  # own rows left out: its ratio is the stores' vs_lock).
  def contended(result)
    result.fetch("rows").reject { |row| row["engine"] == "advisory" || UNCONTENDED.include?(row["processes"]) }
  end

  def figure(rows, engine, shape, *keys)
    row = rows.find { |each| each["engine"] == engine && each["processes"] == shape }
    keys.map { |key| row&.fetch(key) }
  end

  # A target: a dashed line across the graph at `value`, and its entry in
  # the key (a plot of nothing in the same style).
  def arrow(value, dashes = "dt 2")
    "set arrow from graph 0, first #{value} to graph 1, first #{value} nohead #{TARGET} #{dashes}"
  end

  def key(text, dashes = "dt 2") = "NaN with lines #{TARGET} #{dashes} title #{Gnuplot.quote(text)}"

  # The top of a y range showing every value.
  def ceiling(values) = (values.compact.max * 1.12).round(2)

  def day(result) = result.fetch("recorded")[0, 10]
end
