# frozen_string_literal: true

# Draws a figure with Debian's gnuplot (the gnuplot-nox package, which
# bin/setup installs): the figure's data go to plain-text files and its
# commands to a script, kept next to the image or in a scratch folder
# (OUT.gp, OUT-<name>.dat) so that it can be drawn again or changed by hand
# (`gnuplot OUT.gp`). The image is a PNG (gnuplot's pngcairo terminal) or an
# SVG, by its extension.
# Used by the chaos report's plot (chaos/plot.rb) and BENCHMARKS.md's figures
# (bench/plots.rb); the gem itself never draws.

require "fileutils"
require "open3"

# One figure: data files, commands, then `draw`.
class Gnuplot
  # gnuplot is missing, or refused the script.
  class Error < StandardError; end

  # Plain text (noenhanced): a resource or fault named kill_in_tx is not a subscript.
  TERMINALS = { ".png" => "pngcairo noenhanced font 'Sans,10'",
                ".svg" => "svg noenhanced font 'Sans,10' background '#ffffff'" }.freeze

  ESCAPES = { '"' => '\"', "\\" => "\\\\", "\n" => "\\n" }.freeze

  attr_reader :output

  # `output`: the image's path (.png or .svg); `size`: its width and height
  # in pixels; `scratch`: the folder of the data files and the script (by
  # default the image's); `executable`: the gnuplot to run (GNUPLOT in the
  # environment, else the one on the PATH).
  def initialize(output, size: [1000, 600], scratch: File.dirname(output), executable: ENV.fetch("GNUPLOT", "gnuplot"))
    @terminal = TERMINALS.fetch(File.extname(output)) do
      raise ArgumentError, "output must end in .png or .svg, got #{output.inspect}"
    end
    @output = output
    @base = File.join(scratch, File.basename(output, ".*"))
    @size = size
    @executable = executable
    @commands = []
  end

  # Writes `rows` (arrays of numbers or strings, nil for a missing value; a
  # nil row is a blank line, which ends a line segment) to OUT-<name>.dat;
  # returns its path, quoted for the script.
  def data(name, rows)
    path = "#{@base}-#{name}.dat"
    File.write(path, rows.map { |row| line(row) }.join)
    quote(path)
  end

  # Adds a command, or an Array of them, to the script (one a line).
  def <<(commands)
    @commands.concat(Array(commands))
    self
  end

  # Quotes a String for the script (a line break stays one: gnuplot's "\n").
  def self.quote(text) = %("#{text.to_s.gsub(/["\\\n]/, ESCAPES)}")

  def quote(text) = self.class.quote(text)

  # Writes OUT.gp and runs gnuplot on it; returns the image's path.
  def draw
    script = "#{@base}.gp"
    File.write(script, ["set terminal #{@terminal} size #{@size.join(',')}", "set output #{quote(@output)}",
                        *@commands, "unset output", ""].join("\n"))
    FileUtils.rm_f(@output)
    _, errors, status = run(script)
    raise Error, "gnuplot failed on #{script} (#{status}):\n#{errors}" unless status.success?
    raise Error, "gnuplot drew nothing into #{@output}:\n#{errors}" unless File.size?(@output)

    @output
  end

  private

  def run(script)
    Open3.capture3(@executable, script)
  rescue Errno::ENOENT
    raise Error, "gnuplot not found (#{@executable.inspect}): install Debian's gnuplot-nox (bin/setup does), " \
                 "or set GNUPLOT to its path"
  end

  def line(row)
    return "\n" if row.nil?

    "#{row.map { |cell| cell.is_a?(String) ? "\"#{cell.delete('"')}\"" : (cell || 'NaN') }.join(' ')}\n"
  end
end
