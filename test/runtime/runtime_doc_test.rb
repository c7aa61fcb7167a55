# frozen_string_literal: true

require_relative "../docs/doc_examples"

module LeaseMachines
  # Every ```ruby block of docs/RUNTIME.md, run and checked by the README
  # test's own runner (DocExamples: the same annotations, `# =>`, `# raises`).
  # A `<!-- norun -->` block (a Rails route, the StatsD subscriber, which
  # would load ActiveSupport into this process) is parsed here; the StatsD
  # one runs in a Ruby of its own (test/metrics/statsd_doc_test.rb).
  class RuntimeDocTest < DocExamples
    blocks("docs/RUNTIME.md").each do |block|
      next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK

      define_method(:"test_runtime_md_block_at_line_#{block.line}") do
        next run_block(block) unless block.marker == :norun

        assert Ripper.sexp(block.code.join("\n")), "#{block.where(block.line)}: the block does not parse"
      end
    end

    def test_the_document_has_checked_examples
      blocks = self.class.blocks("docs/RUNTIME.md")
      assert_operator blocks.size, :>=, 5
      assert_operator blocks.sum(&:annotations), :>=, 15
      assert_operator blocks.count { |block| block.marker == :norun }, :<=, 2, "every other example runs"
    end
  end
end
