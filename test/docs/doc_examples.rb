# frozen_string_literal: true

require "fileutils"
require "ripper"
require "test_helper"
require "tmpdir"

module LeaseMachines
  # Runs the ```ruby blocks of a document as tests (ReadmeTest: README.md and
  # docs/API.md; RuntimeDocTest: docs/RUNTIME.md), so the documentation
  # cannot drift. A subclass defines one test per block with run_block.
  #
  # Each block runs top to bottom in a binding of its own, one complete
  # statement at a time (a statement may span lines: it ends at the first line
  # where the code so far parses). A statement whose last line ends in
  #
  #   # => expected    asserts  value == (expected, evaluated in the block's binding),
  #                   or value.inspect == expected when expected starts with "#<"
  #   # raises Class: message   asserts  it raises exactly Class with exactly that message
  #
  # An annotation anywhere else (inside a multi-line statement), or one that
  # does not have either form, fails the test: nothing that looks checked goes
  # unchecked. A ```ruby fence the scanner would not see (indented, or spelled
  # differently) stops the file from loading.
  #
  # A block preceded by `<!-- norun -->` is only parsed. A block preceded by
  # `<!-- ill-typed -->` breaks the RBS signatures on purpose (it shows a
  # TypeError); it runs in every run except under RBS runtime checking.
  #
  # Failures and backtraces name the document and the line (docs/API.md:123);
  # each block is a test of its own, named after its document and its first
  # line (test_api_md_block_at_line_123).
  class DocExamples < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    EXPECTED = /\s#\s=>\s(?<expected>.+)\z/
    RAISES = /\s#\sraises\s(?<class>[A-Z]\w*(?:::[A-Z]\w*)*):\s(?<message>.+)\z/
    # Anything that looks like an annotation, well-formed or not.
    ANNOTATION = /\s#\s(=>|raises)\s/
    # A fence line that opens a Ruby block, whatever its spelling.
    RUBY_FENCE = /\A\s*```\s*(ruby|rb)\b/i

    # `line` is the number of the block's first line of code; `heading` the
    # nearest Markdown heading above the block.
    Block = Struct.new(:document, :line, :code, :marker, :heading) do
      def path = File.join(ROOT, document)

      def where(at) = "#{document}:#{at}"

      def annotations = code.count { |source| source.match?(ANNOTATION) }

      def test_name = :"test_#{File.basename(document).downcase.gsub(/[^a-z0-9]+/, "_")}_block_at_line_#{line}"

      # Whether the block opens a durable store or fence (a database, files,
      # child processes).
      def durable? = code.any? { |source| source.match?(/\b(Stores|Fences)::(SQLite|Postgres|MySQL)\b/) }
    end

    # A fresh top-level scope on every call: `self` is main, constants resolve
    # from Object (so the documents must spell LeaseMachines::), no locals leak in.
    TOP_LEVEL_SCOPE = TOPLEVEL_BINDING.eval("-> { binding }")

    def self.blocks(document)
      lines = File.readlines(File.join(ROOT, document), chomp: true)
      blocks = []
      heading = nil
      index = 0
      while index < lines.size
        case lines[index]
        when "```ruby"
          marker = lines[0...index].reverse.find { |above| !above.strip.empty? }.to_s[/\A<!-- (norun|ill-typed) -->\z/, 1]
          finish = ((index + 1)...lines.size).find { |at| lines[at] == "```" }
          raise "#{document}:#{index + 1}: unclosed ```ruby block" unless finish

          blocks << Block.new(document, index + 2, lines[(index + 1)...finish], marker&.to_sym, heading)
          index = finish
        when RUBY_FENCE
          raise "#{document}:#{index + 1}: a Ruby block must open with a line of exactly ```ruby to be run"
        when /\A\s*```/
          # Another language's block: its lines are neither headings nor Ruby.
          index = ((index + 1)...lines.size).find { |at| lines[at].strip == "```" } || lines.size
        when /\A#+\s/
          heading = lines[index]
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
      assert_empty pending, "#{block.where(block.line)}: the block ends inside an unfinished statement"
      chunks
    end

    def run_block(block)
      scope = TOP_LEVEL_SCOPE.call
      checked = 0
      in_a_tmpdir_of_its_own do
        without_gc_stress { statements(block) }.each do |line, source|
          source[0...-1].each_with_index do |inner, offset|
            refute_match(/#\s(=>|raises)\s/, inner, "#{block.where(line + offset)}: annotation inside a multi-line statement")
          end
          checked += run_statement(block, scope, line, source)
        end
      end
      assert_equal block.annotations, checked, "#{block.where(block.line)}: not every annotation of the block was checked"
    end

    # The documents make their folders as a reader would, with a bare
    # Dir.mktmpdir that nothing removes (the suite left about ten d<date>-*
    # folders in /tmp a run). Each block runs with TMPDIR set to a folder of
    # its own, deleted after it.
    def in_a_tmpdir_of_its_own
      dir = Dir.mktmpdir("lease_machines_docs")
      before = ENV.fetch("TMPDIR", nil)
      ENV["TMPDIR"] = dir
      yield
    ensure
      ENV["TMPDIR"] = before
      FileUtils.rm_rf(dir) if dir
    end

    def run_statement(block, scope, line, source)
      code = source.join("\n")
      where = block.where(line + source.size - 1)
      if (raises = source.last.match(RAISES))
        klass = Object.const_get(raises[:class])
        error = assert_raises(klass, where) { capture_io { scope.eval(code, block.path, line) } }
        assert_equal [klass, raises[:message]], [error.class, error.message], where
        return 1
      end
      value = nil
      capture_io { value = scope.eval(code, block.path, line) }
      expected = source.last.match(EXPECTED)&.[](:expected)
      if expected.nil? && source.last.match?(ANNOTATION)
        flunk "#{where}: an annotation of neither form (# => value, # raises Class: message)"
      end
      return 0 unless expected

      if expected.start_with?("#<")
        assert_equal expected, value.inspect, where
      elsif (wanted = scope.eval(expected, block.path, line)).nil?
        assert_nil value, where
      else
        assert_equal wanted, value, where
      end
      1
    end
  end
end
