# frozen_string_literal: true

require_relative "run_record"
require_relative "checker"
require_relative "png_canvas"

module Chaos
  # The run as a picture: one panel per resource with the tokens of its
  # accepted writes over time (a dot per write, coloured by worker), the
  # writes the fences refused (grey crosses) and the violations (red
  # squares); under them one lane per fault kind with a mark for each fault
  # (its length is the fault's). `ruby chaos/plot.rb RUN_DIR OUT.png`.
  class Plot
    WIDTH = 1000
    LEFT = 110
    RIGHT = 30
    PANEL = 110
    GAP = 22
    LANE = 13
    WORKER_COLORS = [[31, 119, 180], [44, 160, 44], [148, 103, 189], [23, 190, 207], [188, 189, 34], [140, 86, 75],
                     [227, 119, 194], [127, 127, 127]].freeze
    FAULT_COLORS = { "pause" => [255, 127, 14], "kill" => [0, 0, 0], "kill_in_tx" => [120, 0, 120],
                     "pause_in_tx" => [200, 0, 200], "clock_slow" => [0, 150, 150], "clock_jump" => [0, 90, 90],
                     "pg_terminate" => [140, 86, 75], "pg_restart" => [200, 30, 30], "pg_crash" => [120, 20, 20],
                     "partition" => [30, 60, 200],
                     "slow_link" => [110, 150, 230] }.freeze
    INK = [40, 40, 40].freeze
    RED = [220, 0, 0].freeze

    def initialize(dir)
      @record = RunRecord.new(dir)
      @violations = Checker.new(dir).run.violations
      @start = @record.settings["t"]
      @finish = [@record.events.last&.fetch("t"), @start + (@record.settings["duration"] * 1e9)].compact.max
    end

    def write(path)
      kinds = FAULT_COLORS.keys & @record.faults.map { |fault| fault["kind"] }.uniq
      resources = @record.resources
      height = 40 + (resources.size * (PANEL + GAP)) + ((kinds.size + 1) * LANE) + 50
      canvas = PngCanvas.new(WIDTH, height)
      title(canvas)
      resources.each_with_index { |resource, i| panel(canvas, resource, 40 + (i * (PANEL + GAP))) }
      lanes(canvas, kinds, 40 + (resources.size * (PANEL + GAP)))
      canvas.write(path)
      path
    end

    private

    def x_of(t_ns)
      LEFT + ((t_ns - @start).to_f / (@finish - @start) * (WIDTH - LEFT - RIGHT))
    end

    def title(canvas)
      s = @record.settings
      canvas.text(10, 10, "#{s['engine']} fencing #{s['fencing'] ? 'on' : 'off'}, #{s['workers']} workers, " \
                          "seed #{s['seed']}, #{s['duration'].round}s: tokens of accepted writes over time, " \
                          "#{@violations.size} violations", INK)
    end

    def panel(canvas, resource, top)
      rows = @record.rows.select { |row| row.resource == resource }
      refused = @record.events.select { |event| event["event"] == "refused" && event["resource"] == resource }
      highest = (rows.map(&:token) + refused.map { |event| event["token"] } + [1]).max
      frame(canvas, resource, top, highest)
      y_of = ->(token) { top + PANEL - 3 - (token.to_f / highest * (PANEL - 6)) }
      points(canvas, rows, refused, y_of)
      stale(canvas, resource, y_of)
    end

    def points(canvas, rows, refused, y_of)
      rows.each do |row|
        canvas.rect(x_of(row.written_at_ns) - 1, y_of.call(row.token) - 1, 3, 3, WORKER_COLORS[row.worker % WORKER_COLORS.size])
      end
      refused.each { |event| cross(canvas, x_of(event["t"]), y_of.call(event["token"]), [150, 150, 150]) }
    end

    def stale(canvas, resource, y_of)
      @violations.each do |violation|
        next unless violation[:resource] == resource && violation[:at_ns] && violation[:write]

        canvas.rect(x_of(violation[:at_ns]) - 3, y_of.call(violation[:write][:token]) - 3, 7, 7, RED)
      end
    end

    def frame(canvas, resource, top, highest)
      canvas.rect(LEFT, top, WIDTH - LEFT - RIGHT, PANEL, [245, 245, 245])
      canvas.text(10, top + 4, resource, INK)
      canvas.text(10, top + 18, @record.bound?(resource) ? "strict" : "other db", INK)
      canvas.text(10, top + PANEL - 12, "token 0", INK)
      canvas.text(LEFT - 8 - (highest.to_s.size * 8), top + 4, highest.to_s, INK)
    end

    def cross(canvas, x, y, color)
      (-2..2).each do |d|
        canvas.pixel(x + d, y + d, color)
        canvas.pixel(x + d, y - d, color)
      end
    end

    # One lane per fault kind: a bar for each fault, darker where it began.
    def lanes(canvas, kinds, top)
      kinds.each_with_index { |kind, i| fault_lane(canvas, kind, top + (i * LANE)) }
      y = top + (kinds.size * LANE)
      canvas.text(10, y + 2, "violations", RED)
      @violations.each { |v| canvas.rect(x_of(v[:at_ns]) - 1, y + 1, 3, LANE - 3, RED) if v[:at_ns] }
      axis(canvas, y + LANE + 6)
    end

    def fault_lane(canvas, kind, y)
      color = FAULT_COLORS[kind]
      canvas.text(10, y + 2, kind, color)
      @record.faults.select { |fault| fault["kind"] == kind }.each do |fault|
        x0 = x_of(fault["started"])
        canvas.rect(x0, y + 1, [x_of(fault["ended"]) - x0, 2].max, LANE - 3, color.map { |c| (c + 255) / 2 })
        canvas.rect(x0, y + 1, 1, LANE - 3, color)
      end
    end

    def axis(canvas, y)
      seconds = (@finish - @start) / 1e9
      step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600].find { |s| seconds / s <= 12 } || 1200
      (0..(seconds / step)).each do |i|
        x = x_of(@start + (i * step * 1e9))
        canvas.rect(x, y, 1, 5, INK)
        canvas.text(x - 4, y + 8, "#{i * step}s", INK)
      end
    end
  end
end

Chaos::Plot.new(ARGV.fetch(0)).write(ARGV.fetch(1)) if $PROGRAM_NAME == __FILE__
