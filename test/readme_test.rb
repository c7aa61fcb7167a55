# frozen_string_literal: true

require "ripper"
require "test_helper"

module LeaseMachines
  # Runs every ```ruby block of README.md, so the README cannot drift.
  #
  # Each block runs top to bottom in a binding of its own, one complete
  # statement at a time (a statement may span lines: it ends at the first line
  # where the code so far parses). A statement whose last line ends in
  #
  #   # => expected    asserts  value == (expected, evaluated in the block's binding),
  #                   or value.inspect == expected when expected starts with "#<"
  #   # raises Class: message   asserts  it raises exactly Class with exactly that message
  #
  # An annotation anywhere else (inside a multi-line statement) fails the test:
  # nothing that looks checked goes unchecked.
  #
  # A block preceded by `<!-- norun -->` is only parsed. A block preceded by
  # `<!-- ill-typed -->` breaks the RBS signatures on purpose (it shows a
  # TypeError); it runs in every run except under RBS runtime checking.
  class ReadmeTest < Minitest::Test
    README = File.expand_path("../README.md", __dir__)
    EXPECTED = /\s#\s=>\s(?<expected>.+)\z/
    RAISES = /\s#\sraises\s(?<class>[A-Z]\w*(?:::[A-Z]\w*)*):\s(?<message>.+)\z/
    Block = Struct.new(:line, :code, :marker)
    # A fresh top-level scope on every call: `self` is main, constants resolve
    # from Object (so the README must spell LeaseMachines::), no locals leak in.
    TOP_LEVEL_SCOPE = TOPLEVEL_BINDING.eval("-> { binding }")

    def self.blocks
      lines = File.readlines(README, chomp: true)
      blocks = []
      index = 0
      while index < lines.size
        if lines[index] == "```ruby"
          marker = lines[0...index].reverse.find { |line| !line.strip.empty? }.to_s[/\A<!-- (norun|ill-typed) -->\z/, 1]
          finish = ((index + 1)...lines.size).find { |at| lines[at] == "```" }
          raise "README.md:#{index + 1}: unclosed ```ruby block" unless finish

          blocks << Block.new(index + 2, lines[(index + 1)...finish], marker&.to_sym)
          index = finish
        end
        index += 1
      end
      blocks
    end

    # [first line number, source lines] for each complete statement.
    def statements(block)
      chunks = []
      pending = []
      block.code.each_with_index do |line, offset|
        pending << line
        next unless Ripper.sexp(pending.join("\n"))

        chunks << [block.line + offset - pending.size + 1, pending]
        pending = []
      end
      assert_empty pending, "README.md:#{block.line}: the block ends inside an unfinished statement"
      chunks
    end

    def run_block(block)
      scope = TOP_LEVEL_SCOPE.call
      checked = 0
      without_gc_stress { statements(block) }.each do |line, source|
        source[0...-1].each_with_index do |inner, offset|
          refute_match(/#\s(=>|raises)\s/, inner, "README.md:#{line + offset}: annotation inside a multi-line statement")
        end
        checked += run_statement(scope, line, source)
      end
      checked
    end

    def run_statement(scope, line, source)
      code = source.join("\n")
      where = "README.md:#{line + source.size - 1}"
      if (raises = source.last.match(RAISES))
        klass = Object.const_get(raises[:class])
        error = assert_raises(klass, where) { capture_io { scope.eval(code, README, line) } }
        assert_equal [klass, raises[:message]], [error.class, error.message], where
        return 1
      end
      value = nil
      capture_io { value = scope.eval(code, README, line) }
      expected = source.last.match(EXPECTED)&.[](:expected)
      return 0 unless expected

      if expected.start_with?("#<")
        assert_equal expected, value.inspect, where
      elsif (wanted = scope.eval(expected, README, line)).nil?
        assert_nil value, where
      else
        assert_equal wanted, value, where
      end
      1
    end

    blocks.each do |block|
      next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK

      define_method(:"test_readme_block_at_line_#{block.line}") do
        if block.marker == :norun
          assert Ripper.sexp(block.code.join("\n")), "README.md:#{block.line}: the block does not parse"
        else
          run_block(block)
        end
      end
    end

    def test_the_readme_has_checked_examples
      blocks, annotations = without_gc_stress do
        found = self.class.blocks
        [found, found.sum { |block| block.code.count { |line| line.match?(EXPECTED) || line.match?(RAISES) } }]
      end

      assert_operator blocks.size, :>=, 10
      assert_operator annotations, :>=, 60
      assert_operator blocks.count { |block| block.marker == :norun }, :<=, 3
    end

    def test_the_readme_starts_with_the_two_commands
      head = File.read(README)[0, 1500]

      assert_includes head, "bin/demo"
      assert_includes head, "bin/test"
      assert_operator head.index("bin/demo"), :<, head.index("bin/test")
    end
  end
end
