# frozen_string_literal: true

require_relative "run_record"
require_relative "checker"
require_relative "../bench/gnuplot"

module Chaos
  # The run as a picture, drawn by gnuplot (bench/gnuplot.rb): one panel per
  # resource with the tokens of its accepted writes over time (a dot per
  # write, coloured by worker), the writes the fences refused (grey crosses)
  # and the violations (red squares); under them one lane per fault kind
  # with a bar for each fault, as long as the fault. The data files and the
  # script stay next to the image (OUT-writes-0.dat, OUT.gp).
  # `ruby -Ilib chaos/plot.rb RUN_DIR OUT.png` (or OUT.svg).
  class Plot
    WIDTH = 1000
    PANEL = 150 # pixels per resource panel
    LANE = 18 # pixels per fault lane
    MARGINS = 150 # pixels for the title and the time axis
    FRAME = ["set lmargin at screen 0.11", "set rmargin at screen 0.97", "set grid xtics ytics lc rgb '#dddddd'"].freeze
    KEY = "horizontal Left reverse right bottom samplen 1"
    # Each fault kind's colour (0xRRGGBB), in the lanes' order.
    FAULT_COLORS = { "pause" => 0xff7f0e, "kill" => 0x000000, "kill_in_tx" => 0x780078, "pause_in_tx" => 0xc800c8,
                     "clock_slow" => 0x009696, "clock_jump" => 0x005a5a, "pg_terminate" => 0x8c564b,
                     "pg_restart" => 0xc81e1e, "pg_crash" => 0x781414, "partition" => 0x1e3cc8,
                     "slow_link" => 0x6e96e6 }.freeze

    def initialize(dir)
      @record = RunRecord.new(dir)
      @violations = Checker.new(dir).run.violations
      @start = @record.settings["t"]
      @finish = [@record.events.last&.fetch("t"), @start + (@record.settings["duration"] * 1e9)].compact.max
    end

    def write(path)
      kinds = FAULT_COLORS.keys & @record.faults.map { |fault| fault["kind"] }
      panels, lanes_frame, height = layout(@record.resources.size, kinds.size)
      plot = Gnuplot.new(path, size: [WIDTH, height])
      plot << ["set multiplot title #{plot.quote(title)}", *FRAME, "set xrange [0:#{seconds(@finish)}]"]
      @record.resources.zip(panels).each_with_index { |(resource, frame), i| panel(plot, resource, i, frame) }
      lanes(plot, kinds, lanes_frame)
      (plot << "unset multiplot").draw
    end

    private

    # The (top, bottom) screen fractions of each resource's panel and of the
    # fault lanes, and the image's height in pixels.
    def layout(resources, kinds)
      height = MARGINS + (resources * PANEL) + ((kinds + 1) * LANE)
      screen = ->(pixels) { (1.0 - (pixels.to_f / height)).round(4) }
      panels = Array.new(resources) { |i| [screen.call(50 + (i * PANEL)), screen.call(50 + ((i + 1) * PANEL) - 22)] }
      [panels, [screen.call(50 + (resources * PANEL)), screen.call(height - 60)], height]
    end

    def seconds(t_ns) = ((t_ns - @start) / 1e9).round(4)

    def title
      s = @record.settings
      "#{s['engine']}, fencing #{s['fencing'] ? 'on' : 'off'}, #{s['workers']} workers, seed #{s['seed']}, " \
        "#{s['duration'].round} s: tokens of accepted writes over time, #{@violations.size} violations"
    end

    # One resource's panel between `top` and `bottom` (screen fractions),
    # the key once, over the first.
    def panel(plot, resource, index, (top, bottom))
      plot << ["set tmargin at screen #{top}", "set bmargin at screen #{bottom}", "set format x ''",
               "set ylabel #{plot.quote("#{resource}\n#{@record.bound?(resource) ? 'strict' : 'other db'}")}",
               "set yrange [0:*]", index.zero? ? "set key #{KEY} at screen 0.97, #{(top + 0.012).round(4)}" : "set key off"]
      drawn = series(resource).filter_map do |name, (rows, using, style, key)|
        "#{plot.data("#{name}-#{index}", rows)} using #{using} with points #{style} title #{plot.quote(key)}" if rows.any?
      end
      plot << (drawn.empty? ? ["set yrange [0:1]", "plot -1 notitle"] : "plot #{drawn.join(', ')}")
    end

    # A resource's points, each kind a data file of its own: accepted writes
    # (x seconds, token, worker), refused writes and violations (x, token).
    def series(resource)
      writes = @record.rows.select { |row| row.resource == resource }
                      .map { |row| [seconds(row.written_at_ns), row.token, row.worker] }
      refused = @record.events.select { |event| event["event"] == "refused" && event["resource"] == resource }
                       .map { |event| [seconds(event["t"]), event["token"]] }
      stale = @violations.select { |v| v[:resource] == resource && v[:at_ns] && v[:write] }
                         .map { |v| [seconds(v[:at_ns]), v[:write][:token]] }
      { "writes" => [writes, "1:2:($3+1)", "pt 7 ps 0.5 lc variable", "accepted write (colour: worker)"],
        "refused" => [refused, "1:2", "pt 2 ps 1 lc rgb '#707070'", "refused by the fence"],
        "violations" => [stale, "1:2", "pt 5 ps 0.9 lc rgb '#dc0000'", "violation"] }
    end

    # One lane per fault kind (y = its index), and a lane of violations under them.
    def lanes(plot, kinds, (top, bottom))
      marks = @violations.filter_map { |v| [seconds(v[:at_ns]), kinds.size] if v[:at_ns] }
      labels = (kinds + ["violations"]).each_with_index.map { |kind, i| "#{plot.quote(kind)} #{i}" }
      plot << ["set tmargin at screen #{top}", "set bmargin at screen #{bottom}", "set format x '%g s'",
               "unset ylabel", "set key off", "set yrange [#{kinds.size + 0.6}:-0.6]", "set ytics (#{labels.join(', ')})",
               "set xlabel 'seconds since the run began'"]
      plot << "plot #{plot.data('faults', fault_bars(kinds))} using 1:2:3:4:5:6:7 " \
              "with boxxyerror fs solid 0.85 noborder lc rgb variable, " \
              "#{plot.data('violation-marks', marks.empty? ? [[0, -5]] : marks)} with points pt 5 ps 0.7 lc rgb '#dc0000'"
    end

    # A bar per fault, from its start to its end (at least 1/500 of the
    # run, two pixels, to be seen): x, lane, x from, x to, y from, y to,
    # colour. One out of sight when there is none (gnuplot refuses an empty
    # file).
    def fault_bars(kinds)
      shortest = seconds(@finish) / 500.0
      bars = @record.faults.select { |fault| kinds.include?(fault["kind"]) }.map do |fault|
        lane = kinds.index(fault["kind"])
        from = seconds(fault["started"])
        to = [seconds(fault["ended"]), from + shortest].max.round(4)
        [((from + to) / 2).round(4), lane, from, to, lane - 0.35, lane + 0.35, FAULT_COLORS.fetch(fault["kind"])]
      end
      bars.empty? ? [[0, -5, 0, 0, -5, -5, 0]] : bars
    end
  end
end

Chaos::Plot.new(ARGV.fetch(0)).write(ARGV.fetch(1)) if $PROGRAM_NAME == __FILE__
