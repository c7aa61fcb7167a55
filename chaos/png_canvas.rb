# frozen_string_literal: true

require "zlib"
require_relative "pixel_font"

module Chaos
  # An RGB canvas written as a PNG with Ruby's own zlib (no gem, no image
  # tool): rectangles, points and pixel-font text, enough for the plot.
  class PngCanvas
    attr_reader :width, :height

    def initialize(width, height, background: [255, 255, 255])
      @width = width
      @height = height
      @pixels = Array.new(height) { background.pack("C3") * width }
    end

    def pixel(x, y, color)
      x = x.round
      y = y.round
      return if x.negative? || y.negative? || x >= @width || y >= @height

      @pixels[y][x * 3, 3] = color.pack("C3")
    end

    def rect(x, y, w, h, color)
      x0 = [x.round, 0].max
      x1 = [(x + w).round, @width].min
      return if x1 <= x0

      row = color.pack("C3") * (x1 - x0)
      ([y.round, 0].max...[(y + h).round, @height].min).each { |yy| @pixels[yy][x0 * 3, row.bytesize] = row }
    end

    # Text in the pixel font, `scale` pixels per font pixel; returns its width.
    def text(x, y, string, color, scale: 2)
      string.each_char.with_index do |char, index|
        PixelFont.glyph(char).each_with_index do |row, dy|
          row.each_char.with_index do |bit, dx|
            rect(x + (((index * (PixelFont::WIDTH + 1)) + dx) * scale), y + (dy * scale), scale, scale, color) if bit == "1"
          end
        end
      end
      string.size * (PixelFont::WIDTH + 1) * scale
    end

    def to_png
      raw = @pixels.map { |row| "\0".b + row }.join
      header = [@width, @height, 8, 2, 0, 0, 0].pack("NNCCCCC")
      "\x89PNG\r\n\x1A\n".b + chunk("IHDR", header) + chunk("IDAT", Zlib::Deflate.deflate(raw, 9)) + chunk("IEND", "")
    end

    def write(path)
      File.binwrite(path, to_png)
    end

    private

    def chunk(type, data)
      [data.bytesize].pack("N") + type + data + [Zlib.crc32(type + data)].pack("N")
    end
  end
end
